#pragma once
// What an LU factorization keeps on the device from panel to panel, allocated once per call and
// handed to whichever getf2 runs (portable or a backend's): LAPACK's info (0, or the first zero
// pivot's 1-based column) and the portable pivot search's result.
#include <Kokkos_Core.hpp>

namespace basalt::impl {

template <class ExecSpace, class Real>
struct LuState {
  using Memory = typename ExecSpace::memory_space;
  using Best = Kokkos::ValLocScalar<Real, int>;

  Kokkos::View<int, Memory> info{"basalt::lu::info"};
  Kokkos::View<Best, Memory> best{"basalt::lu::best"};
};

}  // namespace basalt::impl
