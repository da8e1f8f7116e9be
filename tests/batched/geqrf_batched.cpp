#include "basalt/algorithms/batched/geqrf_batched.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "batched/batch_support.hpp"

using namespace basalt;
using namespace basalt::test;

namespace {

// Q (m x m) from the reflectors below the diagonal of qr and tau, built on the host:
// Q = H(0) ... H(k-1), H(j) = I - tau(j) v v^H.
template <class T, class Tau>
WideMatrix form_q(const HostMatrix<T>& qr, const Tau& tau) {
  const int m = qr.extent(0), k = std::min<int>(qr.extent(0), qr.extent(1));
  WideMatrix q("Q", m, m);
  for (int i = 0; i < m; ++i) q(i, i) = 1;
  for (int j = k - 1; j >= 0; --j) {
    std::vector<Wide> v(m, Wide(0));
    v[j] = 1;
    for (int i = j + 1; i < m; ++i) v[i] = Wide(qr(i, j));
    const Wide t = Wide(tau(j));
    for (int c = 0; c < m; ++c) {
      Wide w = 0;
      for (int i = j; i < m; ++i) w += Kokkos::conj(v[i]) * q(i, c);
      for (int i = j; i < m; ++i) q(i, c) -= t * v[i] * w;
    }
  }
  return q;
}

// ||A - Q R||_F / (max(m, n) ||A||_F eps) and ||I - Q^H Q||_F / (m eps).
template <class T, class Tau>
std::pair<double, double> qr_errors(const HostMatrix<T>& original, const HostMatrix<T>& qr,
                                    const Tau& tau) {
  const int m = original.extent(0), n = original.extent(1);
  const WideMatrix q = form_q(qr, tau);
  WideMatrix r("R", m, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i <= std::min(j, m - 1); ++i) r(i, j) = Wide(qr(i, j));
  const WideMatrix product_qr = product(q, false, r);
  const WideMatrix a = widen(original);
  WideMatrix error("E", m, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) error(i, j) = a(i, j) - product_qr(i, j);
  WideMatrix orthogonality = product(q, true, q);
  for (int i = 0; i < m; ++i) orthogonality(i, i) -= 1;
  const double backward = relative(error, a, std::max(m, n), eps<T>());
  const double loss = m == 0 ? 0 : frobenius(orthogonality) / (m * eps<T>());
  return {backward, loss};
}

// a^H of a wide matrix.
inline WideMatrix adjoint(const WideMatrix& a) {
  WideMatrix h("H", a.extent(1), a.extent(0));
  for (size_t j = 0; j < a.extent(1); ++j)
    for (size_t i = 0; i < a.extent(0); ++i) h(j, i) = Kokkos::conj(a(i, j));
  return h;
}

// a - b, same shapes.
inline WideMatrix difference(const WideMatrix& a, const WideMatrix& b) {
  WideMatrix d("D", a.extent(0), a.extent(1));
  for (size_t j = 0; j < a.extent(1); ++j)
    for (size_t i = 0; i < a.extent(0); ++i) d(i, j) = a(i, j) - b(i, j);
  return d;
}

struct Case {
  int m, n, count;
};

const std::vector<Case> fixed_cases = {{1, 1, 40},   {2, 2, 200},  {5, 3, 60},   {3, 5, 60},
                                       {16, 16, 30}, {40, 33, 8},  {64, 64, 4},  {100, 100, 2},
                                       {300, 60, 2}, {60, 200, 2}, {512, 512, 1}};

}  // namespace

TEMPLATE_TEST_CASE("geqrf_batched factors every matrix of a fixed-size batch", "[geqrf_batched]",
                   float, double, Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  for (const auto [m, n, count] : fixed_cases) {
    CAPTURE(m, n, count);
    std::vector<HostMatrix<T>> originals;
    // Rank-deficient members (a zero column) mixed in: QR has no breakdown, they must factor.
    for (int b = 0; b < count; ++b) originals.push_back(random_matrix<T>(m, n, b % 3 == 1));
    auto A = device_batch(originals, m, n);
    Kokkos::View<T**> tau("tau", count, std::min(m, n));
    geqrf_batched(Exec(), A, tau);
    const auto qr = to_host(A);
    const auto taus = to_host(tau);
    for (int b = 0; b < count; ++b) {
      CAPTURE(b);
      const auto [backward, loss] =
          qr_errors(originals[b], host_matrix(qr, b), Kokkos::subview(taus, b, Kokkos::ALL));
      CHECK(backward < 30);
      CHECK(loss < 30);
    }
  }
}

