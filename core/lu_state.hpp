#pragma once
// What an LU factorization keeps on the device from panel to panel, in one call scratch
// (core/call_scratch.hpp), handed to whichever getf2 runs (portable or a backend's): LAPACK's
// info (0, or the first zero pivot's 1-based column) and the portable pivot search's result.
#include <Kokkos_Core.hpp>

#include "basalt/core/call_scratch.hpp"

namespace basalt::impl {

template <class ExecSpace, class Real>
struct LuStateViews {
  using Pieces = ScratchPieces<typename ExecSpace::memory_space>;
  using Best = Kokkos::ValLocScalar<Real, int>;
  explicit LuStateViews(Pieces& pieces)
      : info(pieces.template scalar<int>()), best(pieces.template scalar<Best>()) {}

  typename Pieces::template Piece<int> info;
  typename Pieces::template Piece<Best> best;  // written by each pivot search before it is read
};

template <class ExecSpace, class Real>
struct LuState : ScratchViews<ExecSpace, LuStateViews<ExecSpace, Real>> {
  // info set on exec without a wait for the device, as CholeskyState's.
  explicit LuState(const ExecSpace& exec)
      : ScratchViews<ExecSpace, LuStateViews<ExecSpace, Real>>(exec) {
    Kokkos::deep_copy(exec, this->info, 0);
  }
};

}  // namespace basalt::impl
