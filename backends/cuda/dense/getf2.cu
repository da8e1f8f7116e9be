// CUDA LU panel: one cooperative kernel per panel, two grid barriers per column.
#include <cooperative_groups.h>
#include <cuComplex.h>

#include <algorithm>

#include "basalt/backends/cuda/dense/getf2_launch.hpp"
#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/scalar_ops.cuh"

namespace basalt::cuda::kernels {

namespace {

namespace cg = cooperative_groups;

constexpr int panel_threads = 256;
constexpr int min_rows_per_block = 64;

// The larger magnitude wins; among equal ones the smaller row (LAPACK's first maximum).
// loc < 0 marks "no candidate".
template <class Real>
__device__ ValueIndex<Real> better(ValueIndex<Real> a, ValueIndex<Real> b) {
  if (b.loc < 0) return a;
  if (a.loc < 0 || b.val > a.val || (b.val == a.val && b.loc < a.loc)) return b;
  return a;
}

// The block's best candidate, on every thread.
template <class Real>
__device__ ValueIndex<Real> block_reduce(ValueIndex<Real> mine, ValueIndex<Real>* per_warp) {
  for (int offset = 16; offset > 0; offset /= 2) {
    ValueIndex<Real> other;
    other.val = __shfl_down_sync(0xffffffff, mine.val, offset);
    other.loc = __shfl_down_sync(0xffffffff, mine.loc, offset);
    mine = better(mine, other);
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) per_warp[warp] = mine;
  __syncthreads();
  ValueIndex<Real> best = per_warp[0];
  for (int i = 1; i < panel_threads / 32; ++i) best = better(best, per_warp[i]);
  __syncthreads();  // per_warp is reused by the next reduction
  return best;
}

template <class T, class Real>
__global__ void __launch_bounds__(panel_threads)
    factor_panel(T* a, int m, int w, std::int64_t lda, int offset, int* ipiv, int* info,
                 ValueIndex<Real>* block_best) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* pivot_row = reinterpret_cast<T*>(shared_bytes);  // w entries: the row moving up to jj
  T* row_jj = pivot_row + w;                          // w entries: the row moving down to p
  __shared__ ValueIndex<Real> per_warp[panel_threads / 32];
  cg::grid_group grid = cg::this_grid();

  const int rows_per_block = (m + gridDim.x - 1) / gridDim.x;
  const int first_row = blockIdx.x * rows_per_block;
  const int end_row = min(m, first_row + rows_per_block);
  auto at = [&](int i, int c) -> T& { return a[i + c * lda]; };

  for (int jj = 0; jj < min(m, w); ++jj) {
    // This block's candidate for the pivot of column jj (NaN never compares larger).
    ValueIndex<Real> mine{Real(-1), -1};
    for (int i = max(first_row, jj) + threadIdx.x; i < end_row; i += blockDim.x) {
      const Real v = ops::abs1(at(i, jj));
      if (v > mine.val) mine = {v, i};
    }
    mine = block_reduce(mine, per_warp);
    if (threadIdx.x == 0) block_best[blockIdx.x] = mine;
    grid.sync();

    // Every block reduces the same candidates in the same order: all agree on p. A column with
    // no positive magnitude (zero, or NaN throughout) keeps its diagonal, as LAPACK does.
    ValueIndex<Real> best{Real(-1), -1};
    for (int b = threadIdx.x; b < gridDim.x; b += blockDim.x) best = better(best, block_best[b]);
    best = block_reduce(best, per_warp);
    const int p = best.loc >= 0 && best.val > Real(0) ? best.loc : jj;
    for (int c = threadIdx.x; c < w; c += blockDim.x) {
      pivot_row[c] = at(p, c);
      row_jj[c] = at(jj, c);
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) ipiv[jj] = p + 1;
    grid.sync();  // both rows are read everywhere before their owners overwrite them

    for (int c = threadIdx.x; c < w; c += blockDim.x) {
      if (jj >= first_row && jj < end_row) at(jj, c) = pivot_row[c];
      if (p != jj && p >= first_row && p < end_row) at(p, c) = row_jj[c];
    }
    __syncthreads();
    const T pivot = pivot_row[jj];
    if (ops::is_zero(pivot)) {
      if (blockIdx.x == 0 && threadIdx.x == 0 && *info == 0) *info = offset + jj + 1;
      continue;  // LAPACK leaves a zero pivot's column unscaled
    }
    const int first = max(first_row, jj + 1), count = max(0, end_row - first);
    for (int i = first + threadIdx.x; i < end_row; i += blockDim.x)
      at(i, jj) = ops::divide(at(i, jj), pivot);
    __syncthreads();
    const int updates = count * (w - jj - 1);
    for (int e = threadIdx.x; e < updates; e += blockDim.x) {
      const int i = first + e % count, c = jj + 1 + e / count;
      at(i, c) = ops::minus_product(at(i, c), at(i, jj), pivot_row[c]);
    }
    __syncthreads();
  }
}

}  // namespace

template <class T, class Real>
void getf2(int device, cudaStream_t stream, T* panel, int* ipiv, int* info,
           ValueIndex<Real>* block_best, int max_blocks, const Getf2Problem& p) {
  if (p.m == 0 || p.w == 0) return;
  const auto kernel = factor_panel<T, Real>;
  const std::size_t shared = 2 * std::size_t(p.w) * sizeof(T);
  int cooperative = 0, sms = 0, per_sm = 0;
  BASALT_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
  if (!cooperative) BASALT_CUDA_CHECK(cudaErrorNotSupported);
  BASALT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  BASALT_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, panel_threads, shared));
  // Every block resident at once (the occupancy bound), and enough rows per block to matter.
  const int blocks = std::max(
      1, std::min({per_sm * sms, max_blocks, (p.m + min_rows_per_block - 1) / min_rows_per_block}));
  int m = p.m, w = p.w, offset = p.offset;
  std::int64_t lda = p.lda;
  void* args[] = {&panel, &m, &w, &lda, &offset, &ipiv, &info, &block_best};
  BASALT_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(kernel), blocks,
                                                panel_threads, args, shared, stream));
}

template void getf2<float, float>(int, cudaStream_t, float*, int*, int*, ValueIndex<float>*, int,
                                  const Getf2Problem&);
template void getf2<double, double>(int, cudaStream_t, double*, int*, int*, ValueIndex<double>*,
                                    int, const Getf2Problem&);
template void getf2<cuFloatComplex, float>(int, cudaStream_t, cuFloatComplex*, int*, int*,
                                           ValueIndex<float>*, int, const Getf2Problem&);
template void getf2<cuDoubleComplex, double>(int, cudaStream_t, cuDoubleComplex*, int*, int*,
                                             ValueIndex<double>*, int, const Getf2Problem&);

}  // namespace basalt::cuda::kernels
