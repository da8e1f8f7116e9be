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

  // info set to 0 on exec, in order with the factorization's work: a View's own initialization
  // runs on the default instance and waits for the device, which cost potrf d 2-5% from 1024 to
  // 4096 on an H200 (perf/NOTES.md, potrf).
  explicit CholeskyState(const ExecSpace& exec) {
    info = Kokkos::View<int, Memory>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "basalt::cholesky::info"));
    failed_diagonal = Kokkos::View<Scalar, Memory>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "basalt::cholesky::failed_diagonal"));
    Kokkos::deep_copy(exec, info, 0);
  }

  Kokkos::View<int, Memory> info;
  Kokkos::View<Scalar, Memory> failed_diagonal;  // written where info is, read only then
};

}  // namespace basalt::impl
