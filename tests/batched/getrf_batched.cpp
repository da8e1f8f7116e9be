#include "basalt/algorithms/batched/getrf_batched.hpp"

#include <catch2/catch.hpp>
#include <climits>
#include <cmath>
#include <limits>

#include "basalt/backends/host/lapacke.hpp"
#include "batched/batch_support.hpp"

using namespace basalt;
using namespace basalt::test;

namespace {

// ||P A - L U||_F / (max(m, n) ||A||_F eps) for the packed factors and 1-based pivots.
template <class T, class LU, class Piv>
double lu_backward_error(const HostMatrix<T>& original, const LU& lu, const Piv& ipiv) {
  const int m = original.extent(0), n = original.extent(1), mn = std::min(m, n);
  WideMatrix pa = widen(original);
  for (int k = 0; k < mn; ++k)
    for (int j = 0; j < n; ++j) std::swap(pa(k, j), pa(ipiv(k) - 1, j));
  const WideMatrix f = widen(lu);
  WideMatrix l("L", m, mn), u("U", mn, n);
  for (int k = 0; k < mn; ++k) {
    l(k, k) = 1;
    for (int i = k + 1; i < m; ++i) l(i, k) = f(i, k);
    for (int j = k; j < n; ++j) u(k, j) = f(k, j);
  }
  const WideMatrix product_lu = product(l, false, u);
  WideMatrix error("E", m, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) error(i, j) = pa(i, j) - product_lu(i, j);
  return relative(error, widen(original), std::max(m, n), eps<T>());
}

template <class T>
bool all_finite(const HostMatrix<T>& a) {
  for (size_t j = 0; j < a.extent(1); ++j)
    for (size_t i = 0; i < a.extent(0); ++i)
      if (!std::isfinite(magnitude(a(i, j)))) return false;
  return true;
}

// Whether a and b hold their finite entries in the same places.
template <class T>
bool same_finite_entries(const HostMatrix<T>& a, const HostMatrix<T>& b) {
  for (size_t j = 0; j < a.extent(1); ++j)
    for (size_t i = 0; i < a.extent(0); ++i)
      if (std::isfinite(magnitude(a(i, j))) != std::isfinite(magnitude(b(i, j)))) return false;
  return true;
}

// Checks one factored matrix: info, backward error, and in double LAPACK's own pivots.
template <class T, class Piv>
void check_factors(const HostMatrix<T>& original, const HostMatrix<T>& lu, const Piv& ipiv,
                   int info, bool singular) {
  const int m = original.extent(0), n = original.extent(1);
  if (singular && std::min(m, n) > std::min(5, n - 1))
    CHECK(info == std::min(5, n - 1) + 1);
  else if (!singular)
    CHECK(info == 0);
  CHECK(lu_backward_error(original, lu, ipiv) < 30);
  CHECK(all_finite(lu));
  if constexpr (std::is_same_v<real_t<T>, double>) {
    auto reference = Kokkos::create_mirror(Kokkos::HostSpace(), original);
    Kokkos::deep_copy(reference, original);
    Kokkos::View<int*, Kokkos::HostSpace> reference_ipiv("ipiv", std::min(m, n));
    lapacke::getrf(reference, reference_ipiv);
    bool same = true;
    for (int k = 0; k < std::min(m, n); ++k) same = same && ipiv(k) == reference_ipiv(k);
    CHECK(same);
  }
}

struct Case {
  int m, n, count;
};

// Sizes 1 to 512, each batch with singular members mixed in; big sizes keep to a few matrices.
const std::vector<Case> fixed_cases = {{1, 1, 50},    {2, 2, 300},  {7, 7, 100},  {8, 8, 200},
                                       {16, 16, 60},  {31, 9, 30},  {9, 31, 30},  {32, 32, 40},
                                       {33, 33, 20},  {64, 64, 8},  {65, 65, 5},  {100, 100, 3},
                                       {129, 129, 2}, {300, 70, 2}, {70, 300, 2}, {512, 512, 2}};

}  // namespace

TEMPLATE_TEST_CASE("getrf_batched factors every matrix of a fixed-size batch", "[getrf_batched]",
                   float, double, Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  for (const auto [m, n, count] : fixed_cases) {
    CAPTURE(m, n, count);
    std::vector<HostMatrix<T>> originals;
    for (int b = 0; b < count; ++b) originals.push_back(random_matrix<T>(m, n, b % 3 == 1));
    auto A = device_batch(originals, m, n);
    Kokkos::View<int**, Kokkos::LayoutRight> ipiv("ipiv", count, std::min(m, n));
    Kokkos::View<int*> info("info", count);
    getrf_batched(Exec(), A, ipiv, info);
    const auto lu = to_host(A);
    const auto pivots = to_host(ipiv);
    const auto infos = to_host(info);
    for (int b = 0; b < count; ++b) {
      CAPTURE(b);
      check_factors(originals[b], host_matrix(lu, b), Kokkos::subview(pivots, b, Kokkos::ALL),
                    infos(b), b % 3 == 1);
    }
  }
}

