#pragma once
// Launchers of the CUDA batched Cholesky (seed 001). No Kokkos: the .cu files include this.
//
// Small matrices (potrf_batched.cu), as the batched LU: one warp segment per matrix (4, 8, 16 or 32
// lanes), lane i holding row i of the lower factor in registers (for an upper triangle, column i,
// conjugated), the diagonal element and the factor's column broadcast by shuffles. Matrices up to
// max_size x max_size.
//
// Larger matrices, up to block_max_size (potrf_batched_block.cu): one thread block per matrix,
// right-looking by 32-column panels (16 in complex arithmetic): one warp factors the diagonal tile
// in registers, the rows below solve against it one row per thread, and the trailing update runs
// as a product of L21 (in shared memory) by itself, a 32 x 32 tile per warp and a 4 x 8 register
// tile per lane (in complex, in passes of 4 x 2).
#include <cuda_runtime.h>

#include "basalt/backends/cuda/batched/getrf_batched_launch.hpp"

namespace basalt::cuda::kernels {

inline constexpr int potrf_batched_max_size = 32;
inline constexpr int potrf_batched_block_max_size = 512;

// Cholesky factorization of the `lower` (else upper) triangle of `count` Hermitian matrices of
// at most max_size x max_size (largest: the order of the largest). info(b) = info[b *
// info_stride], LAPACK's: a matrix whose leading minor of order k is not positive definite
// stops at k. Asynchronous on stream.
template <class T>
void potrf_batched_small(cudaStream_t stream, bool lower, const DeviceBatch<T>& A, int* info,
                         std::int64_t info_stride, int count, int largest);

// The same for the matrices of every entry of `classes` at once (A variable, its order set).
template <class T>
void potrf_batched_small_classes(cudaStream_t stream, bool lower, const DeviceBatch<T>& A,
                                 int* info, std::int64_t info_stride, WarpClasses classes);

// The matrices of up to `largest` rows and columns that one multiprocessor keeps resident under
// potrf_batched_small's kernel.
template <class T>
int potrf_batched_small_resident_matrices(int largest);

// The same for matrices of order at most block_max_size.
template <class T>
void potrf_batched_block(cudaStream_t stream, bool lower, const DeviceBatch<T>& A, int* info,
                         std::int64_t info_stride, int count, int largest);

}  // namespace basalt::cuda::kernels
