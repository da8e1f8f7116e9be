#pragma once
// Stream-ordered scratch memory for the CUDA kernels, from a memory pool of Basalt's own per
// device. The pool keeps what is freed to it (no release threshold), so a workspace taken inside
// a factorization, or by a call repeated in a loop, costs neither a cudaMalloc nor a device-wide
// synchronization; the device's default pool, which the application may tune, is left alone.
// No Kokkos: the .cu files include this.
#include <cuda_runtime.h>

#include <cstddef>

namespace basalt::cuda {

// bytes on device, usable by work on stream from now on; give it back with release_workspace.
void* acquire_workspace(int device, cudaStream_t stream, std::size_t bytes);
void release_workspace(void* workspace, cudaStream_t stream);

// Counters in device memory for the thread blocks of one kernel to signal each other: the
// stream's own, made on its first use and kept for the life of the process, zero when first
// handed out. A kernel given them leaves them zero at its end (its last block resets them), so
// the next kernel on the stream finds them zero with no memset queued before it; kernels on one
// stream run one after another, so they share them in turn.
constexpr int stream_counter_count = 4;
unsigned* stream_counters(int device, cudaStream_t stream);

}  // namespace basalt::cuda
