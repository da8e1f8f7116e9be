#include "basalt/algorithms/batched/geqrf_batched.hpp"

#include <algorithm>
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

// How far two backward-stable factorizations' tau_j may differ: tau_j is as well determined as
// the column it is made from, which after j reflections carries errors of order eps ||A||, so
// relative to its norm |R(j, j)| (the reference's R). With a plain 64 max(m, n) eps, complex
// single failed in two of four runs with random seeds (one: 1.3e-4 against 1.2e-4, a 14 x 16).
template <class T>
double tau_tolerance(const HostMatrix<T>& original, const WideMatrix& r, int j) {
  const int m = original.extent(0), n = original.extent(1);
  return 64 * std::max(m, n) * eps<T>() *
         std::max(1.0, frobenius(widen(original)) / Kokkos::abs(r(j, j)));
}

// a^H of a wide matrix.
inline WideMatrix adjoint(const WideMatrix& a) {
  WideMatrix h("H", a.extent(1), a.extent(0));
  for (size_t j = 0; j < a.extent(1); ++j)
    for (size_t i = 0; i < a.extent(0); ++i) h(j, i) = Kokkos::conj(a(i, j));
  return h;
}

// a^H of a host matrix, in its own scalar type.
template <class T>
HostMatrix<T> adjoint(const HostMatrix<T>& a) {
  HostMatrix<T> h("H", a.extent(1), a.extent(0));
  for (size_t j = 0; j < a.extent(1); ++j)
    for (size_t i = 0; i < a.extent(0); ++i) {
      if constexpr (std::is_floating_point_v<T>)
        h(j, i) = a(i, j);
      else
        h(j, i) = Kokkos::conj(a(i, j));
    }
  return h;
}

// a - b, same shapes.
inline WideMatrix difference(const WideMatrix& a, const WideMatrix& b) {
  WideMatrix d("D", a.extent(0), a.extent(1));
  for (size_t j = 0; j < a.extent(1); ++j)
    for (size_t i = 0; i < a.extent(0); ++i) d(i, j) = a(i, j) - b(i, j);
  return d;
}

// The first rows x cols block of a host matrix, widened.
template <class T>
WideMatrix block(const HostMatrix<T>& a, int rows, int cols) {
  WideMatrix w("block", rows, cols);
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) w(i, j) = Wide(a(i, j));
  return w;
}

// G^{-1} B by Gaussian elimination with partial pivoting, G square and nonsingular.
inline WideMatrix solve(const WideMatrix& matrix, const WideMatrix& rhs) {
  WideMatrix g("G", matrix.extent(0), matrix.extent(1)), b("B", rhs.extent(0), rhs.extent(1));
  Kokkos::deep_copy(g, matrix);
  Kokkos::deep_copy(b, rhs);
  const int n = g.extent(0), nrhs = b.extent(1);
  for (int k = 0; k < n; ++k) {
    int p = k;
    for (int i = k + 1; i < n; ++i)
      if (Kokkos::abs(g(i, k)) > Kokkos::abs(g(p, k))) p = i;
    for (int j = 0; j < n; ++j) std::swap(g(k, j), g(p, j));
    for (int j = 0; j < nrhs; ++j) std::swap(b(k, j), b(p, j));
    for (int i = k + 1; i < n; ++i) {
      const Wide l = g(i, k) / g(k, k);
      for (int j = k; j < n; ++j) g(i, j) -= l * g(k, j);
      for (int j = 0; j < nrhs; ++j) b(i, j) -= l * b(k, j);
    }
  }
  for (int k = n - 1; k >= 0; --k)
    for (int j = 0; j < nrhs; ++j) {
      Wide s = b(k, j);
      for (int i = k + 1; i < n; ++i) s -= g(k, i) * b(i, j);
      b(k, j) = s / g(k, k);
    }
  return b;
}

