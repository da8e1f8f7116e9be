#pragma once
// LU with partial pivoting, written once over Kokkos (seed 000's algorithm): a blocked
// right-looking loop whose panels are factored recursively, halving down to a narrow block that
// getf2 factors column by column. Every building block (getf2, laswp, trsm, gemm) goes through
// the dispatch, so a backend that specializes them runs this same driver at its own speed.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <utility>

#include "basalt/algorithms/dense/impl/blas.hpp"
#include "basalt/algorithms/dense/impl/getf2_portable.hpp"
#include "basalt/algorithms/dense/laswp.hpp"
#include "basalt/core/dispatch.hpp"
#include "basalt/core/lu_state.hpp"
#include "basalt/core/profiling.hpp"
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

// Recursive LU of an m x w panel (w <= m), pivots 1-based within the panel (LAPACK's dgetrf2):
// the left half, its interchanges on the right half, a triangular solve and an update, then
// the lower right part, whose interchanges go back to the lower left.
template <class ExecSpace, class PView, class PivView, class State>
void factor_panel(const ExecSpace& exec, const PView& P, const PivView& ipiv, int offset,
                  const State& state, int recursion_width) {
  using T = typename PView::non_const_value_type;
  const int m = static_cast<int>(P.extent(0)), w = static_cast<int>(P.extent(1));
  if (w <= recursion_width) return apply_getf2(exec, P, ipiv, offset, state);
  const int n1 = w / 2;
  const auto top = std::make_pair(0, n1), bottom = std::make_pair(n1, m);
  const auto left = std::make_pair(0, n1), right = std::make_pair(n1, w);
  const auto ipiv_left = Kokkos::subview(ipiv, left), ipiv_right = Kokkos::subview(ipiv, right);
  factor_panel(exec, Kokkos::subview(P, Kokkos::ALL, left), ipiv_left, offset, state,
               recursion_width);
  apply_laswp(exec, Kokkos::subview(P, Kokkos::ALL, right), ipiv_left, 1, n1, Direction::forward);
  trsm_left(exec, true, Op::none, true, T(1), Kokkos::subview(P, top, left),
            Kokkos::subview(P, top, right));
  gemm(exec, Op::none, Op::none, T(-1), Kokkos::subview(P, bottom, left),
       Kokkos::subview(P, top, right), T(1), Kokkos::subview(P, bottom, right));
  factor_panel(exec, Kokkos::subview(P, bottom, right), ipiv_right, offset + n1, state,
               recursion_width);
  apply_laswp(exec, Kokkos::subview(P, bottom, left), ipiv_right, 1, w - n1, Direction::forward);
  shift_pivots(exec, ipiv_right, n1);
}

// Blocked right-looking LU of A (m x n, LayoutLeft): for each block of nb columns, the recursive
// panel, its interchanges left and right of it, then trsm and gemm on the trailing matrix.
template <class ExecSpace, class AView, class PivView, class State>
void getrf(const ExecSpace& exec, const AView& A, const PivView& ipiv, const State& state,
           tuning::Lu tune) {
  using T = typename AView::non_const_value_type;
  const int m = static_cast<int>(A.extent(0)), n = static_cast<int>(A.extent(1));
  const int mn = std::min(m, n);
  for (int j = 0; j < mn; j += tune.block) {
    const int jb = std::min(tune.block, mn - j);
    const auto rows = std::make_pair(j, m), block = std::make_pair(j, j + jb),
               trailing = std::make_pair(j + jb, n);
    const auto ipiv_block = Kokkos::subview(ipiv, block);
    factor_panel(exec, Kokkos::subview(A, rows, block), ipiv_block, j, state, tune.recursion_width);
    apply_laswp(exec, Kokkos::subview(A, rows, std::make_pair(0, j)), ipiv_block, 1, jb,
                Direction::forward);
    apply_laswp(exec, Kokkos::subview(A, rows, trailing), ipiv_block, 1, jb, Direction::forward);
    shift_pivots(exec, ipiv_block, j);
    if (j + jb >= n) continue;
    trsm_left(exec, true, Op::none, true, T(1), Kokkos::subview(A, block, block),
              Kokkos::subview(A, block, trailing));
    gemm(exec, Op::none, Op::none, T(-1), Kokkos::subview(A, std::make_pair(j + jb, m), block),
         Kokkos::subview(A, block, trailing), T(1),
         Kokkos::subview(A, std::make_pair(j + jb, m), trailing));
  }
}

}  // namespace impl

}  // namespace basalt
