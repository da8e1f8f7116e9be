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

// sum -= X Y^T for X and Y 32 x depth (depth a multiple of 4), column-major in shared memory
// with leading dimension ld, on a warp: lane l holds elements (8i + l / 4, 8j + 2 (l % 4) + e) of
// the 32 x 32 product in sum[i][j][e] (for_each_entry below); each step of 4 of the inner
// dimension is one shared load per operand, lane and 8 x 8 block.
template <int depth = 32>
__device__ inline void subtract_product_32x32(double (&sum)[4][4][2], const double* x,
                                              const double* y, int ld) {
  const int lane = threadIdx.x % 32, g = lane / 4, s = lane % 4;
#pragma unroll
  for (int k = 0; k < depth; k += 4) {
    double left[4], right[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) left[i] = -x[g + 8 * i + (k + s) * ld];
#pragma unroll
    for (int j = 0; j < 4; ++j) right[j] = y[g + 8 * j + (k + s) * ld];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) multiply_add_8x8x4(sum[i][j], left[i], right[j]);
  }
}

// real + i imag -= X Y^H for complex double X (32 x depth) and Y (8 x depth), depth a multiple
// of 4, column-major in shared memory with leading dimension ld, on a warp, as four real
// products: real -= Xr Yr^T + Xi Yi^T, imag -= Xi Yr^T - Xr Yi^T. Lane l holds the entries of the
// 32 x 8 product that subtract_product_32x32 gives it in one column block: rows 8i + l / 4,
// columns 2 (l % 4) + e.
template <int depth = 32>
__device__ inline void subtract_conjugate_product_32x8(double (&real)[4][2], double (&imag)[4][2],
                                                       const double2* x, const double2* y, int ld) {
  const int lane = threadIdx.x % 32, g = lane / 4, s = lane % 4;
#pragma unroll 4
  for (int k = 0; k < depth; k += 4) {
    const double2 right = y[g + (k + s) * ld];
    const double minus_right_imag = -right.y;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const double2 left = x[g + 8 * i + (k + s) * ld];
      const double minus_real = -left.x, minus_imag = -left.y;
      multiply_add_8x8x4(real[i], minus_real, right.x);
      multiply_add_8x8x4(real[i], minus_imag, right.y);
      multiply_add_8x8x4(imag[i], minus_imag, right.x);
      multiply_add_8x8x4(imag[i], minus_real, minus_right_imag);
    }
  }
}

// f(sum[i][j][e], row, column) for each of the lane's elements of a 32 x 32 product held as
// subtract_product_32x32 holds it.
template <class F>
__device__ inline void for_each_entry(double (&sum)[4][4][2], F&& f) {
  const int lane = threadIdx.x % 32, g = lane / 4, s = lane % 4;
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) f(sum[i][j][e], 8 * i + g, 8 * j + 2 * s + e);
}

}  // namespace basalt::cuda::mma

#endif
