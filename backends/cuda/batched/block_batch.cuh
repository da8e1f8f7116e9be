#pragma once
// What the block-per-matrix batched kernels share (matrices of 33 to 512 rows): thread i of a
// block owns row i of its matrix, the rows of the current 32-column panel in registers, and
// the trailing columns go through in chunks of `chunk_width` columns, also in registers, so
// shared memory holds only one chunk's rows of the other factor.
#include <cuComplex.h>

#include <cstdint>

#include "basalt/backends/cuda/batched/getrf_batched_launch.hpp"
#include "basalt/backends/cuda/batched/warp_batch.cuh"
#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/first_largest.cuh"
#include "basalt/backends/cuda/scalar_ops.cuh"

namespace basalt::cuda::kernels::block {

// Columns of a panel, held in registers by the thread that owns the row.
constexpr int panel_width = 32;
constexpr int max_threads = 512;
constexpr int max_warps = max_threads / 32;
// The kernels are compiled for blocks of at most short_threads (matrices of up to 256 rows, all
// registers a thread may take) and of at most max_threads (257 to 512 rows, at most 128
// registers a thread, so that the block fits an SM).
constexpr int short_threads = 256;

// Columns of a trailing chunk: 128 bytes of a row, so that a row of the panel and one of the
// chunk fit in registers even in complex double (32 + 8 values).
template <class T>
constexpr int chunk_width = static_cast<int>(128 / sizeof(T));

// Threads per block for matrices of at most `rows` rows: one per row, whole warps.
inline int threads_for(int rows) { return rows <= 32 ? 32 : (rows + 31) / 32 * 32; }

// Element (i, c) of a located matrix.
template <class T>
__device__ inline T& at(const warp::Located<T>& a, int i, int c) {
  return a.base[i * a.row_stride + c * a.col_stride];
}

// The candidate of largest `value`, the smallest `at` among equals, over the whole block, on
// every thread (value 0 where no thread holds a positive one). `value` is -1 for a thread with
// no candidate. One __syncthreads; the caller must pass another before the next call (values and
// ats are reused).
template <class Real>
__device__ inline void first_largest(Real& value, int& at, Real* values, int* ats) {
  warp_first_largest(value, at);
  if (threadIdx.x % 32 == 0) {
    values[threadIdx.x / 32] = value;
    ats[threadIdx.x / 32] = at;
  }
  __syncthreads();
  for (int w = 0; w < static_cast<int>(blockDim.x / 32); ++w) {
    const Real other = values[w];
    const int other_at = ats[w];
    if (other > value || (other == value && other_at < at)) {
      value = other;
      at = other_at;
    }
  }
}

}  // namespace basalt::cuda::kernels::block
