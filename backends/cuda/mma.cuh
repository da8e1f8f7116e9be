#pragma once
// Double precision's tensor-core product on a warp (mma.m8n8k4, sm_80 and later), for the
// kernels' trailing updates in real double. Defined only where the GPU has it: the device pass
// for an older GPU leaves it out, so that the kernels' multiply-add templates serve there.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
#define BASALT_CUDA_DOUBLE_MMA 1

namespace basalt::cuda::mma {

// D (8 x 8) += A (8 x 4) B (4 x 8): lane l holds A(l / 4, l % 4), B(l % 4, l / 4) and
// D(l / 4, 2 (l % 4) + e), e = 0, 1.
__device__ inline void multiply_add_8x8x4(double (&d)[2], double a, double b) {
  asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
      : "+d"(d[0]), "+d"(d[1])
      : "d"(a), "d"(b));
}

}  // namespace basalt::cuda::mma

#endif
