#pragma once
// Launcher of the CUDA Cholesky diagonal block (seed 000's fused potf2, section 6.4): one thread
// block factors the whole block, held in shared memory from load to write-back, so the block
// costs one launch and one trip to global memory each way. No Kokkos: potf2.cu includes this.
#include <cuda_runtime.h>

#include <cstdint>

namespace basalt::cuda::kernels {

struct Potf2Problem {
  int n = 0;             // the block is n x n
  std::int64_t lda = 1;  // column stride
  bool lower = true;     // the triangle stored and factored
  int offset = 0;        // columns before the block, for info
};

// The widest block of entry_bytes-sized entries the kernel holds in one thread block's shared
// memory on device.
int potf2_width_limit(int device, int entry_bytes);

// block, info and failed_diagonal are device pointers, n must not exceed potf2_width_limit; the
// contract of basalt::portable::potf2 (info, the failing entry, the identity after a failure).
// Asynchronous on stream.
template <class T>
void potf2(int device, cudaStream_t stream, T* block, int* info, T* failed_diagonal,
           const Potf2Problem& problem);

}  // namespace basalt::cuda::kernels
