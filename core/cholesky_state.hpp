#pragma once
// What a Cholesky factorization keeps on the device from block to block, allocated once per
// call: LAPACK's info (0, or the order of the first leading minor that is not positive) and the
// failing diagonal entry. The diagonal block that fails, and every one after it, is left as the
// identity in its unfactored part, so that the trsm and herk already queued behind it stay finite;
// the failing entry goes back in place once info has reached the host.
#include <Kokkos_Core.hpp>

#include "basalt/core/views.hpp"

namespace basalt::impl {

template <class ExecSpace, class Scalar>
struct CholeskyState {
  using Memory = typename ExecSpace::memory_space;

  // Made on exec without a wait for the device, which cost potrf d 2-5% from 1024 to 4096 on an
  // H200 (device_scalar; perf/NOTES.md, potrf).
  explicit CholeskyState(const ExecSpace& exec)
      : info(device_scalar(exec, "basalt::cholesky::info", 0)),
        failed_diagonal(
            Kokkos::view_alloc(Kokkos::WithoutInitializing, "basalt::cholesky::failed_diagonal")) {}

  Kokkos::View<int, Memory> info;
  Kokkos::View<Scalar, Memory> failed_diagonal;  // written where info is, read only then
};

}  // namespace basalt::impl
