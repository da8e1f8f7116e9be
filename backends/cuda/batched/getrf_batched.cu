// CUDA batched LU of small matrices: one warp segment per matrix, one row per lane, held in
// registers.
#include <cuComplex.h>

#include <type_traits>

#include "basalt/backends/cuda/batched/getrf_batched_launch.hpp"
#include "basalt/backends/cuda/batched/warp_batch.cuh"
#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/scalar_ops.cuh"

namespace basalt::cuda::kernels {

namespace {

// The exact pivot search: the position of the first largest magnitude among the segment's
// candidates (the others pass -1), or j where none is positive. A call, not inlined: the 32 steps'
// copies of it sat between the steps' code, which the instruction cache then held less of.
template <int S, class Real>
__device__ __noinline__ int first_largest_position(Real magnitude, int position, int j) {
  Real best = magnitude;
  int at = position;
  for (int offset = S / 2; offset > 0; offset /= 2) {
    const Real other = __shfl_xor_sync(warp::full_mask, best, offset, S);
    const int other_at = __shfl_xor_sync(warp::full_mask, at, offset, S);
    if (other > best || (other == best && other_at < at)) {
      best = other;
      at = other_at;
    }
  }
  return best > Real(0) ? at : j;
}

// Step j of LAPACK's getf2 (factor_in_segment) on the calling lane's row. Unrolled (j a
// constant, first = j), column j is row[j]; rolled (j in [first, first + Phase), first a
// constant), a select among the phase's columns, and the update runs over the columns from
// `first` on, those up to j shuffled too and left as they are.
template <bool Guarded, bool Rolled, int Phase, class T, int N>
__device__ __forceinline__ void getf2_step(T (&row)[N], int& position, int& pivot_of_step,
                                           int& first_zero, bool& doubt, int lane, int m, int steps,
                                           int j, int first) {
  using Real = ops::real_of_t<T>;
  constexpr int S = warp::segment_lanes(N);
  constexpr bool speculative = !Guarded && std::is_same_v<T, double> && N >= 24;
  // Column j of the lane's row (j in [first, first + Phase)): a constant index unrolled, where
  // first = j, a select among the phase's columns rolled.
  T column_j = row[first];
#pragma unroll
  for (int c = first + 1; c < N && c < first + Phase; ++c)
    if (c == j) column_j = row[c];
  const bool active = j < steps;
  const Real mine = ops::abs1(column_j);
  const bool candidate = position >= j && lane < m && mine == mine;  // never a NaN
  // The largest magnitude's leading 32 bits first: where one lane alone holds them, that lane
  // is the pivot. Ties of those bits, a column without a positive leading word and steps past
  // a matrix's end (in any segment of the warp) are rare, and take the exact search (or, when
  // speculative, the guarded pass).
  const unsigned key = candidate ? warp::ordered_key(mine) : 0u;
  const unsigned top = warp::segment_max_key<S>(key);
  const unsigned holders = warp::segment_votes<S>(candidate && key == top);
  const bool exact =
      !speculative && !__all_sync(warp::full_mask, active && top > 0 && __popc(holders) == 1);
  int pivot_lane = __ffs(holders) - 1;
  int p = __shfl_sync(warp::full_mask, position, pivot_lane, S);
  if (exact) p = first_largest_position<S>(candidate ? mine : Real(-1), position, j);
  if (active) {
    if (lane == j) pivot_of_step = p;
    if (position == p)
      position = j;
    else if (position == j)
      position = p;
  }
  if (exact) pivot_lane = warp::first_lane_where<S>(position == j);  // where p moved
  const T pivot = warp::shuffle<S>(column_j, pivot_lane);
  // LAPACK leaves a zero pivot's column unscaled; the column below it is zero, so no update.
  // Columns past n are zero in every row (the pivot row's too), so they may be updated: they
  // are never stored. (A speculative step with a zero pivot is in doubt.)
  const bool zero = !speculative && ops::is_zero(pivot);
  if (active && zero && first_zero == 0) first_zero = j + 1;
  const bool below = active && !zero && position > j && lane < m;
  if constexpr (speculative) {
    doubt = doubt || (active && (top == 0 || __popc(holders) != 1 || !ops::is_moderate(pivot)));
    const T quotient =
        ops::quotient_by_reciprocal(column_j, pivot, ops::reciprocal_of_moderate(pivot));
    if (below) column_j = quotient;
  } else if (below) {
    column_j = ops::divide(column_j, pivot);
  }
  if (below) {
#pragma unroll
    for (int c = first; c < N && c < first + Phase; ++c)
      if (c == j) row[c] = column_j;
  }
  const T multiplier = below || Guarded ? column_j : T{};
  // Rolled, the phase's columns up to j are shuffled too, and left as they are.
#pragma unroll
  for (int c = first; c < N; ++c) {
    if (!Rolled && c == j) continue;
    const T u = warp::shuffle<S>(row[c], pivot_lane);
    if ((below || !Guarded) && (!Rolled || c > j))
      row[c] = ops::minus_product(row[c], multiplier, u);
  }
}

// Whether factor_in_segment takes its steps in rolled phases of getrf_phase_steps: complex double
// in its 32-column class (29 to 32), as QR's warp kernel (geqrf_batched.cu), where it ran 1.26x
// faster (32 x 32, 20000 matrices, H200: 0.464 ms against 0.586); rolled from 21 columns, 24 and 28
// ran slower (0.309 against 0.239, 0.363 against 0.327).
template <class T, int N>
constexpr bool getrf_rolled_steps = N > 28 && std::is_same_v<T, cuDoubleComplex>;
constexpr int getrf_phase_steps = 4;

// The steps of LAPACK's getf2 on a matrix of up to N x N held in a segment of S lanes, lane i
// holding row i (S: the power of two that holds N). Rows are not moved: each lane tracks the
// position its row has reached under the interchanges so far (`position`), and rows land in
// place when they are stored. The pivot is the first largest magnitude in position order (a NaN
// never is one; a column with no positive magnitude keeps its diagonal), as in the portable
// kernel, so both give the same pivots; lane j keeps step j's (0-based) for the store at the end.
// Control flow is the same on every lane of the warp; what differs between segments is data.
// Guarded: only the rows below the pivot take the update. Unguarded, every row does, with a
// multiplier of zero above: the same values while the pivot row is finite (x - 0 u = x), and
// two instructions less per entry (the guard costs a select of each 32-bit half); a pivot row
// that is not finite turns a row above into NaN, which the caller sees and then runs guarded.
// Unguarded double from 24 columns is also speculative: each step takes as pivot the one lane
// whose magnitude's leading 32 bits are the largest, and divides through the pivot's reciprocal
// without CUDA's check for quotients to redo; a step where that is not certain to be LAPACK's
// result (a tie of those bits, no positive candidate, a pivot outside [2^-1000, 2^1000], zero
// included) sets `doubt`, and the caller runs guarded. The steps then have no branch, so the
// compiler can overlap one step's update with the next step's search: 200000 matrices of 24 /
// 28 / 32 columns in 0.96 / 1.28 / 1.67 ms, 1.00 / 1.39 / 1.81 with the branches (H200, d).
// Below 24 columns it took 8 to 24 more registers and ran slower (16: 0.36 against 0.30 ms).
// Elsewhere, unguarded steps take the exact search (ties) as a call, and CUDA's division.
template <bool Guarded, class T, int N>
__device__ void factor_in_segment(T (&row)[N], int& position, int& pivot_of_step, int& first_zero,
                                  bool& doubt, int lane, int m, int steps) {
  position = lane;
  pivot_of_step = lane;
  first_zero = 0;
  doubt = false;
  if constexpr (getrf_rolled_steps<T, N>) {
    warp::steps_in_rolled_phases<N, getrf_phase_steps>(N, [&](int j, int first) {
      getf2_step<Guarded, true, getrf_phase_steps>(row, position, pivot_of_step, first_zero, doubt,
                                                   lane, m, steps, j, first);
    });
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j)
      getf2_step<Guarded, false, 1>(row, position, pivot_of_step, first_zero, doubt, lane, m, steps,
                                    j, j);
  }
}

// Zero where every entry of row is finite, else NaN (x * 0 is zero for finite x alone).
template <class T, int N>
__device__ ops::real_of_t<T> non_finite_probe(const T (&row)[N]) {
  using Real = ops::real_of_t<T>;
  Real probe = 0;
#pragma unroll
  for (int c = 0; c < N; ++c) probe += ops::abs1(row[c]) * Real(0);
  return probe;
}

// LAPACK's getf2 on the matrices of a launch (factor_in_segment), each in a segment of S lanes,
// 32 / S of them per warp: block `block` of those that take `count` matrices from slot
// `first_slot` of the batch's order. Unguarded, a warp in which a row is not finite at the end,
// or a speculative step was in doubt, stores nothing and returns false. Full: every matrix N x N
// (warp::full_size_class), the sizes then constants.
template <bool Guarded, bool Full, class T, int N>
__device__ bool getrf_segments(const DeviceBatch<T>& batch, const DeviceBatch<int>& pivots,
                               int* info, std::int64_t info_stride, int count, int first_slot,
                               int block) {
  constexpr int S = warp::segment_lanes(N);
  const int slot = warp::segment_slot<S, warp::block_threads>(block, threadIdx.x);
  const int b = warp::member(batch, slot, count, first_slot), lane = threadIdx.x % S;
  const warp::Located<T> a = warp::locate(batch, b);
  const warp::Located<int> ipiv = warp::locate(pivots, b);
  // Full: a segment past the batch (b = -1) loads and stores nothing but takes its steps.
  const bool mine = Full ? b >= 0 && lane < N : lane < a.rows;
  const int m = Full ? N : a.rows, n = Full ? N : a.cols, steps = min(m, n);

  T row[N];
#pragma unroll
  for (int c = 0; c < N; ++c)
    row[c] = mine && c < n ? a.base[lane * a.row_stride + c * a.col_stride] : T{};
  int position, pivot_of_step, first_zero;
  bool doubt;
  factor_in_segment<Guarded>(row, position, pivot_of_step, first_zero, doubt, lane, m, steps);
  if (!Guarded && __any_sync(warp::full_mask, doubt || non_finite_probe(row) != 0)) return false;

#pragma unroll
  for (int c = 0; c < N; ++c)
    if (mine && c < n) a.base[position * a.row_stride + c * a.col_stride] = row[c];
  if ((!Full || mine) && lane < steps) ipiv.base[lane * ipiv.row_stride] = pivot_of_step + 1;
  if (lane == 0 && b >= 0) info[b * info_stride] = first_zero;
  return true;
}

// The guarded steps as a call of their own, so that their registers do not add to the
// unguarded path's (inlined, they took 128 to 134 registers at 32 x 32 in double).
template <bool Full, class T, int N>
__device__ __noinline__ void getrf_segments_guarded(const DeviceBatch<T>& batch,
                                                    const DeviceBatch<int>& pivots, int* info,
                                                    std::int64_t info_stride, int count,
                                                    int first_slot, int block) {
  getrf_segments<true, Full, T, N>(batch, pivots, info, info_stride, count, first_slot, block);
}

// Real matrices unguarded first; a warp that met a row that is not finite (or a doubtful step)
// runs guarded from the input, which is still in place. Complex matrices run guarded alone:
// unguarded first they ran 10-20% slower (more registers, and the select is a smaller share of a
// complex update).
template <bool Full, class T, int N>
__device__ void getrf_segments_of_block(const DeviceBatch<T>& batch, const DeviceBatch<int>& pivots,
                                        int* info, std::int64_t info_stride, int count,
                                        int first_slot, int block) {
  constexpr int S = warp::segment_lanes(N);
  const int warp_slot = warp::segment_slot<S, warp::block_threads>(block, threadIdx.x / 32 * 32);
  if (warp_slot >= count) return;  // the whole warp is past the batch
  if constexpr (std::is_floating_point_v<T>) {
    if (!getrf_segments<false, Full, T, N>(batch, pivots, info, info_stride, count, first_slot,
                                           block))
      getrf_segments_guarded<Full, T, N>(batch, pivots, info, info_stride, count, first_slot,
                                         block);
  } else {
    getrf_segments<true, Full, T, N>(batch, pivots, info, info_stride, count, first_slot, block);
  }
}

// The batches are grid constants so that the calls take their addresses without copying them to
// the stack (a copy per thread cost the memory-bound small sizes up to twice their time). Double
// from 24 columns is held to five blocks an SM (96 registers, against 102, 110 and 128 uncapped:
// 102 allocate as 104, which leaves four blocks). Before the speculative steps,
// 200000 matrices of 28 x 28 took 1.44 ms against 1.54, of 24 x 24 1.01 against 1.12, and 32
// gained 3.5% but lost 5% with 20000 matrices, so it kept four; with them (spilling 16 / 32 / 52
// bytes at 24 / 28 / 32), 32 x 32 took 1.64 ms against 1.67 with 200000 matrices and 0.204-0.207
// against 0.193-0.216 with 20000 (H200). The full 8 x 8 kernel in double is held to ten (48
// registers against 56, spilling 32 bytes), so that 20000 matrices take one wave of 132
// multiprocessors (1250 blocks, where nine an SM held 1188): 10.7 us against 12.2 (H200, Nsight
// Compute).
template <class T, int N, bool Full = false>
constexpr int getrf_warp_min_blocks = !std::is_same_v<T, double> ? 0
                                      : N >= 24                  ? 5
                                      : N == 8 && Full           ? 10
                                                                 : 0;

template <class T, int N, bool Full>
__global__ void __launch_bounds__(warp::block_threads, getrf_warp_min_blocks<T, N, Full>)
    getrf_warp(const __grid_constant__ DeviceBatch<T> batch,
               const __grid_constant__ DeviceBatch<int> pivots, int* info, std::int64_t info_stride,
               int count) {
  getrf_segments_of_block<Full, T, N>(batch, pivots, info, info_stride, count, 0, blockIdx.x);
}

// The grouped kernel's blocks an SM (its registers are those of its largest class, at which all
// its classes run): in double, classes up to 20 and 24 rows held to 6 (80 registers, spilling 56
// and 80 bytes), where ptxas gave 94 and 96 (5 blocks): 20000 matrices of 1..24 in 0.0516-0.0518
// ms against 0.0542-0.0546 (H200, three rounds); 60000 within 1% of before.
template <class T, int Largest>
constexpr int getrf_classes_min_blocks = std::is_same_v<T, double> &&
                                                 (Largest == 20 || Largest == 24)
                                             ? 6
                                             : getrf_warp_min_blocks<T, Largest>;

// The warp classes of a variable batch in one launch (WarpClasses): each block runs, inline, the
// code of the size class launch_classes gives it. Two waves holding the batch, that of the
// largest class of its segment width (4, 8, 16 or 32 lanes): merged into the largest class, 2000
// matrices of 1..32 took 32-lane segments and that class's steps each, what 2000 of 32 x 32 cost
// (H100, d: 7.8 M instructions, 22.3 us under Nsight Compute); grouped by width, 4.7 M and 20.7
// us. Each class in its own code took 3.8 M instructions but 26-27 us, the warps waiting 6.6
// cycles an instruction on instruction fetches: the classes' unrolled code, some 50 KB each from
// 24 rows up, side by side on every SM (perf/NOTES.md). Beyond two waves each class runs its own
// code (launch_by_class's Grouped).
template <class T, int Largest>
__global__ void __launch_bounds__(warp::block_threads, getrf_classes_min_blocks<T, Largest>)
    getrf_warp_classes(const __grid_constant__ DeviceBatch<T> batch,
                       const __grid_constant__ DeviceBatch<int> pivots, int* info,
                       std::int64_t info_stride, const __grid_constant__ WarpClasses classes) {
  warp::with_class_of_block<Largest>(classes, [&](auto size, int count, int first_slot, int block) {
    getrf_segments_of_block<false, T, decltype(size)::value>(batch, pivots, info, info_stride,
                                                             count, first_slot, block);
  });
}

}  // namespace

