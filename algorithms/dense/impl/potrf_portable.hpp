#pragma once
// Cholesky factorization, written once over Kokkos (seed 000's algorithm): a blocked loop over
// panels of nb columns, each halved recursively down to a leaf panel: its diagonal block,
// factored recursively down to a block that potf2 factors column by column, and the rows below
// solved against it (trsm). Right-looking (herk on the whole trailing matrix after each panel)
// rather than the paper's left-looking: one large herk per panel is the shape cuBLAS and OpenBLAS
// run nearest their gemm rate, and today's MAGMA potrf_native made the same choice. Every
// building block (the leaf panel, potf2, trsm, herk, gemm) goes through the dispatch, so a
// backend that specializes them runs this same driver.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <utility>

#include "basalt/algorithms/dense/impl/blas.hpp"
#include "basalt/algorithms/dense/impl/potf2_portable.hpp"
#include "basalt/core/cholesky_state.hpp"
#include "basalt/core/dispatch.hpp"
#include "basalt/core/profiling.hpp"
#include "basalt/core/side_space.hpp"
#include "basalt/core/tuning.hpp"
#include "basalt/core/views.hpp"

namespace basalt::impl {

template <class ExecSpace, class DView, class State>
void apply_potf2(const ExecSpace& exec, Triangle uplo, const DView& D, int offset,
                 const State& state) {
  ProfilingRegion region("basalt::potf2");
  using Spec = Specialization<routine::potf2, ExecSpace>;
  if constexpr (Spec::available)
    Spec::apply(exec, uplo, D, offset, state);
  else
    portable::potf2(exec, uplo, D, offset, state);
}

// Given the factored leading block (columns `factored`), the block beside it becomes its part of
// the factor and the trailing block (columns `rest`) its Schur complement: lower,
// A21 := A21 L11^-H and A22 -= A21 A21^H; upper, A12 := U11^-H A12 and A22 -= A12^H A12.
template <class ExecSpace, class AView>
void update_trailing(const ExecSpace& exec, Triangle uplo, const AView& A,
                     std::pair<int, int> factored, std::pair<int, int> rest) {
  using T = typename AView::non_const_value_type;
  using Real = real_t<T>;
  const auto A11 = Kokkos::subview(A, factored, factored), A22 = Kokkos::subview(A, rest, rest);
  if (uplo == Triangle::lower) {
    const auto A21 = Kokkos::subview(A, rest, factored);
    trsm(exec, ApplySide::right, true, Op::conj_transpose, false, T(1), A11, A21);
    herk(exec, true, Op::none, Real(-1), A21, Real(1), A22);
  } else {
    const auto A12 = Kokkos::subview(A, factored, rest);
    trsm(exec, ApplySide::left, false, Op::conj_transpose, false, T(1), A11, A12);
    herk(exec, false, Op::conj_transpose, Real(-1), A12, Real(1), A22);
  }
}

// Recursive Cholesky of a diagonal block (seed 000's RDPOTF2): the leading half, the update of
// the trailing half, the trailing half.
template <class ExecSpace, class DView, class State>
void factor_diagonal(const ExecSpace& exec, Triangle uplo, const DView& D, int offset,
                     const State& state, int recursion_width) {
  const int w = static_cast<int>(D.extent(0));
  if (w <= recursion_width) return apply_potf2(exec, uplo, D, offset, state);
  const int w1 = w / 2;
  const auto first = std::make_pair(0, w1), second = std::make_pair(w1, w);
  factor_diagonal(exec, uplo, Kokkos::subview(D, first, first), offset, state, recursion_width);
  update_trailing(exec, uplo, D, first, second);
  factor_diagonal(exec, uplo, Kokkos::subview(D, second, second), offset + w1, state,
                  recursion_width);
}

}  // namespace basalt::impl

