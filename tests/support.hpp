#pragma once
// Test inputs: random matrices and pivots drawn from Catch's seed, and host/device copies.
#include <Kokkos_Core.hpp>
#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <type_traits>

#include "basalt/core/errors.hpp"

namespace basalt::test {

using Exec = Kokkos::DefaultExecutionSpace;

inline std::mt19937_64& rng() {
  static std::mt19937_64 engine(Catch::rngSeed());
  return engine;
}

template <class T>
T random_scalar() {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(u(rng()));
  } else {
    using R = typename T::value_type;
    return T(static_cast<R>(u(rng())), static_cast<R>(u(rng())));
  }
}

template <class View>
void fill_random(const View& host) {
  for (size_t j = 0; j < host.extent(1); ++j)
    for (size_t i = 0; i < host.extent(0); ++i)
      host(i, j) = random_scalar<typename View::value_type>();
}

// A copy in the default execution space's memory, never an alias of the host View.
template <class View>
auto device_copy(const View& host) {
  auto copy = Kokkos::create_mirror(Exec::memory_space(), host);
  Kokkos::deep_copy(copy, host);
  return copy;
}

inline int random_int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng()); }

// Exact equality of every element: for routines that only move data.
template <class ViewA, class ViewB>
bool identical(const ViewA& a, const ViewB& b) {
  if (a.extent(0) != b.extent(0) || a.extent(1) != b.extent(1)) return false;
  for (size_t j = 0; j < a.extent(1); ++j)
    for (size_t i = 0; i < a.extent(0); ++i)
      if (!(a(i, j) == b(i, j))) return false;
  return true;
}

// The argument the InvalidArgument thrown by call() names; "none" when call() returns.
template <class Call>
std::string argument_of(Call&& call) {
  try {
    call();
  } catch (const InvalidArgument& e) {
    return e.argument();
  }
  return "none";
}

}  // namespace basalt::test
