#pragma once
// Launchers of the CUDA laswp (seed 000, section 6.6). No Kokkos: laswp.cu includes this.
//
// The pivot sequence ipiv(k1..k2) is first turned into the final permutation of the rows it
// touches (the paper's XIPIV), all rows at once; then every touched row moves exactly once.
// Column-major matrices whose touched rows fit in shared memory are permuted in place one
// column per thread block (read once, write once, both coalesced); other shapes and layouts
// gather the touched rows into the workspace and scatter them back.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace basalt::cuda::kernels {

struct LaswpProblem {
  std::int64_t m = 0, n = 0;
  std::int64_t row_stride = 1;  // elements between A(i, j) and A(i + 1, j)
  std::int64_t col_stride = 1;  // elements between A(i, j) and A(i, j + 1)
  int k1 = 1, k2 = 0;           // 1-based range of ipiv, k1 <= k2 <= m
  bool forward = true;
};

// ipiv and a are device pointers. Asynchronous on stream; the workspace is stream-ordered
// (basalt/backends/cuda/workspace.hpp).
template <class T>
void laswp(int device, cudaStream_t stream, T* a, const int* ipiv, const LaswpProblem& problem);

}  // namespace basalt::cuda::kernels
