#pragma once
// What the warp-level batched kernels share: where matrix b of a batch lies, and shuffles of
// every scalar type within a segment of a warp (one small matrix per segment).
#include <cuComplex.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <type_traits>

#include "basalt/backends/cuda/batched/getrf_batched_launch.hpp"
#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/scalar_ops.cuh"

namespace basalt::cuda::kernels::warp {

constexpr unsigned full_mask = 0xffffffff;

// Shuffles within segments of Width lanes: `from` is a lane of the caller's segment.
template <int Width>
__device__ inline float shuffle(float v, int from) {
  return __shfl_sync(full_mask, v, from, Width);
}
template <int Width>
__device__ inline double shuffle(double v, int from) {
  return __shfl_sync(full_mask, v, from, Width);
}
template <int Width>
__device__ inline cuFloatComplex shuffle(cuFloatComplex v, int from) {
  return make_cuFloatComplex(shuffle<Width>(v.x, from), shuffle<Width>(v.y, from));
}
template <int Width>
__device__ inline cuDoubleComplex shuffle(cuDoubleComplex v, int from) {
  return make_cuDoubleComplex(shuffle<Width>(v.x, from), shuffle<Width>(v.y, from));
}

// v from the lane whose index differs from the caller's by the bits of `mask` (< Width).
template <int Width>
__device__ inline float shuffle_xor(float v, int mask) {
  return __shfl_xor_sync(full_mask, v, mask, Width);
}
template <int Width>
__device__ inline double shuffle_xor(double v, int mask) {
  return __shfl_xor_sync(full_mask, v, mask, Width);
}
template <int Width>
__device__ inline cuFloatComplex shuffle_xor(cuFloatComplex v, int mask) {
  return make_cuFloatComplex(shuffle_xor<Width>(v.x, mask), shuffle_xor<Width>(v.y, mask));
}
template <int Width>
__device__ inline cuDoubleComplex shuffle_xor(cuDoubleComplex v, int mask) {
  return make_cuDoubleComplex(shuffle_xor<Width>(v.x, mask), shuffle_xor<Width>(v.y, mask));
}

// The sum of v over the caller's segment, on every lane of it.
template <int Width, class V>
__device__ inline V segment_sum(V v) {
  for (int mask = Width / 2; mask > 0; mask /= 2) v = ops::add(v, shuffle_xor<Width>(v, mask));
  return v;
}

// The largest v over the caller's segment, on every lane of it; a NaN is passed over (fmax).
template <int Width, class Real>
__device__ inline Real segment_max(Real v) {
  for (int mask = Width / 2; mask > 0; mask /= 2) v = fmax(v, shuffle_xor<Width>(v, mask));
  return v;
}

// The votes of the caller's segment of Width lanes, bit k for its lane k. Every lane of the
// warp must call it.
template <int Width>
__device__ inline unsigned segment_votes(bool predicate) {
  const unsigned votes = __ballot_sync(full_mask, predicate);
  const int segment_start = (threadIdx.x % 32) / Width * Width;
  const unsigned segment_mask = Width == 32 ? full_mask : (1u << Width) - 1;
  return (votes >> segment_start) & segment_mask;
}

// The first lane of the caller's segment of Width lanes for which `predicate` holds (-1: none).
// Every lane of the warp must call it.
template <int Width>
__device__ inline int first_lane_where(bool predicate) {
  return __ffs(segment_votes<Width>(predicate)) - 1;
}

// The largest key over the caller's segment, on every lane of it: one whole-warp reduction
// instruction per segment, each over its own lanes' keys (the others' as zero).
template <int Width>
__device__ inline unsigned segment_max_by_reduction(unsigned key) {
  unsigned top = 0;
  const int mine = (threadIdx.x % 32) / Width;
#pragma unroll
  for (int segment = 0; segment < 32 / Width; ++segment) {
    const unsigned segment_top = __reduce_max_sync(full_mask, segment == mine ? key : 0u);
    if (segment == mine) top = segment_top;
  }
  return top;
}

// The largest key over the caller's segment, on every lane of it: by reduction instructions in
// segments of 16 and 32 lanes, by shuffles in narrower ones (where a warp holds 4 or 8 segments,
// as many reductions a step would cost more).
template <int Width>
__device__ inline unsigned segment_max_key(unsigned key) {
  if constexpr (Width >= 16) {
    return segment_max_by_reduction<Width>(key);
  } else {
    for (int mask = Width / 2; mask > 0; mask /= 2)
      key = max(key, __shfl_xor_sync(full_mask, key, mask, Width));
    return key;
  }
}

// A non-negative x's leading 32 bits, which order such numbers as their values do (a float's
// all 32); different numbers may share them in double.
__device__ inline unsigned ordered_key(float x) { return __float_as_uint(x); }
__device__ inline unsigned ordered_key(double x) {
  return static_cast<unsigned>(static_cast<unsigned long long>(__double_as_longlong(x)) >> 32);
}

// The slot of the segment of S lanes that holds thread `thread` of block `block`, in a launch of
// BlockThreads-thread blocks. Counted by segments, it stays below 2^31 for any batch count, where
// the threads (count * S) would not: 5.4e8 matrices of 4 x 4 fit an H100.
template <int S, int BlockThreads>
__device__ inline int segment_slot(int block, int thread) {
  return block * (BlockThreads / S) + thread / S;
}

// The matrix that slot `slot` of a launch of `count` slots works on; -1 past the last slot. A
// launch of several classes (WarpClasses) takes each class's slots from first_slot of the order on.
template <class T>
__device__ int member(const DeviceBatch<T>& batch, int slot, int count, int first_slot = 0) {
  if (slot >= count) return -1;
  return batch.order != nullptr ? batch.order[first_slot + slot] : slot;
}

// Matrix b of a batch: its first element, sizes and strides; a matrix of no rows for b = -1,
// so segments past the end of the batch compute nothing but still take part in the shuffles.
template <class T>
struct Located {
  T* base;
  int rows, cols;
  std::int64_t row_stride, col_stride;
};

template <class T>
__device__ Located<T> locate(const DeviceBatch<T>& batch, int b) {
  if (b < 0) return {nullptr, 0, 0, 1, 1};
  if (batch.variable)
    return {batch.data + batch.var_offset[b], batch.var_rows[b], batch.var_cols[b], 1,
            batch.var_ld[b]};
  return {batch.data + b * batch.batch_stride, batch.rows, batch.cols, batch.row_stride,
          batch.col_stride};
}

// The warp kernels' size classes: matrices of up to 4, 8, then every 4 up to 32 rows and
// columns, the smallest class that holds `size`. A class of N runs in segments of
// segment_lanes(N) lanes (the power of two that holds N); the classes between the powers of
// two are there because the kernels' steps cost by the class's size, not the matrix's.
inline int size_class(int size) { return size <= 4 ? 4 : size <= 8 ? 8 : (size + 3) / 4 * 4; }
__host__ __device__ constexpr int segment_lanes(int size_class) {
  return size_class <= 4 ? 4 : size_class <= 8 ? 8 : size_class <= 16 ? 16 : 32;
}

constexpr int block_threads = 128;

// Whether A is a fixed batch of square matrices of the size class that holds `largest`. The warp
// kernels have a variant for such batches that takes the sizes as constants: no test of a row or
// a column against them and no step past the matrix's end. On an H200, 200000 matrices in double:
// LU at 8 / 32 14% / 12% less time (a sixth fewer instructions at 8), Cholesky at 32 10%, QR at
// 16 / 24 17% / 12%; complex double LU at 32 36%.
template <class T>
bool full_size_class(const DeviceBatch<T>& A, int largest) {
  return !A.variable && A.rows == A.cols && A.rows == size_class(largest);
}

// f(std::bool_constant<full>{}).
template <class F>
decltype(auto) with_full(bool full, const F& f) {
  if (full) return f(std::true_type{});
  return f(std::false_type{});
}

// f(std::integral_constant<int, N>{}) for N the size class that holds `largest`.
template <class F>
decltype(auto) with_size_class(int largest, const F& f) {
  switch (size_class(largest)) {
    case 4:
      return f(std::integral_constant<int, 4>{});
    case 8:
      return f(std::integral_constant<int, 8>{});
    case 12:
      return f(std::integral_constant<int, 12>{});
    case 16:
      return f(std::integral_constant<int, 16>{});
    case 20:
      return f(std::integral_constant<int, 20>{});
    case 24:
      return f(std::integral_constant<int, 24>{});
    case 28:
      return f(std::integral_constant<int, 28>{});
    default:
      return f(std::integral_constant<int, 32>{});
  }
}

// Launches kernel_for(std::integral_constant<int, N>{}) (the kernel for matrices of up to N x N,
// N the size class that holds `largest` rows or columns) with one segment of segment_lanes(N)
// lanes per matrix, so that several small matrices share a warp; blocks of Threads threads
// (fewer for a kernel whose shared memory grows with the matrices a block holds).
template <int Threads, class KernelFor, class... Args>
void launch_segments_in_blocks(cudaStream_t stream, int count, int largest,
                               const KernelFor& kernel_for, const Args&... args) {
  if (count == 0) return;
  with_size_class(largest, [&](auto size) {
    const std::int64_t threads = static_cast<std::int64_t>(count) * segment_lanes(size);
    const int blocks = static_cast<int>((threads + Threads - 1) / Threads);
    kernel_for(size)<<<blocks, Threads, 0, stream>>>(args...);
    BASALT_CUDA_CHECK_LAUNCH();
  });
}

// The matrices of up to `largest` rows and columns that one multiprocessor of the current device
// keeps resident under the kernel launch_segments_in_blocks would launch for them. Asked of CUDA
// once per kernel and device: a variable batch asks it every call, and calls of a few thousand
// small matrices take 20 to 30 us.
template <int Threads, class KernelFor>
int resident_matrices(int largest, const KernelFor& kernel_for) {
  return with_size_class(largest, [&](auto size) {
    static std::atomic<int> known[max_devices] = {};  // 0: not asked yet
    int device = 0;
    BASALT_CUDA_CHECK(cudaGetDevice(&device));
    const int slot = device_slot(device);
    int blocks = known[slot].load(std::memory_order_relaxed);
    if (blocks == 0) {
      BASALT_CUDA_CHECK(
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel_for(size), Threads, 0));
      known[slot].store(blocks, std::memory_order_relaxed);
    }
    return blocks * Threads / segment_lanes(size);
  });
}

