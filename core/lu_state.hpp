#pragma once
// What an LU factorization keeps on the device from panel to panel, allocated once per call and
// handed to whichever getf2 runs (portable or a backend's): LAPACK's info (0, or the first zero
// pivot's 1-based column) and the portable pivot search's result.
#include <Kokkos_Core.hpp>

#include "basalt/core/views.hpp"

namespace basalt::impl {

template <class ExecSpace, class Real>
struct LuState {
  using Memory = typename ExecSpace::memory_space;
  using Best = Kokkos::ValLocScalar<Real, int>;

  // Made on exec without a wait for the device, as CholeskyState.
  explicit LuState(const ExecSpace& exec)
      : info(device_scalar(exec, "basalt::lu::info", 0)),
        best(Kokkos::view_alloc(Kokkos::WithoutInitializing, "basalt::lu::best")) {}

  Kokkos::View<int, Memory> info;
  Kokkos::View<Best, Memory> best;  // written by each pivot search before it is read
};

}  // namespace basalt::impl