TEMPLATE_TEST_CASE("geqrf_batched on a variable-size batch, sizes 1 to 512", "[geqrf_batched]",
                   float, double, Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  const std::vector<std::pair<int, int>> shapes = {{1, 1},  {512, 512}, {0, 4},    {4, 0},
                                                   {2, 2},  {33, 17},   {17, 33},  {64, 64},
                                                   {1, 30}, {30, 1},    {129, 100}};
  std::vector<HostMatrix<T>> originals;
  for (const auto [m, n] : shapes) originals.push_back(random_matrix<T>(m, n));
  auto A = variable_batch(originals);
  auto tau = make_variable_vectors<T>("tau", min_dimensions(A));
  geqrf_batched(Exec(), A, tau);
  const auto qr = host_matrices(A);
  const auto taus = host_matrices(tau);
  for (size_t b = 0; b < shapes.size(); ++b) {
    CAPTURE(b, shapes[b].first, shapes[b].second);
    const auto [backward, loss] =
        qr_errors(originals[b], qr[b], Kokkos::subview(taus[b], Kokkos::ALL, 0));
    CHECK(backward < 30);
    CHECK(loss < 30);
  }
}

TEST_CASE("geqrf_batched on 100,000 tiny matrices", "[geqrf_batched]") {
  const int count = 100000, m = 3, n = 2;
  std::vector<HostMatrix<double>> originals;
  auto original = Kokkos::create_mirror_view(make_batch<double>("A", count, m, n));
  for (int b = 0; b < count; ++b)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) original(b, i, j) = random_scalar<double>();
  auto A = make_batch<double>("A", count, m, n);
  Kokkos::deep_copy(A, original);
  Kokkos::View<double**> tau("tau", count, n);
  geqrf_batched(Exec(), A, tau);
  // Q^T A = R checked through ormqr: the entries below R must vanish, R's must match.
  auto C = make_batch<double>("C", count, m, n);
  Kokkos::deep_copy(C, original);
  ormqr_batched(Exec(), Op::transpose, A, tau, C);
  const auto qr = to_host(A);
  const auto qta = to_host(C);
  int inaccurate = 0;
  for (int b = 0; b < count; ++b) {
    double error = 0, largest = 0;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        error = std::max(error, std::abs(qta(b, i, j) - (i <= j ? qr(b, i, j) : 0.0)));
        largest = std::max(largest, std::abs(original(b, i, j)));
      }
    inaccurate += !(error <= 30 * m * largest * eps<double>());
  }
  CHECK(inaccurate == 0);
}

TEMPLATE_TEST_CASE("ormqr_batched applies Q and Q^H", "[ormqr_batched]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  const int m = 37, n = 20, nrhs = 4, count = 3;
  std::vector<HostMatrix<T>> a, c;
  for (int k = 0; k < count; ++k) {
    a.push_back(random_matrix<T>(m, n));
    c.push_back(random_matrix<T>(m, nrhs));
  }
  auto A = device_batch(a, m, n);
  Kokkos::View<T**> tau("tau", count, n);
  geqrf_batched(Exec(), A, tau);
  const auto qr = to_host(A);
  const auto taus = to_host(tau);
  for (const Op op : {Op::none, Op::transpose, Op::conj_transpose}) {
    if (op == Op::transpose && !std::is_floating_point_v<T>) continue;
    CAPTURE(static_cast<int>(op));
    auto C = device_batch(c, m, nrhs);
    ormqr_batched(Exec(), op, A, tau, C);
    const auto result = to_host(C);
    for (int k = 0; k < count; ++k) {
      const WideMatrix q = form_q(host_matrix(qr, k), Kokkos::subview(taus, k, Kokkos::ALL));
      const WideMatrix expected = product(q, op != Op::none, widen(c[k]));
      WideMatrix error = widen(host_matrix(result, k));
      for (int j = 0; j < nrhs; ++j)
        for (int i = 0; i < m; ++i) error(i, j) -= expected(i, j);
      CHECK(relative(error, widen(c[k]), m, eps<T>()) < 30);
    }
  }
}

