#include "basalt/algorithms/sparse/lobpcg.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "basalt/algorithms/sparse/convert.hpp"
#include "basalt/backends/host/lapacke_eigen.hpp"
#include "sparse_support.hpp"
#include "support.hpp"

using namespace basalt;
using test::Exec;

namespace {

using Block = Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace>;

// A dense Hermitian n x n matrix on the host, column-major, and the same as a Csr on the device.
template <class T>
struct Problem {
  int n;
  std::vector<T> dense;
  Csr<T> csr;
  T operator()(int i, int j) const { return dense[i + static_cast<size_t>(j) * n]; }
};

template <class T>
Csr<T> csr_from_dense(int n, const std::vector<T>& dense) {
  Csr<T, int, Kokkos::HostSpace> host;
  host.num_rows = host.num_cols = n;
  Kokkos::View<int*, Kokkos::HostSpace> row_map("row_map", n + 1);
  std::vector<int> entries;
  std::vector<T> values;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      const T v = dense[i + static_cast<size_t>(j) * n];
      if (v == T(0)) continue;
      entries.push_back(j);
      values.push_back(v);
    }
    row_map(i + 1) = static_cast<int>(entries.size());
  }
  host.row_map = row_map;
  host.entries = Kokkos::View<int*, Kokkos::HostSpace>("entries", entries.size());
  host.values = Kokkos::View<T*, Kokkos::HostSpace>("values", values.size());
  for (size_t e = 0; e < entries.size(); ++e) {
    host.entries(e) = entries[e];
    host.values(e) = values[e];
  }
  return copy_to<Exec::memory_space>(host);
}

// The 2d-point Laplacian (Dirichlet) of a grid with these edges, and its eigenvalues, the sums
// of 2 - 2 cos(k pi / (edge + 1)) over the dimensions, ascending.
template <class T>
Problem<T> laplacian(const std::vector<int>& edges, std::vector<double>& eigenvalues) {
  int n = 1;
  for (int e : edges) n *= e;
  Problem<T> p{n, std::vector<T>(static_cast<size_t>(n) * n, T(0)), {}};
  eigenvalues.assign(1, 0.0);
  int stride = 1;
  for (int e : edges) {
    for (int i = 0; i < n; ++i) {
      p.dense[i + static_cast<size_t>(i) * n] += T(2);
      if ((i / stride) % e + 1 < e) {
        p.dense[i + static_cast<size_t>(i + stride) * n] = T(-1);
        p.dense[i + stride + static_cast<size_t>(i) * n] = T(-1);
      }
    }
    std::vector<double> sums;
    for (double s : eigenvalues)
      for (int k = 1; k <= e; ++k) sums.push_back(s + 2 - 2 * std::cos(k * M_PI / (e + 1)));
    eigenvalues = sums;
    stride *= e;
  }
  std::sort(eigenvalues.begin(), eigenvalues.end());
  p.csr = csr_from_dense(n, p.dense);
  return p;
}

// A random Hermitian sparse matrix (density about `density`) with a random diagonal, and its
// eigenvalues from LAPACKE's xSYEVD/xHEEVD.
template <class T>
Problem<T> random_hermitian(int n, double density, std::vector<double>& eigenvalues) {
  Problem<T> p{n, std::vector<T>(static_cast<size_t>(n) * n, T(0)), {}};
  std::bernoulli_distribution stored(density / 2);
  for (int j = 0; j < n; ++j) {
    p.dense[j + static_cast<size_t>(j) * n] = T(1 + 6 * std::abs(test::random_scalar<real_t<T>>()));
    for (int i = 0; i < j; ++i)
      if (stored(test::rng())) {
        const T v = test::random_scalar<T>();
        p.dense[i + static_cast<size_t>(j) * n] = v;
        if constexpr (std::is_floating_point_v<T>)
          p.dense[j + static_cast<size_t>(i) * n] = v;
        else
          p.dense[j + static_cast<size_t>(i) * n] = Kokkos::conj(v);
      }
  }
  Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::HostSpace> a("a", n, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) a(i, j) = p(i, j);
  std::vector<real_t<T>> w(n);
  REQUIRE(lapacke::heevd(a, w.data()) == 0);
  eigenvalues.assign(w.begin(), w.end());
  p.csr = csr_from_dense(n, p.dense);
  return p;
}