// Q^H B with the QR of `tall` (m >= n), through geqrf_batched and ormqr_batched: what gels
// leaves in B for a rank-deficient member after its least-squares step.
template <class T>
HostMatrix<T> rotated(const HostMatrix<T>& tall, const HostMatrix<T>& b) {
  auto F = variable_batch<T>({tall});
  auto tau = make_variable_vectors<T>("tau", min_dimensions(F));
  geqrf_batched(Exec(), F, tau);
  auto B = variable_batch<T>({b});
  ormqr_batched(Exec(), Op::conj_transpose, F, tau, B);
  return host_matrices(B)[0];
}

// Checks gels' output for one member: a (m x n) and b (max(m, n) x nrhs) its input, x its B on
// exit. Least squares (op(A) has at least as many rows as columns): the normal equations;
// minimum norm: the residual and X against op(A)^H (op(A) op(A)^H)^{-1} B, in double on the
// host. A rank-deficient member (expected_info > 0): info, and B as xGELS leaves it.
template <class T>
void check_gels(Op op, const HostMatrix<T>& a, const HostMatrix<T>& b, const HostMatrix<T>& x,
                int info, int expected_info) {
  const int m = a.extent(0), n = a.extent(1), nrhs = b.extent(1);
  const bool adjoint_op = op != Op::none;
  const int rows = adjoint_op ? n : m, cols = adjoint_op ? m : n;  // op(A) is rows x cols
  CAPTURE(m, n, static_cast<int>(op), expected_info);
  CHECK(info == expected_info);
  if (expected_info > 0) {
    if (rows >= cols)  // the least-squares step ran first
      CHECK(relative(difference(widen(x), widen(rotated(m >= n ? a : adjoint(a), b))), widen(b),
                     std::max(m, n), eps<T>()) < 30);
    else
      CHECK(identical(x, b));
    return;
  }
  if (std::min(m, n) == 0) {
    CHECK(frobenius(widen(x)) == 0);
    return;
  }
  const WideMatrix wa = adjoint_op ? adjoint(widen(a)) : widen(a);  // op(A), real or complex
  const WideMatrix rhs = block(b, rows, nrhs), solution = block(x, cols, nrhs);
  const WideMatrix r = difference(rhs, product(wa, false, solution));
  if (rows >= cols) {
    const WideMatrix ahr = product(wa, true, r);
    const double scale = frobenius(wa) * (frobenius(wa) * frobenius(solution) + frobenius(r));
    CHECK(frobenius(ahr) / (std::max(m, n) * scale * eps<T>()) < 30);
    return;
  }
  const WideMatrix expected = product(wa, true, solve(product(wa, false, adjoint(wa)), rhs));
  CHECK(relative(difference(solution, expected), expected, cols, eps<T>()) < 30);
  CHECK(frobenius(r) / (cols * frobenius(wa) * frobenius(solution) * eps<T>()) < 30);
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
  auto tau = make_variable_vectors<T>("tau", A);
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
    if (k == 4) {  // xGELS leaves Q^H B behind when R is found singular
      CHECK(infos(k) == 3);
      CHECK(relative(difference(widen(x[k]), widen(rotated(a[k], b[k]))), widen(b[k]), m,
                     eps<T>()) < 30);
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
          CHECK(relative(difference(widen(host_matrix(fixed_result, f)), expected), widen(c[k]), 23,
                         eps<T>()) < 30);
    }
  }
}

