#pragma once
// Launcher of the CUDA batched Householder QR for matrices up to 512 x 512 (seed 001: geqr2 as
// larfg + larf with block reductions, larft, larfb as products). No Kokkos: geqrf_block.cu
// includes this.
//
// One thread block per matrix, thread i owning row i. The matrix is factored in panels of 32
// columns: the panel in registers (each column's norm and its products with the panel's later
// columns one block-wide reduction of 32 values), then T of the block reflector, then the
// trailing columns in chunks read and written coalesced, C -= V T^H (V^H C). Under 40 kB of
// shared memory, so several blocks share an SM. Blocks have as many warps as the batch's
// tallest matrix needs; a block's warps past its own matrix's rows leave at once.
#include <cuda_runtime.h>

#include "basalt/backends/cuda/batched/getrf_batched_launch.hpp"

namespace basalt::cuda::kernels {

// Complex double stops at 256: from 257 rows its block's sums would exceed 48 KB of static shared
// memory, and its registers spill 6 KB.
template <class T>
inline constexpr int geqrf_batched_block_max_size = sizeof(T) > 8 ? 256 : 512;

// LAPACK's geqrf on `count` matrices of at most geqrf_batched_block_max_size<T> rows and columns
// (max_rows: the most rows of any of them), the same output as geqrf_batched_small.
// Asynchronous on stream.
template <class T>
void geqrf_batched_block(cudaStream_t stream, const DeviceBatch<T>& A, const DeviceBatch<T>& tau,
                         int count, int max_rows);

}  // namespace basalt::cuda::kernels
