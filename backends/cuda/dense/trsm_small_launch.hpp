#pragma once
// Launcher of the CUDA solve with a small unit lower triangle, B := alpha L^-1 B, as LU's
// look-ahead asks for the next block column's rows of U once per panel (getrf's critical path).
// No Kokkos: trsm_small.cu includes this.
#include <cuda_runtime.h>

#include <cstdint>

namespace basalt::cuda::kernels {

// The largest triangle the kernel takes: its rows are four per lane of a warp.
constexpr int small_trsm_max_rows = 128;

// l (m x m, column stride ldl, only its strict lower part read) and b (m x n, column stride ldb)
// are device pointers, m <= small_trsm_max_rows. Asynchronous on stream.
template <class T>
void solve_unit_lower(cudaStream_t stream, const T* l, std::int64_t ldl, T* b, std::int64_t ldb,
                      int m, std::int64_t n, T alpha);

}  // namespace basalt::cuda::kernels