TEMPLATE_TEST_CASE("gels_batched: underdetermined, transposed and rank-deficient members",
                   "[gels_batched]", float, double, Kokkos::complex<float>,
                   Kokkos::complex<double>) {
  using T = TestType;
  struct Member {
    int m, n, zero_row, zero_column;  // -1: none
  };
  // Wide and tall members mixed, empty ones, and one rank-deficient member of each shape.
  const std::vector<Member> members = {{3, 8, -1, -1},   {10, 25, -1, -1}, {1, 5, -1, -1},
                                       {25, 10, -1, -1}, {8, 3, -1, -1},   {0, 4, -1, -1},
                                       {4, 0, -1, -1},   {12, 30, 2, -1},  {30, 12, -1, 5},
                                       {20, 60, -1, -1}, {6, 6, -1, -1}};
  const int nrhs = 3;
  std::vector<HostMatrix<T>> a, b;
  std::vector<int> expected_info;
  for (const auto& [m, n, zero_row, zero_column] : members) {
    auto matrix = random_matrix<T>(m, n);
    for (int j = 0; j < n && zero_row >= 0; ++j) matrix(zero_row, j) = T(0);
    for (int i = 0; i < m && zero_column >= 0; ++i) matrix(i, zero_column) = T(0);
    a.push_back(matrix);
    // Every row random, those that xGELS ignores on input too.
    b.push_back(random_matrix<T>(std::max(m, n), nrhs));
    expected_info.push_back(zero_row >= 0 ? zero_row + 1 : zero_column >= 0 ? zero_column + 1 : 0);
  }
  for (const Op op : {Op::none, Op::transpose, Op::conj_transpose}) {
    if (op == Op::transpose && !std::is_floating_point_v<T>) continue;
    CAPTURE(static_cast<int>(op));
    auto A = variable_batch(a);
    auto B = variable_batch(b);
    Kokkos::View<int*> info("info", A.count());
    gels_batched(Exec(), op, A, B, info);
    const auto x = host_matrices(B);
    const auto infos = to_host(info);
    for (size_t k = 0; k < members.size(); ++k) {
      CAPTURE(k);
      check_gels(op, a[k], b[k], x[k], infos(k), expected_info[k]);
    }
    // The fixed form, wide (4 matrices of 6 x 15, matrix 2 with a zero row 1) and tall (15 x 6,
    // matrix 2 with a zero column 1).
    for (const bool wide : {true, false}) {
      const int m = wide ? 6 : 15, n = wide ? 15 : 6;
      CAPTURE(wide);
      std::vector<HostMatrix<T>> ta, tb;
      for (int k = 0; k < 4; ++k) {
        ta.push_back(random_matrix<T>(m, n));
        tb.push_back(random_matrix<T>(15, nrhs));
      }
      for (int j = 0; j < n && wide; ++j) ta[2](1, j) = T(0);
      for (int i = 0; i < m && !wide; ++i) ta[2](i, 1) = T(0);
      auto TA = device_batch(ta, m, n);
      auto TB = device_batch(tb, 15, nrhs);
      Kokkos::View<int*> tinfo("info", 4);
      gels_batched(Exec(), op, TA, TB, tinfo);
      const auto tx = to_host(TB);
      const auto tinfos = to_host(tinfo);
      for (int k = 0; k < 4; ++k) {
        CAPTURE(k);
        check_gels(op, ta[k], tb[k], host_matrix(tx, k), tinfos(k), k == 2 ? 2 : 0);
      }
    }
    // A of a wide member holds xGELQF's LQ storage: the adjoint of A^H's QR factors.
    if (op == Op::none) {
      std::vector<HostMatrix<T>> fa = {random_matrix<T>(6, 15)}, fb = {random_matrix<T>(15, 1)};
      auto FA = device_batch(fa, 6, 15);
      auto FB = device_batch(fb, 15, 1);
      Kokkos::View<int*> finfo("info", 1);
      gels_batched(Exec(), FA, FB, finfo);
      const auto factors = host_matrix(to_host(FA), 0);
      auto W = variable_batch<T>({adjoint(fa[0])});
      auto wtau = make_variable_vectors<T>("tau", min_dimensions(W));
      geqrf_batched(Exec(), W, wtau);
      CHECK(relative(difference(widen(factors), adjoint(widen(host_matrices(W)[0]))), widen(fa[0]),
                     15, eps<T>()) < 30);
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

  Kokkos::View<double**> short_tau("tau", 3, 7);
  CHECK(argument_of([&] { geqrf_batched(Exec(), A, short_tau); }) == "tau");
  auto C = make_batch<double>("C", 3, 11, 2);
  CHECK(argument_of([&] { ormqr_batched(Exec(), Op::none, A, tau, C); }) == "C");
  auto Cr = make_batch<double>("C", 3, 2, 11);
  CHECK(argument_of([&] { ormqr_batched(Exec(), ApplySide::right, Op::none, A, tau, Cr); }) == "C");
  auto wide = make_batch<double>("wide", 3, 8, 12);
  auto B = make_batch<double>("B", 3, 8, 1);  // m < n needs max(m, n) = 12 rows
  Kokkos::View<int*> info("info", 3);
  CHECK(argument_of([&] { gels_batched(Exec(), wide, B, info); }) == "B");
  // A variable batch whose third tau is one entry short.
  auto variable = make_variable_batch<double>("variable", {4, 9, 6, 2}, {4, 3, 7, 2});
  const auto short_taus = make_variable_vectors<double>("tau", {4, 3, 5, 2});
  CHECK(argument_of([&] { geqrf_batched(Exec(), variable, short_taus); }) == "tau");
  auto complex_a = make_batch<Kokkos::complex<double>>("A", 1, 4, 4);
  Kokkos::View<Kokkos::complex<double>**> complex_tau("tau", 1, 4);
  auto complex_c = make_batch<Kokkos::complex<double>>("C", 1, 4, 1);
  CHECK(argument_of([&] {
          ormqr_batched(Exec(), Op::transpose, complex_a, complex_tau, complex_c);
        }) == "op");
  auto complex_b = make_batch<Kokkos::complex<double>>("B", 1, 4, 1);
  Kokkos::View<int*> complex_info("info", 1);
  CHECK(argument_of([&] {
          gels_batched(Exec(), Op::transpose, complex_a, complex_b, complex_info);
        }) == "op");
}

#if defined(BASALT_ENABLE_CUDA)
// The warp-segment CUDA kernel against the portable team kernel on the same batches, on the GPU:
// both accurate, and equal up to rounding (the same reflectors, summed in another order). Every
// segment width, square, tall and wide members, zero columns, fixed and variable batches, a
// batch that does not fill its last warp.
TEMPLATE_TEST_CASE("cuda::geqrf_batched equals portable::geqrf_batched", "[geqrf_batched][cuda]",
                   float, double, Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  std::vector<std::vector<HostMatrix<T>>> batches;
  for (const int n : {1, 2, 3, 4, 5, 8, 9, 12, 16, 17, 24, 31, 32}) {
    std::vector<HostMatrix<T>> batch;
    for (int b = 0; b < 37; ++b) batch.push_back(random_matrix<T>(n, n, b % 5 == 2));
    batches.push_back(batch);
  }
  std::vector<HostMatrix<T>> mixed;
  for (const auto [m, n] : std::vector<std::pair<int, int>>{
           {1, 1}, {32, 32}, {0, 5}, {7, 3}, {3, 7}, {17, 17}, {32, 20}, {20, 32}, {9, 1}})
    mixed.push_back(random_matrix<T>(m, n, mixed.size() % 3 == 1));
  batches.push_back(mixed);

  const Kokkos::Cuda exec;
  // Both factorizations of fast and reference, two copies of originals in one batch form, with
  // tau in the same form (fast_tau, reference_tau).
  const auto check_both = [&](const std::vector<HostMatrix<T>>& originals, const auto& fast,
                              const auto& reference, const auto& fast_tau,
                              const auto& reference_tau) {
    const auto a_fast = impl::matrices<Exec>(fast, "test", "A");
    const auto a_reference = impl::matrices<Exec>(reference, "test", "A");
    REQUIRE(cuda::geqrf_batched_fits(a_fast));
    cuda::geqrf_batched(exec, a_fast, impl::vectors<Exec>(fast_tau, "test", "tau"));
    portable::geqrf_batched(exec, a_reference, impl::vectors<Exec>(reference_tau, "test", "tau"),
                            impl::batch_launch<Exec>(a_reference));
    exec.fence();
    const auto qr = host_matrices(fast);
    const auto reference_qr = host_matrices(reference);
    const auto taus = host_matrices(fast_tau);
    const auto reference_taus = host_matrices(reference_tau);
    for (size_t b = 0; b < originals.size(); ++b) {
      CAPTURE(b);
      const auto [backward, loss] =
          qr_errors(originals[b], qr[b], Kokkos::subview(taus[b], Kokkos::ALL, 0));
      CHECK(backward < 30);
      CHECK(loss < 30);
      const int m = originals[b].extent(0), n = originals[b].extent(1);
      WideMatrix difference = widen(qr[b]);
      const WideMatrix r = widen(reference_qr[b]);
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) difference(i, j) -= r(i, j);
      CHECK(frobenius(difference) <= 64 * std::max(m, n) * eps<T>() * frobenius(r));
      for (int j = 0; j < std::min(m, n); ++j)
        CHECK(Kokkos::abs(Wide(taus[b](j, 0)) - Wide(reference_taus[b](j, 0))) <=
              tau_tolerance<T>(originals[b], r, j));
    }
  };
  for (size_t k = 0; k < batches.size(); ++k) {
    const auto& originals = batches[k];
    CAPTURE(k);
    const auto fast = variable_batch(originals);
    check_both(originals, fast, variable_batch(originals),
               make_variable_vectors<T>("tau", min_dimensions(fast)),
               make_variable_vectors<T>("tau", min_dimensions(fast)));
    // The uniform batches as fixed batches too: n = 4, 8, 12, 16, 24 and 32 take the kernels
    // built for full matrices of their size class.
    const int n = originals[0].extent(0), count = static_cast<int>(originals.size());
    if (k + 1 < batches.size())
      check_both(originals, device_batch(originals, n, n), device_batch(originals, n, n),
                 Kokkos::View<T**, Kokkos::LayoutRight>("tau", count, n),
                 Kokkos::View<T**, Kokkos::LayoutRight>("tau", count, n));
  }
}
#endif

#if defined(BASALT_ENABLE_CUDA)
namespace {

// What a test member holds: random, a zero column, columns graded over half the precision's
// exponent range (ill-conditioned), a column repeating column 0 (exactly rank deficient: the
// reflectors after it are rounding noise, so only accuracy is checked, not agreement), all zero.
enum class Kind { random, zero_column, graded, repeated_column, zero };

template <class T>
HostMatrix<T> member(int m, int n, Kind kind) {
  HostMatrix<T> a = random_matrix<T>(m, n, kind == Kind::zero_column);
  const int digits = std::numeric_limits<real_t<T>>::digits;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      if (kind == Kind::graded)
        a(i, j) *= real_t<T>(std::ldexp(1.0, -(digits / 2) * j / std::max(n - 1, 1)));
      if (kind == Kind::repeated_column && j == std::min(7, n - 1) && j > 0) a(i, j) = a(i, 0);
      if (kind == Kind::zero) a(i, j) = T(0);
    }
  return a;
}

template <class T>
struct Factored {
  std::vector<HostMatrix<T>> qr;
  std::vector<Kokkos::View<T*, Kokkos::HostSpace>> tau;
};

// geqrf_batched of the matrices as one batch, fixed (all of one shape) or variable, through the
// CUDA specialization (which must take it) or the portable team kernel.
template <class T>
Factored<T> factor(const std::vector<HostMatrix<T>>& originals, bool fixed, bool cuda_path) {
  const Kokkos::Cuda exec;
  const auto run = [&](const auto& A, const auto& tau) {
    const auto a = impl::matrices<Exec>(A, "test", "A");
    const auto t = impl::vectors<Exec>(tau, "test", "tau");
    if (cuda_path) {
      REQUIRE(cuda::geqrf_batched_fits(a));
      cuda::geqrf_batched(exec, a, t);
    } else {
      portable::geqrf_batched(exec, a, t, impl::batch_launch<Exec>(a));
    }
    exec.fence();
  };
  Factored<T> f;
  const auto keep_tau = [&](int k, auto&& at) {
    Kokkos::View<T*, Kokkos::HostSpace> t("tau", k);
    for (int j = 0; j < k; ++j) t(j) = at(j);
    f.tau.push_back(t);
  };
  if (fixed) {
    const int m = originals[0].extent(0), n = originals[0].extent(1);
    auto A = device_batch(originals, m, n);
    Kokkos::View<T**> tau("tau", originals.size(), std::min(m, n));
    run(A, tau);
    const auto qr = to_host(A);
    const auto taus = to_host(tau);
    for (size_t b = 0; b < originals.size(); ++b) {
      f.qr.push_back(host_matrix(qr, b));
      keep_tau(std::min(m, n), [&](int j) { return taus(b, j); });
    }
  } else {
    auto A = variable_batch(originals);
    auto tau = make_variable_vectors<T>("tau", min_dimensions(A));
    run(A, tau);
    f.qr = host_matrices(A);
    const auto taus = host_matrices(tau);
    for (size_t b = 0; b < originals.size(); ++b)
      keep_tau(taus[b].extent(0), [&](int j) { return taus[b](j, 0); });
  }
  return f;
}

// The CUDA path and the portable path on the same batch: the CUDA result accurate
// (||A - QR|| / (max(m, n) ||A|| eps) < 30, ||I - Q^H Q|| / (m eps) < 30) and equal to the
// portable one up to rounding (the same reflectors, summed in another order).
template <class T>
void check_against_portable(const std::vector<HostMatrix<T>>& originals,
                            const std::vector<Kind>& kinds, bool fixed) {
  const Factored<T> fast = factor(originals, fixed, true);
  const Factored<T> reference = factor(originals, fixed, false);
  for (size_t b = 0; b < originals.size(); ++b) {
    const int m = originals[b].extent(0), n = originals[b].extent(1);
    CAPTURE(b, m, n, static_cast<int>(kinds[b]));
    const auto [backward, loss] = qr_errors(originals[b], fast.qr[b], fast.tau[b]);
    CHECK(backward < 30);
    CHECK(loss < 30);
    if (kinds[b] == Kind::repeated_column) continue;
    const WideMatrix r = widen(reference.qr[b]);
    CHECK(frobenius(difference(widen(fast.qr[b]), r)) <=
          64 * std::max(m, n) * eps<T>() * frobenius(r));
    for (int j = 0; j < std::min(m, n); ++j)
      CHECK(Kokkos::abs(Wide(fast.tau[b](j)) - Wide(reference.tau[b](j))) <=
            tau_tolerance<T>(originals[b], r, j));
  }
}

}  // namespace

