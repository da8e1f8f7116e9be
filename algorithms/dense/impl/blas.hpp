#pragma once
// gemm and trsm for the drivers: a backend's specialization where there is one (cuBLAS on the
// execution space's stream), else Kokkos Kernels. Kokkos Kernels 3.4 takes no execution space
// instance and runs on the default one, so that call is fenced on both sides to keep it in
// order with the caller's work on any instance, under every Kokkos Kernels version.
#include <KokkosBlas3_gemm.hpp>
#include <KokkosBlas3_trmm.hpp>
#include <KokkosBlas3_trsm.hpp>
#include <Kokkos_Core.hpp>

#include "basalt/core/dispatch.hpp"
#include "basalt/core/profiling.hpp"
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

// B = alpha op(A)^-1 B, A triangular (side left only: what the LU drivers need)
template <class ExecSpace, class AView, class BView, class Scalar>
void trsm_left(const ExecSpace& exec, bool lower, Op op, bool unit_diagonal, Scalar alpha,
               const AView& A, const BView& B) {
  if (B.extent(0) == 0 || B.extent(1) == 0) return;
  ProfilingRegion region("basalt::trsm");
  using Spec = Specialization<routine::trsm, ExecSpace>;
  if constexpr (Spec::available) {
    Spec::apply(exec, lower, op, unit_diagonal, alpha, A, B);
  } else {
    exec.fence();
    KokkosBlas::trsm("L", lower ? "L" : "U", blas_letter(op), unit_diagonal ? "U" : "N", alpha, A,
                     B);
    ExecSpace().fence();
  }
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
