#pragma once
// The one place where Kokkos' scalar types meet CUDA's: the launchers in .cu files take
// float, double, cuFloatComplex and cuDoubleComplex, which have the layout of the Kokkos types.
#include <cuComplex.h>

#include <Kokkos_Core.hpp>

namespace basalt::cuda {

template <class T>
struct scalar {
  using type = T;
};
template <>
struct scalar<Kokkos::complex<float>> {
  using type = cuFloatComplex;
};
template <>
struct scalar<Kokkos::complex<double>> {
  using type = cuDoubleComplex;
};
template <class T>
using scalar_t = typename scalar<std::remove_cv_t<T>>::type;

// The same memory as CUDA's scalar type, const kept.
template <class T>
auto device_pointer(T* p) {
  static_assert(sizeof(scalar_t<T>) == sizeof(T) && alignof(scalar_t<T>) == alignof(T));
  using S = std::conditional_t<std::is_const_v<T>, const scalar_t<T>, scalar_t<T>>;
  return reinterpret_cast<S*>(p);
}

}  // namespace basalt::cuda
