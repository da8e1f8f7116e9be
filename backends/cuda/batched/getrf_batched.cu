// CUDA batched LU of small matrices: one warp segment per matrix, one row per lane, held in
// registers.
#include <cuComplex.h>

#include "basalt/backends/cuda/batched/getrf_batched_launch.hpp"
#include "basalt/backends/cuda/batched/warp_batch.cuh"
#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/scalar_ops.cuh"

namespace basalt::cuda::kernels {

namespace {

// LAPACK's getf2 on matrices of up to N x N in segments of S lanes (N: 4, 8, 16, 24 or 32; S
// the power of two that holds N), 32 / S of them per warp: lane i of a segment holds the
// matrix's row i. Rows are not moved: each lane tracks the position its row has reached
// under the interchanges so far, and rows land in place when they are stored. The pivot is the
// first largest magnitude in position order (a NaN never is one; a column with no positive
// magnitude keeps its diagonal), as in the portable kernel, so both give the same pivots.
// Control flow is the same on every lane of the warp; what differs between segments is data.
template <class T, int N>
__global__ void __launch_bounds__(warp::block_threads)
    getrf_warp(DeviceBatch<T> batch, DeviceBatch<int> pivots, int* info, std::int64_t info_stride,
               int count) {
  using Real = ops::real_of_t<T>;
  constexpr int S = warp::segment_lanes(N);
  const int thread = blockIdx.x * warp::block_threads + threadIdx.x;
  if ((thread - threadIdx.x % 32) / S >= count) return;  // the whole warp is past the batch
  const int b = warp::member(batch, thread / S, count), lane = threadIdx.x % S;
  const warp::Located<T> a = warp::locate(batch, b);
  const warp::Located<int> ipiv = warp::locate(pivots, b);
  const int m = a.rows, n = a.cols, steps = min(m, n);

  T row[N];
#pragma unroll
  for (int c = 0; c < N; ++c)
    row[c] = lane < m && c < n ? a.base[lane * a.row_stride + c * a.col_stride] : T{};

  int position = lane;
  int first_zero = 0;
#pragma unroll
  for (int j = 0; j < N; ++j) {
    const bool active = j < steps;
    const Real mine = ops::abs1(row[j]);
    const bool candidate = position >= j && lane < m && mine == mine;  // never a NaN
    int p, pivot_lane;
    // In segments of 16 or 32 lanes, the largest magnitude's leading 32 bits first, by one
    // reduction instruction per segment: where one lane alone holds them, that lane is the
    // pivot. Ties of those bits, a column without a positive leading word and steps past a
    // matrix's end (in any segment of the warp) are rare, and take the exact search. Narrower
    // segments take only the exact search (four or eight reductions a step there: not tried;
    // n = 8 is bound by memory and the launch).
    bool exact = true;
    if constexpr (S >= 16) {
      const unsigned key = candidate ? warp::ordered_key(mine) : 0u;
      const unsigned top = warp::segment_max_by_reduction<S>(key);
      const unsigned holders = warp::segment_votes<S>(candidate && key == top);
      exact = !__all_sync(warp::full_mask, active && top > 0 && __popc(holders) == 1);
      pivot_lane = __ffs(holders) - 1;
      p = __shfl_sync(warp::full_mask, position, pivot_lane, S);
    }
    if (exact) {
      Real best = candidate ? mine : Real(-1);
      int at = position;
      for (int offset = S / 2; offset > 0; offset /= 2) {
        const Real other = __shfl_xor_sync(warp::full_mask, best, offset, S);
        const int other_at = __shfl_xor_sync(warp::full_mask, at, offset, S);
        if (other > best || (other == best && other_at < at)) {
          best = other;
          at = other_at;
        }
      }
      p = best > Real(0) ? at : j;
    }
    if (active) {
      if (lane == 0) ipiv.base[j * ipiv.row_stride] = p + 1;
      if (position == p)
        position = j;
      else if (position == j)
        position = p;
    }
    if (exact) pivot_lane = warp::first_lane_where<S>(position == j);  // where p moved
    const T pivot = warp::shuffle<S>(row[j], pivot_lane);
    const bool zero = ops::is_zero(pivot);
    if (active && zero && first_zero == 0) first_zero = j + 1;
    // LAPACK leaves a zero pivot's column unscaled; the column below it is zero, so no update.
    // Columns past n are zero in every row (the pivot row's too), so they may be updated: they
    // are never stored.
    const bool below = active && !zero && position > j && lane < m;
    if (below) row[j] = ops::divide(row[j], pivot);
#pragma unroll
    for (int c = j + 1; c < N; ++c) {
      const T u = warp::shuffle<S>(row[c], pivot_lane);
      if (below) row[c] = ops::minus_product(row[c], row[j], u);
    }
  }

#pragma unroll
  for (int c = 0; c < N; ++c)
    if (lane < m && c < n) a.base[position * a.row_stride + c * a.col_stride] = row[c];
  if (lane == 0 && b >= 0) info[b * info_stride] = first_zero;
}

}  // namespace

template <class T>
void getrf_batched_small(cudaStream_t stream, const DeviceBatch<T>& A, const DeviceBatch<int>& ipiv,
                         int* info, std::int64_t info_stride, int count, int largest) {
  warp::launch_segments(
      stream, count, largest, [](auto size) { return getrf_warp<T, decltype(size)::value>; }, A,
      ipiv, info, info_stride, count);
}

template <class T>
int getrf_batched_small_resident_matrices(int largest) {
  return warp::resident_matrices<warp::block_threads>(
      largest, [](auto size) { return getrf_warp<T, decltype(size)::value>; });
}

#define BASALT_INSTANTIATE_GETRF_BATCHED_SMALL(T)                                              \
  template void getrf_batched_small<T>(cudaStream_t, const DeviceBatch<T>&,                    \
                                       const DeviceBatch<int>&, int*, std::int64_t, int, int); \
  template int getrf_batched_small_resident_matrices<T>(int);

BASALT_INSTANTIATE_GETRF_BATCHED_SMALL(float)
BASALT_INSTANTIATE_GETRF_BATCHED_SMALL(double)
BASALT_INSTANTIATE_GETRF_BATCHED_SMALL(cuFloatComplex)
BASALT_INSTANTIATE_GETRF_BATCHED_SMALL(cuDoubleComplex)

}  // namespace basalt::cuda::kernels