// The entry of a launch's WarpClasses that the caller's block works for.
__device__ inline int class_entry(const WarpClasses& classes) {
  int e = 0;
  while (e + 1 < classes.entries && static_cast<int>(blockIdx.x) >= classes.first_block[e + 1]) ++e;
  return e;
}

// step(j, first) for the steps j = 0 .. end - 1 of a warp kernel on matrices of up to N rows (end
// <= N), in phases of Steps: each phase a loop (not unrolled), `first` its first step, a constant,
// so that a step's loops over the rows or columns from `first` on have constant indices.
template <int N, int Steps, int First = 0, class Step>
__device__ __forceinline__ void steps_in_rolled_phases(int end, const Step& step) {
  if constexpr (First < N) {
#pragma unroll 1
    for (int j = First; j < min(First + Steps, end); ++j) step(j, First);
    steps_in_rolled_phases<N, Steps, First + Steps>(end, step);
  }
}

// f(std::integral_constant<int, N>{}) for the warp size class N == size, of those up to Largest.
template <int Largest, int N = 4, class F>
__device__ inline void with_size_class_up_to(int size, const F& f) {
  if constexpr (N <= Largest) {
    if (size == N)
      f(std::integral_constant<int, N>{});
    else
      with_size_class_up_to<Largest, N == 4 ? 8 : N + 4>(size, f);
  }
}

