#pragma once
// What a Cholesky factorization keeps on the device from block to block, allocated once per
// call: LAPACK's info (0, or the order of the first leading minor that is not positive) and the
// failing diagonal entry. The diagonal block that fails, and every one after it, is left as the
// identity in its unfactored part, so that the trsm and herk already queued behind it stay finite;
// the failing entry goes back in place once info has reached the host.
#include <Kokkos_Core.hpp>

namespace basalt::impl {

template <class ExecSpace, class Scalar>
struct CholeskyState {
  using Memory = typename ExecSpace::memory_space;

  Kokkos::View<int, Memory> info{"basalt::cholesky::info"};
  Kokkos::View<Scalar, Memory> failed_diagonal{"basalt::cholesky::failed_diagonal"};
};

}  // namespace basalt::impl