// Q diag(spectrum) Q^H, Q = I - 2 w w^H a random Householder reflector (|w| = 1): a dense
// Hermitian matrix with this spectrum, ascending.
template <class T>
Problem<T> with_spectrum(const std::vector<double>& spectrum) {
  const int n = spectrum.size();
  std::vector<T> w(n);
  double norm2 = 0;
  for (T& v : w) {
    v = test::random_scalar<T>();
    norm2 += double(magnitude(v)) * double(magnitude(v));
  }
  for (T& v : w) v /= real_t<T>(std::sqrt(norm2));
  // (I - 2 w w^H) L (I - 2 w w^H) = L - 2 w (L w)^H - 2 (L w) w^H + 4 (w^H L w) w w^H.
  real_t<T> wlw = 0;
  for (int i = 0; i < n; ++i) wlw += real_t<T>(spectrum[i]) * magnitude(w[i]) * magnitude(w[i]);
  Problem<T> p{n, std::vector<T>(static_cast<size_t>(n) * n), {}};
  auto conj = [](const T& v) {
    if constexpr (std::is_floating_point_v<T>)
      return v;
    else
      return Kokkos::conj(v);
  };
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const T lw_i = real_t<T>(spectrum[i]) * w[i], lw_j = real_t<T>(spectrum[j]) * w[j];
      T a = T(-2) * (w[i] * conj(lw_j) + lw_i * conj(w[j])) + T(4 * wlw) * w[i] * conj(w[j]);
      if (i == j) a += T(spectrum[i]);
      p.dense[i + static_cast<size_t>(j) * n] = a;
    }
  p.csr = csr_from_dense(n, p.dense);
  return p;
}

template <class T>
Kokkos::View<T**, Kokkos::LayoutLeft, Exec::memory_space> random_block(int n, int m) {
  Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::HostSpace> host("X0", n, m);
  test::fill_random(host);
  return test::device_copy(host);
}

// Checks result and X on the host against the spectrum (ascending) of A (or of A - lambda B):
// A x - lambda B x recomputed within the tolerance relative to the spectral radius, each Ritz
// value within that of its eigenvalue, and X^H B X = I. b holds B's diagonal (empty: B = I).
template <class T, class XView>
void check(const Problem<T>& A, const std::vector<double>& b, const XView& X,
           const LobpcgResult<real_t<T>>& result, const std::vector<double>& spectrum,
           Wanted wanted, double tolerance) {
  using R = real_t<T>;
  const int n = A.n, m = X.extent(1);
  const double sigma = std::max(std::abs(spectrum.front()), std::abs(spectrum.back()));
  std::vector<double> expected(m);
  for (int j = 0; j < m; ++j)
    expected[j] = wanted == Wanted::smallest ? spectrum[j] : spectrum[spectrum.size() - 1 - j];
  CAPTURE(result.iterations, result.status);
  REQUIRE(result.status == LobpcgStatus::converged);
  REQUIRE(result.converged == m);
  REQUIRE(result.eigenvalues.size() == static_cast<size_t>(m));
  const auto x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), X);
  const double eps = std::numeric_limits<R>::epsilon();
  auto B = [&](int i) { return b.empty() ? 1.0 : b[i]; };
  for (int j = 0; j < m; ++j) {
    CAPTURE(j, result.eigenvalues[j], expected[j], result.residuals[j]);
    CHECK(result.residuals[j] <= tolerance);
    double r2 = 0, bx2 = 0;
    for (int i = 0; i < n; ++i) {
      Kokkos::complex<double> ax = 0;
      for (int c = 0; c < n; ++c)
        if (A(i, c) != T(0))
          ax += Kokkos::complex<double>(A(i, c)) * Kokkos::complex<double>(x(c, j));
      const Kokkos::complex<double> bx = B(i) * Kokkos::complex<double>(x(i, j));
      r2 += std::norm(std::complex<double>((ax - double(result.eigenvalues[j]) * bx).real(),
                                           (ax - double(result.eigenvalues[j]) * bx).imag()));
      bx2 += std::norm(std::complex<double>(bx.real(), bx.imag()));
    }
    // Our residual (rounding in R allowed for), then each Ritz value within it of its
    // eigenvalue (the residual bound, scaled for B by its smallest entry).
    const double bound = tolerance * sigma + 100 * n * eps * sigma;
    CHECK(std::sqrt(r2 / bx2) <= bound);
    double b_min = 1;
    for (double v : b) b_min = std::min(b_min, v);
    CHECK(std::abs(result.eigenvalues[j] - expected[j]) <= 2 * bound / b_min);
    for (int k = 0; k <= j; ++k) {
      Kokkos::complex<double> dot = 0;
      for (int i = 0; i < n; ++i)
        dot += Kokkos::conj(Kokkos::complex<double>(x(i, k))) * B(i) *
               Kokkos::complex<double>(x(i, j));
      CAPTURE(k);
      CHECK(Kokkos::abs(dot - (k == j ? 1.0 : 0.0)) <= 100 * std::sqrt(eps));
    }
  }
}

