// CUDA laswp: the pivot sequence becomes one permutation, then every touched row moves once.
#include <cuComplex.h>
#include <cuda_pipeline.h>

#include <algorithm>

#include "basalt/backends/cuda/dense/laswp_launch.hpp"
#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/workspace.hpp"

namespace basalt::cuda::kernels {

namespace {

constexpr int move_threads = 1024;
constexpr int max_items = 16;  // touched rows per thread in the in-place mover; 32 spills
// The interchanges are cut into segments of this many; each segment's permutation is found by
// tracing its rows through it, all segments at once, then every row is traced through the
// segments. That keeps each thread's dependent chain near segment_length + segments steps.
constexpr int segment_length = 512;
constexpr int max_segments = 64;

// A slot per touched row: slots 0..K-1 hold rows k1..k2, the slots after them the rows that a
// pivot names outside k1..k2 (at most min(K, m - K) of them).
struct Plan {
  int* slot_of_row;    // m entries: the slot of each touched row, -1 for untouched rows
  int* rows;           // the row each slot stands for
  int* source_slot;    // the slot whose row's data ends up in this slot's row
  int* outside_count;  // number of touched rows outside k1..k2
  int* segment_maps;   // segments x m: the row whose data a segment brings to each row, -1: itself
  int segments, length;  // number and length of the segments
};

constexpr std::size_t aligned(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

__host__ __device__ int pivot_count(const LaswpProblem& p) { return p.k2 - p.k1 + 1; }

int slot_bound(const LaswpProblem& p) {
  const int k = pivot_count(p);
  return k + static_cast<int>(std::min<std::int64_t>(k, p.m - k));
}

int segment_length_for(const LaswpProblem& p) {
  const int k = pivot_count(p);
  return std::max(segment_length, (k + max_segments - 1) / max_segments);
}

int segment_count(const LaswpProblem& p) {
  const int length = segment_length_for(p);
  return (pivot_count(p) + length - 1) / length;
}

std::size_t plan_bytes(const LaswpProblem& p) {
  return aligned(p.m * sizeof(int)) + 2 * aligned(slot_bound(p) * sizeof(int)) +
         aligned(sizeof(int)) + aligned(std::size_t(segment_count(p)) * p.m * sizeof(int));
}

Plan carve_plan(const LaswpProblem& p, void* workspace) {
  auto* bytes = static_cast<unsigned char*>(workspace);
  auto take = [&bytes](std::size_t size) {
    int* piece = reinterpret_cast<int*>(bytes);
    bytes += aligned(size);
    return piece;
  };
  Plan plan;
  plan.slot_of_row = take(p.m * sizeof(int));
  plan.rows = take(slot_bound(p) * sizeof(int));
  plan.source_slot = take(slot_bound(p) * sizeof(int));
  plan.outside_count = take(sizeof(int));
  plan.segment_maps = take(std::size_t(segment_count(p)) * p.m * sizeof(int));
  plan.segments = segment_count(p);
  plan.length = segment_length_for(p);
  return plan;
}

int device_attribute(cudaDeviceAttr attribute, int device) {
  int value = 0;
  BASALT_CUDA_CHECK(cudaDeviceGetAttribute(&value, attribute, device));
  return value;
}

// Gives every touched row a slot. Rows outside k1..k2 that several pivots name get one slot,
// whichever thread claims it first: the slot order does not change the result.
__global__ void assign_slots(const int* ipiv, int k1, int k2, Plan plan) {
  const int count = k2 - k1 + 1;
  for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < count; c += gridDim.x * blockDim.x) {
    const int row = k1 - 1 + c;
    plan.slot_of_row[row] = c;
    plan.rows[c] = row;
    const int target = ipiv[row] - 1;
    if (target >= k1 - 1 && target <= k2 - 1) continue;
    if (atomicCAS(&plan.slot_of_row[target], -1, -2) == -1) {
      const int slot = count + atomicAdd(plan.outside_count, 1);
      plan.rows[slot] = target;
      plan.slot_of_row[target] = slot;
    }
  }
}

// The 0-based row that application step i interchanges with ipiv's row.
__device__ int step_row(int i, int k1, int k2, bool forward) {
  return forward ? k1 - 1 + i : k2 - 1 - i;
}

// One block per segment. Each thread takes one row the segment touches (each interchange names
// two) and traces it back through the segment's interchanges, latest first: the result is the
// row whose data the segment brings there. Rows touched twice are traced twice, alike.
__global__ void __launch_bounds__(2 * segment_length)
    map_segments(const int* ipiv, int k1, int k2, bool forward, std::int64_t m, Plan plan) {
  extern __shared__ int segment_pivots[];
  const int interchanges = k2 - k1 + 1;
  const int first = blockIdx.x * plan.length;
  const int length = min(plan.length, interchanges - first);
  for (int i = threadIdx.x; i < length; i += blockDim.x)
    segment_pivots[i] = ipiv[step_row(first + i, k1, k2, forward)] - 1;
  __syncthreads();
  int* map = plan.segment_maps + blockIdx.x * m;
  for (int c = threadIdx.x; c < 2 * length; c += blockDim.x) {
    const int start =
        c < length ? step_row(first + c, k1, k2, forward) : segment_pivots[c - length];
    int row = start;
    for (int i = length - 1; i >= 0; --i) {
      const int k = step_row(first + i, k1, k2, forward), p = segment_pivots[i];
      row = row == k ? p : (row == p ? k : row);
    }
    map[start] = row;
  }
}

// Traces every slot's row back through the segments, latest first, to the row whose data ends
// up there, and records that row's slot.
__global__ void trace_sources(int interchanges, std::int64_t m, Plan plan) {
  const int slots = interchanges + *plan.outside_count;
  for (int s = blockIdx.x * blockDim.x + threadIdx.x; s < slots; s += gridDim.x * blockDim.x) {
    int row = plan.rows[s];
    for (int g = plan.segments - 1; g >= 0; --g) {
      const int mapped = plan.segment_maps[g * m + row];
      row = mapped < 0 ? row : mapped;
    }
    plan.source_slot[s] = plan.slot_of_row[row];
  }
}

// One column-major column per block at a time: the touched rows are copied into shared memory
// in slot order (asynchronous, coalesced reads), then written back permuted (coalesced writes).
// Each thread keeps the source slots of its Items slots in registers for all columns.
template <class T, int Items>
__global__ void __launch_bounds__(move_threads, 1)
    permute_columns(T* a, std::int64_t n, std::int64_t col_stride, int k1, int interchanges,
                    Plan plan) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* staged = reinterpret_cast<T*>(shared_bytes);
  const int slots = interchanges + *plan.outside_count;
  int source[Items];
#pragma unroll
  for (int i = 0; i < Items; ++i) {
    const int s = threadIdx.x + i * blockDim.x;
    source[i] = s < slots ? plan.source_slot[s] : -1;
  }
  // Slots below `interchanges` stand for rows k1..k2 in order; only the others look theirs up.
  auto row_of = [&](int s) { return s < interchanges ? k1 - 1 + s : plan.rows[s]; };
  for (std::int64_t j = blockIdx.x; j < n; j += gridDim.x) {
    T* column = a + j * col_stride;
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const int s = threadIdx.x + i * blockDim.x;
      if (source[i] >= 0) __pipeline_memcpy_async(&staged[s], &column[row_of(s)], sizeof(T));
    }
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < Items; ++i)
      if (source[i] >= 0) column[row_of(threadIdx.x + i * blockDim.x)] = staged[source[i]];
    __syncthreads();
  }
}

