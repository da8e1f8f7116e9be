#pragma once
// Launcher of the CUDA LU panel (seed 000's fused panel, design D2 with CUDA's grid barrier in
// place of hand-made flags). No Kokkos: getf2.cu includes this.
//
// One cooperative kernel factors the whole m x w panel: thread blocks split the rows; for each
// column they agree on the pivot (a block-local search, a grid barrier, every block reducing
// the blocks' results the same way), stage the two rows to interchange, meet again, then swap,
// scale and update their own rows. The grid is sized from the occupancy so that every block is
// resident: the barrier can never wait on a block that is not running.
#include <cuda_runtime.h>

#include <cstdint>

namespace basalt::cuda::kernels {

// Matches Kokkos::ValLocScalar<Real, int>, the layout of LuState::block_best.
template <class Real>
struct ValueIndex {
  Real val;
  int loc;
};

struct Getf2Problem {
  int m = 0, w = 0;      // panel rows and columns
  std::int64_t lda = 1;  // column stride
  int offset = 0;        // columns before the panel, for info
};

// panel, ipiv (w entries, 1-based within the panel), info and block_best (max_blocks entries)
// are device pointers. Asynchronous on stream.
template <class T, class Real>
void getf2(int device, cudaStream_t stream, T* panel, int* ipiv, int* info,
           ValueIndex<Real>* block_best, int max_blocks, const Getf2Problem& problem);

}  // namespace basalt::cuda::kernels