// The warp-segment CUDA kernel (largest dimension 1 to 32) against the portable team kernel:
// fixed batches of every segment width, square, tall and wide, each member kind, batches that
// do not fill their last warp; then one variable batch of sizes 0 to 32 mixed.
TEMPLATE_TEST_CASE("cuda::geqrf_batched up to 32 x 32 equals portable::geqrf_batched",
                   "[geqrf_batched][cuda]", float, double, Kokkos::complex<float>,
                   Kokkos::complex<double>) {
  using T = TestType;
  const std::vector<Kind> cycle = {Kind::random, Kind::zero_column, Kind::graded,
                                   Kind::repeated_column, Kind::zero};
  for (const auto [m, n] : std::vector<std::pair<int, int>>{
           {1, 1},  {3, 4},  {4, 3},   {4, 4},   {5, 5},   {8, 2},   {2, 8},
           {8, 8},  {9, 9},  {16, 5},  {5, 16},  {16, 16}, {17, 17}, {31, 31},
           {32, 7}, {7, 32}, {32, 17}, {17, 32}, {32, 1},  {1, 32},  {32, 32}}) {
    CAPTURE(m, n);
    std::vector<HostMatrix<T>> originals;
    std::vector<Kind> kinds;
    for (int k = 0; k < 11; ++k) {  // 11: no segment width divides it
      kinds.push_back(cycle[k % cycle.size()]);
      originals.push_back(member<T>(m, n, kinds.back()));
    }
    check_against_portable(originals, kinds, true);
  }
  const std::vector<std::pair<int, int>> shapes = {
      {32, 32}, {0, 3},  {3, 0},  {1, 1},   {6, 6},  {31, 32}, {32, 31}, {12, 25},
      {25, 12}, {2, 30}, {30, 2}, {16, 16}, {9, 17}, {17, 9},  {32, 20}, {20, 32}};
  std::vector<HostMatrix<T>> originals;
  std::vector<Kind> kinds;
  for (size_t k = 0; k < shapes.size(); ++k) {
    kinds.push_back(cycle[k % cycle.size()]);
    originals.push_back(member<T>(shapes[k].first, shapes[k].second, kinds.back()));
  }
  check_against_portable(originals, kinds, false);

  // A variable batch too large for two waves of its largest class, so that its warp classes are
  // not merged into one but launched apart, on the side streams (the batches above are merged).
  originals.clear();
  kinds.clear();
  const int count = 9000;
  const int resident = Kokkos::Cuda().cuda_device_prop().multiProcessorCount *
                       cuda::kernels::geqrf_batched_small_resident_matrices<cuda::scalar_t<T>>(32);
  REQUIRE(count > 2 * resident);
  for (int k = 0; k < count; ++k) {
    kinds.push_back(k % 7 == 3 ? cycle[k / 7 % cycle.size()] : Kind::random);
    originals.push_back(member<T>(1 + 7 * k % 32, 1 + 13 * k % 32, kinds.back()));
  }
  check_against_portable(originals, kinds, false);
}