template <class T>
double tolerance_for() {
  return std::is_same_v<real_t<T>, double> ? 1e-9 : 1e-4;
}

// LOBPCG for m pairs of A from a random block, with Jacobi or without a preconditioner, checked
// against A's spectrum (ascending).
template <class T>
void solve_and_check(const Problem<T>& A, const std::vector<double>& spectrum, int m, Wanted wanted,
                     bool preconditioned) {
  auto X = random_block<T>(A.n, m);
  LobpcgOptions options;
  options.wanted = wanted;
  options.tolerance = tolerance_for<T>();
  const auto result =
      preconditioned ? lobpcg(Exec(), A.csr, X, options, IdentityOperator{}, jacobi(Exec(), A.csr))
                     : lobpcg(Exec(), A.csr, X, options);
  check(A, {}, X, result, spectrum, wanted, options.tolerance);
}

}  // namespace

// Outside the anonymous namespace: nvcc's device lambdas need an enclosing function with a name
// it can reach.
namespace basalt::test {

// B = diag(b) as a user operator: anything with apply(exec, X, Y).
template <class T>
struct DiagonalOperator {
  Kokkos::View<real_t<T>*, Exec::memory_space> diagonal;
  template <class ExecSpace, class XView, class YView>
  void apply(const ExecSpace& exec, const XView& X, const YView& Y) const {
    const auto d = diagonal;
    Kokkos::parallel_for(
        Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>>(exec, {0, 0}, {X.extent(0), X.extent(1)}),
        KOKKOS_LAMBDA(const size_t i, const size_t j) { Y(i, j) = d(i) * X(i, j); });
  }
};

// Every column of W the first column of R: W has rank one, so its Cholesky QR breaks down
// (SVQB keeps one column) and so does the next P's (dropped).
struct RankOnePreconditioner {
  template <class ExecSpace, class RView, class WView>
  void apply(const ExecSpace& exec, const RView& R, const WView& W) const {
    Kokkos::parallel_for(
        Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>>(exec, {0, 0}, {R.extent(0), R.extent(1)}),
        KOKKOS_LAMBDA(const size_t i, const size_t j) { W(i, j) = R(i, 0); });
  }
};

}  // namespace basalt::test

using test::DiagonalOperator;
using test::RankOnePreconditioner;

TEMPLATE_TEST_CASE("lobpcg: 1D, 2D and 3D Laplacians, both ends, with and without Jacobi",
                   "[sparse][lobpcg]", float, double, Kokkos::complex<float>,
                   Kokkos::complex<double>) {
  using T = TestType;
  const std::vector<std::vector<int>> grids = {{40}, {9, 8}, {6, 5, 4}};
  for (const auto& edges : grids) {
    std::vector<double> expected;
    const auto A = laplacian<T>(edges, expected);
    for (const Wanted wanted : {Wanted::smallest, Wanted::largest})
      for (const bool preconditioned : {false, true}) {
        CAPTURE(edges.size(), wanted, preconditioned);
        solve_and_check(A, expected, 3, wanted, preconditioned);
      }
  }
}

TEMPLATE_TEST_CASE("lobpcg: random Hermitian sparse matrices against LAPACKE, every format",
                   "[sparse][lobpcg]", float, double, Kokkos::complex<float>,
                   Kokkos::complex<double>) {
  using T = TestType;
  std::vector<double> expected;
  const auto A = random_hermitian<T>(90, 0.08, expected);
  const auto ell = to_ell(Exec(), A.csr);
  const auto sellp = to_sellp(Exec(), A.csr, 8, 2);
  for (const Wanted wanted : {Wanted::smallest, Wanted::largest})
    for (int format = 0; format < 3; ++format) {
      CAPTURE(wanted, format);
      const int m = 4;
      auto X = random_block<T>(A.n, m);
      LobpcgOptions options;
      options.wanted = wanted;
      options.tolerance = tolerance_for<T>();
      // CSR without a preconditioner, ELL and SELL-P with Jacobi.
      const auto result =
          format == 0 ? lobpcg(Exec(), A.csr, X, options)
          : format == 1
              ? lobpcg(Exec(), ell, X, options, IdentityOperator{}, jacobi(Exec(), ell))
              : lobpcg(Exec(), sellp, X, options, IdentityOperator{}, jacobi(Exec(), sellp));
      CAPTURE(result.iterations);
      check(A, {}, X, result, expected, wanted, options.tolerance);
    }
}

