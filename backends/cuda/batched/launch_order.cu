#include <mutex>
#include <vector>

#include "basalt/backends/cuda/batched/launch_order.hpp"
#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/workspace.hpp"

namespace basalt::cuda {

int* most_rows_first(int device, cudaStream_t stream, const int* rows, int count,
                     const std::vector<int>& with_rows) {
  if (count == 0) return nullptr;
  // A counting sort, descending: next_slot[r] is where the next matrix of r rows goes.
  std::vector<int> next_slot(with_rows.size());
  int slot = 0;
  for (int r = static_cast<int>(with_rows.size()) - 1; r >= 0; --r) {
    next_slot[r] = slot;
    slot += with_rows[r];
  }
  std::vector<int> order(count);
  for (int b = 0; b < count; ++b) order[next_slot[rows[b]]++] = b;
  auto* device_order = static_cast<int*>(acquire_workspace(device, stream, count * sizeof(int)));
  // From pageable memory the call returns once `order` is staged, so it may go out of scope.
  BASALT_CUDA_CHECK(cudaMemcpyAsync(device_order, order.data(), count * sizeof(int),
                                    cudaMemcpyHostToDevice, stream));
  return device_order;
}

namespace {

constexpr int max_devices = 64;

// The device's side streams, made on first use and kept for the life of the process.
const cudaStream_t* side_streams_of(int device) {
  static std::mutex mutex;
  static cudaStream_t streams[max_devices][SideStreams::count] = {};
  if (device < 0 || device >= max_devices) BASALT_CUDA_CHECK(cudaErrorInvalidDevice);
  std::lock_guard<std::mutex> lock(mutex);
  if (!streams[device][0]) {
    int current = 0;
    BASALT_CUDA_CHECK(cudaGetDevice(&current));
    BASALT_CUDA_CHECK(cudaSetDevice(device));
    for (auto& stream : streams[device])
      BASALT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    BASALT_CUDA_CHECK(cudaSetDevice(current));
  }
  return streams[device];
}

// `waiting` waits for the work queued on `on` so far.
void wait_for(cudaStream_t waiting, cudaStream_t on) {
  cudaEvent_t event;
  BASALT_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  BASALT_CUDA_CHECK(cudaEventRecord(event, on));
  BASALT_CUDA_CHECK(cudaStreamWaitEvent(waiting, event, 0));
  BASALT_CUDA_CHECK(cudaEventDestroy(event));  // released once the wait is done
}

}  // namespace

SideStreams::SideStreams(int device, cudaStream_t stream)
    : stream_(stream), side_(side_streams_of(device)) {
  for (int k = 0; k < count; ++k) wait_for(side_[k], stream_);
}

void SideStreams::join() {
  for (int k = 0; k < count; ++k) wait_for(stream_, side_[k]);
}

}  // namespace basalt::cuda