// The CUDA kernels for a largest dimension of 33 to 512 (256 in complex double; up to 64 the
// column-pair kernel, but in complex double; above, the block-per-matrix kernel, from 257 rows in
// blocks of up to 512 threads) against the portable team kernel: square, tall and wide fixed
// batches of sizes around the pair kernel's classes (48, 64), the block kernel's panel width, its
// block sizes and the limit, and variable batches of sizes 0 to 256 and 0 to 512 mixed.
TEMPLATE_TEST_CASE("cuda::geqrf_batched over 32 x 32 equals portable::geqrf_batched",
                   "[geqrf_batched][cuda]", float, double, Kokkos::complex<float>,
                   Kokkos::complex<double>) {
  using T = TestType;
  const int limit = cuda::kernels::geqrf_batched_block_max_size<cuda::scalar_t<T>>;
  const std::vector<Kind> cycle = {Kind::random, Kind::zero_column, Kind::graded,
                                   Kind::repeated_column};
  for (const auto [m, n] : std::vector<std::pair<int, int>>{
           {33, 33},  {47, 47},   {48, 48},   {49, 49},   {63, 17},   {17, 63},   {64, 64},
           {65, 65},  {100, 100}, {128, 128}, {255, 255}, {256, 256}, {256, 40},  {200, 33},
           {100, 64}, {64, 40},   {40, 64},   {47, 1},    {40, 256},  {33, 100},  {64, 200},
           {1, 47},   {20, 256},  {257, 257}, {300, 300}, {384, 200}, {200, 384}, {511, 40},
           {40, 511}, {512, 1},   {512, 512}}) {
    if (std::max(m, n) > limit) continue;
    CAPTURE(m, n);
    std::vector<HostMatrix<T>> originals;
    for (const Kind kind : cycle) originals.push_back(member<T>(m, n, kind));
    check_against_portable(originals, cycle, true);
  }
  for (const std::vector<std::pair<int, int>>& shapes :
       {std::vector<std::pair<int, int>>{{1, 1},     {256, 256}, {0, 4},     {4, 0},   {33, 1},
                                         {1, 33},    {17, 250},  {250, 17},  {32, 32}, {33, 33},
                                         {129, 100}, {100, 129}, {5, 3},     {64, 64}, {255, 256},
                                         {2, 2},     {96, 96},   {150, 150}, {31, 70}, {70, 31}},
        std::vector<std::pair<int, int>>{{512, 512},
                                         {1, 1},
                                         {300, 257},
                                         {257, 300},
                                         {0, 4},
                                         {450, 450},
                                         {33, 33},
                                         {2, 2},
                                         {400, 20},
                                         {20, 400},
                                         {256, 256},
                                         {384, 384}}}) {
    int largest = 0;
    for (const auto [m, n] : shapes) largest = std::max({largest, m, n});
    if (largest > limit) continue;
    std::vector<HostMatrix<T>> originals;
    std::vector<Kind> kinds;
    for (size_t k = 0; k < shapes.size(); ++k) {
      kinds.push_back(k == 15 ? Kind::zero : cycle[k % cycle.size()]);
      originals.push_back(member<T>(shapes[k].first, shapes[k].second, kinds.back()));
    }
    check_against_portable(originals, kinds, false);
  }
}