TEST_CASE("getrf_batched on 100,000 tiny matrices", "[getrf_batched]") {
  const int count = 100000;
  for (const int n : {1, 3}) {
    CAPTURE(n);
    // Every 7th matrix has a zero last column: info = n.
    auto original = Kokkos::create_mirror_view(make_batch<double>("A", count, n, n));
    for (int b = 0; b < count; ++b)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i)
          original(b, i, j) = b % 7 == 3 && j == n - 1 ? 0.0 : random_scalar<double>();
    auto A = make_batch<double>("A", count, n, n);
    Kokkos::deep_copy(A, original);
    Kokkos::View<int**> ipiv("ipiv", count, n);
    Kokkos::View<int*> info("info", count);
    getrf_batched(Exec(), A, ipiv, info);
    const auto lu = to_host(A);
    const auto pivots = to_host(ipiv);
    const auto infos = to_host(info);
    // ||P A - L U||_max / (n ||A||_max eps), small enough to check inline for every matrix.
    int wrong_info = 0, inaccurate = 0;
    for (int b = 0; b < count; ++b) {
      wrong_info += infos(b) != (b % 7 == 3 ? n : 0);
      double pa[3][3], largest = 0, error = 0;
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) pa[i][j] = original(b, i, j);
      for (int k = 0; k < n; ++k)
        for (int j = 0; j < n; ++j) std::swap(pa[k][j], pa[pivots(b, k) - 1][j]);
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          double s = 0;
          for (int k = 0; k <= std::min(i, j); ++k) s += (k == i ? 1.0 : lu(b, i, k)) * lu(b, k, j);
          error = std::max(error, std::abs(pa[i][j] - s));
          largest = std::max(largest, std::abs(pa[i][j]));
        }
      inaccurate += !(error <= 30 * n * largest * eps<double>());
    }
    CHECK(wrong_info == 0);
    CHECK(inaccurate == 0);
  }
}

TEMPLATE_TEST_CASE("getrf_batched on a variable-size batch, sizes 1 to 512", "[getrf_batched]",
                   float, double, Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  const std::vector<std::pair<int, int>> shapes = {
      {1, 1},   {512, 512}, {2, 2},   {0, 3},  {3, 0},  {17, 17},  {5, 9},     {9, 5},
      {32, 32}, {33, 33},   {64, 64}, {1, 40}, {40, 1}, {100, 80}, {128, 128}, {257, 257}};
  std::vector<HostMatrix<T>> originals;
  for (size_t b = 0; b < shapes.size(); ++b)
    originals.push_back(random_matrix<T>(shapes[b].first, shapes[b].second, b % 4 == 2));
  auto A = variable_batch(originals);
  auto ipiv = make_variable_vectors<int>("ipiv", A);
  Kokkos::View<int*> info("info", A.count());
  getrf_batched(Exec(), A, ipiv, info);
  const auto lu = host_matrices(A);
  const auto pivots = host_matrices(ipiv);
  const auto infos = to_host(info);
  for (size_t b = 0; b < shapes.size(); ++b) {
    CAPTURE(b, shapes[b].first, shapes[b].second);
    check_factors(originals[b], lu[b], Kokkos::subview(pivots[b], Kokkos::ALL, 0), infos(b),
                  b % 4 == 2);
  }
}

TEST_CASE("getrf_batched takes any layout and any team shape to the same factors",
          "[getrf_batched]") {
  using T = double;
  for (const int n : {6, 40, 90}) {
    CAPTURE(n);
    const int count = 4;
    std::vector<HostMatrix<T>> originals;
    for (int b = 0; b < count; ++b) originals.push_back(random_matrix<T>(n, n));
    auto reference = device_batch(originals, n, n);
    Kokkos::View<int**> ipiv("ipiv", count, n);
    Kokkos::View<int*> info("info", count);
    getrf_batched(Exec(), reference, ipiv, info);
    const auto expected = to_host(reference);

    Kokkos::View<T***, Kokkos::LayoutLeft> left("left", count, n, n);
    Kokkos::View<T***, Kokkos::LayoutRight> right("right", count, n, n);
    {
      auto l = Kokkos::create_mirror_view(left);
      auto r = Kokkos::create_mirror_view(right);
      for (int b = 0; b < count; ++b)
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < n; ++i) l(b, i, j) = r(b, i, j) = originals[b](i, j);
      Kokkos::deep_copy(left, l);
      Kokkos::deep_copy(right, r);
    }
    getrf_batched(Exec(), left, ipiv, info);
    getrf_batched(Exec(), right, ipiv, info);

    // The portable kernel with its default launch, with two threads per team in scratch, and
    // in place (no scratch). (The public call above may take a backend's kernel instead.)
    auto portable_default = device_batch(originals, n, n);
    auto in_place = device_batch(originals, n, n);
    auto threaded = device_batch(originals, n, n);
    const auto pivots = impl::vectors<Exec>(ipiv, "test", "ipiv");
    auto launch = impl::batch_launch<Exec>(impl::matrices<Exec>(threaded, "test", "A"));
    portable::getrf_batched(Exec(), impl::matrices<Exec>(portable_default, "test", "A"), pivots,
                            info, launch);
    launch.team.team_size = 2;
    portable::getrf_batched(Exec(), impl::matrices<Exec>(threaded, "test", "A"), pivots, info,
                            launch);
    launch.scratch_bytes = 0;
    portable::getrf_batched(Exec(), impl::matrices<Exec>(in_place, "test", "A"), pivots, info,
                            launch);

    const auto l = to_host(left);
    const auto r = to_host(right);
    const auto d = to_host(portable_default);
    const auto p = to_host(in_place);
    const auto t = to_host(threaded);
    bool same_public = true, same_portable = true;
    for (int b = 0; b < count; ++b)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
          const T e = expected(b, i, j), e_portable = d(b, i, j);
          same_public = same_public && l(b, i, j) == e && r(b, i, j) == e;
          same_portable = same_portable && p(b, i, j) == e_portable && t(b, i, j) == e_portable;
        }
    CHECK(same_public);
    CHECK(same_portable);
  }
}

