#pragma once
// Operation counts from LAPACK Working Note 41, used by perf/ to turn times into rates.
// A complex multiplication counts 6 real flops and a complex addition 2.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <type_traits>
#include <utility>

namespace basalt::flops {

template <class Scalar>
inline constexpr bool is_complex_v = !std::is_floating_point_v<Scalar>;

template <class Scalar>
double weighted(double multiplications, double additions) {
  return is_complex_v<Scalar> ? 6 * multiplications + 2 * additions : multiplications + additions;
}

// LAWN 41's getrf counts for m < n are those for m >= n with m and n exchanged.
template <class Scalar>
double getrf(double m, double n) {
  const double k = std::min(m, n), l = std::max(m, n);
  const double mul = 0.5 * k * (k * (l - k / 3 - 1) + l) + 2 * k / 3;
  const double add = 0.5 * k * (k * (l - k / 3) - l) + k / 6;
  return weighted<Scalar>(mul, add);
}

template <class Scalar>
double getrs(double n, double nrhs) {
  return weighted<Scalar>(nrhs * n * n, nrhs * (n * n - n));
}

template <class Scalar>
double potrf(double n) {
  return weighted<Scalar>(n * n * n / 6 + n * n / 2 + n / 3, n * n * n / 6 - n / 6);
}

template <class Scalar>
double geqrf(double m, double n) {
  if (m >= n)
    return weighted<Scalar>(m * n * n - n * n * n / 3 + m * n + n * n / 2 + 23 * n / 6,
                            m * n * n - n * n * n / 3 + n * n / 2 + 5 * n / 6);
  return weighted<Scalar>(n * m * m - m * m * m / 3 + 2 * n * m - m * m / 2 + 23 * m / 6,
                          n * m * m - m * m * m / 3 + n * m - m * m / 2 + 5 * m / 6);
}

// xORMQR / xUNMQR: C (m x n) times the Q of k reflectors, from the left or the right (LAPACK's
// dopla: the right side is the left one with m and n exchanged).
template <class Scalar>
double ormqr(bool left, double m, double n, double k) {
  if (!left) std::swap(m, n);
  return weighted<Scalar>(n * k * (2 * m - k + 2), n * k * (2 * m - k + 1));
}

template <class Scalar>
double gemm(double m, double n, double k) {
  return weighted<Scalar>(m * n * k, m * n * k);
}

// laswp does no arithmetic: perf/ reports it as bandwidth, every moved row read once and
// written once.
template <class Scalar>
double laswp_bytes(double rows_moved, double n) {
  return 2 * rows_moved * n * sizeof(Scalar);
}

}  // namespace basalt::flops
