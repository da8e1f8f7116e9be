#pragma once
// basalt::gels: least squares and minimum-norm solutions through QR, LAPACK's xGELS.
//
//   int info = basalt::gels(exec, op, A, B);   // op: Op::none, Op::conj_transpose (or
//                                              // Op::transpose for real scalars)
//
// A is m x n, B is max(m, n) x nrhs (both LayoutLeft, sub-views included). Where op(A) has at
// least as many rows as columns, X minimizes ||B - op(A) X||_2 and fills B's first rows (the
// rest hold the residual's rotated components); where it has fewer, X is the minimum-norm
// solution of op(A) X = B and fills B. A is overwritten by its QR factors (m >= n, geqrf's
// storage) or its LQ factors (m < n, xGELQF's: L on and below the diagonal, the reflectors to its
// right), computed as the QR of A^H in a workspace. info = k > 0 when the k-th diagonal entry of
// R (or L) is exactly zero: A has not full rank, no solution is computed, and B is left as xGELS
// leaves it (Q^H B where the least-squares step ran first, untouched otherwise). As xGELS, a zero
// A gives X = 0 and info = 0, and min(m, n, nrhs) = 0 gives X = 0 with A untouched. xGELS's
// scaling of A and B whose norms are near under- or overflow is not done. info is read back to
// the host: the call waits for exec.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <climits>

#include "basalt/algorithms/dense/geqrf.hpp"
#include "basalt/algorithms/dense/impl/blas.hpp"
#include "basalt/core/call_scratch.hpp"

namespace basalt {

namespace impl {

// gels' scratch (core/call_scratch.hpp): the q reflectors' tau, and for a wide A the f_rows x
// f_cols workspace F = A^H factored in its place (empty otherwise).
template <class ExecSpace, class T>
struct GelsWorkViews {
  using Pieces = ScratchPieces<typename ExecSpace::memory_space>;
  GelsWorkViews(Pieces& pieces, int q, int f_rows, int f_cols)
      : tau(pieces.template vector<T>(q)), f(pieces.template matrix<T>(f_rows, f_cols)) {}

  typename Pieces::template Piece<T*> tau;
  typename Pieces::template Piece<T**> f;
};

// xGELS on F (p x q, p >= q; op(A) is F, or F^H for the minimum-norm solution), B (p x nrhs):
// factor F (its reflectors' tau in `tau`, q entries), then least squares (B = Q^H B, R X =
// B(0:q)) or minimum norm (R^H Y = B(0:q), B(q:p) = 0, X = Q B). Returns info, read back to the
// host.
template <class ExecSpace, class FView, class TauView, class BView>
int gels(const ExecSpace& exec, bool minimum_norm, const FView& F, const TauView& tau,
         const BView& B, tuning::Qr tune) {
  using T = typename FView::non_const_value_type;
  const int p = static_cast<int>(F.extent(0)), q = static_cast<int>(F.extent(1));
  geqrf(exec, F, tau, tune);
  if (!minimum_norm) ormqr(exec, ApplySide::left, Op::conj_transpose, F, tau, B, tune);

  // R's first exactly-zero diagonal entry (xTRTRS's check), and whether R is zero at all (A is).
  using Range = Kokkos::RangePolicy<ExecSpace>;
  int first_zero = INT_MAX, any_nonzero = 0;
  Kokkos::parallel_reduce(
      "basalt::gels::rank", Range(exec, 0, q),
      KOKKOS_LAMBDA(const int j, int& found) {
        if (F(j, j) == T(0) && j + 1 < found) found = j + 1;
      },
      Kokkos::Min<int>(first_zero));
  Kokkos::parallel_reduce(
      "basalt::gels::zero", Range(exec, 0, q),
      KOKKOS_LAMBDA(const int j, int& found) {
        for (int i = 0; i <= j; ++i) found = found || F(i, j) != T(0);
      },
      Kokkos::LOr<int>(any_nonzero));  // a flag: a count of R's entries overflows int
  if (!any_nonzero) {
    Kokkos::deep_copy(exec, B, T(0));
    return 0;
  }
  if (first_zero != INT_MAX) return first_zero;
  const auto R = Kokkos::subview(F, range(0, q), range(0, q));
  const auto top = Kokkos::subview(B, range(0, q), Kokkos::ALL);
  if (!minimum_norm) {
    trsm_left(exec, false, Op::none, false, T(1), R, top);
  } else {
    trsm_left(exec, false, Op::conj_transpose, false, T(1), R, top);
    Kokkos::deep_copy(exec, Kokkos::subview(B, range(q, p), Kokkos::ALL), T(0));
    ormqr(exec, ApplySide::left, Op::none, F, tau, B, tune);
  }
  return 0;
}

}  // namespace impl

template <class ExecSpace, class AView, class BView>
int gels(const ExecSpace& exec, Op op, const AView& A, const BView& B) {
  using T = typename AView::non_const_value_type;
  using Memory = typename ExecSpace::memory_space;
  using Vec = Kokkos::View<T*, Memory>;
  impl::check_qr_views<ExecSpace, AView, Vec>();
  static_assert(!std::is_const_v<typename AView::value_type>, "basalt::gels overwrites A");
  static_assert(is_matrix_view_v<BView> &&
                    std::is_same_v<typename BView::array_layout, Kokkos::LayoutLeft> &&
                    std::is_same_v<typename BView::non_const_value_type, T> &&
                    !std::is_const_v<typename BView::value_type>,
                "basalt::gels: B must be a writable rank-2 LayoutLeft View of A's scalar type");
  static_assert(is_accessible_from_v<ExecSpace, BView>,
                "basalt::gels: B must be accessible from the execution space");
  require(op != Op::transpose || std::is_floating_point_v<T>, "gels", "op",
          "a complex system is solved as Op::none or Op::conj_transpose");
  require_int_extents("gels", "A", A);
  require_int_extents("gels", "B", B);
  const int m = static_cast<int>(A.extent(0)), n = static_cast<int>(A.extent(1));
  const int p = std::max(m, n), q = std::min(m, n), nrhs = static_cast<int>(B.extent(1));
  require(static_cast<int>(B.extent(0)) == p, "gels", "B", "B has ", B.extent(0), " rows; A is ", m,
          " x ", n, " and needs max(m, n)");
  if (q == 0 || nrhs == 0) {
    Kokkos::deep_copy(exec, B, T(0));
    exec.fence();
    return 0;
  }
  const auto tune = tuning::qr_applied<ExecSpace>(std::min(m, n), nrhs);
  const bool wide = m < n;
  const bool minimum_norm = (op != Op::none) != wide;
  const impl::ScratchViews<ExecSpace, impl::GelsWorkViews<ExecSpace, T>> work(exec, q, wide ? n : 0,
                                                                              wide ? m : 0);
  if (!wide) {
    const int info = impl::gels(exec, minimum_norm, A, work.tau, B, tune);
    exec.fence();
    return info;
  }
  // The QR of A^H, written back as its adjoint: xGELQF's storage.
  impl::copy_adjoint(exec, A, work.f);
  const int info = impl::gels(exec, minimum_norm, work.f, work.tau, B, tune);
  impl::copy_adjoint(exec, work.f, A);
  exec.fence();
  return info;
}

// Op none: min ||B - A X|| for m >= n, the minimum-norm solution of A X = B for m < n.
template <class ExecSpace, class AView, class BView>
int gels(const ExecSpace& exec, const AView& A, const BView& B) {
  return gels(exec, Op::none, A, B);
}

}  // namespace basalt
