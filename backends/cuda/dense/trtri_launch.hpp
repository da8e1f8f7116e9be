#pragma once
// Launcher of the CUDA triangle inverse that the CUDA trsm multiplies by (trsm_inverse.hpp), as
// MAGMA's trsm inverts its diagonal blocks: the solve becomes one gemm, which runs far nearer the
// GPU's peak than a trsm. No Kokkos: trtri.cu includes this.
#include <cuda_runtime.h>

#include <cstdint>

namespace basalt::cuda::kernels {

// The widest triangle the kernel inverts: a column of the inverse in four registers per lane.
constexpr int trtri_width_limit = 128;

struct TrtriProblem {
  int n = 0;                   // the triangle is n x n
  std::int64_t lda = 1;        // column stride
  bool lower = true;           // the triangle of A stored
  bool transpose = false;      // op(A) = A^T (or A^H with conjugate)
  bool conjugate = false;      // op(A) = A^H, with transpose
  bool unit_diagonal = false;  // A's diagonal taken for ones, not read
};

// inverse (n x n, column-major, column stride n, the other triangle zero) = op(tri(A))^-1, n not
// above trtri_width_limit; a and inverse are device pointers. A zero on a non-unit diagonal
// gives Inf and NaN, as a trsm would. Asynchronous on stream.
template <class T>
void trtri(cudaStream_t stream, const T* a, T* inverse, const TrtriProblem& problem);

}  // namespace basalt::cuda::kernels
