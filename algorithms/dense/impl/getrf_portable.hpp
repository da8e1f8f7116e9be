#pragma once
// LU with partial pivoting, written once over Kokkos (seed 000's algorithm): a blocked
// right-looking loop whose panels are factored recursively, halving down to a narrow block that
// getf2 factors column by column. Every building block (getf2, laswp, trsm, gemm) goes through
// the dispatch, so a backend that specializes them runs this same driver at its own speed.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <utility>

#include "basalt/algorithms/batched/impl/team_launch.hpp"
#include "basalt/algorithms/batched/impl/team_lu.hpp"
#include "basalt/algorithms/dense/impl/blas.hpp"
#include "basalt/algorithms/dense/impl/getf2_portable.hpp"
#include "basalt/algorithms/dense/laswp.hpp"
#include "basalt/core/dispatch.hpp"
#include "basalt/core/lu_state.hpp"
#include "basalt/core/profiling.hpp"
#include "basalt/core/side_space.hpp"
#include "basalt/core/tuning.hpp"
#include "basalt/core/views.hpp"

namespace basalt {

namespace impl {

template <class ExecSpace, class PivView>
void shift_pivots(const ExecSpace& exec, const PivView& ipiv, int shift) {
  if (ipiv.extent(0) == 0 || shift == 0) return;
  Kokkos::parallel_for(
      "basalt::lu::shift_pivots", Kokkos::RangePolicy<ExecSpace>(exec, 0, ipiv.extent(0)),
      KOKKOS_LAMBDA(const int k) { ipiv(k) += shift; });
}

template <class ExecSpace, class PView, class PivView, class State>
void apply_getf2(const ExecSpace& exec, const PView& P, const PivView& ipiv, int offset,
                 const State& state) {
  ProfilingRegion region("basalt::getf2");
  using Spec = Specialization<routine::getf2, ExecSpace>;
  if constexpr (Spec::available)
    Spec::apply(exec, P, ipiv, offset, state);
  else
    portable::getf2(exec, P, ipiv, offset, state);
}

// getf2 by one team, batched/impl/team_lu.hpp's team_getrf, in team scratch when the panel
// fits: one launch for the whole leaf, where a kernel per step pays a parallel launch (an OpenMP
// fork and join on a CPU) three times a column.
template <class ExecSpace, class PView, class PivView, class State>
void getf2_team(const ExecSpace& exec, const PView& P, const PivView& ipiv, int offset,
                const State& state) {
  ProfilingRegion region("basalt::getf2");
  using T = typename PView::non_const_value_type;
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  const int m = static_cast<int>(P.extent(0)), w = static_cast<int>(P.extent(1));
  const BatchLaunch launch = panel_launch<T>(exec, m, w);
  const int scratch = launch.scratch_bytes;
  const MatrixRef<T> A(P.data(), Kokkos::LayoutStride(m, P.stride(0), w, P.stride(1)));
  const VectorRef<int> pivots(ipiv.data(), Kokkos::LayoutStride(std::min(m, w), ipiv.stride(0)));
  const auto info = state.info;
  for_each_matrix(
      exec, "basalt::getf2::team", 1, launch, KOKKOS_LAMBDA(const Member& team, const int) {
        staged(team, A, scratch, [&](const MatrixRef<T>& F) {
          const int first_zero = team_getrf(team, F, pivots);
          Kokkos::single(Kokkos::PerTeam(team), [&] {
            if (first_zero > 0 && info() == 0) info() = offset + first_zero;
          });
        });
      });
}

// Recursive LU of an m x w panel (w <= m), pivots 1-based within the panel (LAPACK's dgetrf2):
// the left half, its interchanges on the right half, a triangular solve and an update, then
// the lower right part, whose interchanges go back to the lower left.
template <class ExecSpace, class PView, class PivView, class State>
void factor_panel(const ExecSpace& exec, const PView& P, const PivView& ipiv, int offset,
                  const State& state, tuning::Lu tune) {
  using T = typename PView::non_const_value_type;
  const int m = static_cast<int>(P.extent(0)), w = static_cast<int>(P.extent(1));
  if (w <= tune.recursion_width) {
    if (m <= tune.team_panel_rows) return getf2_team(exec, P, ipiv, offset, state);
    return apply_getf2(exec, P, ipiv, offset, state);
  }
  const int n1 = w / 2;
  const auto top = std::make_pair(0, n1), bottom = std::make_pair(n1, m);
  const auto left = std::make_pair(0, n1), right = std::make_pair(n1, w);
  const auto ipiv_left = Kokkos::subview(ipiv, left), ipiv_right = Kokkos::subview(ipiv, right);
  factor_panel(exec, Kokkos::subview(P, Kokkos::ALL, left), ipiv_left, offset, state, tune);
  apply_laswp(exec, Kokkos::subview(P, Kokkos::ALL, right), ipiv_left, 1, n1, Direction::forward);
  trsm_left(exec, true, Op::none, true, T(1), Kokkos::subview(P, top, left),
            Kokkos::subview(P, top, right));
  gemm(exec, Op::none, Op::none, T(-1), Kokkos::subview(P, bottom, left),
       Kokkos::subview(P, top, right), T(1), Kokkos::subview(P, bottom, right));
  factor_panel(exec, Kokkos::subview(P, bottom, right), ipiv_right, offset + n1, state, tune);
  apply_laswp(exec, Kokkos::subview(P, bottom, left), ipiv_right, 1, w - n1, Direction::forward);
  shift_pivots(exec, ipiv_right, n1);
}

// The interchanges of every block applied to the columns left of it, at the end (tuning::Lu's
// defer_left_interchanges): each block column takes the pivots after its own, in order, a thread
// on a few of its columns at a time (the first blocks have the most swaps, so dynamically).
template <class ExecSpace, class AView, class PivView>
void apply_left_interchanges(const ExecSpace& exec, const AView& A, const PivView& ipiv, int block,
                             int mn) {
  const int blocks = (mn - 1) / block;  // the last block has no pivots after it
  if (blocks <= 0) return;
  ProfilingRegion region("basalt::laswp");
  const int width = tuning::laswp_columns_per_thread<ExecSpace>();
  const int chunks_per_block = (block + width - 1) / width;
  const int chunks = blocks * chunks_per_block;
  Kokkos::parallel_for(
      "basalt::lu::left_interchanges",
      Kokkos::RangePolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>(exec, 0, chunks),
      KOKKOS_LAMBDA(const int chunk) {
        const int block_first = chunk / chunks_per_block * block;
        const int first = block_first + chunk % chunks_per_block * width;
        const int block_end = block_first + block;
        portable::interchange_rows(A, ipiv, block_end + 1, mn, Direction::forward, first,
                                   first + width < block_end ? first + width : block_end);
      });
}

// Blocked right-looking LU of A (m x n, LayoutLeft) with look-ahead: once block j's panel is
// factored, the next block column is brought up to date first and its panel factored on a side
// instance while exec applies block j's interchanges to the left (or leaves them to the end)
// and updates the rest of the trailing matrix (trsm and gemm), so that the panel's latency hides
// behind the large gemm (seed 000's hybrid look-ahead, with the panel on the GPU too). Where the
// side is exec itself, the same work runs one piece after another.
template <class ExecSpace, class AView, class PivView, class State>
void getrf(const ExecSpace& exec, const AView& A, const PivView& ipiv, const State& state,
           tuning::Lu tune) {
  using T = typename AView::non_const_value_type;
  const int m = static_cast<int>(A.extent(0)), n = static_cast<int>(A.extent(1));
  const int mn = std::min(m, n);
  if (mn == 0) return;
  const SideSpace<ExecSpace> side(exec);
  const auto panel = [&](const ExecSpace& space, int j) {
    const auto block = std::make_pair(j, std::min(j + tune.block, mn));
    factor_panel(space, Kokkos::subview(A, std::make_pair(j, m), block),
                 Kokkos::subview(ipiv, block), j, state, tune);
  };
  panel(exec, 0);
  for (int j = 0; j < mn; j += tune.block) {
    const int jb = std::min(tune.block, mn - j), next = j + jb;
    const int next_end = std::min(next + tune.block, mn);  // the next panel's columns end
    const auto rows = std::make_pair(j, m), block = std::make_pair(j, next),
               below = std::make_pair(next, m);
    const auto ipiv_block = Kokkos::subview(ipiv, block);
    // Columns [first, last) brought up to date with block j: its interchanges, the triangular
    // solve for U's rows and the rank-jb update below.
    const auto update = [&](int first, int last) {
      if (first >= last) return;
      const auto columns = std::make_pair(first, last);
      apply_laswp(exec, Kokkos::subview(A, rows, columns), ipiv_block, 1, jb, Direction::forward);
      trsm_left(exec, true, Op::none, true, T(1), Kokkos::subview(A, block, block),
                Kokkos::subview(A, block, columns));
      gemm(exec, Op::none, Op::none, T(-1), Kokkos::subview(A, below, block),
           Kokkos::subview(A, block, columns), T(1), Kokkos::subview(A, below, columns));
    };
    update(next, next_end);
    if (next < mn) panel(side.fork(), next);
    if (!tune.defer_left_interchanges)
      apply_laswp(exec, Kokkos::subview(A, rows, std::make_pair(0, j)), ipiv_block, 1, jb,
                  Direction::forward);
    update(next_end, n);
    shift_pivots(exec, ipiv_block, j);
    side.join();
  }
  if (tune.defer_left_interchanges) apply_left_interchanges(exec, A, ipiv, tune.block, mn);
}

}  // namespace impl

}  // namespace basalt
