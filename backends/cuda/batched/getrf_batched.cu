// CUDA batched LU of small matrices: one warp segment per matrix, one row per lane, held in
// registers.
#include <cuComplex.h>

#include "basalt/backends/cuda/batched/getrf_batched_launch.hpp"
#include "basalt/backends/cuda/batched/warp_batch.cuh"
#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/scalar_ops.cuh"

namespace basalt::cuda::kernels {

namespace {

// The high 32 bits of a magnitude (not negative, not NaN): a larger key means a larger
// magnitude, and the pivot search shuffles keys, one 32-bit shuffle per round in any precision.
__device__ inline unsigned order_key(float x) { return __float_as_uint(x); }
__device__ inline unsigned order_key(double x) { return static_cast<unsigned>(__double2hiint(x)); }

// Values of T in 16 bytes, the unit in which a pivot row goes through shared memory.
template <class T>
struct alignas(16) Chunk {
  static constexpr int size = static_cast<int>(16 / sizeof(T));
  T v[size];
};

// LAPACK's getf2 on matrices of up to S x S, 32 / S of them per warp: lane i of a segment holds
// the matrix's row i. Rows are not moved: each lane tracks the position its row has reached
// under the interchanges so far, and rows land in place when they are stored. The pivot is the
// first largest magnitude in position order (a NaN never is one; a column with no positive
// magnitude keeps its diagonal), as in the portable kernel, so both give the same pivots.
// The search reduces a 32-bit key of the magnitude and votes on which lanes hold the largest;
// magnitudes and positions are compared only when a segment of the warp has several. The pivot lane
// stores its row in shared memory in 16-byte chunks and every lane of the segment reads them back
// (one 16-byte load, shared by the segment, for 1 to 4 columns, where a shuffle moves 4 bytes).
// Control flow is the same on every lane of the warp; what differs between segments is data.
template <class T, int S>
__global__ void __launch_bounds__(warp::block_threads)
    getrf_warp(DeviceBatch<T> batch, DeviceBatch<int> pivots, int* info, std::int64_t info_stride,
               int count) {
  using Real = ops::real_of_t<T>;
  constexpr int G = Chunk<T>::size;
  // An odd number of chunks per segment, so that the segments' rows start in different banks.
  constexpr int chunks = (S / G) | 1;
  constexpr int segments = warp::block_threads / S;
  // Two buffers, one for even steps and one for odd: a step's stores need no barrier after the
  // loads of the step before, since those came before that step's __syncwarp.
  __shared__ Chunk<T> pivot_rows[2][segments][chunks];
  __shared__ int pivot_positions[2][segments];

  const int thread = blockIdx.x * warp::block_threads + threadIdx.x;
  if ((thread - threadIdx.x % 32) / S >= count) return;  // the whole warp is past the batch
  const int b = thread / S, lane = threadIdx.x % S, segment = threadIdx.x / S;
  const warp::Located<T> a = warp::locate(batch, b, count);
  const warp::Located<int> ipiv = warp::locate(pivots, b, count);
  const int m = a.rows, n = a.cols, steps = min(m, n);

  T row[S];
#pragma unroll
  for (int c = 0; c < S; ++c)
    row[c] = lane < m && c < n ? a.base[lane * a.row_stride + c * a.col_stride] : T{};

  int position = lane;
  int first_zero = 0;
  int pivot_of_step = 0;  // lane j's: the 1-based pivot of step j, stored at the end in one sweep
  // Steps past every segment's min(m, n) change nothing: the warp stops before them.
  const int warp_steps = static_cast<int>(__reduce_max_sync(warp::full_mask, steps));
#pragma unroll
  for (int j = 0; j < S; ++j) {
    if (j >= warp_steps) break;
    const bool active = j < steps;
    const Real mine = ops::abs1(row[j]);
    const bool candidate = position >= j && lane < m && mine == mine;
    const unsigned key = candidate ? order_key(mine) : 0u;
    unsigned best_key = key;
    for (int offset = S / 2; offset > 0; offset /= 2)
      best_key = max(best_key, __shfl_xor_sync(warp::full_mask, best_key, offset, S));
    // The lanes that may hold the pivot: those at the largest key, and at key 0 only positive
    // magnitudes (a double's key is 0 below 2^-1042). When one lane of the segment contends, it
    // holds the pivot; when none does, the diagonal is kept.
    const bool contender = key == best_key && candidate && mine > Real(0);
    bool pivot_lane = best_key > 0u ? contender : position == j;
    const int expected = best_key > 0u ? 1 : 0;
    if (__any_sync(warp::full_mask, __popc(warp::segment_votes<S>(contender)) > expected)) {
      // Several contenders in a segment (a tie, or magnitudes that differ below the key's bits):
      // the first largest magnitude in position order among them.
      const Real value = contender ? mine : Real(-1);
      const Real best = warp::segment_max<S>(value);
      const bool largest = contender && value == best;
      int first = largest ? position : S;
      for (int offset = S / 2; offset > 0; offset /= 2)
        first = min(first, __shfl_xor_sync(warp::full_mask, first, offset, S));
      pivot_lane = best > Real(0) ? largest && position == first : position == j;
    }

    Chunk<T>* const pivot_row = pivot_rows[j % 2][segment];
    if (pivot_lane) {
#pragma unroll
      for (int k = j / G; k < S / G; ++k) {
        Chunk<T> chunk;
#pragma unroll
        for (int e = 0; e < G; ++e) chunk.v[e] = row[k * G + e];
        pivot_row[k] = chunk;
      }
      pivot_positions[j % 2][segment] = position;
    }
    __syncwarp();
    const int p = pivot_positions[j % 2][segment];
    if (lane == j) pivot_of_step = p + 1;
    if (active) {
      if (position == p)
        position = j;
      else if (position == j)
        position = p;
    }
    const Chunk<T> head = pivot_row[j / G];  // the pivot and the columns after it in its chunk
    const T pivot = head.v[j % G];
    const bool zero = ops::is_zero(pivot);
    if (active && zero && first_zero == 0) first_zero = j + 1;
    // LAPACK leaves a zero pivot's column unscaled; the column below it is zero, so no update.
    const bool below = active && !zero && position > j && lane < m;
    if (below) row[j] = ops::divide(row[j], pivot);
#pragma unroll
    for (int k = j / G; k < S / G; ++k) {
      const Chunk<T> u = k == j / G ? head : pivot_row[k];
#pragma unroll
      for (int e = 0; e < G; ++e) {
        const int c = k * G + e;
        if (c > j && below && c < n) row[c] = ops::minus_product(row[c], row[j], u.v[e]);
      }
    }
  }

#pragma unroll
  for (int c = 0; c < S; ++c)
    if (lane < m && c < n) a.base[position * a.row_stride + c * a.col_stride] = row[c];
  if (lane < steps) ipiv.base[lane * ipiv.row_stride] = pivot_of_step;
  if (lane == 0 && b < count) info[b * info_stride] = first_zero;
}

}  // namespace

template <class T>
void getrf_batched_small(cudaStream_t stream, const DeviceBatch<T>& A, const DeviceBatch<int>& ipiv,
                         int* info, std::int64_t info_stride, int count, int largest) {
  warp::launch_segments(
      stream, count, largest, [](auto width) { return getrf_warp<T, decltype(width)::value>; }, A,
      ipiv, info, info_stride, count);
}

#define BASALT_INSTANTIATE_GETRF_BATCHED_SMALL(T)                           \
  template void getrf_batched_small<T>(cudaStream_t, const DeviceBatch<T>&, \
                                       const DeviceBatch<int>&, int*, std::int64_t, int, int);

BASALT_INSTANTIATE_GETRF_BATCHED_SMALL(float)
BASALT_INSTANTIATE_GETRF_BATCHED_SMALL(double)
BASALT_INSTANTIATE_GETRF_BATCHED_SMALL(cuFloatComplex)
BASALT_INSTANTIATE_GETRF_BATCHED_SMALL(cuDoubleComplex)

}  // namespace basalt::cuda::kernels
