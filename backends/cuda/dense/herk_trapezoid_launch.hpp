#pragma once
// Launcher of the CUDA herk on a trapezoid (basalt::portable::herk_trapezoid's
// contract): Cholesky's update of the columns right of a factored block in one kernel, where
// cuBLAS takes a herk and a gemm. No Kokkos: herk_trapezoid.cu includes this.
#include <cuda_runtime.h>

#include <cstdint>

namespace basalt::cuda::kernels {

// C -= L L1^H on the lower trapezoid of the m x n C (m >= n, row i of column j for i >= j), L
// m x k, L1 its first n rows. An entry (i, j) is at i * row_stride + j * column_stride in C and
// i * row_stride + j * k_stride in L, so an upper trapezoid (C^T, L^T stored) is the same call
// with the strides swapped.
template <class T>
struct TrapezoidProblem {
  int m = 0, n = 0, k = 0;
  const T* l = nullptr;
  std::int64_t l_row_stride = 1, l_k_stride = 1;
  T* c = nullptr;
  std::int64_t c_row_stride = 1, c_column_stride = 1;
};

// Whether the kernel runs on device: it needs cp.async (compute capability 8.0).
bool herk_trapezoid_available(int device);

// Asynchronous on stream; l and c are device pointers. T: float, double or cuDoubleComplex.
template <class T>
void herk_trapezoid(cudaStream_t stream, const TrapezoidProblem<T>& problem);

}  // namespace basalt::cuda::kernels