// f(std::integral_constant<int, N>{}, count, first_slot, block) for the entry of `classes` that
// the caller's block works for: N its size class (of those up to Largest), count and first_slot
// its matrices in the batch's order, block the caller's index among the entry's blocks.
template <int Largest, class F>
__device__ inline void with_class_of_block(const WarpClasses& classes, const F& f) {
  const int e = class_entry(classes);
  with_size_class_up_to<Largest>(classes.size[e], [&](auto size) {
    f(size, classes.count[e], classes.first_slot[e],
      static_cast<int>(blockIdx.x) - classes.first_block[e]);
  });
}

// Launches kernel_for(std::integral_constant<int, Largest>{}) (Largest: the largest size class
// among the entries) once for every entry of `classes`, in blocks of block_threads. Unless
// classes.own_codes, the entries of one segment width (4, 8, 16 or 32 lanes) run the code of the
// largest size class among them, so that a launch runs at most four codes; their blocks widest
// first, so that the longest warps start first. The kernel takes `classes` last, each size[e] a
// size class.
template <class KernelFor, class... Args>
void launch_classes(cudaStream_t stream, WarpClasses classes, const KernelFor& kernel_for,
                    const Args&... args) {
  int largest_of_width[33] = {};
  for (int e = 0; e < classes.entries; ++e) {
    const int size = size_class(classes.size[e]);
    int& largest = largest_of_width[segment_lanes(size)];
    largest = std::max(largest, size);
  }
  WarpClasses by_size = classes;
  int order[WarpClasses::most];
  for (int e = 0; e < classes.entries; ++e) order[e] = e;
  std::stable_sort(order, order + classes.entries,
                   [&](int a, int b) { return classes.size[a] > classes.size[b]; });
  int blocks = 0;
  for (int i = 0; i < classes.entries; ++i) {
    const int e = order[i];
    const int width = segment_lanes(size_class(classes.size[e]));
    by_size.size[i] = classes.own_codes ? size_class(classes.size[e]) : largest_of_width[width];
    by_size.count[i] = classes.count[e];
    by_size.first_slot[i] = classes.first_slot[e];
    by_size.first_block[i] = blocks;
    const std::int64_t threads = static_cast<std::int64_t>(classes.count[e]) * width;
    blocks += static_cast<int>((threads + block_threads - 1) / block_threads);
  }
  by_size.first_block[classes.entries] = blocks;
  if (blocks == 0) return;
  with_size_class(by_size.size[0], [&](auto largest) {
    kernel_for(largest)<<<blocks, block_threads, 0, stream>>>(args..., by_size);
    BASALT_CUDA_CHECK_LAUNCH();
  });
}

// launch_segments_in_blocks with blocks of block_threads threads.
template <class KernelFor, class... Args>
void launch_segments(cudaStream_t stream, int count, int largest, const KernelFor& kernel_for,
                     const Args&... args) {
  launch_segments_in_blocks<block_threads>(stream, count, largest, kernel_for, args...);
}

}  // namespace basalt::cuda::kernels::warp
