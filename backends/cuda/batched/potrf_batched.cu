// CUDA batched Cholesky of small matrices: one warp segment per matrix, one row of the factor
// per lane, held in registers.
#include <cuComplex.h>

#include "basalt/backends/cuda/batched/potrf_batched_launch.hpp"
#include "basalt/backends/cuda/batched/warp_batch.cuh"
#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/scalar_ops.cuh"

namespace basalt::cuda::kernels {

namespace {

// The two column buffers of the calling thread's segment of S lanes: one array per segment
// width, so that a launch of several size classes of one width (potrf_warp_classes) holds one.
template <class T, int S>
__device__ T* segment_column_buffers() {
  __shared__ __align__(16) T columns[warp::block_threads / S][2 * S];
  return columns[threadIdx.x / S];
}

// Right-looking Cholesky, as the portable team kernel: at step j the diagonal element's lane
// takes its square root, the lanes below scale their element of column j, and every lane i > j
// subtracts L(i, j) conj(L(c, j)) from its elements c in j+1..i, L(c, j) from lane c.
// A non-positive (or NaN) diagonal stops the matrix there, A(j, j) left as it was updated.
// Control flow is the same on every lane of the warp; what differs between segments is data.
// Block `block` of those that take `count` matrices from slot `first_slot` of the batch's order.
// Full: every matrix N x N (warp::full_size_class). StopEarly: the warp stops after the last step
// any of its matrices has (potrf_classes_held).
template <class T, int N, bool Full, bool StopEarly = false>
__device__ void potrf_segments(bool lower, const DeviceBatch<T>& batch, int* info,
                               std::int64_t info_stride, int count, int first_slot, int block) {
  using Real = ops::real_of_t<T>;
  constexpr int S = warp::segment_lanes(N);  // matrices up to N x N in segments of S lanes
  const int warp_slot = warp::segment_slot<S, warp::block_threads>(block, threadIdx.x / 32 * 32);
  if (warp_slot >= count) return;  // the whole warp is past the batch
  const int slot = warp::segment_slot<S, warp::block_threads>(block, threadIdx.x);
  const int b = warp::member(batch, slot, count, first_slot), i = threadIdx.x % S;
  const warp::Located<T> a = warp::locate(batch, b);
  const int n = Full ? N : a.rows;
  const int warp_steps = StopEarly ? __reduce_max_sync(warp::full_mask, n) : N;
  // Full: a segment past the batch (b = -1) loads and stores nothing but takes its steps.
  const bool mine = i < n && (!Full || b >= 0);
  // Measured (H100, 20000 matrices): through shared memory 8-20% faster in double from 12 to
  // 32, 5% slower in 8-lane segments, 15% slower in complex double at 32.
  constexpr bool column_through_shared = S >= 16 && sizeof(T) <= 8;
  T* segment_columns = nullptr;
  if constexpr (column_through_shared) segment_columns = segment_column_buffers<T, S>();
  // Element (i, c) of the lower triangle: A(i, c), or conj(A(c, i)) when the upper one is stored.
  const auto at = [&](int c) {
    return lower ? a.base + i * a.row_stride + c * a.col_stride
                 : a.base + c * a.row_stride + i * a.col_stride;
  };

  T row[N];
#pragma unroll
  for (int c = 0; c < N; ++c) {
    row[c] = T{};
    if (c <= i && mine) row[c] = lower ? *at(c) : ops::conjugate(*at(c));
  }

  int failed = 0;
#pragma unroll
  for (int j = 0; j < N; ++j) {
    if (j == warp_steps) break;
    const Real diagonal = ops::real_part(warp::shuffle<S>(row[j], j));
    const bool active = j < n && failed == 0 && diagonal > Real(0);
    if (j < n && failed == 0 && !(diagonal > Real(0))) failed = j + 1;
    const Real inverse = active ? rsqrt(diagonal) : Real(1);
    if (active && i == j)
      row[j] = ops::make_scalar<T>(ops::root_from_reciprocal(diagonal, inverse));
    if (active && i > j && i < n) row[j] = ops::times_real(row[j], inverse);
    // Column j reaches the segment's lanes by shuffles or, from 16 lanes up in real and single
    // complex types, through shared memory, read two or four entries at a time (shuffles take
    // one or two instructions an entry and register moves to pair them); the two buffers
    // alternate by step, so that one __syncwarp a step orders them. Entries above the diagonal
    // (c > i) and rows past n are updated too, which spares a comparison an element: they are
    // never stored, and no lane reads them (only L(c, j), c > j, is read).
    T* column = nullptr;
    if constexpr (column_through_shared) {
      column = segment_columns + (j % 2) * S;
      column[i] = row[j];
      __syncwarp();
    }
#pragma unroll
    for (int c = j + 1; c < N; ++c) {
      const T l = ops::conjugate(column_through_shared ? column[c] : warp::shuffle<S>(row[j], c));
      if (active) row[c] = ops::minus_product(row[c], row[j], l);
    }
  }

#pragma unroll
  for (int c = 0; c < N; ++c)
    if (c <= i && mine) *at(c) = lower ? row[c] : ops::conjugate(row[c]);
  if (i == 0 && b >= 0) info[b * info_stride] = failed;
}

template <class T, int N, bool Full>
__global__ void __launch_bounds__(warp::block_threads)
    potrf_warp(bool lower, const __grid_constant__ DeviceBatch<T> batch, int* info,
               std::int64_t info_stride, int count) {
  potrf_segments<T, N, Full>(lower, batch, info, info_stride, count, 0, blockIdx.x);
}

// Whether the grouped kernel stops each warp early and is held to 6 blocks an SM (80 registers):
// double, classes up to 20 and 24 rows, where ptxas gave 76 and 84 registers (5 blocks) and, with
// both, 80 without spills. 20000 matrices of 1..24 then took 0.0305-0.0308 ms against
// 0.0338-0.0340 and 60000 0.0913-0.0919 against 0.0965-0.0966 (H200, three rounds). Held without
// the early stop they spilled 64-96 bytes and gained at 20000 alone. The early stop elsewhere: up
// to 16 rows it took double from 68 registers to 76 and 60000 matrices of 1..16 4% longer, complex
// single's 1..24 ran 4-5% slower, and fixed batches (21 to 23 rows in the 24-row class) gained
// nothing.
template <class T, int Largest>
constexpr bool potrf_classes_held = std::is_same_v<T, double> && (Largest == 20 || Largest == 24);

// The warp classes of a variable batch in one launch (WarpClasses), as getrf_warp_classes: each
// block runs, inline, the code of the size class launch_classes gives it.
template <class T, int Largest>
__global__ void __launch_bounds__(warp::block_threads, potrf_classes_held<T, Largest> ? 6 : 0)
    potrf_warp_classes(bool lower, const __grid_constant__ DeviceBatch<T> batch, int* info,
                       std::int64_t info_stride, const __grid_constant__ WarpClasses classes) {
  warp::with_class_of_block<Largest>(classes, [&](auto size, int count, int first_slot, int block) {
    potrf_segments<T, decltype(size)::value, false, potrf_classes_held<T, Largest>>(
        lower, batch, info, info_stride, count, first_slot, block);
  });
}

}  // namespace

template <class T>
void potrf_batched_small(cudaStream_t stream, bool lower, const DeviceBatch<T>& A, int* info,
                         std::int64_t info_stride, int count, int largest) {
  warp::with_full(warp::full_size_class(A, largest), [&](auto full) {
    warp::launch_segments(
        stream, count, largest,
        [](auto size) { return potrf_warp<T, decltype(size)::value, decltype(full)::value>; },
        lower, A, info, info_stride, count);
  });
}

template <class T>
void potrf_batched_small_classes(cudaStream_t stream, bool lower, const DeviceBatch<T>& A,
                                 int* info, std::int64_t info_stride, WarpClasses classes) {
  warp::launch_classes(
      stream, classes, [](auto largest) { return potrf_warp_classes<T, decltype(largest)::value>; },
      lower, A, info, info_stride);
}

template <class T>
int potrf_batched_small_resident_matrices(int largest) {
  return warp::resident_matrices<warp::block_threads>(
      largest, [](auto size) { return potrf_warp<T, decltype(size)::value, false>; });
}

#define BASALT_INSTANTIATE_POTRF_BATCHED_SMALL(T)                                               \
  template void potrf_batched_small<T>(cudaStream_t, bool, const DeviceBatch<T>&, int*,         \
                                       std::int64_t, int, int);                                 \
  template void potrf_batched_small_classes<T>(cudaStream_t, bool, const DeviceBatch<T>&, int*, \
                                               std::int64_t, WarpClasses);                      \
  template int potrf_batched_small_resident_matrices<T>(int);

BASALT_INSTANTIATE_POTRF_BATCHED_SMALL(float)
BASALT_INSTANTIATE_POTRF_BATCHED_SMALL(double)
BASALT_INSTANTIATE_POTRF_BATCHED_SMALL(cuFloatComplex)
BASALT_INSTANTIATE_POTRF_BATCHED_SMALL(cuDoubleComplex)

}  // namespace basalt::cuda::kernels
