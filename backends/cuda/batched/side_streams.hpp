#pragma once
// The side streams on which the batched kernels launch a variable batch's classes of sizes, so
// that the launches overlap: each has a tail (its last blocks running on a few SMs) that the
// next class's blocks can fill; on one stream, those tails left SMs idle (perf/NOTES.md,
// "Variable batches"). No Kokkos: plain CUDA.
#include <cuda_runtime.h>

namespace basalt::cuda {

// Streams of Basalt's own beside `stream`, made once per device. Construction makes them wait
// for the work queued on `stream` so far; join() makes `stream` wait for the work queued since
// on the side streams handed out by operator[].
class SideStreams {
 public:
  static constexpr int count = 4;
  SideStreams(int device, cudaStream_t stream);
  cudaStream_t operator[](int k);
  void join();

 private:
  cudaStream_t stream_;
  const cudaStream_t* side_;
  int handed_out_ = 0;  // side streams 0 .. handed_out_ - 1 have been handed out
};

}  // namespace basalt::cuda
