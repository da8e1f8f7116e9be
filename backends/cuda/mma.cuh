#pragma once
// Double precision's tensor-core product on a warp (mma.m16n8k8 on sm_90, mma.m8n8k4 on sm_80
// and later), for the kernels' trailing updates in double and complex double. Defined only where
// the GPU has it: the device pass for an older GPU leaves it out, so that the kernels'
// multiply-add templates serve there.
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

// D (16 x 8) += A (16 x 8) B (8 x 8), sm_90 and later: lane l = 4 g + s holds A(g + 8 h, s + 4 k)
// in a[2 k + h], B(s + 4 k, g) in b[k], and D(g, 2 s + e) in top[e], D(g + 8, 2 s + e) in
// bottom[e]. Per flop a warp issues a quarter of m8n8k4's instructions, and an SM's tensor cores
// run it at twice the rate (H200, a 32 x 32 x 32 product from shared memory by one warp: 1424
// cycles against 2584; by two warps of one scheduler 2185 each against 4314; perf/NOTES.md,
// potrf).
__device__ inline void multiply_add_16x8x8(double (&top)[2], double (&bottom)[2],
                                           const double (&a)[4], const double (&b)[2]) {
  asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+d"(top[0]), "+d"(top[1]), "+d"(bottom[0]), "+d"(bottom[1])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
}

// The instruction a product takes on sm_90: m16n8k8 (multiply_add_16x8x8), or m8n8k4 where a
// kernel's register bound leaves no room for m16n8k8's operands (GPUs before sm_90 take m8n8k4).
enum class Shape { m8n8k4, m16n8k8 };

// sum -= X Y^T for X and Y 32 x depth (depth a multiple of 4, of 8 for m16n8k8), column-major in
// shared memory with leading dimension ld, on a warp: lane l holds elements (8i + l / 4, 8j + 2
// (l % 4) + e) of the 32 x 32 product in sum[i][j][e] (for_each_entry below); each step of 4 of
// the inner dimension is one shared load per operand, lane and 8-row block.
template <int depth = 32, Shape shape = Shape::m16n8k8>
__device__ inline void subtract_product_32x32(double (&sum)[4][4][2], const double* x,
                                              const double* y, int ld) {
  const int lane = threadIdx.x % 32, g = lane / 4, s = lane % 4;
#if __CUDA_ARCH__ >= 900
  if constexpr (shape == Shape::m16n8k8) {
    static_assert(depth % 8 == 0);
#pragma unroll
    for (int k = 0; k < depth; k += 8) {
      double left[2][4], right[4][2];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h)
          left[i / 2][2 * h + i % 2] = -x[g + 8 * i + (k + s + 4 * h) * ld];
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) right[j][h] = y[g + 8 * j + (k + s + 4 * h) * ld];
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
          multiply_add_16x8x8(sum[2 * i][j], sum[2 * i + 1][j], left[i], right[j]);
    }
    return;
  }
#endif
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
// of 8, column-major in shared memory with leading dimension ld, on a warp, as four real
// products: real -= Xr Yr^T + Xi Yi^T, imag -= Xi Yr^T - Xr Yi^T. Lane l holds the entries of the
// 32 x 8 product that subtract_product_32x32 gives it in one column block: rows 8i + l / 4,
// columns 2 (l % 4) + e.
template <int depth = 32>
__device__ inline void subtract_conjugate_product_32x8(double (&real)[4][2], double (&imag)[4][2],
                                                       const double2* x, const double2* y, int ld) {
  const int lane = threadIdx.x % 32, g = lane / 4, s = lane % 4;
#if __CUDA_ARCH__ >= 900
  static_assert(depth % 8 == 0);
#pragma unroll
  for (int k = 0; k < depth; k += 8) {
    double right_real[2], right_imag[2], minus_right_imag[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const double2 right = y[g + (k + s + 4 * h) * ld];
      right_real[h] = right.x;
      right_imag[h] = right.y;
      minus_right_imag[h] = -right.y;
    }
#pragma unroll
    for (int b = 0; b < 2; ++b) {
      double minus_real[4], minus_imag[4];
#pragma unroll
      for (int q = 0; q < 2; ++q)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const double2 left = x[g + 8 * (2 * b + q) + (k + s + 4 * h) * ld];
          minus_real[2 * h + q] = -left.x;
          minus_imag[2 * h + q] = -left.y;
        }
      // Rows 8 (2b + q) + g: the 16-row block b.
      multiply_add_16x8x8(real[2 * b], real[2 * b + 1], minus_real, right_real);
      multiply_add_16x8x8(real[2 * b], real[2 * b + 1], minus_imag, right_imag);
      multiply_add_16x8x8(imag[2 * b], imag[2 * b + 1], minus_imag, right_real);
      multiply_add_16x8x8(imag[2 * b], imag[2 * b + 1], minus_real, minus_right_imag);
    }
  }
#else
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
#endif
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