TEMPLATE_TEST_CASE("getrs_batched and gesv_batched solve every system", "[getrs_batched]", float,
                   double, Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  for (const auto [n, nrhs, count] : std::vector<Case>{{1, 1, 5}, {20, 3, 10}, {150, 2, 2}})
    for (const Op op : {Op::none, Op::transpose, Op::conj_transpose}) {
      CAPTURE(n, nrhs, count, static_cast<int>(op));
      std::vector<HostMatrix<T>> a, b;
      for (int k = 0; k < count; ++k) {
        a.push_back(random_matrix<T>(n, n));
        b.push_back(random_matrix<T>(n, nrhs));
      }
      auto A = device_batch(a, n, n);
      auto B = device_batch(b, n, nrhs);
      Kokkos::View<int**> ipiv("ipiv", count, n);
      Kokkos::View<int*> info("info", count);
      getrf_batched(Exec(), A, ipiv, info);
      getrs_batched(Exec(), op, A, ipiv, B);
      const auto x = to_host(B);
      for (int k = 0; k < count; ++k) {
        // ||B - op(A) X||_F / (n ||A||_F ||X||_F eps)
        WideMatrix wa = widen(a[k]);
        if (op == Op::transpose)
          for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i) wa(i, j) = Kokkos::conj(wa(i, j));
        const WideMatrix xk = widen(host_matrix(x, k));
        const WideMatrix ax = product(wa, op != Op::none, xk);
        WideMatrix r = widen(b[k]);
        for (int j = 0; j < nrhs; ++j)
          for (int i = 0; i < n; ++i) r(i, j) -= ax(i, j);
        CHECK(frobenius(r) / (n * frobenius(wa) * frobenius(xk) * eps<T>()) < 30);
      }
    }
}

TEST_CASE("gesv_batched leaves B alone for singular members only", "[gesv_batched]") {
  using T = double;
  const int n = 12, count = 6;
  std::vector<HostMatrix<T>> a, b;
  for (int k = 0; k < count; ++k) {
    a.push_back(random_matrix<T>(n, n, k % 2 == 1));
    b.push_back(random_matrix<T>(n, 1));
  }
  auto A = variable_batch(a);
  auto B = variable_batch(b);
  auto ipiv = make_variable_vectors<int>("ipiv", min_dimensions(A));
  Kokkos::View<int*> info("info", count);
  gesv_batched(Exec(), A, ipiv, B, info);
  const auto x = host_matrices(B);
  const auto infos = to_host(info);
  for (int k = 0; k < count; ++k) {
    CAPTURE(k);
    if (k % 2 == 1) {
      CHECK(infos(k) == 6);
      CHECK(identical(x[k], b[k]));
    } else {
      CHECK(infos(k) == 0);
      const WideMatrix r0 = product(widen(a[k]), false, widen(x[k]));
      WideMatrix r = widen(b[k]);
      for (int i = 0; i < n; ++i) r(i, 0) -= r0(i, 0);
      CHECK(frobenius(r) / (n * frobenius(widen(a[k])) * frobenius(widen(x[k])) * eps<T>()) < 30);
    }
  }
}

TEST_CASE("getrf_batched on empty, NaN and invalid input", "[getrf_batched]") {
  {
    auto empty = make_batch<double>("empty", 0, 4, 4);
    Kokkos::View<int**> ipiv("ipiv", 0, 4);
    Kokkos::View<int*> info("info", 0);
    getrf_batched(Exec(), empty, ipiv, info);
    auto no_rows = make_batch<double>("no rows", 3, 0, 4);
    Kokkos::View<int**> no_pivots("ipiv", 3, 0);
    Kokkos::View<int*> infos("info", 3);
    Kokkos::deep_copy(infos, 7);
    getrf_batched(Exec(), no_rows, no_pivots, infos);
    CHECK(to_host(infos)(2) == 0);
  }
  // A NaN in one matrix spreads in that one only, and the call completes.
  std::vector<HostMatrix<double>> originals;
  for (int b = 0; b < 3; ++b) originals.push_back(random_matrix<double>(30, 30));
  originals[1](4, 2) = std::numeric_limits<double>::quiet_NaN();
  auto A = device_batch(originals, 30, 30);
  Kokkos::View<int**> ipiv("ipiv", 3, 30);
  Kokkos::View<int*> info("info", 3);
  getrf_batched(Exec(), A, ipiv, info);
  const auto lu = to_host(A);
  CHECK(std::isnan(lu(1, 29, 29)));
  CHECK(all_finite(host_matrix(lu, 0)));
  CHECK(all_finite(host_matrix(lu, 2)));

  // Bad arguments throw, naming the argument, before A is touched.
  auto B = device_batch(originals, 30, 30);
  Kokkos::View<int**> short_ipiv("ipiv", 3, 29);
  Kokkos::View<int*> short_info("info", 2);
  Kokkos::View<int**> few_ipiv("ipiv", 2, 30);
  CHECK(argument_of([&] { getrf_batched(Exec(), B, short_ipiv, info); }) == "ipiv");
  CHECK(argument_of([&] { getrf_batched(Exec(), B, few_ipiv, info); }) == "ipiv");
  CHECK(argument_of([&] { getrf_batched(Exec(), B, ipiv, short_info); }) == "info");
  auto rhs = make_batch<double>("rhs", 3, 31, 1);
  CHECK(argument_of([&] { getrs_batched(Exec(), Op::none, B, ipiv, rhs); }) == "B");
  auto wide = make_batch<double>("wide", 3, 30, 31);
  Kokkos::View<int**> wide_ipiv("ipiv", 3, 30);
  auto x = make_batch<double>("x", 3, 30, 1);
  CHECK(argument_of([&] { gesv_batched(Exec(), wide, wide_ipiv, x, info); }) == "A");
  // More matrices than an int counts (B's memory, never read: the check comes first).
  const std::size_t over_int = std::size_t(INT_MAX) + 1;
  const Kokkos::View<double***, Kokkos::LayoutStride, Exec::memory_space,
                     Kokkos::MemoryTraits<Kokkos::Unmanaged>>
      too_many(B.data(), Kokkos::LayoutStride(over_int, 900, 30, 1, 30, 30));
  CHECK(argument_of([&] { getrf_batched(Exec(), too_many, ipiv, info); }) == "A");
  CHECK(identical(host_matrix(to_host(B), 0), originals[0]));

  // In a variable batch the first bad matrix is named, wherever it is.
  const std::vector<int> sizes = {3, 8, 5, 7, 2};
  auto variable = make_variable_batch<double>("variable", sizes, sizes);
  std::vector<int> lengths = sizes;
  lengths[3] = 6;
  Kokkos::View<int*> variable_info("info", sizes.size());
  const auto refuses_pivots_of_matrix = [&](const auto& pivots, const char* matrix) {
    try {
      getrf_batched(Exec(), variable, pivots, variable_info);
      FAIL("no exception");
    } catch (const InvalidArgument& e) {
      CHECK(e.argument() == "ipiv");
      CHECK_THAT(e.what(), Catch::Contains(matrix));
    }
  };
  refuses_pivots_of_matrix(make_variable_vectors<int>("ipiv", lengths), "matrix 3:");
  // Pivots made for another batch are checked matrix by matrix.
  std::vector<int> smaller = sizes;
  smaller[2] = 4;
  const auto other = make_variable_batch<double>("other", smaller, smaller);
  refuses_pivots_of_matrix(make_variable_vectors<int>("ipiv", other), "matrix 2:");
  const auto pivots = make_variable_vectors<int>("ipiv", variable);
  CHECK(host_matrices(pivots)[2].extent(0) == 5);
  auto no_column = make_variable_batch<int>("ipiv", sizes, {1, 1, 0, 1, 1});
  CHECK(argument_of([&] { getrf_batched(Exec(), variable, no_column, variable_info); }) == "ipiv");
  std::vector<int> rows = sizes;
  rows[4] = 3;
  auto tall_rhs = make_variable_batch<double>("rhs", rows, std::vector<int>(sizes.size(), 1));
  CHECK(argument_of([&] { getrs_batched(Exec(), Op::none, variable, pivots, tall_rhs); }) == "B");
}

