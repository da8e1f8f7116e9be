// CUDA batched LU of matrices of 33 to 512 rows and columns: one thread block per matrix, one row
// per thread, blocked by 32-column panels.
#include <cuComplex.h>

#include "basalt/backends/cuda/batched/block_batch.cuh"
#include "basalt/backends/cuda/batched/getrf_batched_launch.hpp"
#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/scalar_ops.cuh"

namespace basalt::cuda::kernels {

namespace {

// Right-looking LU by panels of 32 columns (LAPACK's getrf with getf2 on the panel). Thread i
// loads row i of the panel (i >= the panel's first column) into registers and factors it as the
// warp kernel does: rows are not moved, each thread tracks the position its row has reached
// under the interchanges, the pivot is the first largest magnitude in position order (a NaN never
// is one; a column with no positive magnitude keeps its diagonal), and a zero pivot's column is
// left unscaled. The rows then land at their positions: the panel's columns from registers, every
// other column chunk by chunk through registers (thread i reads row i, writes it at its position:
// the interchanges applied to whole rows), the trailing chunks taking on the way the update
// A22 -= L21 U12, with U12 = L11^-1 A12 solved row by row in the same sweep: at step k the row at
// position k is final and is shared; the rows below subtract their L(., k) times it.
// Control flow depends only on the matrix's sizes, the same on every thread of the block.
template <class T, int MaxThreads>
__global__ void __launch_bounds__(MaxThreads)
    getrf_block(DeviceBatch<T> batch, DeviceBatch<int> pivots, int* info, std::int64_t info_stride,
                int count) {
  using Real = ops::real_of_t<T>;
  constexpr int NB = block::panel_width, W = block::chunk_width<T>;
  __shared__ T pivot_row[NB];
  __shared__ T u[NB][W];  // the chunk's rows of U12
  __shared__ Real values[block::max_warps];
  __shared__ int ats[block::max_warps];

  const int b = warp::member(batch, blockIdx.x, count), i = threadIdx.x;
  const warp::Located<T> a = warp::locate(batch, b);
  const warp::Located<int> ipiv = warp::locate(pivots, b);
  const int m = a.rows, n = a.cols, steps = min(m, n);

  int first_zero = 0;
  for (int k0 = 0; k0 < steps; k0 += NB) {
    const int jb = min(NB, steps - k0);
    const bool mine = k0 <= i && i < m;
    int position = i;
    T row[NB];
#pragma unroll
    for (int c = 0; c < NB; ++c) row[c] = mine && c < jb ? block::at(a, i, k0 + c) : T{};

#pragma unroll
    for (int j = 0; j < NB; ++j) {
      if (j >= jb) continue;
      const int c = k0 + j;
      const Real magnitude = ops::abs1(row[j]);
      Real best = mine && position >= c && magnitude == magnitude ? magnitude : Real(-1);
      int best_at = position;
      block::first_largest(best, best_at, values, ats);
      const int p = best > Real(0) ? best_at : c;
      if (i == 0) ipiv.base[c * ipiv.row_stride] = p + 1;
      if (mine) {
        if (position == p)
          position = c;
        else if (position == c)
          position = p;
      }
      if (mine && position == c) {
#pragma unroll
        for (int cc = 0; cc < NB; ++cc) pivot_row[cc] = row[cc];
      }
      __syncthreads();  // pivot_row written; every thread has read values and ats
      const T pivot = pivot_row[j];
      const bool zero = ops::is_zero(pivot);
      if (zero && first_zero == 0) first_zero = c + 1;
      if (!zero && mine && position > c) {
        row[j] = ops::divide(row[j], pivot);
#pragma unroll
        for (int cc = j + 1; cc < NB; ++cc)
          if (cc < jb) row[cc] = ops::minus_product(row[cc], row[j], pivot_row[cc]);
      }
    }

    // Every thread read its panel row before the steps' barriers, so no store overwrites a row
    // still to be read.
    if (mine) {
#pragma unroll
      for (int c = 0; c < NB; ++c)
        if (c < jb) block::at(a, position, k0 + c) = row[c];
    }

    // The chunks of columns left of the panel (interchanges only), then right of it.
    const int trailing = k0 + jb;
    const int left_chunks = k0 / W;
    const int chunks = left_chunks + (n > trailing ? (n - trailing + W - 1) / W : 0);
    for (int s = 0; s < chunks; ++s) {
      const bool update = s >= left_chunks;
      const int c0 = update ? trailing + (s - left_chunks) * W : s * W;
      __syncthreads();  // u free again (the last chunk's reads done)
      T seg[W];
#pragma unroll
      for (int w = 0; w < W; ++w) seg[w] = mine && c0 + w < n ? block::at(a, i, c0 + w) : T{};
      if (update) {
#pragma unroll
        for (int k = 0; k < NB; ++k) {
          if (k >= jb) continue;
          if (mine && position == k0 + k) {
#pragma unroll
            for (int w = 0; w < W; ++w) u[k][w] = seg[w];
          }
          __syncthreads();
          if (mine && position > k0 + k) {
#pragma unroll
            for (int w = 0; w < W; ++w) seg[w] = ops::minus_product(seg[w], row[k], u[k][w]);
          }
        }
      } else {
        __syncthreads();  // every row of the chunk read before any lands at its position
      }
      if (mine) {
#pragma unroll
        for (int w = 0; w < W; ++w)
          if (c0 + w < n) block::at(a, position, c0 + w) = seg[w];
      }
    }
    __syncthreads();  // the next panel reads rows that other threads stored
  }
  if (i == 0) info[b * info_stride] = first_zero;
}

}  // namespace

template <class T>
void getrf_batched_block(cudaStream_t stream, const DeviceBatch<T>& A, const DeviceBatch<int>& ipiv,
                         int* info, std::int64_t info_stride, int count, int rows) {
  if (count == 0) return;
  const int threads = block::threads_for(rows);
  const auto kernel = threads <= block::short_threads ? getrf_block<T, block::short_threads>
                                                      : getrf_block<T, block::max_threads>;
  kernel<<<count, threads, 0, stream>>>(A, ipiv, info, info_stride, count);
  BASALT_CUDA_CHECK_LAUNCH();
}

#define BASALT_INSTANTIATE_GETRF_BATCHED_BLOCK(T)                           \
  template void getrf_batched_block<T>(cudaStream_t, const DeviceBatch<T>&, \
                                       const DeviceBatch<int>&, int*, std::int64_t, int, int);

BASALT_INSTANTIATE_GETRF_BATCHED_BLOCK(float)
BASALT_INSTANTIATE_GETRF_BATCHED_BLOCK(double)
BASALT_INSTANTIATE_GETRF_BATCHED_BLOCK(cuFloatComplex)
BASALT_INSTANTIATE_GETRF_BATCHED_BLOCK(cuDoubleComplex)

}  // namespace basalt::cuda::kernels
