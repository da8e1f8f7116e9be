#pragma once
// Launcher of the CUDA SELL-P SpMM (paper 002, section 5.1, the y = 1 variant: one thread per
// row and group of vectors, no shared memory). No Kokkos: sellp_spmm.cu includes this.
//
// Each thread walks its row's slice entries once and applies each matrix entry to a group of
// vectors (32 bytes of them) whose partial sums stay in registers, so the matrix is read once per
// group instead of once per vector. The vectors of one row of X are contiguous (row-major X, the
// paper's layout); when they are 16-byte aligned they are read 16 bytes at a time. Up to eight
// threads share a row, one group each, side by side in the block: together they read whole
// rows of X while those are in cache, instead of one group's part of every row per pass.
#include <cuda_runtime.h>

#include <cstdint>

namespace basalt::cuda::kernels {

struct SellpSpmmProblem {
  std::int64_t num_rows = 0, num_vectors = 0;
  int slice_size = 32;
  const int* slice_ptr = nullptr;  // device pointers, the SellP's own arrays
  const int* columns = nullptr;
  std::int64_t x_row_stride = 1;  // elements between X(c, j) and X(c + 1, j); X(c, j + 1) is next
  std::int64_t y_row_stride = 1;
};

// Y = alpha A X + beta Y; beta = 0 does not read Y, alpha = 0 reads neither A nor X.
// Asynchronous on stream.
template <class T>
void sellp_spmm(cudaStream_t stream, const SellpSpmmProblem& problem, const T* values, T alpha,
                const T* X, T beta, T* Y);

}  // namespace basalt::cuda::kernels
