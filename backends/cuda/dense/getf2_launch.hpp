#pragma once
// Launcher of the CUDA LU panel, seed 000's fused panel (design D2), with CUDA's grid barrier in
// place of hand-made flags. No Kokkos: getf2.cu includes this.
//
// One cooperative kernel factors the whole m x w panel. The thread blocks split the rows, and
// each keeps its rows in shared memory from the first column to the last. Per column there is
// one grid barrier: before it, every block publishes its pivot candidate (value, row and the
// row's entries) and the owner of the diagonal row publishes that row; after it, every block
// reduces the candidates in the same order, so all agree on the pivot, and each applies the
// interchange, the scaling and the rank-1 update to its own rows. The barrier's arrival and wait
// are apart: a block updates the next column first, publishes its candidate for it and arrives,
// then updates its other columns while the rest of the grid arrives. The grid is one block per
// multiprocessor at most, every block resident: the barrier never waits on a block that is not
// running. A panel whose rows do not fit in the multiprocessors' shared memory is beyond the
// height limit; the caller factors it with the portable kernels (design D1).
#include <cuda_runtime.h>

#include <cstdint>

namespace basalt::cuda::kernels {

struct Getf2Problem {
  int m = 0, w = 0;      // panel rows and columns, w <= m
  std::int64_t lda = 1;  // column stride
  int offset = 0;        // columns before the panel, for info
};

// The tallest panel of w columns of entry_bytes-sized entries the fused kernel takes on device.
int getf2_height_limit(int device, int w, int entry_bytes);

// panel, ipiv (w entries, 1-based within the panel) and info are device pointers; m must not
// exceed getf2_height_limit. Panels that getf2_by_slabs takes go there. Asynchronous on stream.
template <class T>
void getf2(int device, cudaStream_t stream, T* panel, int* ipiv, int* info,
           const Getf2Problem& problem);

// Design D3 (getf2_slabs.cu), for panels of up to 4096 rows (2048 of 16-byte entries), or eight
// times that on a GPU with thread block clusters: one block, or a cluster of blocks, factors the
// panel a few columns at a time while the others update the rest, so blocks exchange once per
// few columns rather than at every column through L2. Whether it takes an m x w panel of
// entry_bytes-sized entries on device; then as getf2.
bool getf2_by_slabs_fits(int device, int m, int w, int entry_bytes);
template <class T>
void getf2_by_slabs(int device, cudaStream_t stream, T* panel, int* ipiv, int* info,
                    const Getf2Problem& problem);

}  // namespace basalt::cuda::kernels