TEMPLATE_TEST_CASE("lobpcg: A x = lambda B x with a diagonal positive definite B",
                   "[sparse][lobpcg]", float, double, Kokkos::complex<float>,
                   Kokkos::complex<double>) {
  using T = TestType;
  using R = real_t<T>;
  std::vector<double> unused;
  const auto A = random_hermitian<T>(72, 0.1, unused);
  const int n = A.n, m = 3;
  std::vector<double> b(n);
  Kokkos::View<R*, Kokkos::HostSpace> host_b("b", n);
  std::vector<T> dense_b(static_cast<size_t>(n) * n, T(0));
  for (int i = 0; i < n; ++i) {
    host_b(i) = R(1 + 2 * std::abs(test::random_scalar<R>()));
    b[i] = host_b(i);
    dense_b[i + static_cast<size_t>(i) * n] = T(host_b(i));
  }
  // The reference: LAPACKE's xSYGVD/xHEGVD on the dense pair.
  Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::HostSpace> a("a", n, n), bb("b", n, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      a(i, j) = A(i, j);
      bb(i, j) = dense_b[i + static_cast<size_t>(j) * n];
    }
  std::vector<R> w(n);
  REQUIRE(lapacke::hegvd(a, bb, w.data()) == 0);
  const std::vector<double> expected(w.begin(), w.end());

  const DiagonalOperator<T> as_operator{test::device_copy(host_b)};
  const auto as_csr = csr_from_dense(n, dense_b);
  for (const Wanted wanted : {Wanted::smallest, Wanted::largest})
    for (const bool user_operator : {false, true}) {
      CAPTURE(wanted, user_operator);
      auto X = random_block<T>(n, m);
      LobpcgOptions options;
      options.wanted = wanted;
      options.tolerance = tolerance_for<T>();
      const auto result = user_operator
                              ? lobpcg(Exec(), A.csr, X, options, as_operator)
                              : lobpcg(Exec(), A.csr, X, options, as_csr, jacobi(Exec(), A.csr));
      check(A, b, X, result, expected, wanted, options.tolerance);
    }
}

TEMPLATE_TEST_CASE("lobpcg: a wanted eigenvalue next to the first unwanted one (guard vectors)",
                   "[sparse][lobpcg]", float, double, Kokkos::complex<float>,
                   Kokkos::complex<double>) {
  using T = TestType;
  // 1, 2, 3, 10 | 10.01, then 11 ... 989 evenly, and the same mirrored at the top (990 - 0.01
  // | 990, 997, 998, 999): with m = 4 the last wanted pair of either end lies 0.01 from the
  // first unwanted one, 1e-5 of the spread. Without guard vectors this case failed on every
  // seed tried (0..40: the double runs without a preconditioner mostly reach the 500-step
  // limit); with the default 4 they converge in under 100 steps.
  const int n = 300, m = 4;
  const double top = 1000;
  const std::vector<double> bottom = {1, 2, 3, 10, 10.01};
  std::vector<double> spectrum = bottom;
  const int middle = n - 2 * bottom.size();
  for (int i = 0; i < middle; ++i) spectrum.push_back(11 + (top - 22) * i / (middle - 1));
  for (auto b = bottom.rbegin(); b != bottom.rend(); ++b) spectrum.push_back(top - *b);
  const auto A = with_spectrum<T>(spectrum);
  for (const Wanted wanted : {Wanted::smallest, Wanted::largest})
    for (const bool preconditioned : {false, true}) {
      // Jacobi approximates A^-1: a preconditioner for the smallest end only.
      if (preconditioned && wanted == Wanted::largest) continue;
      CAPTURE(wanted, preconditioned);
      solve_and_check(A, spectrum, m, wanted, preconditioned);
    }
}