template <class T, int Items>
void launch_permute_columns(int device, cudaStream_t stream, T* a, const LaswpProblem& p,
                            int threads, const Plan& plan) {
  const auto kernel = permute_columns<T, Items>;
  const std::size_t shared = std::size_t(slot_bound(p)) * sizeof(T);
  BASALT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(shared)));
  int per_sm = 0;
  BASALT_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, shared));
  const std::int64_t resident =
      std::int64_t(std::max(per_sm, 1)) * device_attribute(cudaDevAttrMultiProcessorCount, device);
  const int blocks = static_cast<int>(std::min<std::int64_t>(p.n, resident));
  kernel<<<blocks, threads, shared, stream>>>(a, p.n, p.col_stride, p.k1, pivot_count(p), plan);
  BASALT_CUDA_CHECK_LAUNCH();
}

// The in-place mover's shape: threads per block and touched rows per thread.
struct ColumnShape {
  int threads, items;
};

ColumnShape column_shape(const LaswpProblem& p) {
  const int bound = slot_bound(p);
  if (bound <= move_threads) return {std::max(64, (bound + 31) / 32 * 32), 1};
  int items = 2;
  while (items * move_threads < bound) items *= 2;
  return {move_threads, items};
}

// The workspace path: touched rows are gathered into a buffer of slot_bound rows, then
// scattered back. The buffer runs along the matrix' unit stride so both passes coalesce.
template <class T, bool gather>
__global__ void move_through_buffer(T* a, T* buffer, std::int64_t n, std::int64_t row_stride,
                                    std::int64_t col_stride, int interchanges, int bound,
                                    Plan plan) {
  const int slots = interchanges + *plan.outside_count;
  const bool slots_fastest = row_stride == 1;
  const std::int64_t total = static_cast<std::int64_t>(slots) * n;
  for (std::int64_t idx = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; idx < total;
       idx += std::int64_t(gridDim.x) * blockDim.x) {
    const int s = static_cast<int>(slots_fastest ? idx % slots : idx / n);
    const std::int64_t j = slots_fastest ? idx / slots : idx % n;
    T& element = a[plan.rows[s] * row_stride + j * col_stride];
    if (gather) {
      buffer[slots_fastest ? s + j * bound : s * n + j] = element;
    } else {
      const int from = plan.source_slot[s];
      element = buffer[slots_fastest ? from + j * bound : from * n + j];
    }
  }
}

