// CUDA batched LU of small matrices: one warp per matrix, one row per lane, held in registers.
#include <cuComplex.h>

#include "basalt/backends/cuda/batched/getrf_batched_launch.hpp"
#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/scalar_ops.cuh"

namespace basalt::cuda::kernels {

namespace {

constexpr int warps_per_block = 4;
constexpr unsigned full_mask = 0xffffffff;

__device__ inline float shuffle(float v, int lane) { return __shfl_sync(full_mask, v, lane); }
__device__ inline double shuffle(double v, int lane) { return __shfl_sync(full_mask, v, lane); }
__device__ inline cuFloatComplex shuffle(cuFloatComplex v, int lane) {
  return make_cuFloatComplex(__shfl_sync(full_mask, v.x, lane), __shfl_sync(full_mask, v.y, lane));
}
__device__ inline cuDoubleComplex shuffle(cuDoubleComplex v, int lane) {
  return make_cuDoubleComplex(__shfl_sync(full_mask, v.x, lane), __shfl_sync(full_mask, v.y, lane));
}

// Matrix b of a batch: its first element, sizes and strides.
template <class T>
struct Located {
  T* base;
  int rows, cols;
  std::int64_t row_stride, col_stride;
};

template <class T>
__device__ Located<T> locate(const DeviceBatch<T>& batch, int b) {
  if (batch.variable)
    return {batch.data + batch.var_offset[b], batch.var_rows[b], batch.var_cols[b], 1,
            batch.var_ld[b]};
  return {batch.data + b * batch.batch_stride, batch.rows, batch.cols, batch.row_stride,
          batch.col_stride};
}

// LAPACK's getf2 on one matrix of up to 32 x N: lane i holds row i. The pivot is the first
// largest magnitude (a NaN never is one; a column with no positive magnitude keeps its
// diagonal), as in the portable kernel, so both give the same pivots.
template <class T, int N>
__global__ void __launch_bounds__(32 * warps_per_block)
    getrf_warp(DeviceBatch<T> batch, DeviceBatch<int> pivots, int* info, std::int64_t info_stride,
               int count) {
  using Real = ops::real_of_t<T>;
  const int b = blockIdx.x * warps_per_block + threadIdx.y;
  if (b >= count) return;  // the whole warp: b is the same on its lanes
  const int lane = threadIdx.x;
  const Located<T> a = locate(batch, b);
  const Located<int> ipiv = locate(pivots, b);
  const int m = a.rows, n = a.cols, steps = min(m, n);

  T row[N];
#pragma unroll
  for (int c = 0; c < N; ++c)
    row[c] = lane < m && c < n ? a.base[lane * a.row_stride + c * a.col_stride] : T{};

  int first_zero = 0;
#pragma unroll
  for (int j = 0; j < N; ++j) {
    if (j >= steps) break;
    const Real mine = ops::abs1(row[j]);
    Real best = lane >= j && lane < m && mine == mine ? mine : Real(-1);
    int at = lane;
    for (int offset = 16; offset > 0; offset /= 2) {
      const Real other = __shfl_xor_sync(full_mask, best, offset);
      const int other_at = __shfl_xor_sync(full_mask, at, offset);
      if (other > best || (other == best && other_at < at)) {
        best = other;
        at = other_at;
      }
    }
    const int p = best > Real(0) ? at : j;
    if (lane == 0) ipiv.base[j * ipiv.row_stride] = p + 1;
    if (p != j) {
#pragma unroll
      for (int c = 0; c < N; ++c) {
        const T from_j = shuffle(row[c], j), from_p = shuffle(row[c], p);
        if (lane == j) row[c] = from_p;
        if (lane == p) row[c] = from_j;
      }
    }
    const T pivot = shuffle(row[j], j);
    if (ops::is_zero(pivot)) {
      if (first_zero == 0) first_zero = j + 1;
      continue;  // LAPACK leaves a zero pivot's column unscaled
    }
    const bool below = lane > j && lane < m;
    if (below) row[j] = ops::divide(row[j], pivot);
#pragma unroll
    for (int c = j + 1; c < N; ++c) {
      const T u = shuffle(row[c], j);
      if (below && c < n) row[c] = ops::minus_product(row[c], row[j], u);
    }
  }

#pragma unroll
  for (int c = 0; c < N; ++c)
    if (lane < m && c < n) a.base[lane * a.row_stride + c * a.col_stride] = row[c];
  if (lane == 0) info[b * info_stride] = first_zero;
}

}  // namespace

template <class T>
void getrf_batched_small(cudaStream_t stream, const DeviceBatch<T>& A, const DeviceBatch<int>& ipiv,
                         int* info, std::int64_t info_stride, int count, int largest_cols) {
  if (count == 0) return;
  const dim3 block(32, warps_per_block);
  const int blocks = (count + warps_per_block - 1) / warps_per_block;
  // The narrowest register row that holds every matrix.
  auto launch = [&](auto kernel) {
    kernel<<<blocks, block, 0, stream>>>(A, ipiv, info, info_stride, count);
    BASALT_CUDA_CHECK_LAUNCH();
  };
  if (largest_cols <= 4)
    launch(getrf_warp<T, 4>);
  else if (largest_cols <= 8)
    launch(getrf_warp<T, 8>);
  else if (largest_cols <= 16)
    launch(getrf_warp<T, 16>);
  else
    launch(getrf_warp<T, 32>);
}

template void getrf_batched_small<float>(cudaStream_t, const DeviceBatch<float>&,
                                         const DeviceBatch<int>&, int*, std::int64_t, int, int);
template void getrf_batched_small<double>(cudaStream_t, const DeviceBatch<double>&,
                                          const DeviceBatch<int>&, int*, std::int64_t, int, int);
template void getrf_batched_small<cuFloatComplex>(cudaStream_t, const DeviceBatch<cuFloatComplex>&,
                                                  const DeviceBatch<int>&, int*, std::int64_t, int,
                                                  int);
template void getrf_batched_small<cuDoubleComplex>(cudaStream_t,
                                                   const DeviceBatch<cuDoubleComplex>&,
                                                   const DeviceBatch<int>&, int*, std::int64_t, int,
                                                   int);

}  // namespace basalt::cuda::kernels