#if defined(BASALT_ENABLE_CUDA)
namespace {

// A test matrix of one of five kinds: random; singular (column min(5, n - 1) zero); graded (row i
// scaled by 2^-(i / 8), exactly, and its last column zero: a zero pivot in the last panel); two
// equal rows (exact ties in the pivot search, then a row that becomes exactly zero); entries 0,
// +-1 (or +-i) only (ties in most steps of the pivot search, between rows already interchanged,
// and exact zeros).
template <class T>
HostMatrix<T> lu_test_matrix(int m, int n, int kind) {
  HostMatrix<T> a = random_matrix<T>(m, n, kind == 1);
  if (kind == 4)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        const real_t<T> unit = std::round(real_t<T>(1.4) * real_part(a(i, j)));
        if constexpr (std::is_floating_point_v<T>)
          a(i, j) = unit;
        else
          a(i, j) = std::abs(a(i, j).imag()) > real_t<T>(0.5) ? T(0, unit) : T(unit, 0);
      }
  if (kind == 2)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i)
        a(i, j) = j == n - 1 ? T(0) : T(a(i, j) * real_t<T>(std::ldexp(1.0, -(i / 8))));
  if (kind == 3 && m > 1)
    for (int j = 0; j < n; ++j) a(m / 2, j) = a(0, j);
  return a;
}

// The CUDA path's factors of one matrix of lu_test_matrix's `kind` against the portable
// kernel's on the same input: same info, accurate factors, and in double the same pivots and
// factors equal up to rounding. In complex arithmetic the row of two equal rows' difference is
// exactly zero only where both sides round alike, which cuCmul/cuCdiv and Kokkos::complex do
// not promise: there the info is not compared; nor, for the matrices of units, whose ties after
// the first step hang on the same rounding, the pivots.
template <class T, class Piv>
void check_against_portable(const HostMatrix<T>& original, const HostMatrix<T>& lu,
                            const HostMatrix<T>& reference_lu, const Piv& pivots,
                            const Piv& reference_pivots, int info, int reference_info, int kind) {
  if (std::is_floating_point_v<T> || kind < 3) CHECK(info == reference_info);
  CHECK(lu_backward_error(original, lu, pivots) < 30);
  CHECK(all_finite(lu));
  if constexpr (std::is_same_v<real_t<T>, double>) {
    if (!std::is_floating_point_v<T> && kind == 4) return;
    bool same = true;
    for (size_t k = 0; k < pivots.extent(0); ++k) same = same && pivots(k) == reference_pivots(k);
    CHECK(same);
    WideMatrix difference = widen(lu);
    const WideMatrix r = widen(reference_lu);
    for (size_t j = 0; j < r.extent(1); ++j)
      for (size_t i = 0; i < r.extent(0); ++i) difference(i, j) -= r(i, j);
    CHECK(frobenius(difference) <= 1e-12 * frobenius(r));
  }
}

