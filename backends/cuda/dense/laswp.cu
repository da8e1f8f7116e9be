// CUDA laswp: the pivot sequence becomes one permutation, then every touched row moves once.
#include <cuComplex.h>

#include <algorithm>

#include "basalt/backends/cuda/dense/laswp_launch.hpp"
#include "basalt/backends/cuda/error.hpp"

namespace basalt::cuda::kernels {

namespace {

constexpr int plan_threads = 128;
constexpr int move_threads = 1024;

// A slot per touched row: slots 0..K-1 hold rows k1..k2, the slots after them the rows that a
// pivot names outside k1..k2 (at most min(K, m - K) of them).
struct Plan {
  int* slot_of_row;    // m entries: the slot of each touched row, -1 for untouched rows
  int* rows;           // the row each slot stands for
  int* source_slot;    // the slot whose row's data ends up in this slot's row
  int* outside_count;  // number of touched rows outside k1..k2
};

constexpr std::size_t aligned(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

int pivot_count(const LaswpProblem& p) { return p.k2 - p.k1 + 1; }

int slot_bound(const LaswpProblem& p) {
  const int k = pivot_count(p);
  return k + static_cast<int>(std::min<std::int64_t>(k, p.m - k));
}

std::size_t plan_bytes(const LaswpProblem& p) {
  return aligned(p.m * sizeof(int)) + 2 * aligned(slot_bound(p) * sizeof(int)) +
         aligned(sizeof(int));
}

Plan carve_plan(const LaswpProblem& p, void* workspace) {
  auto* bytes = static_cast<unsigned char*>(workspace);
  Plan plan;
  plan.slot_of_row = reinterpret_cast<int*>(bytes);
  bytes += aligned(p.m * sizeof(int));
  plan.rows = reinterpret_cast<int*>(bytes);
  bytes += aligned(slot_bound(p) * sizeof(int));
  plan.source_slot = reinterpret_cast<int*>(bytes);
  bytes += aligned(slot_bound(p) * sizeof(int));
  plan.outside_count = reinterpret_cast<int*>(bytes);
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

// Finds, for every slot's row, the row whose data the interchanges bring there: the row is
// traced back through the interchanges in reverse order of application. Each thread traces
// one row; the block shares each chunk of pivots through shared memory.
__global__ void __launch_bounds__(plan_threads)
    trace_sources(const int* ipiv, int k1, int k2, bool forward, Plan plan) {
  __shared__ int pivots[plan_threads];
  const int interchanges = k2 - k1 + 1;
  const int slots = interchanges + *plan.outside_count;
  if (blockIdx.x * blockDim.x >= slots) return;  // whole block idle: no barrier is skipped
  const int slot = blockIdx.x * blockDim.x + threadIdx.x;
  int row = slot < slots ? plan.rows[slot] : -1;
  for (int base = 0; base < interchanges; base += plan_threads) {
    const int mine = base + threadIdx.x;
    if (mine < interchanges)
      pivots[threadIdx.x] = ipiv[forward ? k2 - 1 - mine : k1 - 1 + mine] - 1;
    __syncthreads();
    const int chunk = min(plan_threads, interchanges - base);
    for (int i = 0; i < chunk; ++i) {
      const int k = forward ? k2 - 1 - (base + i) : k1 - 1 + base + i;
      const int p = pivots[i];
      row = row == k ? p : (row == p ? k : row);
    }
    __syncthreads();
  }
  if (slot < slots) plan.source_slot[slot] = plan.slot_of_row[row];
}

// One column per block at a time: the touched rows of the column are staged in shared memory
// in slot order (coalesced reads), then written back permuted (coalesced writes). Slots below
// `interchanges` stand for rows k1..k2 in order, so only the others look their row up.
template <class T>
__global__ void __launch_bounds__(move_threads)
    permute_columns(T* a, std::int64_t n, std::int64_t row_stride, std::int64_t col_stride, int k1,
                    int interchanges, Plan plan) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* staged = reinterpret_cast<T*>(shared_bytes);
  const int slots = interchanges + *plan.outside_count;
  for (std::int64_t j = blockIdx.x; j < n; j += gridDim.x) {
    T* column = a + j * col_stride;
#pragma unroll 4
    for (int s = threadIdx.x; s < slots; s += blockDim.x) {
      const std::int64_t row = s < interchanges ? k1 - 1 + s : plan.rows[s];
      staged[s] = column[row * row_stride];
    }
    __syncthreads();
#pragma unroll 4
    for (int s = threadIdx.x; s < slots; s += blockDim.x) {
      const std::int64_t row = s < interchanges ? k1 - 1 + s : plan.rows[s];
      column[row * row_stride] = staged[plan.source_slot[s]];
    }
    __syncthreads();
  }
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

}  // namespace

template <class T>
LaswpMover laswp_mover(int device, const LaswpProblem& p) {
  const bool column_major = p.row_stride == 1;
  const std::size_t staged = slot_bound(p) * sizeof(T);
  const std::size_t shared = device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  return column_major && staged <= shared ? LaswpMover::in_place_columns
                                          : LaswpMover::through_workspace;
}

template <class T>
std::size_t laswp_workspace_bytes(int device, const LaswpProblem& p) {
  if (p.n == 0 || p.k2 < p.k1) return 0;
  std::size_t bytes = plan_bytes(p);
  if (laswp_mover<T>(device, p) == LaswpMover::through_workspace)
    bytes += static_cast<std::size_t>(slot_bound(p)) * p.n * sizeof(T);
  return bytes;
}

template <class T>
void laswp(int device, cudaStream_t stream, T* a, const int* ipiv, const LaswpProblem& p,
           void* workspace) {
  if (p.n == 0 || p.k2 < p.k1) return;
  const int interchanges = pivot_count(p);
  const int bound = slot_bound(p);
  const Plan plan = carve_plan(p, workspace);
  BASALT_CUDA_CHECK(cudaMemsetAsync(plan.slot_of_row, 0xff, p.m * sizeof(int), stream));
  BASALT_CUDA_CHECK(cudaMemsetAsync(plan.outside_count, 0, sizeof(int), stream));
  assign_slots<<<grid_for(interchanges, 256, device), 256, 0, stream>>>(ipiv, p.k1, p.k2, plan);
  BASALT_CUDA_CHECK_LAUNCH();
  trace_sources<<<(bound + plan_threads - 1) / plan_threads, plan_threads, 0, stream>>>(
      ipiv, p.k1, p.k2, p.forward, plan);
  BASALT_CUDA_CHECK_LAUNCH();

  if (laswp_mover<T>(device, p) == LaswpMover::in_place_columns) {
    const std::size_t shared = bound * sizeof(T);
    BASALT_CUDA_CHECK(cudaFuncSetAttribute(
        permute_columns<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)));
    const int threads = std::min(move_threads, std::max(64, (bound + 31) / 32 * 32));
    int per_sm = 0;
    BASALT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, permute_columns<T>,
                                                                    threads, shared));
    const std::int64_t resident = std::int64_t(std::max(per_sm, 1)) *
                                  device_attribute(cudaDevAttrMultiProcessorCount, device);
    const int blocks = static_cast<int>(std::min<std::int64_t>(p.n, resident));
    permute_columns<T><<<blocks, threads, shared, stream>>>(a, p.n, p.row_stride, p.col_stride,
                                                            p.k1, interchanges, plan);
    BASALT_CUDA_CHECK_LAUNCH();
    return;
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

#define BASALT_INSTANTIATE_LASWP(T)                                        \
  template LaswpMover laswp_mover<T>(int, const LaswpProblem&);            \
  template std::size_t laswp_workspace_bytes<T>(int, const LaswpProblem&); \
  template void laswp<T>(int, cudaStream_t, T*, const int*, const LaswpProblem&, void*);

BASALT_INSTANTIATE_LASWP(float)
BASALT_INSTANTIATE_LASWP(double)
BASALT_INSTANTIATE_LASWP(cuFloatComplex)
BASALT_INSTANTIATE_LASWP(cuDoubleComplex)

}  // namespace basalt::cuda::kernels
