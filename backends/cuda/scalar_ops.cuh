#pragma once
// Device arithmetic on the scalar types the launchers take (float, double, cuFloatComplex,
// cuDoubleComplex), so one kernel text serves all four precisions.
#include <cuComplex.h>

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

__device__ inline float conjugate(float x) { return x; }
__device__ inline double conjugate(double x) { return x; }
__device__ inline cuFloatComplex conjugate(cuFloatComplex x) { return cuConjf(x); }
__device__ inline cuDoubleComplex conjugate(cuDoubleComplex x) { return cuConj(x); }

// The scalar of type T with real part r and no imaginary part.
template <class T>
__device__ inline T from_real(real_of_t<T> r) {
  if constexpr (sizeof(T) == sizeof(r))
    return r;
  else
    return {r, 0};
}

}  // namespace basalt::cuda::ops
