#include <mutex>

#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/side_streams.hpp"

namespace basalt::cuda {

namespace {

// The slots after the side streams'.
constexpr int look_ahead = SideStreams::count, recording = look_ahead + 1,
              recording_look_ahead = recording + 1, look_ahead_side = recording_look_ahead + 1,
              recording_look_ahead_side = look_ahead_side + 1,
              stream_slots = recording_look_ahead_side + 1;

// The device's side streams, its look-ahead streams and its recording streams, made on first use
// and kept for the life of the process.
const cudaStream_t* streams_of(int device) {
  static std::mutex mutex;
  static cudaStream_t streams[max_devices][stream_slots] = {};
  device_slot(device);
  std::lock_guard<std::mutex> lock(mutex);
  if (!streams[device][0]) {
    int current = 0;
    BASALT_CUDA_CHECK(cudaGetDevice(&current));
    BASALT_CUDA_CHECK(cudaSetDevice(device));
    for (int k = 0; k < SideStreams::count; ++k)
      BASALT_CUDA_CHECK(cudaStreamCreateWithFlags(&streams[device][k], cudaStreamNonBlocking));
    BASALT_CUDA_CHECK(
        cudaStreamCreateWithFlags(&streams[device][recording], cudaStreamNonBlocking));
    int least = 0, greatest = 0;  // CUDA's priorities: lower numbers go first
    BASALT_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    for (int k : {look_ahead, recording_look_ahead})
      BASALT_CUDA_CHECK(
          cudaStreamCreateWithPriority(&streams[device][k], cudaStreamNonBlocking, greatest));
    const int next = greatest < least ? greatest + 1 : greatest;
    for (int k : {look_ahead_side, recording_look_ahead_side})
      BASALT_CUDA_CHECK(
          cudaStreamCreateWithPriority(&streams[device][k], cudaStreamNonBlocking, next));
    BASALT_CUDA_CHECK(cudaSetDevice(current));
  }
  return streams[device];
}

// This host thread's events on the device, made on first use and reused, since a variable batch
// of small matrices takes 10 to 30 us a call, of which creating and destroying events took a
// noticeable part (perf/NOTES.md, "Variable batches up to n = 32"). Reuse is safe: a stream
// waits for an event's record as it stood when the wait was queued.
cudaEvent_t event_of(int device, int slot) {
  struct Events {
    cudaEvent_t by_device[max_devices][SideStreams::count + 1] = {};
    ~Events() {
      for (auto& slots : by_device)
        for (auto event : slots)
          if (event) cudaEventDestroy(event);
    }
  };
  thread_local Events events;
  cudaEvent_t& event = events.by_device[device][slot];
  if (!event) {
    int current = 0;
    BASALT_CUDA_CHECK(cudaGetDevice(&current));
    BASALT_CUDA_CHECK(cudaSetDevice(device));
    BASALT_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    BASALT_CUDA_CHECK(cudaSetDevice(current));
  }
  return event;
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
    : device_(device), stream_(stream), side_(streams_of(device)) {
  BASALT_CUDA_CHECK(cudaEventRecord(event_of(device_, count), stream_));
}

cudaStream_t SideStreams::operator[](int k) {
  k %= count;
  for (; handed_out_ <= k; ++handed_out_)
    BASALT_CUDA_CHECK(cudaStreamWaitEvent(side_[handed_out_], event_of(device_, count), 0));
  return side_[k];
}

void SideStreams::join() {
  for (int k = 0; k < handed_out_; ++k) {
    BASALT_CUDA_CHECK(cudaEventRecord(event_of(device_, k), side_[k]));
    BASALT_CUDA_CHECK(cudaStreamWaitEvent(stream_, event_of(device_, k), 0));
  }
}

cudaStream_t look_ahead_stream(int device) { return streams_of(device)[look_ahead]; }

cudaStream_t recording_stream(int device) { return streams_of(device)[recording]; }

cudaStream_t recording_look_ahead_stream(int device) {
  return streams_of(device)[recording_look_ahead];
}

cudaStream_t look_ahead_side_stream(int device) { return streams_of(device)[look_ahead_side]; }

cudaStream_t recording_look_ahead_side_stream(int device) {
  return streams_of(device)[recording_look_ahead_side];
}

Lane lane_of(int device, cudaStream_t stream) {
  const cudaStream_t* streams = streams_of(device);
  if (stream == streams[look_ahead] || stream == streams[recording_look_ahead])
    return Lane::look_ahead;
  if (stream == streams[look_ahead_side] || stream == streams[recording_look_ahead_side])
    return Lane::look_ahead_side;
  return Lane::main;
}

}  // namespace basalt::cuda