namespace basalt::portable {

// herk on a trapezoid, Cholesky's update of the columns beside a factored block. Lower: C -= L
// L1^H on C's lower trapezoid, for L m x k, C m x n (m >= n) and L1 L's first n rows: a herk on
// C's top n x n block and a gemm below it. Upper, mirrored: C -= U1^H U on C's upper trapezoid,
// for U k x m, C n x m, U1 U's first n columns. The other triangle of C's square block is not
// touched.
template <class ExecSpace, class LView, class CView>
void herk_trapezoid(const ExecSpace& exec, Triangle uplo, const LView& L, const CView& C) {
  using T = typename CView::non_const_value_type;
  using Real = real_t<T>;
  const bool lower = uplo == Triangle::lower;
  const int n = static_cast<int>(lower ? C.extent(1) : C.extent(0));
  const int m = static_cast<int>(lower ? C.extent(0) : C.extent(1));
  const auto top = std::make_pair(0, n), below = std::make_pair(n, m);
  if (lower) {
    const auto L1 = Kokkos::subview(L, top, Kokkos::ALL);
    impl::herk(exec, true, Op::none, Real(-1), L1, Real(1), Kokkos::subview(C, top, top));
    if (n < m)
      impl::gemm(exec, Op::none, Op::conj_transpose, T(-1), Kokkos::subview(L, below, Kokkos::ALL),
                 L1, T(1), Kokkos::subview(C, below, top));
  } else {
    const auto U1 = Kokkos::subview(L, Kokkos::ALL, top);
    impl::herk(exec, false, Op::conj_transpose, Real(-1), U1, Real(1),
               Kokkos::subview(C, top, top));
    if (n < m)
      impl::gemm(exec, Op::conj_transpose, Op::none, T(-1), U1,
                 Kokkos::subview(L, Kokkos::ALL, below), T(1), Kokkos::subview(C, top, below));
  }
}

}  // namespace basalt::portable

namespace basalt::impl {

template <class ExecSpace, class LView, class CView>
void herk_trapezoid(const ExecSpace& exec, Triangle uplo, const LView& L, const CView& C) {
  ProfilingRegion region("basalt::herk_trapezoid");
  using Spec = Specialization<routine::herk_trapezoid, ExecSpace>;
  if constexpr (Spec::available)
    Spec::apply(exec, uplo, L, C);
  else
    portable::herk_trapezoid(exec, uplo, L, C);
}

}  // namespace basalt::impl

namespace basalt::portable {

// The leaf panel P: lower, P = [D; B] (w + m rows, w columns); upper, P = [D B] (w rows, w + m
// columns), D its w x w diagonal block. D is factored as potf2 does (info, the failing entry, the
// identity after a failure), and B becomes B L^-H (upper: U^-H B). The diagonal block is halved
// recursively down to recursion_width.
template <class ExecSpace, class PView, class State>
void potrf_panel(const ExecSpace& exec, Triangle uplo, const PView& P, int offset,
                 const State& state, int recursion_width) {
  const int w = static_cast<int>(std::min(P.extent(0), P.extent(1)));
  const auto diagonal = std::make_pair(0, w);
  const auto beside = std::make_pair(w, static_cast<int>(std::max(P.extent(0), P.extent(1))));
  impl::factor_diagonal(exec, uplo, Kokkos::subview(P, diagonal, diagonal), offset, state,
                        recursion_width);
  if (beside.second == w) return;
  using T = typename PView::non_const_value_type;
  const auto D = Kokkos::subview(P, diagonal, diagonal);
  if (uplo == Triangle::lower)
    impl::trsm(exec, ApplySide::right, true, Op::conj_transpose, false, T(1), D,
               Kokkos::subview(P, beside, diagonal));
  else
    impl::trsm(exec, ApplySide::left, false, Op::conj_transpose, false, T(1), D,
               Kokkos::subview(P, diagonal, beside));
}

}  // namespace basalt::portable