int grid_for(std::int64_t work, int threads, int device) {
  const std::int64_t wanted = (work + threads - 1) / threads;
  const std::int64_t cap = 32LL * device_attribute(cudaDevAttrMultiProcessorCount, device);
  return static_cast<int>(std::max<std::int64_t>(1, std::min(wanted, cap)));
}

// Few interchanges on few columns, as inside an LU panel: one kernel and no workspace. Every block
// plans the permutation in shared memory (cheap at this size), then moves its own columns, all
// touched rows gathered before any is written.
constexpr int narrow_max_interchanges = 512;
constexpr int narrow_max_columns = 512;
constexpr int narrow_threads = 256;
constexpr std::size_t narrow_stage_bytes = 32 * 1024;

template <class T>
__global__ void __launch_bounds__(narrow_threads)
    permute_narrow(T* a, const int* ipiv, LaswpProblem p, int columns_per_block) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  const int k = pivot_count(p), first = p.k1 - 1, last = p.k2 - 1;
  T* stage = reinterpret_cast<T*>(shared_bytes);  // 2k rows x columns_per_block
  int* pivot = reinterpret_cast<int*>(stage + std::size_t(2) * k * columns_per_block);
  int* rows = pivot + k;    // the touched rows: first..last, then the pivot rows outside them
  int* source = rows + 2 * k;  // the row whose data each touched row receives
  __shared__ int outside;
  if (threadIdx.x == 0) outside = 0;
  for (int i = threadIdx.x; i < k; i += blockDim.x) pivot[i] = ipiv[first + i] - 1;
  __syncthreads();
  for (int i = threadIdx.x; i < k; i += blockDim.x) {
    rows[i] = first + i;
    const int r = pivot[i];
    if (r >= first && r <= last) continue;
    bool earliest = true;
    for (int j = 0; j < i && earliest; ++j) earliest = pivot[j] != r;
    if (earliest) rows[k + atomicAdd(&outside, 1)] = r;
  }
  __syncthreads();
  const int touched = k + outside;
  // Undo the interchanges from the last applied to the first: where each row's data comes from.
  for (int s = threadIdx.x; s < touched; s += blockDim.x) {
    int row = rows[s];
    for (int step = 0; step < k; ++step) {
      const int i = p.forward ? k - 1 - step : step;
      if (row == first + i)
        row = pivot[i];
      else if (row == pivot[i])
        row = first + i;
    }
    source[s] = row;
  }
  __syncthreads();
  const std::int64_t column0 = std::int64_t(blockIdx.x) * columns_per_block;
  const int columns = static_cast<int>(min(std::int64_t(columns_per_block), p.n - column0));
  auto at = [&](int row, int c) -> T& {
    return a[row * p.row_stride + (column0 + c) * p.col_stride];
  };
  for (int e = threadIdx.x; e < touched * columns; e += blockDim.x)
    stage[e] = at(source[e % touched], e / touched);
  __syncthreads();
  for (int e = threadIdx.x; e < touched * columns; e += blockDim.x)
    at(rows[e % touched], e / touched) = stage[e];
}

bool narrow(const LaswpProblem& p) {
  return pivot_count(p) <= narrow_max_interchanges && p.n <= narrow_max_columns;
}

template <class T>
void launch_permute_narrow(cudaStream_t stream, T* a, const int* ipiv, const LaswpProblem& p) {
  const int k = pivot_count(p);
  const std::size_t per_column = std::size_t(2) * k * sizeof(T);
  // About one staged entry a thread (up to 2k touched rows a column): more columns a block
  // serialize each thread's loads and leave SMs idle.
  const std::int64_t columns_for_threads = std::max(1, narrow_threads / (2 * k));
  const int columns_per_block = static_cast<int>(std::clamp<std::int64_t>(
      std::min<std::int64_t>(narrow_stage_bytes / per_column, columns_for_threads), 1, p.n));
  const std::size_t shared = per_column * columns_per_block + std::size_t(5) * k * sizeof(int);
  const int blocks = static_cast<int>((p.n + columns_per_block - 1) / columns_per_block);
  permute_narrow<T><<<blocks, narrow_threads, shared, stream>>>(a, ipiv, p, columns_per_block);
  BASALT_CUDA_CHECK_LAUNCH();
}

