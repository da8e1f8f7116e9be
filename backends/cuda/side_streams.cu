#include <algorithm>
#include <mutex>

#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/side_streams.hpp"

namespace basalt::cuda {

namespace {

constexpr int max_devices = 64;
constexpr int look_ahead = SideStreams::count;  // the look-ahead stream's slot

// The device's side streams and its look-ahead stream, made on first use and kept for the life
// of the process.
const cudaStream_t* streams_of(int device) {
  static std::mutex mutex;
  static cudaStream_t streams[max_devices][SideStreams::count + 1] = {};
  if (device < 0 || device >= max_devices) BASALT_CUDA_CHECK(cudaErrorInvalidDevice);
  std::lock_guard<std::mutex> lock(mutex);
  if (!streams[device][0]) {
    int current = 0;
    BASALT_CUDA_CHECK(cudaGetDevice(&current));
    BASALT_CUDA_CHECK(cudaSetDevice(device));
    for (int k = 0; k < SideStreams::count; ++k)
      BASALT_CUDA_CHECK(cudaStreamCreateWithFlags(&streams[device][k], cudaStreamNonBlocking));
    int least = 0, greatest = 0;  // CUDA's priorities: lower numbers go first
    BASALT_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    BASALT_CUDA_CHECK(cudaStreamCreateWithPriority(&streams[device][look_ahead],
                                                   cudaStreamNonBlocking, greatest));
    BASALT_CUDA_CHECK(cudaSetDevice(current));
  }
  return streams[device];
}

}  // namespace

void wait_for(cudaStream_t waiting, cudaStream_t on) {
  cudaEvent_t event;
  BASALT_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  BASALT_CUDA_CHECK(cudaEventRecord(event, on));
  BASALT_CUDA_CHECK(cudaStreamWaitEvent(waiting, event, 0));
  BASALT_CUDA_CHECK(cudaEventDestroy(event));  // released once the wait is done
}

SideStreams::SideStreams(int device, cudaStream_t stream)
    : stream_(stream), side_(streams_of(device)) {
  cudaEvent_t queued;
  BASALT_CUDA_CHECK(cudaEventCreateWithFlags(&queued, cudaEventDisableTiming));
  BASALT_CUDA_CHECK(cudaEventRecord(queued, stream_));
  for (int k = 0; k < count; ++k) BASALT_CUDA_CHECK(cudaStreamWaitEvent(side_[k], queued, 0));
  BASALT_CUDA_CHECK(cudaEventDestroy(queued));
}

cudaStream_t SideStreams::operator[](int k) {
  k %= count;
  handed_out_ = std::max(handed_out_, k + 1);
  return side_[k];
}

void SideStreams::join() {
  for (int k = 0; k < handed_out_; ++k) wait_for(stream_, side_[k]);
}

cudaStream_t look_ahead_stream(int device) { return streams_of(device)[look_ahead]; }

}  // namespace basalt::cuda