// `count` m x n matrices, member b of lu_test_matrix's kind b % kinds, in a fixed batch made by
// make_batch(originals, m, n), factored by factor_both, every member checked against the portable
// kernel.
template <class T, class MakeBatch, class FactorBoth>
void check_fixed_batch(int m, int n, int count, int kinds, const MakeBatch& make_batch,
                       const FactorBoth& factor_both) {
  std::vector<HostMatrix<T>> originals;
  for (int b = 0; b < count; ++b) originals.push_back(lu_test_matrix<T>(m, n, b % kinds));
  auto fast = make_batch(originals, m, n);
  auto reference = make_batch(originals, m, n);
  Kokkos::View<int**, Kokkos::LayoutRight> fast_ipiv("ipiv", count, std::min(m, n));
  Kokkos::View<int**, Kokkos::LayoutRight> reference_ipiv("ipiv", count, std::min(m, n));
  Kokkos::View<int*> fast_info("info", count), reference_info("info", count);
  factor_both(fast, reference, fast_ipiv, reference_ipiv, fast_info, reference_info);
  const auto lu = to_host(fast);
  const auto reference_lu = to_host(reference);
  const auto pivots = to_host(fast_ipiv);
  const auto reference_pivots = to_host(reference_ipiv);
  const auto infos = to_host(fast_info);
  const auto reference_infos = to_host(reference_info);
  for (int b = 0; b < count; ++b) {
    CAPTURE(b);
    check_against_portable(originals[b], host_matrix(lu, b), host_matrix(reference_lu, b),
                           Kokkos::subview(pivots, b, Kokkos::ALL),
                           Kokkos::subview(reference_pivots, b, Kokkos::ALL), infos(b),
                           reference_infos(b), b % kinds);
  }
}

// A variable batch of `originals` factored by factor_both (the CUDA path and the portable
// kernel), both results on the host.
template <class T, class FactorBoth>
auto factor_variable_both_ways(const std::vector<HostMatrix<T>>& originals,
                               const FactorBoth& factor_both) {
  auto fast = variable_batch(originals);
  auto reference = variable_batch(originals);
  auto fast_ipiv = make_variable_vectors<int>("ipiv", min_dimensions(fast));
  auto reference_ipiv = make_variable_vectors<int>("ipiv", min_dimensions(fast));
  Kokkos::View<int*> fast_info("info", fast.count()), reference_info("info", fast.count());
  factor_both(fast, reference, fast_ipiv, reference_ipiv, fast_info, reference_info);
  struct Results {
    decltype(host_matrices(fast)) lu, reference_lu;
    decltype(host_matrices(fast_ipiv)) pivots, reference_pivots;
    decltype(to_host(fast_info)) infos, reference_infos;
  };
  return Results{host_matrices(fast),           host_matrices(reference), host_matrices(fast_ipiv),
                 host_matrices(reference_ipiv), to_host(fast_info),       to_host(reference_info)};
}

// A variable batch of `shapes`, member b of lu_test_matrix's kind b % kinds, factored by
// factor_both (the CUDA path and the portable kernel), every member checked against the portable.
template <class T, class FactorBoth>
void check_variable_batch(const std::vector<std::pair<int, int>>& shapes, int kinds,
                          const FactorBoth& factor_both) {
  std::vector<HostMatrix<T>> originals;
  for (size_t b = 0; b < shapes.size(); ++b)
    originals.push_back(lu_test_matrix<T>(shapes[b].first, shapes[b].second, int(b % kinds)));
  const auto [lu, reference_lu, pivots, reference_pivots, infos, reference_infos] =
      factor_variable_both_ways(originals, factor_both);
  for (size_t b = 0; b < shapes.size(); ++b) {
    CAPTURE(b, shapes[b].first, shapes[b].second);
    check_against_portable(originals[b], lu[b], reference_lu[b],
                           Kokkos::subview(pivots[b], Kokkos::ALL, 0),
                           Kokkos::subview(reference_pivots[b], Kokkos::ALL, 0), infos(b),
                           reference_infos(b), int(b % kinds));
  }
}

// The CUDA path and the portable team kernel on the same batches, on the GPU; kernel: the CUDA
// kernel that must take them.
template <class ABatch, class PivBatch, class InfoView>
void factor_both_ways(CudaKernel kernel, const ABatch& fast, const ABatch& reference,
                      const PivBatch& fast_ipiv, const PivBatch& reference_ipiv,
                      const InfoView& fast_info, const InfoView& reference_info) {
  const Kokkos::Cuda exec;
  const auto a_fast = impl::matrices<Exec>(fast, "test", "A");
  const auto a_reference = impl::matrices<Exec>(reference, "test", "A");
  REQUIRE(cuda::getrf_batched_fits(a_fast));
  REQUIRE(cuda::getrf_batched_fits_small(a_fast.max_rows, a_fast.max_cols) ==
          (kernel == CudaKernel::warp));
  cuda::getrf_batched(exec, a_fast, impl::vectors<Exec>(fast_ipiv, "test", "ipiv"), fast_info);
  portable::getrf_batched(exec, a_reference, impl::vectors<Exec>(reference_ipiv, "test", "ipiv"),
                          reference_info, impl::batch_launch<Exec>(a_reference));
  exec.fence();
}

}  // namespace

