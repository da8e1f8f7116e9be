#pragma once
// How the batched kernels take a variable batch: its matrices in order of rows, the most first
// (a block kernel's threads and a warp kernel's lanes follow the rows), and the launches of its
// block heights on side streams. Taken in the batch's own order, a launch over matrices of mixed
// sizes ran up to 3x slower than over the same matrices sorted by size (perf/NOTES.md,
// "Variable batches"); the largest first also leave the shortest tail at the end of a launch.
// No Kokkos: plain host arrays.
#include <cuda_runtime.h>

#include <vector>

namespace basalt::cuda {

// rows: the row counts of `count` matrices, on the host; with_rows[r]: how many of them have r
// rows (r up to the most). Returns order on the device, in workspace usable on stream (give it
// back with release_workspace): slot s of a launch takes matrix order[s]; the rows never
// increase from one slot to the next, and equal rows keep the batch's order.
int* most_rows_first(int device, cudaStream_t stream, const int* rows, int count,
                     const std::vector<int>& with_rows);

// Streams of Basalt's own beside `stream`, so that the launches of a variable batch's block
// heights overlap: each launch has a tail (its last blocks running on a few SMs) that the next
// height's blocks can fill. Construction makes the side streams wait for the work queued on
// stream so far; join() makes stream wait for what was queued on them since.
class SideStreams {
 public:
  static constexpr int count = 4;
  SideStreams(int device, cudaStream_t stream);
  cudaStream_t operator[](int k) const { return side_[k % count]; }
  void join();

 private:
  cudaStream_t stream_;
  const cudaStream_t* side_;
};

}  // namespace basalt::cuda