TEMPLATE_TEST_CASE("lobpcg: a rank-one W takes the SVQB and drop-P fallbacks and still converges",
                   "[sparse][lobpcg]", float, double) {
  using T = TestType;
  // diag(1, 2, 3, 50, 51, ...): the three wanted pairs well separated from the rest.
  const int n = 40;
  std::vector<T> dense(static_cast<size_t>(n) * n, T(0));
  std::vector<double> spectrum(n);
  for (int i = 0; i < n; ++i) {
    spectrum[i] = i < 3 ? i + 1 : 47 + i;
    dense[i + static_cast<size_t>(i) * n] = T(spectrum[i]);
  }
  const Problem<T> A{n, dense, csr_from_dense(n, dense)};
  auto X = random_block<T>(n, 3);
  LobpcgOptions options;
  options.tolerance = tolerance_for<T>();
  const auto result =
      lobpcg(Exec(), A.csr, X, options, IdentityOperator{}, RankOnePreconditioner{});
  check(A, {}, X, result, spectrum, Wanted::smallest, options.tolerance);
}

TEST_CASE("lobpcg: X in LayoutRight, a zero-column block, no room for guards, the iteration limit",
          "[sparse][lobpcg]") {
  std::vector<double> expected;
  const auto A = laplacian<double>({30}, expected);
  Kokkos::View<double**, Kokkos::LayoutRight, Exec::memory_space> X("X", A.n, 2);
  Kokkos::deep_copy(X, random_block<double>(A.n, 2));
  LobpcgOptions options;
  options.tolerance = 1e-10;
  const auto result = lobpcg(Exec(), A.csr, X, options);
  check(A, {}, X, result, expected, Wanted::smallest, options.tolerance);

  Kokkos::View<double**, Kokkos::LayoutLeft, Exec::memory_space> none("none", A.n, 0);
  const auto empty = lobpcg(Exec(), A.csr, none);
  CHECK(empty.converged == 0);
  CHECK(empty.eigenvalues.empty());

  // m = n / 3: the basis [X W P] fills the space, no guard columns fit.
  auto full = random_block<double>(A.n, A.n / 3);
  const auto no_guards = lobpcg(Exec(), A.csr, full, options);
  check(A, {}, full, no_guards, expected, Wanted::smallest, options.tolerance);

  auto Y = random_block<double>(A.n, 2);
  options.max_iterations = 2;
  const auto limited = lobpcg(Exec(), A.csr, Y, options);
  CHECK(limited.status == LobpcgStatus::iteration_limit);
  CHECK(limited.iterations == 2);
  CHECK(limited.converged < 2);
}

TEST_CASE("lobpcg: bad input is named, NaN ends the iteration", "[sparse][lobpcg]") {
  std::vector<double> expected;
  const auto A = laplacian<double>({12}, expected);
  const int n = A.n;
  auto expect_invalid = [](auto&& call, const std::string& argument) {
    try {
      call();
      FAIL("no InvalidArgument for " << argument);
    } catch (const InvalidArgument& e) {
      CAPTURE(e.what());
      CHECK(e.argument() == argument);
    }
  };
  Kokkos::View<double**, Kokkos::LayoutLeft, Exec::memory_space> empty("empty", 0, 1);
  Csr<double> empty_a;
  expect_invalid([&] { lobpcg(Exec(), empty_a, empty); }, "X");
  auto too_wide = random_block<double>(n, n / 3 + 1);
  expect_invalid([&] { lobpcg(Exec(), A.csr, too_wide); }, "X");
  auto X = random_block<double>(n, 2);
  auto short_x = random_block<double>(n - 1, 2);
  expect_invalid([&] { lobpcg(Exec(), A.csr, short_x); }, "A");
  LobpcgOptions bad_tolerance;
  bad_tolerance.tolerance = -1;
  expect_invalid([&] { lobpcg(Exec(), A.csr, X, bad_tolerance); }, "options.tolerance");
  LobpcgOptions bad_guards;
  bad_guards.guard_vectors = -1;
  expect_invalid([&] { lobpcg(Exec(), A.csr, X, bad_guards); }, "options.guard_vectors");

  // Dependent columns: the second is twice the first.
  auto dependent = random_block<double>(n, 2);
  Kokkos::deep_copy(Kokkos::subview(dependent, Kokkos::ALL, 1),
                    Kokkos::subview(dependent, Kokkos::ALL, 0));
  expect_invalid([&] { lobpcg(Exec(), A.csr, dependent); }, "X");

  // A non-symmetric A: one off-diagonal entry changed.
  std::vector<double> skewed = A.dense;
  skewed[0 + 1 * n] = 3;
  const auto non_symmetric = csr_from_dense(n, skewed);
  expect_invalid([&] { lobpcg(Exec(), non_symmetric, X); }, "A");

  // B indefinite: diag(1, ..., 1, -1, ..., -1).
  std::vector<double> indefinite(static_cast<size_t>(n) * n, 0.0);
  for (int i = 0; i < n; ++i) indefinite[i + static_cast<size_t>(i) * n] = i < n / 2 ? 1 : -1;
  const auto B = csr_from_dense(n, indefinite);
  auto Y = random_block<double>(n, 2);
  Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace> y("y", n, 2);
  for (int i = 0; i < n; ++i) y(i, 0) = y(i, 1) = 0;
  y(0, 0) = 1;  // x^H B x = 1 and -1: an indefinite X^H B X
  y(n - 1, 1) = 1;
  Kokkos::deep_copy(Y, y);
  expect_invalid([&] { lobpcg(Exec(), A.csr, Y, {}, B); }, "B");

  // NaN in A: no hang, not converged.
  std::vector<double> poisoned = A.dense;
  poisoned[3 + 3 * n] = std::numeric_limits<double>::quiet_NaN();
  const auto nan_a = csr_from_dense(n, poisoned);
  auto Z = random_block<double>(n, 2);
  const auto result = lobpcg(Exec(), nan_a, Z);
  CHECK(result.status == LobpcgStatus::not_finite);
  CHECK(result.converged == 0);
  // With Jacobi the NaN reaches the preconditioner too.
  const auto jacobi_result =
      lobpcg(Exec(), nan_a, Z, {}, IdentityOperator{}, jacobi(Exec(), nan_a));
  CHECK(jacobi_result.status == LobpcgStatus::not_finite);
}

