#pragma once
// gemm, trsm and herk for the drivers: a backend's specialization where there is one (cuBLAS on the
// execution space's stream), else Kokkos Kernels. Kokkos Kernels 3.4 takes no execution space
// instance and runs on the default one, so that call is fenced on both sides to keep it in
// order with the caller's work on any instance, under every Kokkos Kernels version.
#include <KokkosBlas3_gemm.hpp>
#include <KokkosBlas3_trmm.hpp>
#include <KokkosBlas3_trsm.hpp>
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <utility>

#include "basalt/backends/host/blas.hpp"
#include "basalt/core/dispatch.hpp"
#include "basalt/core/profiling.hpp"
#include "basalt/core/tuning.hpp"
#include "basalt/core/views.hpp"
#if defined(BASALT_ENABLE_CUDA)
#include "basalt/backends/cuda/dense/blas.hpp"
#endif

namespace basalt::impl {

// C = alpha op(A) op(B) + beta C
template <class ExecSpace, class AView, class BView, class CView, class Scalar>
void gemm(const ExecSpace& exec, Op op_a, Op op_b, Scalar alpha, const AView& A, const BView& B,
          Scalar beta, const CView& C) {
  const auto inner = op_a == Op::none ? A.extent(1) : A.extent(0);
  if (C.extent(0) == 0 || C.extent(1) == 0 || (inner == 0 && beta == Scalar(1))) return;
  ProfilingRegion region("basalt::gemm");
  using Spec = Specialization<routine::gemm, ExecSpace>;
  if constexpr (Spec::available) {
    Spec::apply(exec, op_a, op_b, alpha, A, B, beta, C);
  } else {
    exec.fence();
    KokkosBlas::gemm(blas_letter(op_a), blas_letter(op_b), alpha, A, B, beta, C);
    ExecSpace().fence();
  }
}

// B = alpha op(A)^-1 B (side left) or alpha B op(A)^-1 (side right), A triangular. A triangle
// wider than tuning::trsm_leaf_width splits in two: two half-width solves and one gemm, so most
// of the flops run as gemm (a vendor's trsm on a wide triangle runs far below its gemm).
template <class ExecSpace, class AView, class BView, class Scalar>
void trsm(const ExecSpace& exec, ApplySide side, bool lower, Op op, bool unit_diagonal,
          Scalar alpha, const AView& A, const BView& B) {
  if (B.extent(0) == 0 || B.extent(1) == 0) return;
  const int width = static_cast<int>(A.extent(0));
  if (width > tuning::trsm_leaf_width<ExecSpace>()) {
    const std::pair<int, int> first(0, width / 2), second(width / 2, width);
    const auto A11 = Kokkos::subview(A, first, first);
    const auto A22 = Kokkos::subview(A, second, second);
    // The stored off-diagonal block: op(A) = [T11 0; op(off) T22] when op(A) is lower, else
    // [T11 op(off); 0 T22].
    const auto off = lower ? Kokkos::subview(A, second, first) : Kokkos::subview(A, first, second);
    const bool effective_lower = lower == (op == Op::none);
    const auto solve = [&](const auto& T, Scalar scale, const auto& X) {
      trsm(exec, side, lower, op, unit_diagonal, scale, T, X);
    };
    if (side == ApplySide::left) {
      const auto B1 = Kokkos::subview(B, first, Kokkos::ALL);
      const auto B2 = Kokkos::subview(B, second, Kokkos::ALL);
      if (effective_lower) {  // X1 = T11^-1 alpha B1, then X2 = T22^-1 (alpha B2 - T21 X1)
        solve(A11, alpha, B1);
        gemm(exec, op, Op::none, Scalar(-1), off, B1, alpha, B2);
        solve(A22, Scalar(1), B2);
      } else {  // X2 = T22^-1 alpha B2, then X1 = T11^-1 (alpha B1 - T12 X2)
        solve(A22, alpha, B2);
        gemm(exec, op, Op::none, Scalar(-1), off, B2, alpha, B1);
        solve(A11, Scalar(1), B1);
      }
    } else {
      const auto B1 = Kokkos::subview(B, Kokkos::ALL, first);
      const auto B2 = Kokkos::subview(B, Kokkos::ALL, second);
      if (effective_lower) {  // X2 = alpha B2 T22^-1, then X1 = (alpha B1 - X2 T21) T11^-1
        solve(A22, alpha, B2);
        gemm(exec, Op::none, op, Scalar(-1), B2, off, alpha, B1);
        solve(A11, Scalar(1), B1);
      } else {  // X1 = alpha B1 T11^-1, then X2 = (alpha B2 - X1 T12) T22^-1
        solve(A11, alpha, B1);
        gemm(exec, Op::none, op, Scalar(-1), B1, off, alpha, B2);
        solve(A22, Scalar(1), B2);
      }
    }
    return;
  }
  ProfilingRegion region("basalt::trsm");
  using Spec = Specialization<routine::trsm, ExecSpace>;
  if constexpr (Spec::available) {
    Spec::apply(exec, side, lower, op, unit_diagonal, alpha, A, B);
  } else {
    exec.fence();
    KokkosBlas::trsm(side == ApplySide::left ? "L" : "R", lower ? "L" : "U", blas_letter(op),
                     unit_diagonal ? "U" : "N", alpha, A, B);
    ExecSpace().fence();
  }
}

template <class ExecSpace, class AView, class BView, class Scalar>
void trsm_left(const ExecSpace& exec, bool lower, Op op, bool unit_diagonal, Scalar alpha,
               const AView& A, const BView& B) {
  trsm(exec, ApplySide::left, lower, op, unit_diagonal, alpha, A, B);
}

namespace detail {

// The rows of op(A) in `rows`, as a View of A: A(rows, :) or A(:, rows).
template <class AView>
auto op_rows(const AView& A, Op op, std::pair<int, int> rows) {
  return op == Op::none ? Kokkos::subview(A, rows, Kokkos::ALL)
                        : Kokkos::subview(A, Kokkos::ALL, rows);
}

// herk on C's triangle split in halves down to `leaf` columns: the off-diagonal blocks by gemm,
// the diagonal leaves by herk_leaf(A rows, C block).
template <class ExecSpace, class AView, class CView, class Real, class Leaf>
void split_herk(const ExecSpace& exec, bool lower, Op op, Real alpha, const AView& A, Real beta,
                const CView& C, int leaf, const Leaf& herk_leaf) {
  using T = typename CView::non_const_value_type;
  const int n = static_cast<int>(C.extent(0));
  if (n <= leaf) return herk_leaf(A, C);
  const int n1 = n / 2;
  const auto first = std::make_pair(0, n1), second = std::make_pair(n1, n);
  const auto A1 = op_rows(A, op, first), A2 = op_rows(A, op, second);
  const Op op_left = op, op_right = op == Op::none ? Op::conj_transpose : Op::none;
  split_herk(exec, lower, op, alpha, A1, beta, Kokkos::subview(C, first, first), leaf, herk_leaf);
  if (lower)
    gemm(exec, op_left, op_right, T(alpha), A2, A1, T(beta), Kokkos::subview(C, second, first));
  else
    gemm(exec, op_left, op_right, T(alpha), A1, A2, T(beta), Kokkos::subview(C, first, second));
  split_herk(exec, lower, op, alpha, A2, beta, Kokkos::subview(C, second, second), leaf, herk_leaf);
}

// The portable leaf: the full block op(A) op(A)^H by gemm into `work`, then its triangle into C.
template <class ExecSpace, class AView, class CView, class WView, class Real>
void portable_herk_leaf(const ExecSpace& exec, bool lower, Op op, Real alpha, const AView& A,
                        Real beta, const CView& C, const WView& work) {
  using T = typename CView::non_const_value_type;
  const int n = static_cast<int>(C.extent(0));
  const auto W = Kokkos::subview(work, std::make_pair(0, n), std::make_pair(0, n));
  gemm(exec, op, op == Op::none ? Op::conj_transpose : Op::none, T(1), A, A, T(0), W);
  Kokkos::parallel_for(
      "basalt::herk::triangle",
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>>(exec, {0, 0}, {n, n}),
      KOKKOS_LAMBDA(const int i, const int j) {
        if (lower ? i < j : i > j) return;
        // BLAS: beta = 0 writes C without reading it.
        T c = beta == Real(0) ? T(alpha) * W(i, j) : T(alpha) * W(i, j) + T(beta) * C(i, j);
        if (i == j) c = T(real_part(c));
        C(i, j) = c;
      });
}

// herk without a backend: split down to `leaf` columns, each leaf by portable_herk_leaf.
template <class ExecSpace, class AView, class CView, class Real>
void portable_herk(const ExecSpace& exec, bool lower, Op op, Real alpha, const AView& A, Real beta,
                   const CView& C, int leaf) {
  using T = typename CView::non_const_value_type;
  Kokkos::View<T**, Kokkos::LayoutLeft, typename ExecSpace::memory_space> work(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "basalt::herk::work"), leaf, leaf);
  split_herk(exec, lower, op, alpha, A, beta, C, leaf,
             [&](const auto& A_rows, const auto& C_block) {
               portable_herk_leaf(exec, lower, op, alpha, A_rows, beta, C_block, work);
             });
}

// herk (below) with C split down to diagonal blocks of at most `leaf` columns (leaf >= 1).
template <class ExecSpace, class AView, class CView, class Real>
void herk_with_leaf(const ExecSpace& exec, bool lower, Op op, Real alpha, const AView& A, Real beta,
                    const CView& C, int leaf) {
  leaf = std::min<int>(leaf, C.extent(0));
  using Spec = Specialization<routine::herk, ExecSpace>;
  if constexpr (Spec::available)
    split_herk(exec, lower, op, alpha, A, beta, C, leaf,
               [&](const auto& A_rows, const auto& C_block) {
                 Spec::apply(exec, lower, op, alpha, A_rows, beta, C_block);
               });
  else
    portable_herk(exec, lower, op, alpha, A, beta, C, leaf);
}

}  // namespace detail