TEMPLATE_TEST_CASE("gels_batched solves least-squares problems", "[gels_batched]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  const std::vector<std::pair<int, int>> shapes = {{1, 1}, {10, 4}, {60, 60}, {200, 30}, {7, 3}};
  const int nrhs = 2;
  std::vector<HostMatrix<T>> a, b;
  for (size_t k = 0; k < shapes.size(); ++k) {
    // Member 4 is rank deficient (zero column 2): gels reports it and leaves its B alone.
    a.push_back(random_matrix<T>(shapes[k].first, shapes[k].second, k == 4));
    b.push_back(random_matrix<T>(shapes[k].first, nrhs));
  }
  auto A = variable_batch(a);
  auto B = variable_batch(b);
  Kokkos::View<int*> info("info", A.count());
  gels_batched(Exec(), A, B, info);
  const auto x = host_matrices(B);
  const auto infos = to_host(info);
  for (size_t k = 0; k < shapes.size(); ++k) {
    const int m = shapes[k].first, n = shapes[k].second;
    CAPTURE(k, m, n);
    if (k == 4) {
      CHECK(infos(k) == 3);
      CHECK(identical(x[k], b[k]));
      continue;
    }
    CHECK(infos(k) == 0);
    // The normal equations: ||A^H (B - A X)||_F / (max(m, n) ||A||_F^2 ||X||_F eps) ... with
    // ||B|| in the scale for the residual's own size.
    const WideMatrix wa = widen(a[k]);
    WideMatrix solution("X", n, nrhs);
    for (int j = 0; j < nrhs; ++j)
      for (int i = 0; i < n; ++i) solution(i, j) = Wide(x[k](i, j));
    const WideMatrix ax = product(wa, false, solution);
    WideMatrix r = widen(b[k]);
    for (int j = 0; j < nrhs; ++j)
      for (int i = 0; i < m; ++i) r(i, j) -= ax(i, j);
    const WideMatrix ahr = product(wa, true, r);
    const double scale = frobenius(wa) * (frobenius(wa) * frobenius(solution) + frobenius(r));
    CHECK(frobenius(ahr) / (std::max(m, n) * scale * eps<T>()) < 30);
  }
}

TEMPLATE_TEST_CASE("ormqr_batched applies Q from the right", "[ormqr_batched]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  // Fixed: 3 matrices of 23 x 15, C of 6 x 23; variable: shapes mixed, C of r x m.
  const std::vector<std::pair<int, int>> shapes = {{23, 15}, {5, 3}, {12, 12}, {1, 1},
                                                   {20, 7},  {3, 9}, {0, 0}};
  const std::vector<int> c_rows = {6, 2, 5, 3, 1, 4, 2};
  std::vector<HostMatrix<T>> a, c;
  for (size_t k = 0; k < shapes.size(); ++k) {
    a.push_back(random_matrix<T>(shapes[k].first, shapes[k].second));
    c.push_back(random_matrix<T>(c_rows[k], shapes[k].first));
  }
  const std::vector<HostMatrix<T>> fixed_a(3, a[0]), fixed_c(3, c[0]);
  auto A = variable_batch(a);
  auto tau = make_variable_vectors<T>("tau", min_dimensions(A));
  geqrf_batched(Exec(), A, tau);
  auto FA = device_batch(fixed_a, 23, 15);
  Kokkos::View<T**> ftau("tau", 3, 15);
  geqrf_batched(Exec(), FA, ftau);
  const auto qr = host_matrices(A);
  const auto taus = host_matrices(tau);
  for (const Op op : {Op::none, Op::transpose, Op::conj_transpose}) {
    if (op == Op::transpose && !std::is_floating_point_v<T>) continue;
    CAPTURE(static_cast<int>(op));
    auto C = variable_batch(c);
    ormqr_batched(Exec(), ApplySide::right, op, A, tau, C);
    auto FC = device_batch(fixed_c, 6, 23);
    ormqr_batched(Exec(), ApplySide::right, op, FA, ftau, FC);
    const auto result = host_matrices(C);
    const auto fixed_result = to_host(FC);
    for (size_t k = 0; k < shapes.size(); ++k) {
      CAPTURE(k);
      const WideMatrix q = form_q(qr[k], Kokkos::subview(taus[k], Kokkos::ALL, 0));
      const WideMatrix expected = product(widen(c[k]), false, op == Op::none ? q : adjoint(q));
      CHECK(relative(difference(widen(result[k]), expected), widen(c[k]), 23, eps<T>()) < 30);
      if (k == 0)
        for (int f = 0; f < 3; ++f)
          CHECK(relative(difference(widen(host_matrix(fixed_result, f)), expected), widen(c[k]),
                         23, eps<T>()) < 30);
    }
  }
}

