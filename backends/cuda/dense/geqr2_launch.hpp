#pragma once
// Launcher of the CUDA QR panel (LAPACK's geqr2 on a tall, narrow block), after the LU panel's
// fused kernel (getf2_launch.hpp). No Kokkos: geqr2.cu includes this.
//
// One cooperative kernel factors the whole p x w panel. The thread blocks split the rows, and
// each keeps its rows in shared memory from the first column to the last. The panel goes in
// leaves: the whole panel up to 32 columns, else 16 columns at a time. A leaf taller than wide
// is first factored by Cholesky QR twice with Householder reconstruction, which gives the same
// storage (geqr2.cu): two grid barriers; in a wider panel its block reflector then updates the
// columns to its right (the blocks' parts of V^H [V C] summed behind two more barriers, T
// built from V^H V, C -= V T^H V^H C on each block's rows). So a QR driver can hand the kernel a
// whole block of nb columns rather than recurse down to narrow leaves with some ten calls each.
// Where a leaf is too ill-conditioned for Cholesky QR, or a column is already zero below the
// diagonal, it runs Householder QR as follows. Per column there is one grid barrier: before it,
// in one pass over its rows below the diagonal, every block publishes its part of the column's
// sum of squares and its products s_c = x^H a_c with the columns c to the right (x: the column
// below the diagonal, scaled by a power of two of the block's own), and the owner of the
// diagonal row publishes that row; after it, every block combines the parts in the same order, so all agree
// on the reflector (beta, tau, v = x / (alpha - beta)) and on w_c = conj(tau) v^H a_c, and
// applies H^H = I - conj(tau) v v^H to its own rows. Which path runs, and the barrier count,
// depend on the data only through what every block computes alike: NaN and Inf flow through.
// The grid is one block per multiprocessor at most, every block resident. A panel whose rows do
// not fit in the multiprocessors' shared memory is beyond the height limit; the caller factors
// it otherwise.
#include <cuda_runtime.h>

#include <cstdint>

namespace basalt::cuda::kernels {

struct Geqr2Problem {
  int p = 0, w = 0;             // panel rows and columns
  std::int64_t lda = 1;         // column stride
  std::int64_t tau_stride = 1;  // between consecutive tau entries
};

// The tallest panel of w columns of entry_bytes-sized entries the fused kernel takes on device;
// beyond 32 columns, the tallest whose leaves fit the Cholesky QR path.
int geqr2_height_limit(int device, int w, int entry_bytes);

// panel (p x w, column-major) and tau (min(p, w) entries) are device pointers; p must not exceed
// geqr2_height_limit. R on and above the diagonal, v below it (v(j) = 1 not stored), tau:
// LAPACK's geqr2 with larfg's reflector. Asynchronous on stream.
template <class T>
void geqr2(int device, cudaStream_t stream, T* panel, T* tau, const Geqr2Problem& problem);

}  // namespace basalt::cuda::kernels
