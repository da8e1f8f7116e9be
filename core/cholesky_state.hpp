#pragma once
// What a Cholesky factorization keeps on the device from block to block, in one call scratch
// (core/call_scratch.hpp): LAPACK's info (0, or the order of the first leading minor that is not
// positive) and the failing diagonal entry. The diagonal block that fails, and every one after
// it, is left as the identity in its unfactored part, so that the trsm and herk already queued
// behind it stay finite; the failing entry goes back in place once info has reached the host.
#include <Kokkos_Core.hpp>

#include "basalt/core/call_scratch.hpp"

namespace basalt::impl {

template <class ExecSpace, class Scalar>
struct CholeskyStateViews {
  using Pieces = ScratchPieces<typename ExecSpace::memory_space>;
  explicit CholeskyStateViews(Pieces& pieces)
      : info(pieces.template scalar<int>()), failed_diagonal(pieces.template scalar<Scalar>()) {}

  typename Pieces::template Piece<int> info;
  typename Pieces::template Piece<Scalar> failed_diagonal;  // written where info is, read only then
};

template <class ExecSpace, class Scalar>
struct CholeskyState : ScratchViews<ExecSpace, CholeskyStateViews<ExecSpace, Scalar>> {
  // info set on exec without a wait for the device, which cost potrf d 2-5% from 1024 to 4096 on
  // an H200 (perf/NOTES.md, potrf).
  explicit CholeskyState(const ExecSpace& exec)
      : ScratchViews<ExecSpace, CholeskyStateViews<ExecSpace, Scalar>>(exec) {
    restart(exec);
  }
  // info = 0 by a kernel: Kokkos 3.4's deep_copy of a value into a rank-0 View copies it from the
  // host stack, which a recorded call (core/recorded_call.hpp) would read again long after.
  void restart(const ExecSpace& exec) const {
    const auto info = this->info;
    Kokkos::parallel_for(
        "basalt::cholesky_state::restart", Kokkos::RangePolicy<ExecSpace>(exec, 0, 1),
        KOKKOS_LAMBDA(const int) { info() = 0; });
  }
};

}  // namespace basalt::impl
