#pragma once
// Device arithmetic on the scalar types the launchers take (float, double, cuFloatComplex,
// cuDoubleComplex), so one kernel text serves all four precisions.
#include <cuComplex.h>

#include <cfloat>
#include <type_traits>

namespace basalt::cuda::ops {

template <class T>
struct real_of {
  using type = T;
};
template <>
struct real_of<cuFloatComplex> {
  using type = float;
};
template <>
struct real_of<cuDoubleComplex> {
  using type = double;
};
template <class T>
using real_of_t = typename real_of<T>::type;
template <class T>
inline constexpr bool is_complex = !std::is_same_v<T, real_of_t<T>>;

// LAPACK's pivot magnitude: |x|, or |re| + |im| for complex numbers.
__device__ inline float abs1(float x) { return fabsf(x); }
__device__ inline double abs1(double x) { return fabs(x); }
__device__ inline float abs1(cuFloatComplex x) { return fabsf(x.x) + fabsf(x.y); }
__device__ inline double abs1(cuDoubleComplex x) { return fabs(x.x) + fabs(x.y); }

__device__ inline bool is_zero(float x) { return x == 0.0f; }
__device__ inline bool is_zero(double x) { return x == 0.0; }
__device__ inline bool is_zero(cuFloatComplex x) { return x.x == 0.0f && x.y == 0.0f; }
__device__ inline bool is_zero(cuDoubleComplex x) { return x.x == 0.0 && x.y == 0.0; }

__device__ inline float divide(float a, float b) { return a / b; }
__device__ inline double divide(double a, double b) { return a / b; }
__device__ inline cuFloatComplex divide(cuFloatComplex a, cuFloatComplex b) {
  return cuCdivf(a, b);
}
__device__ inline cuDoubleComplex divide(cuDoubleComplex a, cuDoubleComplex b) {
  return cuCdiv(a, b);
}

// a - l u
__device__ inline float minus_product(float a, float l, float u) { return a - l * u; }
__device__ inline double minus_product(double a, double l, double u) { return a - l * u; }
__device__ inline cuFloatComplex minus_product(cuFloatComplex a, cuFloatComplex l,
                                               cuFloatComplex u) {
  return cuCsubf(a, cuCmulf(l, u));
}
__device__ inline cuDoubleComplex minus_product(cuDoubleComplex a, cuDoubleComplex l,
                                                cuDoubleComplex u) {
  return cuCsub(a, cuCmul(l, u));
}

__device__ inline float real_part(float x) { return x; }
__device__ inline double real_part(double x) { return x; }
__device__ inline float real_part(cuFloatComplex x) { return x.x; }
__device__ inline double real_part(cuDoubleComplex x) { return x.x; }

__device__ inline float imag_part(float) { return 0; }
__device__ inline double imag_part(double) { return 0; }
__device__ inline float imag_part(cuFloatComplex x) { return x.y; }
__device__ inline double imag_part(cuDoubleComplex x) { return x.y; }

// |x|, the Euclidean magnitude (hypot for complex numbers).
__device__ inline float magnitude(float x) { return fabsf(x); }
__device__ inline double magnitude(double x) { return fabs(x); }
__device__ inline float magnitude(cuFloatComplex x) { return cuCabsf(x); }
__device__ inline double magnitude(cuDoubleComplex x) { return cuCabs(x); }

__device__ inline float add(float a, float b) { return a + b; }
__device__ inline double add(double a, double b) { return a + b; }
__device__ inline cuFloatComplex add(cuFloatComplex a, cuFloatComplex b) { return cuCaddf(a, b); }
__device__ inline cuDoubleComplex add(cuDoubleComplex a, cuDoubleComplex b) { return cuCadd(a, b); }

__device__ inline float multiply(float a, float b) { return a * b; }
__device__ inline double multiply(double a, double b) { return a * b; }
__device__ inline cuFloatComplex multiply(cuFloatComplex a, cuFloatComplex b) {
  return cuCmulf(a, b);
}
__device__ inline cuDoubleComplex multiply(cuDoubleComplex a, cuDoubleComplex b) {
  return cuCmul(a, b);
}

__device__ inline float conjugate(float x) { return x; }
__device__ inline double conjugate(double x) { return x; }
__device__ inline cuFloatComplex conjugate(cuFloatComplex x) { return cuConjf(x); }
__device__ inline cuDoubleComplex conjugate(cuDoubleComplex x) { return cuConj(x); }

// The scalar of type T with parts re and im (im dropped for a real T).
template <class T>
__device__ inline T make_scalar(real_of_t<T> re, real_of_t<T> im = 0) {
  if constexpr (sizeof(T) == sizeof(re))
    return re;
  else
    return {re, im};
}

// x r for a real r, each part multiplied.
__device__ inline float times_real(float x, float r) { return x * r; }
__device__ inline double times_real(double x, double r) { return x * r; }
__device__ inline cuFloatComplex times_real(cuFloatComplex x, float r) {
  return make_cuFloatComplex(x.x * r, x.y * r);
}
__device__ inline cuDoubleComplex times_real(cuDoubleComplex x, double r) {
  return make_cuDoubleComplex(x.x * r, x.y * r);
}

// What other blocks of the kernel wrote, read around L1, which is not coherent across
// multiprocessors.
__device__ inline float load_coherent(const float* p) { return __ldcg(p); }
__device__ inline double load_coherent(const double* p) { return __ldcg(p); }
__device__ inline int load_coherent(const int* p) { return __ldcg(p); }
__device__ inline cuFloatComplex load_coherent(const cuFloatComplex* p) { return __ldcg(p); }
__device__ inline cuDoubleComplex load_coherent(const cuDoubleComplex* p) { return __ldcg(p); }

// sqrt(a^2 + b^2 + c^2) without overflow or underflow (LAPACK's dlapy3, as the portable
// kernels' norm3 in algorithms/batched/impl/team_qr.hpp): larfg's norm of a complex alpha and x.
template <class Real>
__device__ Real norm3(Real a, Real b, Real c) {
  a = fabs(a);
  b = fabs(b);
  c = fabs(c);
  const Real largest = fmax(a, fmax(b, c));
  if (!(largest > Real(0))) return largest + a + b + c;  // zero, or NaN passed on
  a /= largest;
  b /= largest;
  c /= largest;
  return largest * sqrt(a * a + b * b + c * c);
}

// The smallest sum of squares a norm is computed from unscaled (sqrt of the plain sum): below it,
// squares lost to underflow could matter; above it (and finite) no scaling is needed.
template <class Real>
__device__ inline Real smallest_trusted_square() {
  if constexpr (sizeof(Real) == 4)
    return FLT_MIN / FLT_EPSILON * 1024;
  else
    return DBL_MIN / DBL_EPSILON * 1024;
}

// sqrt(x) from r = rsqrt(x), x > 0. A Cholesky's chain from column to column runs through the
// diagonal's reciprocal square root, and CUDA's rsqrt takes less time than sqrt and a division
// (H100, a 32 x 32 tile by one warp: 10.4 against 12.9 thousand cycles); x r is the root to
// within an ulp or two, except for x = Inf, where r = 0.
template <class Real>
__device__ inline Real root_from_reciprocal(Real x, Real r) {
  return r > Real(0) ? x * r : x;
}

// rsqrt(x) for a positive normal x (the caller checks that: is_positive_normal), without the
// branch CUDA's double rsqrt takes for zeros, subnormals, infinities and NaN, which splits a
// Cholesky tile's steps into separate blocks of code: the hardware's estimate and one
// third-order Newton step, the arithmetic CUDA's rsqrt does for such x.
__device__ inline float rsqrt_of_normal(float x) { return rsqrtf(x); }
__device__ inline double rsqrt_of_normal(double x) {
  double y;
  asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
  const double h = x * y, r = fma(-h, y, 1.0), p = fma(0.375, r, 0.5), q = y * r;
  return fma(q, p, y);
}

// 1 / p for 2^-1000 <= |p| <= 2^1000, and x / p from it to within an ulp: the arithmetic of
// CUDA's double division (the hardware's estimate, two Newton steps, one correction of x r)
// without its check for quotients it must redo (special operands, subnormal or overflowing
// quotients: a warp LU's rows run that check at every step).
__device__ inline double reciprocal_of_moderate(double p) {
  double r;
  asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(p));
  double e = fma(-p, r, 1.0);
  e = fma(e, e, e);
  r = fma(r, e, r);
  e = fma(-p, r, 1.0);
  return fma(r, e, r);
}
__device__ inline double quotient_by_reciprocal(double x, double p, double r) {
  const double q = x * r;
  return fma(r, fma(-p, q, x), q);
}
__device__ inline bool is_moderate(double x) {
  const double size = fabs(x);
  return size >= 0x1p-1000 && size <= 0x1p1000;
}

__device__ inline bool is_positive_normal(float x) { return x >= FLT_MIN && x <= FLT_MAX; }
__device__ inline bool is_positive_normal(double x) { return x >= DBL_MIN && x <= DBL_MAX; }

}  // namespace basalt::cuda::ops
