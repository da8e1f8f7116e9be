#pragma once
// gemm, trsm and herk for the drivers: a backend's specialization where there is one (cuBLAS on the
// execution space's stream), else Kokkos Kernels. Kokkos Kernels 3.4 takes no execution space
// instance and runs on the default one, so that call is fenced on both sides to keep it in
// order with the caller's work on any instance, under every Kokkos Kernels version.
#include <KokkosBlas3_gemm.hpp>
#include <KokkosBlas3_trsm.hpp>
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <utility>

#include "basalt/core/dispatch.hpp"
#include "basalt/core/profiling.hpp"
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

// B = alpha op(A)^-1 B (side left) or alpha B op(A)^-1 (side right), A triangular
template <class ExecSpace, class AView, class BView, class Scalar>
void trsm(const ExecSpace& exec, ApplySide side, bool lower, Op op, bool unit_diagonal,
          Scalar alpha, const AView& A, const BView& B) {
  if (B.extent(0) == 0 || B.extent(1) == 0) return;
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

// C = alpha op(A) op(A)^H + beta C on one triangle of the n x n C (LAPACK's xHERK, xSYRK for real
// scalars): op is Op::none (A n x k) or Op::conj_transpose (A k x n), alpha and beta are real,
// the other triangle is not touched and the diagonal comes out real. The portable version halves
// C recursively, the blocks off the diagonal as gemms, down to diagonal blocks of at most
// herk_leaf columns, each a full gemm into a workspace of which one triangle is kept: Kokkos
// Kernels 3.4 has no herk.
inline constexpr int herk_leaf = 128;

namespace detail {

// The rows of op(A) in `rows`, as a View of A: A(rows, :) or A(:, rows).
template <class AView>
auto op_rows(const AView& A, Op op, std::pair<int, int> rows) {
  return op == Op::none ? Kokkos::subview(A, rows, Kokkos::ALL)
                        : Kokkos::subview(A, Kokkos::ALL, rows);
}

template <class ExecSpace, class AView, class CView, class WView, class Real>
void portable_herk(const ExecSpace& exec, bool lower, Op op, Real alpha, const AView& A, Real beta,
                   const CView& C, const WView& work) {
  using T = typename CView::non_const_value_type;
  const int n = static_cast<int>(C.extent(0));
  if (n > herk_leaf) {
    const int n1 = n / 2;
    const auto first = std::make_pair(0, n1), second = std::make_pair(n1, n);
    const auto A1 = op_rows(A, op, first), A2 = op_rows(A, op, second);
    const Op op_left = op, op_right = op == Op::none ? Op::conj_transpose : Op::none;
    portable_herk(exec, lower, op, alpha, A1, beta, Kokkos::subview(C, first, first), work);
    if (lower)
      gemm(exec, op_left, op_right, T(alpha), A2, A1, T(beta), Kokkos::subview(C, second, first));
    else
      gemm(exec, op_left, op_right, T(alpha), A1, A2, T(beta), Kokkos::subview(C, first, second));
    portable_herk(exec, lower, op, alpha, A2, beta, Kokkos::subview(C, second, second), work);
    return;
  }
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

}  // namespace detail

template <class ExecSpace, class AView, class CView, class Real>
void herk(const ExecSpace& exec, bool lower, Op op, Real alpha, const AView& A, Real beta,
          const CView& C) {
  const auto k = op == Op::none ? A.extent(1) : A.extent(0);
  if (C.extent(0) == 0 || ((alpha == Real(0) || k == 0) && beta == Real(1))) return;
  ProfilingRegion region("basalt::herk");
  using Spec = Specialization<routine::herk, ExecSpace>;
  if constexpr (Spec::available) {
    Spec::apply(exec, lower, op, alpha, A, beta, C);
  } else {
    using T = typename CView::non_const_value_type;
    const int leaf = std::min<int>(herk_leaf, C.extent(0));
    Kokkos::View<T**, Kokkos::LayoutLeft, typename ExecSpace::memory_space> work(
        Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "basalt::herk::work"), leaf, leaf);
    detail::portable_herk(exec, lower, op, alpha, A, beta, C, work);
  }
}

}  // namespace basalt::impl