// Entries whose squares overflow or underflow (the scaled norm's path), NaN passed through
// without hanging, in the three CUDA kernels, and the sizes past their limit left to the portable
// path.
TEMPLATE_TEST_CASE("cuda::geqrf_batched on extreme entries and past its limit",
                   "[geqrf_batched][cuda]", float, double) {
  using T = TestType;
  const int top = std::numeric_limits<T>::max_exponent;
  const std::vector<double> scales = {std::ldexp(1.0, top - 28), std::ldexp(1.0, -top + 24), 1.0,
                                      1.0};
  for (const auto [m, n] : std::vector<std::pair<int, int>>{
           {300, 60}, {70, 50}, {60, 45}, {40, 64}, {32, 20}, {20, 32}, {7, 5}}) {
    CAPTURE(m, n);
    std::vector<HostMatrix<T>> originals;
    for (const double scale : scales) {
      auto a = random_matrix<T>(m, n);
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) a(i, j) *= T(scale);
      originals.push_back(a);
    }
    originals[2](3, 3) = std::numeric_limits<T>::quiet_NaN();
    const Factored<T> fast = factor(originals, true, true);
    for (const int b : {0, 1, 3}) {
      CAPTURE(b);
      HostMatrix<T> original("A", m, n), factors("QR", m, n);
      Kokkos::deep_copy(original, originals[b]);
      Kokkos::deep_copy(factors, fast.qr[b]);
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
          original(i, j) /= T(scales[b]);  // powers of two: exact
          if (i <= j) factors(i, j) /= T(scales[b]);
        }
      const auto [backward, loss] = qr_errors(original, factors, fast.tau[b]);
      CHECK(backward < 30);
      CHECK(loss < 30);
    }
    CHECK(std::isnan(fast.qr[2](std::min(m, n) - 1, n - 1)));
  }

  // 513 rows or columns: not the CUDA kernel's; the public call still factors them.
  const std::vector<HostMatrix<T>> past = {random_matrix<T>(513, 513), random_matrix<T>(40, 513),
                                           random_matrix<T>(513, 3)};
  auto A = variable_batch(past);
  auto tau = make_variable_vectors<T>("tau", min_dimensions(A));
  CHECK_FALSE(cuda::geqrf_batched_fits(impl::matrices<Exec>(A, "test", "A")));
  geqrf_batched(Exec(), A, tau);
  const auto qr = host_matrices(A);
  const auto taus = host_matrices(tau);
  for (size_t b = 0; b < past.size(); ++b) {
    CAPTURE(b);
    const auto [backward, loss] =
        qr_errors(past[b], qr[b], Kokkos::subview(taus[b], Kokkos::ALL, 0));
    CHECK(backward < 30);
    CHECK(loss < 30);
  }
}
#endif

TEST_CASE("geqrf_batched reaches every member of 2^29 + 4096 matrices", "[.huge][geqrf_batched]") {
  const auto alone = batch_of_one_matrix(1, true);
  const auto A = batch_of_one_matrix(huge_batch, true);
  Kokkos::View<float**> alone_tau("tau", 1, 4), tau("tau", huge_batch, 4);
  geqrf_batched(Exec(), alone, alone_tau);
  geqrf_batched(Exec(), A, tau);
  const auto differs = KOKKOS_LAMBDA(const long b) {
    bool unlike_alone = false;
    for (int j = 0; j < 4; ++j) {
      unlike_alone = unlike_alone || unlike(tau(b, j), alone_tau(0, j));
      for (int i = 0; i < 4; ++i) unlike_alone = unlike_alone || unlike(A(b, i, j), alone(0, i, j));
    }
    return unlike_alone;
  };
  CHECK(members_that_differ(huge_batch, differs) == 0);
}