TEMPLATE_TEST_CASE("jacobi: 1 / |a_ii| in every format, 1 where a_ii = 0", "[sparse][lobpcg]",
                   double, Kokkos::complex<float>) {
  using T = TestType;
  using R = real_t<T>;
  std::vector<double> unused;
  auto A = random_hermitian<T>(45, 0.2, unused);
  for (int i = 0; i < A.n; i += 7) A.dense[i + static_cast<size_t>(i) * A.n] = T(0);
  const auto csr = csr_from_dense(A.n, A.dense);
  auto expect = [&](const auto& inverse_diagonal) {
    const auto d = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), inverse_diagonal);
    for (int i = 0; i < A.n; ++i) {
      const R size = magnitude(A(i, i));
      CAPTURE(i, size);
      CHECK(std::abs(d(i) - (size == 0 ? R(1) : 1 / size)) <=
            4 * std::numeric_limits<R>::epsilon() * d(i));
    }
  };
  expect(jacobi(Exec(), csr).inverse_diagonal);
  expect(jacobi(Exec(), to_ell(Exec(), csr)).inverse_diagonal);
  expect(jacobi(Exec(), to_sellp(Exec(), csr, 4, 3)).inverse_diagonal);
  // int64 offsets: SELL-P's positions in that type.
  const auto wide = test::with_offset<std::int64_t>(csr);
  expect(jacobi(Exec(), wide).inverse_diagonal);
  expect(jacobi(Exec(), to_ell(Exec(), wide)).inverse_diagonal);
  expect(jacobi(Exec(), to_sellp(Exec(), wide, 4, 3)).inverse_diagonal);
}

// The block products take int sizes (cuBLAS, LAPACKE): X of 2^31 rows, with an A of int64
// ordinals that size, must be refused naming X before the 2^31 x 3k blocks are allocated (it was
// not: the allocation failed, or on a larger machine cuBLAS saw a wrapped size). X is a View of
// that extent over one element, never read.
TEST_CASE("lobpcg: X past 2^31 - 1 rows is named", "[sparse][lobpcg]") {
  const std::int64_t n = std::int64_t{1} << 31;
  Csr<double, std::int64_t> A;
  A.num_rows = A.num_cols = n;
  Kokkos::View<double*, Exec::memory_space> storage("storage", 1);
  Kokkos::View<double**, Kokkos::LayoutLeft, Exec::memory_space, Kokkos::MemoryUnmanaged> X(
      storage.data(), n, 1);
  CHECK(test::argument_of([&] { lobpcg(Exec(), A, X); }) == "X");
}