// The warp-segment CUDA kernel (up to 32 x 32) against the portable team kernel on the GPU:
// fixed batches of every square size and of rectangular shapes (segments of 4 to 32 lanes,
// batches that end inside a warp and inside a block), the other layouts, a variable batch, and
// NaN, Inf and zero members.
TEMPLATE_TEST_CASE("cuda::getrf_batched's warp kernel equals portable::getrf_batched",
                   "[getrf_batched][cuda]", float, double, Kokkos::complex<float>,
                   Kokkos::complex<double>) {
  using T = TestType;
  const auto factor_both = [](const auto&... batches) {
    factor_both_ways(CudaKernel::warp, batches...);
  };
  // Both factorizations of `count` m x n matrices of lu_test_matrix's five kinds in turn.
  const auto check_fixed = [&](auto layout, int m, int n, int count) {
    CAPTURE(m, n, count);
    check_fixed_batch<T>(
        m, n, count, 5,
        [&](const std::vector<HostMatrix<T>>& originals, int rows, int cols) {
          return device_batch_in<decltype(layout)>(originals, rows, cols);
        },
        factor_both);
  };

  SECTION("fixed batches of every size 1 to 32, square and rectangular") {
    // 37 matrices: at 8 per warp (4-lane segments) and 32 per block, the batch ends inside a
    // warp of the second block. Square sizes 4, 8, 12, ..., 32 take the kernels built for full
    // matrices of their size class, the others the kernels that test each row and column.
    for (int n = 1; n <= 32; ++n) check_fixed(Kokkos::LayoutStride(), n, n, 37);
    for (const auto [m, n] : std::vector<std::pair<int, int>>{{32, 1},
                                                              {1, 32},
                                                              {4, 3},
                                                              {3, 4},
                                                              {8, 5},
                                                              {5, 8},
                                                              {16, 9},
                                                              {9, 16},
                                                              {32, 20},
                                                              {20, 32},
                                                              {31, 17},
                                                              {17, 31},
                                                              {32, 7},
                                                              {7, 32}})
      check_fixed(Kokkos::LayoutStride(), m, n, 37);
  }

  SECTION("matrices interleaved (LayoutLeft) and stored by rows (LayoutRight)") {
    for (const auto [m, n] :
         std::vector<std::pair<int, int>>{{3, 3}, {8, 8}, {13, 13}, {32, 32}, {32, 20}, {20, 32}}) {
      check_fixed(Kokkos::LayoutLeft(), m, n, 21);
      check_fixed(Kokkos::LayoutRight(), m, n, 21);
    }
  }

  SECTION("a variable batch, sizes 0 to 32") {
    const std::vector<std::pair<int, int>> shapes = {
        {1, 1},  {32, 32}, {0, 5},   {7, 3}, {3, 7},  {17, 17}, {32, 20}, {20, 32}, {9, 9},
        {5, 0},  {2, 2},   {31, 31}, {4, 4}, {1, 9},  {9, 1},   {16, 16}, {12, 30}, {30, 12},
        {32, 1}, {8, 8},   {25, 25}, {6, 6}, {11, 4}, {4, 11},  {32, 32}, {3, 3},   {24, 24}};
    check_variable_batch<T>(shapes, 5, factor_both);
  }

  SECTION("a variable batch of sizes 0 to 32, more than two waves of the warp kernels") {
    // On CUDA, 9000 members in 32-lane segments exceed two waves of the warp kernel on the GPUs
    // at hand (132 SMs, each holding at most 28 of them: single precision, 72 registers), so
    // one launch takes them with each size class in its own code, and in complex double each
    // size class gets its own launch; a batch that two waves hold runs as one launch with a code
    // for each segment width (the section above, and the next).
    std::vector<std::pair<int, int>> shapes;
    for (int b = 0; b < 9000; ++b) shapes.push_back({b % 33, (b * 7) % 33});
    check_variable_batch<T>(shapes, 5, factor_both);
  }

  SECTION("variable batches whose largest class is 24 or 20 rows") {
    // The launch's kernel for such batches is held to fewer registers in double
    // (getrf_classes_min_blocks): sizes 0 to 24 beyond two waves (on the GPUs at hand), 1 to 20
    // within them.
    std::vector<std::pair<int, int>> beyond, within;
    for (int b = 0; b < 9000; ++b) beyond.push_back({b % 25, (b * 7) % 25});
    for (int b = 0; b < 300; ++b) within.push_back({1 + (b * 3) % 20, 1 + (b * 7) % 20});
    check_variable_batch<T>(beyond, 5, factor_both);
    check_variable_batch<T>(within, 5, factor_both);
  }

  SECTION("a variable batch with NaN members in every size class") {
    // One launch, each class in blocks of its own (several a class here); the warps holding a NaN
    // take the guarded pass, which must find the same matrices.
    std::vector<HostMatrix<T>> originals;
    for (int b = 0; b < 300; ++b) {
      const int n = 1 + (b * 5) % 32;
      originals.push_back(random_matrix<T>(n, n));
      if (b % 7 == 3) originals.back()(n - 1, 0) = T(std::numeric_limits<real_t<T>>::quiet_NaN());
    }
    const auto [lu, reference_lu, pivots, reference_pivots, infos, reference_infos] =
        factor_variable_both_ways(originals, factor_both);
    for (size_t b = 0; b < originals.size(); ++b) {
      CAPTURE(b, originals[b].extent(0));
      CHECK(infos(b) == reference_infos(b));
      if (b % 7 == 3) {
        CHECK(!all_finite(lu[b]));
        continue;
      }
      CHECK(lu_backward_error(originals[b], lu[b], Kokkos::subview(pivots[b], Kokkos::ALL, 0)) <
            30);
      if constexpr (std::is_same_v<real_t<T>, double>) {  // as check_against_portable
        bool same = true;
        for (size_t k = 0; k < pivots[b].extent(0); ++k)
          same = same && pivots[b](k, 0) == reference_pivots[b](k, 0);
        CHECK(same);
      }
    }
  }

  SECTION("NaN and Inf stay in their own matrices, zero and subnormal members, the call ends") {
    for (const int n : {8, 32}) {
      CAPTURE(n);
      const int count = 8;
      std::vector<HostMatrix<T>> originals;
      for (int b = 0; b < count; ++b) originals.push_back(random_matrix<T>(n, n));
      originals[1](4, 2) = T(std::numeric_limits<real_t<T>>::quiet_NaN());
      originals[2](6, 5) = T(std::numeric_limits<real_t<T>>::infinity());
      for (int i = 0; i < n; ++i)
        originals[3](i, 3) = T(std::numeric_limits<real_t<T>>::quiet_NaN());
      Kokkos::deep_copy(originals[4], T(0));
      // In double, subnormal entries below 2^-1042, where the pivot search's 32-bit keys are 0
      // (complex division by them overflows in cuCdiv, and single precision may flush them).
      if constexpr (std::is_same_v<T, double>)
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < n; ++i) originals[6](i, j) *= std::ldexp(1.0, -1060);
      // Magnitudes 1 + k 2^-40: in double they differ below their leading 32 bits, where the
      // pivot search of whole warps first looks (ties there go to the exact search).
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i)
          originals[7](i, j) = T(real_t<T>((random_int(0, 1) ? 1 : -1) *
                                           (1 + random_int(0, 1023) * std::ldexp(1.0, -40))));
      auto fast = device_batch(originals, n, n);
      auto reference = device_batch(originals, n, n);
      Kokkos::View<int**, Kokkos::LayoutRight> fast_ipiv("ipiv", count, n),
          reference_ipiv("ipiv", count, n);
      Kokkos::View<int*> fast_info("info", count), reference_info("info", count);
      factor_both(fast, reference, fast_ipiv, reference_ipiv, fast_info, reference_info);
      const auto lu = to_host(fast);
      const auto pivots = to_host(fast_ipiv);
      const auto reference_pivots = to_host(reference_ipiv);
      const auto infos = to_host(fast_info);
      const auto reference_infos = to_host(reference_info);
      for (const int b : {0, 5, 7}) {
        CHECK(lu_backward_error(originals[b], host_matrix(lu, b),
                                Kokkos::subview(pivots, b, Kokkos::ALL)) < 30);
        CHECK(all_finite(host_matrix(lu, b)));
      }
      CHECK(!all_finite(host_matrix(lu, 1)));
      CHECK(!all_finite(host_matrix(lu, 2)));
      CHECK(!all_finite(host_matrix(lu, 3)));
      // The zero matrix: no interchange, info 1, left as it was.
      CHECK(infos(4) == 1);
      CHECK(identical(host_matrix(lu, 4), originals[4]));
      for (int k = 0; k < n; ++k) CHECK(pivots(4, k) == k + 1);
      // Not the Inf member's: a complex division by Inf may give NaN or 0 (cuCdiv,
      // Kokkos::complex).
      for (const int b : {0, 1, 3, 4, 5, 6, 7}) {
        CAPTURE(b);
        CHECK(infos(b) == reference_infos(b));
        bool same = true;
        for (int k = 0; k < n; ++k) same = same && pivots(b, k) == reference_pivots(b, k);
        if (std::is_floating_point_v<T>) CHECK(same);
      }
      // Where an Inf or a NaN reaches a pivot row, the rows above it keep their values (the
      // warp kernel's guarded pass, which the warps holding members 1 to 3 take; member 4 on
      // shares no warp with them in 4- and 8-lane segments): the same entries finite as in
      // the portable result.
      if constexpr (std::is_floating_point_v<T>) {
        const auto reference_lu = to_host(reference);
        for (const int b : {1, 2, 3}) {
          CAPTURE(b);
          CHECK(same_finite_entries(host_matrix(lu, b), host_matrix(reference_lu, b)));
        }
      }
    }
  }
}