template <class T>
void getrf_batched_small(cudaStream_t stream, const DeviceBatch<T>& A, const DeviceBatch<int>& ipiv,
                         int* info, std::int64_t info_stride, int count, int largest) {
  warp::with_full(warp::full_size_class(A, largest), [&](auto full) {
    warp::launch_segments(
        stream, count, largest,
        [](auto size) { return getrf_warp<T, decltype(size)::value, decltype(full)::value>; }, A,
        ipiv, info, info_stride, count);
  });
}

template <class T>
int getrf_batched_small_resident_matrices(int largest) {
  return warp::resident_matrices<warp::block_threads>(
      largest, [](auto size) { return getrf_warp<T, decltype(size)::value, false>; });
}

template <class T>
void getrf_batched_small_classes(cudaStream_t stream, const DeviceBatch<T>& A,
                                 const DeviceBatch<int>& ipiv, int* info, std::int64_t info_stride,
                                 WarpClasses classes) {
  warp::launch_classes(
      stream, classes, [](auto largest) { return getrf_warp_classes<T, decltype(largest)::value>; },
      A, ipiv, info, info_stride);
}

#define BASALT_INSTANTIATE_GETRF_BATCHED_SMALL(T)                                              \
  template void getrf_batched_small<T>(cudaStream_t, const DeviceBatch<T>&,                    \
                                       const DeviceBatch<int>&, int*, std::int64_t, int, int); \
  template void getrf_batched_small_classes<T>(cudaStream_t, const DeviceBatch<T>&,            \
                                               const DeviceBatch<int>&, int*, std::int64_t,    \
                                               WarpClasses);                                   \
  template int getrf_batched_small_resident_matrices<T>(int);

BASALT_INSTANTIATE_GETRF_BATCHED_SMALL(float)
BASALT_INSTANTIATE_GETRF_BATCHED_SMALL(double)
BASALT_INSTANTIATE_GETRF_BATCHED_SMALL(cuFloatComplex)
BASALT_INSTANTIATE_GETRF_BATCHED_SMALL(cuDoubleComplex)

}  // namespace basalt::cuda::kernels
