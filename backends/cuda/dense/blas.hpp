#pragma once
// The drivers' gemm, trsm and herk on CUDA: cuBLAS on the caller's stream
// (basalt/backends/cuda/cublas.hpp).
#include "basalt/backends/cuda/cublas.hpp"
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
