#pragma once
// View aliases and scalar traits shared by every layer.
#include <Kokkos_Core.hpp>
#include <climits>
#include <string>
#include <type_traits>

#include "basalt/core/errors.hpp"

namespace basalt {

// A dense column-major matrix, as LAPACK stores it. Routines also take LayoutRight and
// LayoutStride Views (sub-views with a leading dimension larger than the row count).
template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
using Matrix = Kokkos::View<Scalar**, Kokkos::LayoutLeft, MemorySpace>;

template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
using Vector = Kokkos::View<Scalar*, Kokkos::LayoutLeft, MemorySpace>;

// LAPACK's pivot vectors: 1-based row numbers.
template <class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
using PivotVector = Kokkos::View<int*, Kokkos::LayoutLeft, MemorySpace>;

template <class T>
struct is_basalt_scalar : std::false_type {};
template <>
struct is_basalt_scalar<float> : std::true_type {};
template <>
struct is_basalt_scalar<double> : std::true_type {};
template <>
struct is_basalt_scalar<Kokkos::complex<float>> : std::true_type {};
template <>
struct is_basalt_scalar<Kokkos::complex<double>> : std::true_type {};
template <class T>
inline constexpr bool is_basalt_scalar_v = is_basalt_scalar<std::remove_cv_t<T>>::value;

// The real type under a scalar: float for Kokkos::complex<float>.
template <class T>
struct real_type {
  using type = T;
};
template <class T>
struct real_type<Kokkos::complex<T>> {
  using type = T;
};
template <class T>
using real_t = typename real_type<std::remove_cv_t<T>>::type;

// |x|, for real and complex scalars alike (Kokkos 3.4 has no Kokkos::abs for real types).
template <class T>
KOKKOS_INLINE_FUNCTION real_t<T> magnitude(const T& x) {
  if constexpr (std::is_floating_point_v<T>)
    return x < 0 ? -x : x;
  else
    return Kokkos::abs(x);
}

// The real part, for real and complex scalars alike.
template <class T>
KOKKOS_INLINE_FUNCTION real_t<T> real_part(const T& x) {
  if constexpr (std::is_floating_point_v<T>)
    return x;
  else
    return x.real();
}

template <class View>
inline constexpr bool is_matrix_view_v =
    Kokkos::is_view<View>::value&& View::rank == 2 && is_basalt_scalar_v<typename View::value_type>;

template <class View>
inline constexpr bool is_pivot_view_v =
    Kokkos::is_view<View>::value&& View::rank == 1 &&
    std::is_same_v<std::remove_cv_t<typename View::value_type>, int>;

template <class ExecSpace, class View>
inline constexpr bool is_accessible_from_v =
    Kokkos::SpaceAccessibility<ExecSpace, typename View::memory_space>::accessible;

// Basalt counts rows, columns and a batch's matrices in int, as LAPACK's and cuBLAS' 32-bit
// interfaces do: a View with an extent over 2^31 - 1 is rejected, where a cast would wrap it.
template <class View>
void require_int_extents(const char* routine, const char* argument, const View& view) {
  for (unsigned r = 0; r < View::rank; ++r)
    require(view.extent(r) <= static_cast<std::size_t>(INT_MAX), routine, argument, argument,
            "'s extent ", r, " is ", view.extent(r), ", over 2^31 - 1");
}

}  // namespace basalt
