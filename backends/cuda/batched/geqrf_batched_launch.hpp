#pragma once
// Launcher of the CUDA batched Householder QR for small matrices (seed 001: the whole matrix
// kept on chip). No Kokkos: geqrf_batched.cu includes this.
//
// One warp segment per matrix (4, 8, 16 or 32 lanes), lane c holding column c in registers.
// At step j lane j forms the reflector from its own column and passes it through shared
// memory; every lane c > j then computes its w_c = v^H A(j:m, c) alone, v read as a broadcast,
// and updates its column: no reductions across lanes. Matrices up to max_size x max_size.
#include <cuda_runtime.h>

#include "basalt/backends/cuda/batched/getrf_batched_launch.hpp"

namespace basalt::cuda::kernels {

inline constexpr int geqrf_batched_max_size = 32;

// LAPACK's geqr2 on `count` matrices of at most max_size x max_size (largest: the most rows or
// columns of any of them): reflectors below the diagonal, R on and above it, tau(b) its own
// batch of vectors. Asynchronous on stream.
template <class T>
void geqrf_batched_small(cudaStream_t stream, const DeviceBatch<T>& A, const DeviceBatch<T>& tau,
                         int count, int largest);

// The same on matrices of more than max_size and at most pairs_max_size rows and columns, not
// complex double: a block of two threads per column (each holding every other row of it) per
// matrix, one block barrier a step (perf/NOTES.md, "Batched QR by column pairs").
inline constexpr int geqrf_batched_pairs_max_size = 64;
template <class T>
void geqrf_batched_pairs(cudaStream_t stream, const DeviceBatch<T>& A, const DeviceBatch<T>& tau,
                         int count, int largest);

// The matrices of up to `largest` rows and columns that one multiprocessor keeps resident under
// geqrf_batched_small's kernel.
template <class T>
int geqrf_batched_small_resident_matrices(int largest);

}  // namespace basalt::cuda::kernels