TEST_CASE("geqrf_batched family on NaN, extreme and invalid input", "[geqrf_batched]") {
  // Entries near overflow and underflow factor without overflow of our own; the errors are
  // measured on the results scaled back by the same power of two.
  const std::vector<double> scales = {std::ldexp(1.0, 996), std::ldexp(1.0, -1000), 1.0};
  std::vector<HostMatrix<double>> originals;
  for (const double scale : scales) {
    auto a = random_matrix<double>(12, 8);
    for (int j = 0; j < 8; ++j)
      for (int i = 0; i < 12; ++i) a(i, j) *= scale;
    originals.push_back(a);
  }
  originals[2](3, 3) = std::numeric_limits<double>::quiet_NaN();
  auto A = device_batch(originals, 12, 8);
  Kokkos::View<double**> tau("tau", 3, 8);
  geqrf_batched(Exec(), A, tau);
  const auto qr = to_host(A);
  const auto taus = to_host(tau);
  for (int b = 0; b < 2; ++b) {
    CAPTURE(b);
    auto original = host_matrix(to_host(device_batch(originals, 12, 8)), b);
    auto factors = host_matrix(qr, b);
    for (int j = 0; j < 8; ++j)
      for (int i = 0; i < 12; ++i) {
        original(i, j) /= scales[b];
        if (i <= j) factors(i, j) /= scales[b];
      }
    const auto [backward, loss] =
        qr_errors(original, factors, Kokkos::subview(taus, b, Kokkos::ALL));
    CHECK(backward < 30);
    CHECK(loss < 30);
  }
  CHECK(std::isnan(qr(2, 7, 7)));

  auto argument_of = [](auto&& call) -> std::string {
    try {
      call();
    } catch (const InvalidArgument& e) {
      return e.argument();
    }
    return "none";
  };
  Kokkos::View<double**> short_tau("tau", 3, 7);
  CHECK(argument_of([&] { geqrf_batched(Exec(), A, short_tau); }) == "tau");
  auto C = make_batch<double>("C", 3, 11, 2);
  CHECK(argument_of([&] { ormqr_batched(Exec(), Op::none, A, tau, C); }) == "C");
  auto Cr = make_batch<double>("C", 3, 2, 11);
  CHECK(argument_of([&] { ormqr_batched(Exec(), ApplySide::right, Op::none, A, tau, Cr); }) ==
        "C");
  auto wide = make_batch<double>("wide", 3, 8, 12);
  auto B = make_batch<double>("B", 3, 8, 1);
  Kokkos::View<int*> info("info", 3);
  CHECK(argument_of([&] { gels_batched(Exec(), wide, B, info); }) == "A");
  auto complex_a = make_batch<Kokkos::complex<double>>("A", 1, 4, 4);
  Kokkos::View<Kokkos::complex<double>**> complex_tau("tau", 1, 4);
  auto complex_c = make_batch<Kokkos::complex<double>>("C", 1, 4, 1);
  CHECK(argument_of([&] {
          ormqr_batched(Exec(), Op::transpose, complex_a, complex_tau, complex_c);
        }) == "op");
}