namespace basalt::impl {

template <class ExecSpace, class PView, class State>
void apply_potrf_panel(const ExecSpace& exec, Triangle uplo, const PView& P, int offset,
                       const State& state, int recursion_width) {
  ProfilingRegion region("basalt::potrf_panel");
  using Spec = Specialization<routine::potrf_panel, ExecSpace>;
  if constexpr (Spec::available)
    Spec::apply(exec, uplo, P, offset, state, recursion_width);
  else
    portable::potrf_panel(exec, uplo, P, offset, state, recursion_width);
}

// The panel P (as portable::potrf_panel's) leaf by leaf (leaves of tune.panel_width columns), with
// look-ahead by a leaf: each leaf's update of the next leaf's columns, then the next leaf, on
// exec, while the leaf's update of the later columns runs on a side instance, which exec waits
// for before the next leaf's update.
template <class ExecSpace, class PView, class State>
void factor_panel_by_leaves(const ExecSpace& exec, Triangle uplo, const PView& P, int offset,
                            const State& state, tuning::Cholesky tune) {
  const bool lower = uplo == Triangle::lower;
  const int w = static_cast<int>(lower ? P.extent(1) : P.extent(0));
  const int length = static_cast<int>(lower ? P.extent(0) : P.extent(1));
  // P's rows `rows` and columns `cols` in lower terms: an upper panel's columns and rows.
  const auto part = [&](std::pair<int, int> rows, std::pair<int, int> cols) {
    return lower ? Kokkos::subview(P, rows, cols) : Kokkos::subview(P, cols, rows);
  };
  const SideSpace<ExecSpace> side(exec);
  for (int first = 0; first < w; first += tune.panel_width) {
    const int end = std::min(first + tune.panel_width, w);
    const int next_end = std::min(end + tune.panel_width, w);
    const auto leaf = std::make_pair(first, end);
    apply_potrf_panel(exec, uplo, part(std::make_pair(first, length), leaf), offset + first, state,
                      tune.recursion_width);
    if (end == w) break;
    side.join();  // the next leaf's columns have the earlier leaves' updates
    if (next_end < w) {
      const auto below_next = std::make_pair(next_end, length);
      herk_trapezoid(side.fork(), uplo, part(below_next, leaf),
                     part(below_next, std::make_pair(next_end, w)));
    }
    const auto below = std::make_pair(end, length);
    herk_trapezoid(exec, uplo, part(below, leaf), part(below, std::make_pair(end, next_end)));
  }
}

// The panel P (as portable::potrf_panel's), halved by columns down to tune.panel_width: the left
// half, then the right half's rows from the diagonal down minus the left half's contribution
// (herk_trapezoid), then the right half. Leaf by leaf instead where it has at most
// tune.leaf_look_ahead_rows rows.
template <class ExecSpace, class PView, class State>
void factor_panel(const ExecSpace& exec, Triangle uplo, const PView& P, int offset,
                  const State& state, tuning::Cholesky tune) {
  const bool lower = uplo == Triangle::lower;
  const int w = static_cast<int>(lower ? P.extent(1) : P.extent(0));
  if (w <= tune.panel_width)
    return apply_potrf_panel(exec, uplo, P, offset, state, tune.recursion_width);
  const int length = static_cast<int>(lower ? P.extent(0) : P.extent(1));
  if (length <= tune.leaf_look_ahead_rows)
    return factor_panel_by_leaves(exec, uplo, P, offset, state, tune);
  const int w1 = w / 2;
  const auto left = std::make_pair(0, w1), right = std::make_pair(w1, w);
  const auto rest = std::make_pair(w1, length);
  if (lower) {
    factor_panel(exec, uplo, Kokkos::subview(P, Kokkos::ALL, left), offset, state, tune);
    herk_trapezoid(exec, uplo, Kokkos::subview(P, rest, left), Kokkos::subview(P, rest, right));
    factor_panel(exec, uplo, Kokkos::subview(P, rest, right), offset + w1, state, tune);
  } else {
    factor_panel(exec, uplo, Kokkos::subview(P, left, Kokkos::ALL), offset, state, tune);
    herk_trapezoid(exec, uplo, Kokkos::subview(P, left, rest), Kokkos::subview(P, right, rest));
    factor_panel(exec, uplo, Kokkos::subview(P, right, rest), offset + w1, state, tune);
  }
}

// The trailing columns [first, last) of the n x n A brought up to date with the factored block
// of columns `block`, from the diagonal down (lower; upper: rightwards).
template <class ExecSpace, class AView>
void update_columns(const ExecSpace& exec, Triangle uplo, const AView& A, std::pair<int, int> block,
                    int first, int last) {
  if (first >= last) return;
  const int n = static_cast<int>(A.extent(0));
  const auto columns = std::make_pair(first, last), rest = std::make_pair(first, n);
  if (uplo == Triangle::lower)
    herk_trapezoid(exec, uplo, Kokkos::subview(A, rest, block), Kokkos::subview(A, rest, columns));
  else
    herk_trapezoid(exec, uplo, Kokkos::subview(A, block, rest), Kokkos::subview(A, columns, rest));
}

// update_columns for the next panel's columns [first, last), its two parts side by side: the
// herk on their diagonal block on `side`, the gemm below it on exec. cuBLAS' syrk on the diagonal
// block took 15 us of the 55 us that this update, on the chain of panels, took at 4096 (H100, d,
// perf/NOTES.md, potrf).
template <class ExecSpace, class AView>
void update_next_panel(const ExecSpace& exec, const ExecSpace& side, Triangle uplo, const AView& A,
                       std::pair<int, int> block, int first, int last) {
  using T = typename AView::non_const_value_type;
  const int n = static_cast<int>(A.extent(0));
  const auto columns = std::make_pair(first, last), below = std::make_pair(last, n);
  if (uplo == Triangle::lower) {
    const auto L1 = Kokkos::subview(A, columns, block);
    herk_trapezoid(side, uplo, L1, Kokkos::subview(A, columns, columns));
    if (last < n)
      gemm(exec, Op::none, Op::conj_transpose, T(-1), Kokkos::subview(A, below, block), L1, T(1),
           Kokkos::subview(A, below, columns));
  } else {
    const auto U1 = Kokkos::subview(A, block, columns);
    herk_trapezoid(side, uplo, U1, Kokkos::subview(A, columns, columns));
    if (last < n)
      gemm(exec, Op::conj_transpose, Op::none, T(-1), U1, Kokkos::subview(A, block, below), T(1),
           Kokkos::subview(A, columns, below));
  }
}

// Blocked right-looking Cholesky of the n x n A: for each panel of nb columns (from the diagonal
// down), the panel, then the trailing matrix's update, with look-ahead as in getrf: the next
// panel's columns first, then that panel on a side instance while exec updates the rest. Info
// stays in state.
template <class ExecSpace, class AView, class State>
void potrf(const ExecSpace& exec, Triangle uplo, const AView& A, const State& state,
           tuning::Cholesky tune) {
  const int n = static_cast<int>(A.extent(0));
  if (n == 0) return;
  const auto panel = [&](const ExecSpace& space, int j) {
    const auto block = std::make_pair(j, std::min(j + tune.block, n)), rest = std::make_pair(j, n);
    if (uplo == Triangle::lower)
      factor_panel(space, uplo, Kokkos::subview(A, rest, block), j, state, tune);
    else
      factor_panel(space, uplo, Kokkos::subview(A, block, rest), j, state, tune);
  };
  const SideSpace<ExecSpace> side(exec);
  panel(exec, 0);
  for (int j = 0; j < n; j += tune.block) {
    const int next = std::min(j + tune.block, n), next_end = std::min(next + tune.block, n);
    const auto block = std::make_pair(j, next);
    if (next < n) {
      update_next_panel(exec, side.fork(), uplo, A, block, next, next_end);
      panel(side.fork(), next);
    }
    update_columns(exec, uplo, A, block, next_end, n);
    side.join();
  }
}

// Reads info back (the one wait of the call) and, after a failure, puts the failing diagonal
// entry back where potf2 took it from, as LAPACK leaves it.
template <class ExecSpace, class AView, class State>
int finish_potrf(const ExecSpace& exec, const AView& A, const State& state) {
  int info = 0;
  Kokkos::deep_copy(exec, Kokkos::View<int, Kokkos::HostSpace>(&info), state.info);
  exec.fence();
  if (info > 0) {
    const auto failed_diagonal = state.failed_diagonal;
    Kokkos::parallel_for(
        "basalt::potrf::restore_diagonal", Kokkos::RangePolicy<ExecSpace>(exec, info - 1, info),
        KOKKOS_LAMBDA(const int k) { A(k, k) = failed_diagonal(); });
    exec.fence();
  }
  return info;
}

}  // namespace basalt::impl