enum class LaswpMover { in_place_columns, through_workspace };

// Which mover a problem gets on a device.
template <class T>
LaswpMover laswp_mover(int device, const LaswpProblem& p) {
  const std::size_t staged = std::size_t(slot_bound(p)) * sizeof(T);
  const std::size_t shared = device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  return p.row_stride == 1 && column_shape(p).items <= max_items && staged <= shared
             ? LaswpMover::in_place_columns
             : LaswpMover::through_workspace;
}

}  // namespace

// Plans the permutation in the workspace, then moves the rows.
template <class T>
void launch_laswp(int device, cudaStream_t stream, T* a, const int* ipiv, const LaswpProblem& p,
                  LaswpMover mover, void* workspace) {
  const int interchanges = pivot_count(p);
  const int bound = slot_bound(p);
  const Plan plan = carve_plan(p, workspace);
  BASALT_CUDA_CHECK(cudaMemsetAsync(plan.slot_of_row, 0xff, p.m * sizeof(int), stream));
  BASALT_CUDA_CHECK(cudaMemsetAsync(plan.outside_count, 0, sizeof(int), stream));
  BASALT_CUDA_CHECK(cudaMemsetAsync(plan.segment_maps, 0xff,
                                    std::size_t(plan.segments) * p.m * sizeof(int), stream));
  assign_slots<<<grid_for(interchanges, 256, device), 256, 0, stream>>>(ipiv, p.k1, p.k2, plan);
  BASALT_CUDA_CHECK_LAUNCH();
  // Segments grow past 512 interchanges beyond 32768 rows; their pivots stay in shared memory.
  const int segment_bytes = plan.length * sizeof(int);
  BASALT_CUDA_CHECK(cudaFuncSetAttribute(map_segments, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         segment_bytes));
  map_segments<<<plan.segments, 2 * segment_length, segment_bytes, stream>>>(ipiv, p.k1, p.k2,
                                                                             p.forward, p.m, plan);
  BASALT_CUDA_CHECK_LAUNCH();
  trace_sources<<<grid_for(bound, 128, device), 128, 0, stream>>>(interchanges, p.m, plan);
  BASALT_CUDA_CHECK_LAUNCH();

  if (mover == LaswpMover::in_place_columns) {
    const ColumnShape shape = column_shape(p);
    switch (shape.items) {
      case 1:
        return launch_permute_columns<T, 1>(device, stream, a, p, shape.threads, plan);
      case 2:
        return launch_permute_columns<T, 2>(device, stream, a, p, shape.threads, plan);
      case 4:
        return launch_permute_columns<T, 4>(device, stream, a, p, shape.threads, plan);
      case 8:
        return launch_permute_columns<T, 8>(device, stream, a, p, shape.threads, plan);
      default:  // max_items
        return launch_permute_columns<T, max_items>(device, stream, a, p, shape.threads, plan);
    }
  }
  T* buffer = reinterpret_cast<T*>(static_cast<unsigned char*>(workspace) + plan_bytes(p));
  const int blocks = grid_for(std::int64_t(bound) * p.n, 256, device);
  move_through_buffer<T, true><<<blocks, 256, 0, stream>>>(a, buffer, p.n, p.row_stride,
                                                           p.col_stride, interchanges, bound, plan);
  BASALT_CUDA_CHECK_LAUNCH();
  move_through_buffer<T, false><<<blocks, 256, 0, stream>>>(
      a, buffer, p.n, p.row_stride, p.col_stride, interchanges, bound, plan);
  BASALT_CUDA_CHECK_LAUNCH();
}

template <class T>
void laswp(int device, cudaStream_t stream, T* a, const int* ipiv, const LaswpProblem& p) {
  if (p.n == 0 || p.k2 < p.k1) return;
  if (narrow(p)) return launch_permute_narrow(stream, a, ipiv, p);
  const LaswpMover mover = laswp_mover<T>(device, p);
  std::size_t bytes = plan_bytes(p);
  if (mover == LaswpMover::through_workspace)
    bytes += static_cast<std::size_t>(slot_bound(p)) * p.n * sizeof(T);
  void* workspace = acquire_workspace(device, stream, bytes);
  launch_laswp(device, stream, a, ipiv, p, mover, workspace);
  release_workspace(workspace, stream);
}

#define BASALT_INSTANTIATE_LASWP(T) \
  template void laswp<T>(int, cudaStream_t, T*, const int*, const LaswpProblem&);

BASALT_INSTANTIATE_LASWP(float)
BASALT_INSTANTIATE_LASWP(double)
BASALT_INSTANTIATE_LASWP(cuFloatComplex)
BASALT_INSTANTIATE_LASWP(cuDoubleComplex)

}  // namespace basalt::cuda::kernels
