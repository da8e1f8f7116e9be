#pragma once
// Launcher of the CUDA larft factor: T of a block reflector from G = V^H V and tau. No Kokkos:
// larft.cu includes this.
//
// One thread block builds all of T in shared memory, as the portable path does it
// (portable::larft_factor in qr_portable.hpp): the diagonal blocks of 16 reflectors, a warp
// each, column by column, then each level of the recursion's joins, T12 = -T11 (G12 T22), every
// pair of the level at once. One launch where the portable path makes 1 + log2(k / 16), each
// with a team barrier per column of a leaf.
#include <cuda_runtime.h>

#include <cstdint>

namespace basalt::cuda::kernels {

// The most reflectors (at most 64) whose T the kernel builds in entry_bytes-sized entries on
// device: all of it must fit one block's shared memory.
int larft_factor_limit(int device, int entry_bytes);

// t (k x k, column-major, column stride ldt) holds G = V^H V on entry (the kernel reads its
// strict upper triangle) and T's upper triangle and diagonal on exit, its strict lower part
// untouched; tau holds k entries, tau_stride apart. k must not exceed larft_factor_limit.
// Asynchronous on stream.
template <class T>
void larft_factor(int device, cudaStream_t stream, T* t, std::int64_t ldt, const T* tau,
                  std::int64_t tau_stride, int k);

}  // namespace basalt::cuda::kernels