// The block-per-matrix CUDA kernel (33 to 512 rows and columns; from 257 rows in blocks of up to
// 512 threads) against the portable team kernel on the GPU: fixed batches of square and
// rectangular matrices, variable batches of sizes 0 to 256 and 0 to 512 (which the block kernel
// takes in a launch per 32 rows), NaN and Inf members, and the limit.
TEMPLATE_TEST_CASE("cuda::getrf_batched's block kernel equals portable::getrf_batched",
                   "[getrf_batched][cuda]", float, double, Kokkos::complex<float>,
                   Kokkos::complex<double>) {
  using T = TestType;
  const auto factor_both = [](const auto&... batches) {
    factor_both_ways(CudaKernel::block, batches...);
  };

  SECTION("fixed batches") {
    const std::vector<Case> cases = {
        {33, 33, 8},   {47, 47, 8},   {64, 64, 8},   {100, 100, 4}, {128, 128, 4}, {255, 255, 4},
        {256, 256, 4}, {256, 100, 4}, {100, 256, 4}, {40, 33, 4},   {33, 200, 4},  {5, 90, 4},
        {90, 5, 4},    {257, 257, 3}, {300, 300, 3}, {384, 384, 2}, {511, 511, 2}, {512, 512, 2},
        {512, 100, 2}, {100, 512, 2}, {300, 40, 2},  {40, 300, 2}};
    for (const auto [m, n, count] : cases) {
      CAPTURE(m, n);
      check_fixed_batch<T>(
          m, n, count, 4,
          [](const std::vector<HostMatrix<T>>& originals, int rows, int cols) {
            return device_batch(originals, rows, cols);
          },
          factor_both);
    }
  }

  SECTION("a variable batch, sizes 0 to 256") {
    const std::vector<std::pair<int, int>> shapes = {
        {1, 1},   {256, 256}, {33, 33},  {0, 4},    {5, 5},     {47, 47},   {128, 128},
        {4, 0},   {64, 64},   {100, 70}, {70, 100}, {31, 31},   {255, 255}, {32, 33},
        {200, 3}, {3, 200},   {2, 2},    {96, 96},  {129, 129}, {17, 40}};
    check_variable_batch<T>(shapes, 4, factor_both);
  }

  SECTION("a variable batch, sizes 0 to 512") {
    const std::vector<std::pair<int, int>> shapes = {
        {512, 512}, {1, 1},   {257, 257}, {0, 4},   {300, 200}, {200, 300}, {33, 33},
        {450, 450}, {64, 64}, {288, 289}, {5, 500}, {500, 5},   {256, 256}, {384, 384}};
    check_variable_batch<T>(shapes, 4, factor_both);
  }

  SECTION("NaN and Inf spread in their own matrices only, and the call completes") {
    const int n = 150, count = 4;
    std::vector<HostMatrix<T>> originals;
    for (int b = 0; b < count; ++b) originals.push_back(random_matrix<T>(n, n));
    originals[1](4, 2) = T(std::numeric_limits<real_t<T>>::quiet_NaN());
    originals[2](70, 60) = T(std::numeric_limits<real_t<T>>::infinity());
    for (int i = 0; i < n; ++i)
      originals[3](i, 40) = T(std::numeric_limits<real_t<T>>::quiet_NaN());
    auto fast = device_batch(originals, n, n);
    auto reference = device_batch(originals, n, n);
    Kokkos::View<int**, Kokkos::LayoutRight> fast_ipiv("ipiv", count, n),
        reference_ipiv("ipiv", count, n);
    Kokkos::View<int*> fast_info("info", count), reference_info("info", count);
    factor_both(fast, reference, fast_ipiv, reference_ipiv, fast_info, reference_info);
    const auto lu = to_host(fast);
    const auto infos = to_host(fast_info);
    const auto reference_infos = to_host(reference_info);
    CHECK(lu_backward_error(originals[0], host_matrix(lu, 0),
                            Kokkos::subview(to_host(fast_ipiv), 0, Kokkos::ALL)) < 30);
    CHECK(all_finite(host_matrix(lu, 0)));
    CHECK(!all_finite(host_matrix(lu, 1)));
    CHECK(!all_finite(host_matrix(lu, 2)));
    CHECK(!all_finite(host_matrix(lu, 3)));
    // Not the Inf member's: a complex division by Inf may give NaN or 0 (cuCdiv, Kokkos::complex).
    for (const int b : {0, 1, 3}) CHECK(infos(b) == reference_infos(b));
  }

  SECTION("one matrix past the block kernel's limit takes the batch to the portable path") {
    const int limit = cuda::kernels::getrf_batched_block_max_size;
    CHECK(cuda::getrf_batched_fits(
        impl::matrices<Exec>(make_batch<T>("A", 2, limit, limit), "test", "A")));
    CHECK(!cuda::getrf_batched_fits(
        impl::matrices<Exec>(make_batch<T>("A", 2, limit + 1, limit + 1), "test", "A")));
    CHECK(!cuda::getrf_batched_fits(
        impl::matrices<Exec>(make_batch<T>("A", 2, limit + 1, 10), "test", "A")));
    CHECK(!cuda::getrf_batched_fits(
        impl::matrices<Exec>(make_batch<T>("A", 2, 10, limit + 1), "test", "A")));
    std::vector<HostMatrix<T>> originals = {random_matrix<T>(limit + 1, limit + 1),
                                            random_matrix<T>(40, 40, true)};
    auto A = variable_batch(originals);
    CHECK(!cuda::getrf_batched_fits(impl::matrices<Exec>(A, "test", "A")));
    auto ipiv = make_variable_vectors<int>("ipiv", min_dimensions(A));
    Kokkos::View<int*> info("info", A.count());
    getrf_batched(Kokkos::Cuda(), A, ipiv, info);
    const auto lu = host_matrices(A);
    const auto pivots = host_matrices(ipiv);
    const auto infos = to_host(info);
    for (int b = 0; b < 2; ++b) {
      CAPTURE(b);
      CHECK(infos(b) == (b == 1 ? 6 : 0));
      CHECK(lu_backward_error(originals[b], lu[b], Kokkos::subview(pivots[b], Kokkos::ALL, 0)) <
            30);
    }
  }
}
#endif

TEST_CASE("getrf_batched reaches every member of 2^29 + 4096 matrices", "[.huge][getrf_batched]") {
  const auto alone = batch_of_one_matrix(1, true);
  const auto A = batch_of_one_matrix(huge_batch, true);
  Kokkos::View<int**> alone_ipiv("ipiv", 1, 4), ipiv("ipiv", huge_batch, 4);
  Kokkos::View<int*> alone_info("info", 1), info("info", huge_batch);
  getrf_batched(Exec(), alone, alone_ipiv, alone_info);
  getrf_batched(Exec(), A, ipiv, info);
  CHECK(to_host(alone_ipiv)(0, 0) == 4);
  const auto differs = KOKKOS_LAMBDA(const long b) {
    bool unlike_alone = info(b) != alone_info(0);
    for (int j = 0; j < 4; ++j) {
      unlike_alone = unlike_alone || ipiv(b, j) != alone_ipiv(0, j);
      for (int i = 0; i < 4; ++i) unlike_alone = unlike_alone || unlike(A(b, i, j), alone(0, i, j));
    }
    return unlike_alone;
  };
  CHECK(members_that_differ(huge_batch, differs) == 0);
}
