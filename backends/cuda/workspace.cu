#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/workspace.hpp"

namespace basalt::cuda {

namespace {

cudaMemPool_t pool_of(int device) {
  static std::mutex mutex;
  static cudaMemPool_t pools[max_devices] = {};
  device_slot(device);
  std::lock_guard<std::mutex> lock(mutex);
  if (!pools[device]) {
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    BASALT_CUDA_CHECK(cudaMemPoolCreate(&pools[device], &props));
    std::uint64_t kept = pool_kept_bytes;
    BASALT_CUDA_CHECK(
        cudaMemPoolSetAttribute(pools[device], cudaMemPoolAttrReleaseThreshold, &kept));
  }
  return pools[device];
}

}  // namespace

void* acquire_workspace(int device, cudaStream_t stream, std::size_t bytes) {
  void* workspace = nullptr;
  BASALT_CUDA_CHECK(cudaMallocFromPoolAsync(&workspace, bytes, pool_of(device), stream));
  return workspace;
}

void release_workspace(void* workspace, cudaStream_t stream) {
  BASALT_CUDA_CHECK(cudaFreeAsync(workspace, stream));
}

unsigned* stream_counters(int device, cudaStream_t stream) {
  static std::mutex mutex;
  static std::map<std::pair<int, cudaStream_t>, unsigned*> counters;
  std::lock_guard<std::mutex> lock(mutex);
  unsigned*& made = counters[{device, stream}];
  if (!made) {
    // From the pool, which keeps it, and zeroed in stream order: no synchronization.
    constexpr std::size_t bytes = stream_counter_count * sizeof(unsigned);
    made = static_cast<unsigned*>(acquire_workspace(device, stream, bytes));
    BASALT_CUDA_CHECK(cudaMemsetAsync(made, 0, bytes, stream));
  }
  return made;
}

}  // namespace basalt::cuda
