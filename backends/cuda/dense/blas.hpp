#pragma once
// The drivers' gemm, trsm and herk on CUDA: cuBLAS on the caller's stream
// (basalt/backends/cuda/cublas.hpp), and Basalt's kernel for small unit lower solves.
#include "basalt/backends/cuda/cublas.hpp"
#include "basalt/backends/cuda/dense/trsm_small_launch.hpp"
#include "basalt/backends/cuda/scalar.hpp"
#include "basalt/core/dispatch.hpp"
#include "basalt/core/errors.hpp"

namespace basalt {

template <>
struct Specialization<routine::gemm, Kokkos::Cuda> {
  static constexpr bool available = true;
  template <class AView, class BView, class CView, class Scalar>
  static void apply(const Kokkos::Cuda& exec, Op op_a, Op op_b, Scalar alpha, const AView& A,
                    const BView& B, Scalar beta, const CView& C) {
    require(cublas::column_major(A, B, C), "gemm", "A", "cuBLAS takes column-major matrices");
    cublas::gemm(exec, op_a, op_b, alpha, A, B, beta, C);
  }
};

template <>
struct Specialization<routine::trsm, Kokkos::Cuda> {
  static constexpr bool available = true;
  template <class AView, class BView, class Scalar>
  static void apply(const Kokkos::Cuda& exec, ApplySide side, bool lower, Op op, bool unit_diagonal,
                    Scalar alpha, const AView& A, const BView& B) {
    require(cublas::column_major(A, B), "trsm", "A", "cuBLAS takes column-major matrices");
    // LU's unit lower solves (the look-ahead's next block column, U's rows of the trailing
    // matrix, getrs): Basalt's one-kernel solve, where cuBLAS takes three.
    if (side == ApplySide::left && lower && op == Op::none && unit_diagonal &&
        A.extent(0) <= std::size_t(cuda::kernels::small_trsm_max_rows)) {
      using T = cuda::scalar_t<typename BView::value_type>;
      const typename BView::non_const_value_type scale = alpha;
      cuda::kernels::solve_unit_lower<T>(exec.cuda_stream(), cuda::device_pointer(A.data()),
                                         A.stride(1), cuda::device_pointer(B.data()), B.stride(1),
                                         static_cast<int>(A.extent(0)), B.extent(1),
                                         *cuda::device_pointer(&scale));
      return;
    }
    cublas::trsm(exec, side, lower, op, unit_diagonal, alpha, A, B);
  }
};

template <>
struct Specialization<routine::herk, Kokkos::Cuda> {
  static constexpr bool available = true;
  template <class AView, class CView, class Real>
  static void apply(const Kokkos::Cuda& exec, bool lower, Op op, Real alpha, const AView& A,
                    Real beta, const CView& C) {
    require(cublas::column_major(A, C), "herk", "A", "cuBLAS takes column-major matrices");
    cublas::herk(exec, lower, op, alpha, A, beta, C);
  }
};

template <>
struct Specialization<routine::trmm, Kokkos::Cuda> {
  static constexpr bool available = true;
  template <class AView, class BView, class Scalar>
  static void apply(const Kokkos::Cuda& exec, ApplySide side, bool lower, Op op, bool unit_diagonal,
                    Scalar alpha, const AView& A, const BView& B) {
    require(cublas::column_major(A, B), "trmm", "A", "cuBLAS takes column-major matrices");
    cublas::trmm(exec, side, lower, op, unit_diagonal, alpha, A, B);
  }
};

}  // namespace basalt
