#pragma once
// Stream-ordered scratch memory for the CUDA kernels and the drivers' call scratch
// (core/call_scratch.hpp), from a memory pool of Basalt's own per device. The pool keeps up to
// pool_kept_bytes of what is freed to it, so a workspace taken inside a factorization, or by a
// call repeated in a loop, costs neither a cudaMalloc nor a device-wide synchronization; more
// than that goes back to the device at the next synchronization rather than staying out of the
// application's reach. 4 GiB keeps geqrf's work for a million rows (1 GiB in double, 2 in complex
// double; at 1 GiB a call of 1,000,000 x 256 mapped its memory anew, 5% slower on an H100) and
// gives back that of ten million. The device's default pool, which the application may tune, is
// left alone. No Kokkos: the .cu files include this.
#include <cuda_runtime.h>

#include <cstddef>

namespace basalt::cuda {

constexpr std::size_t pool_kept_bytes = std::size_t{4} << 30;

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
