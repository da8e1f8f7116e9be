#pragma once
// Streams of Basalt's own beside the caller's, made once per device and kept for the life of
// the process. No Kokkos: plain CUDA.
#include <cuda_runtime.h>

namespace basalt::cuda {

// Four streams on which the batched kernels launch a variable batch's classes of sizes, so that
// the launches overlap: each has a tail (its last blocks running on a few SMs) that the next
// class's blocks can fill; on one stream, those tails left SMs idle (perf/NOTES.md, "Variable
// batches"). A side stream handed out by operator[] starts after the work queued on `stream`
// before construction; join() makes `stream` wait for the work queued since on those handed out.
class SideStreams {
 public:
  static constexpr int count = 4;
  SideStreams(int device, cudaStream_t stream);
  cudaStream_t operator[](int k);
  void join();

 private:
  int device_;
  cudaStream_t stream_;
  const cudaStream_t* side_;
  int handed_out_ = 0;  // side streams 0 .. handed_out_ - 1 have been handed out
};

// The device's look-ahead stream: of the highest priority, so that a factorization's next panel,
// queued on it beside the trailing update, gets the multiprocessors that the update's blocks
// free first.
cudaStream_t look_ahead_stream(int device);

// The streams on which a call is recorded as a CUDA graph (call_graphs.hpp): Basalt's own, since
// the caller's need not be capturable (Kokkos 3.4's default instance is on the legacy stream,
// which is not), and the second, of the look-ahead stream's priority, for the recorded call's
// look-ahead.
cudaStream_t recording_stream(int device);
cudaStream_t recording_look_ahead_stream(int device);

// The look-ahead streams' own side streams, of the priority after theirs: for work beside a
// panel that the panel waits for later (a Cholesky panel's updates beyond its next leaf, which
// must not take the SMs its leaves need first).
cudaStream_t look_ahead_side_stream(int device);
cudaStream_t recording_look_ahead_side_stream(int device);

// Which of the work that may run at once a stream carries: the look-ahead's (its stream or the
// recording one), the look-ahead's side's (likewise), or the rest (the caller's, the recording
// stream, the side streams). Work on different lanes may need resources of its own (a cuBLAS
// handle's workspace).
enum class Lane { main, look_ahead, look_ahead_side };
constexpr int lanes = static_cast<int>(Lane::look_ahead_side) + 1;
Lane lane_of(int device, cudaStream_t stream);

// Whether stream is the device's look-ahead stream or its recording look-ahead stream.
inline bool is_look_ahead(int device, cudaStream_t stream) {
  return lane_of(device, stream) == Lane::look_ahead;
}

// `waiting` waits for the work queued on `on` so far.
void wait_for(cudaStream_t waiting, cudaStream_t on);

}  // namespace basalt::cuda
