#pragma once
// Launcher of the CUDA Cholesky panel (seed 000's fused potf2, section 6.4, with the solve of the
// rows below the diagonal block fused in): each thread block factors the diagonal block in shared
// memory and solves a chunk of the rows below against it, so a panel costs one launch and one
// trip to global memory each way. No Kokkos: potf2.cu includes this.
#include <cuda_runtime.h>

#include <cstdint>

namespace basalt::cuda::kernels {

struct PanelProblem {
  int w = 0;             // the diagonal block is w x w
  int rows_below = 0;    // rows below it (lower), or columns right of it (upper)
  std::int64_t lda = 1;  // column stride
  bool lower = true;     // the triangle stored and factored
  int offset = 0;        // columns before the panel, for info
};

// The widest diagonal block of entry_bytes-sized entries the kernel takes on device, alone
// (potf2) or with rows below it.
int potf2_width_limit(int device, int entry_bytes);
int potrf_panel_width_limit(int device, int entry_bytes);

// panel, info and failed_diagonal are device pointers, w within the limit above. The diagonal
// block keeps the contract of basalt::portable::potf2 (info, the failing entry, the identity
// after a failure); the rows below become B L11^-H (upper: U11^-H B) in the columns factored,
// and are left alone after an earlier failure. Asynchronous on stream.
template <class T>
void potrf_panel(int device, cudaStream_t stream, T* panel, int* info, T* failed_diagonal,
                 const PanelProblem& problem);

}  // namespace basalt::cuda::kernels