// C = alpha op(A) op(A)^H + beta C on one triangle of the n x n C (LAPACK's xHERK, xSYRK for real
// scalars): op is Op::none (A n x k) or Op::conj_transpose (A k x n), alpha and beta are real,
// the other triangle is not touched and the diagonal comes out real. A backend's herk (cuBLAS,
// the host BLAS) takes diagonal blocks of up to tuning::herk_leaf_width columns, C halved
// recursively down to them with the blocks off the diagonal as gemms (cuBLAS' herk on a wide C
// runs below its gemm); without one, the same halving down to the portable leaf, a full gemm
// into a workspace of which one triangle is kept (Kokkos Kernels 3.4 has no herk).
template <class ExecSpace, class AView, class CView, class Real>
void herk(const ExecSpace& exec, bool lower, Op op, Real alpha, const AView& A, Real beta,
          const CView& C) {
  const auto k = op == Op::none ? A.extent(1) : A.extent(0);
  if (C.extent(0) == 0 || ((alpha == Real(0) || k == 0) && beta == Real(1))) return;
  ProfilingRegion region("basalt::herk");
  detail::herk_with_leaf(exec, lower, op, alpha, A, beta, C,
                         has_specialization_v<routine::herk, ExecSpace>
                             ? tuning::herk_leaf_width<ExecSpace>()
                             : tuning::portable_herk_leaf_width);
}

// B = alpha op(A) B (side left) or alpha B op(A) (side right), A triangular: what the QR
// drivers' compact-WY products need.
template <class ExecSpace, class AView, class BView, class Scalar>
void trmm(const ExecSpace& exec, ApplySide side, bool lower, Op op, bool unit_diagonal,
          Scalar alpha, const AView& A, const BView& B) {
  if (B.extent(0) == 0 || B.extent(1) == 0) return;
  ProfilingRegion region("basalt::trmm");
  using Spec = Specialization<routine::trmm, ExecSpace>;
  if constexpr (Spec::available) {
    Spec::apply(exec, side, lower, op, unit_diagonal, alpha, A, B);
  } else {
    exec.fence();
    KokkosBlas::trmm(side == ApplySide::left ? "L" : "R", lower ? "L" : "U", blas_letter(op),
                     unit_diagonal ? "U" : "N", alpha, A, B);
    ExecSpace().fence();
  }
}

}  // namespace basalt::impl
