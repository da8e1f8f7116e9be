// The drivers' gemm, trsm and herk (algorithms/dense/impl/blas.hpp): on CUDA, cuBLAS on the
// caller's stream compared with Kokkos Kernels, and Basalt's small unit lower solve with cuBLAS,
// on the same input; a backend's herk (cuBLAS, the host BLAS) against the portable one; on every
// backend, against a plain loop.
#include "basalt/algorithms/dense/impl/blas.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "basalt/core/views.hpp"
#include "support.hpp"

using namespace basalt;
using test::Exec;

namespace {

template <class T>
using HostMatrix = Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::HostSpace>;

template <class T>
HostMatrix<T> random_matrix(int m, int n) {
  HostMatrix<T> a("a", m, n);
  test::fill_random(a);
  return a;
}

template <class T>
T entry(const HostMatrix<T>& a, Op op, int i, int j) {
  if (op == Op::none) return a(i, j);
  if (op == Op::transpose) return a(j, i);
  if constexpr (std::is_floating_point_v<T>)
    return a(j, i);
  else
    return Kokkos::conj(a(j, i));
}

template <class T>
double max_difference(const HostMatrix<T>& a, const HostMatrix<T>& b) {
  double worst = 0;
  for (size_t j = 0; j < a.extent(1); ++j)
    for (size_t i = 0; i < a.extent(0); ++i)
      worst = std::max(worst, double(magnitude(a(i, j) - b(i, j))));
  return worst;
}

// A sub-view with a column stride larger than its row count, as the drivers pass, in Memory.
template <class T, class Memory = Exec::memory_space>
auto padded_device_copy(const HostMatrix<T>& host) {
  Kokkos::View<T**, Kokkos::LayoutLeft, Memory> storage("storage", host.extent(0) + 5,
                                                        host.extent(1));
  auto inner = Kokkos::subview(storage, std::make_pair(size_t(2), 2 + host.extent(0)), Kokkos::ALL);
  Kokkos::deep_copy(inner, Kokkos::create_mirror_view_and_copy(Memory(), host));
  return inner;
}

template <class View>
auto to_host(const View& v) {
  using T = typename View::non_const_value_type;
  // A strided device View is copied to the host through a contiguous one in its own space.
  Kokkos::View<T**, Kokkos::LayoutLeft, typename View::memory_space> contiguous(
      "contiguous", v.extent(0), v.extent(1));
  Kokkos::deep_copy(contiguous, v);
  HostMatrix<T> host("host", v.extent(0), v.extent(1));
  Kokkos::deep_copy(host, contiguous);
  return host;
}

}  // namespace

TEMPLATE_TEST_CASE("gemm computes alpha op(A) op(B) + beta C", "[blas]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  const int m = 37, n = 29, k = 41;
  const double eps = std::numeric_limits<real_t<T>>::epsilon();
  for (Op op_a : {Op::none, Op::transpose, Op::conj_transpose})
    for (Op op_b : {Op::none, Op::conj_transpose}) {
      CAPTURE(static_cast<int>(op_a), static_cast<int>(op_b));
      const auto a = op_a == Op::none ? random_matrix<T>(m, k) : random_matrix<T>(k, m);
      const auto b = op_b == Op::none ? random_matrix<T>(k, n) : random_matrix<T>(n, k);
      const auto c = random_matrix<T>(m, n);
      const T alpha(-1.5), beta(0.5);
      auto C = padded_device_copy(c);
      impl::gemm(Exec(), op_a, op_b, alpha, padded_device_copy(a), padded_device_copy(b), beta, C);
      Exec().fence();
      HostMatrix<T> expected("expected", m, n);
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
          T s(0);
          for (int l = 0; l < k; ++l) s += entry(a, op_a, i, l) * entry(b, op_b, l, j);
          expected(i, j) = alpha * s + beta * c(i, j);
        }
      CHECK(max_difference(to_host(C), expected) < 10 * k * eps);
    }
}

// Triangles of 1 to 300: on a GPU the widest splits twice (tuning::trsm_leaf_width), and unit
// lower ones up to 128 rows take Basalt's own kernel (eight columns of B a block, so the second
// block is half empty).
TEMPLATE_TEST_CASE("trsm_left solves op(A) X = alpha B", "[blas]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  const int n = 12;
  const double eps = std::numeric_limits<real_t<T>>::epsilon();
  for (const int m : {1, 33, 100, 128, 300})
    for (bool lower : {true, false})
      for (bool unit : {true, false})
        for (Op op : {Op::none, Op::transpose, Op::conj_transpose}) {
          CAPTURE(m, lower, unit, static_cast<int>(op));
          // Well conditioned, with a unit diagonal too: off-diagonal entries below 1/m. The other
          // triangle holds entries trsm must ignore.
          auto a = random_matrix<T>(m, m);
          for (int j = 0; j < m; ++j)
            for (int i = 0; i < m; ++i) a(i, j) = i == j ? a(i, j) + T(2) : a(i, j) / T(m);
          const auto x = random_matrix<T>(m, n);
          HostMatrix<T> b("b", m, n);  // b = op(tri(A)) x / alpha
          const T alpha(2);
          for (int j = 0; j < n; ++j)
            for (int i = 0; i < m; ++i) {
              T s(0);
              for (int l = 0; l < m; ++l) {
                const int r = op == Op::none ? i : l, c = op == Op::none ? l : i;
                const bool inside = lower ? r >= c : r <= c;
                if (!inside) continue;
                const T t = r == c && unit ? T(1) : entry(a, op, i, l);
                s += t * x(l, j);
              }
              b(i, j) = s / alpha;
            }
          auto B = padded_device_copy(b);
          impl::trsm_left(Exec(), lower, op, unit, alpha, padded_device_copy(a), B);
          Exec().fence();
          CHECK(max_difference(to_host(B), x) < 100 * m * eps);
        }
}

TEMPLATE_TEST_CASE("trsm from the right solves X op(A) = alpha B", "[blas]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  const int m = 12;
  const double eps = std::numeric_limits<real_t<T>>::epsilon();
  for (const int n : {33, 300})
    for (bool lower : {true, false})
      for (Op op : {Op::none, Op::transpose, Op::conj_transpose}) {
        CAPTURE(n, lower, static_cast<int>(op));
        auto a = random_matrix<T>(n, n);  // well conditioned, the other triangle to be ignored
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < n; ++i) a(i, j) = i == j ? a(i, j) + T(2) : a(i, j) / T(n);
        const auto x = random_matrix<T>(m, n);
        HostMatrix<T> b("b", m, n);  // b = x op(tri(A)) / alpha
        const T alpha(2);
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < m; ++i) {
            T s(0);
            for (int l = 0; l < n; ++l) {
              const int r = op == Op::none ? l : j, c = op == Op::none ? j : l;
              if (lower ? r >= c : r <= c) s += x(i, l) * entry(a, op, l, j);
            }
            b(i, j) = s / alpha;
          }
        auto B = padded_device_copy(b);
        impl::trsm(Exec(), ApplySide::right, lower, op, false, alpha, padded_device_copy(a), B);
        Exec().fence();
        CHECK(max_difference(to_host(B), x) < 100 * n * eps);
      }
}

template <class T>
T conj_of(const T& x) {
  if constexpr (std::is_floating_point_v<T>)
    return x;
  else
    return Kokkos::conj(x);
}

// C = alpha op(A) op(A)^H + beta C on one triangle, by a plain loop; the other triangle kept.
template <class T>
HostMatrix<T> herk_by_loop(bool lower, Op op, real_t<T> alpha, const HostMatrix<T>& a,
                           real_t<T> beta, const HostMatrix<T>& c) {
  const int n = c.extent(0), k = op == Op::none ? a.extent(1) : a.extent(0);
  HostMatrix<T> expected("expected", n, n);
  Kokkos::deep_copy(expected, c);
  for (int j = 0; j < n; ++j)
    for (int i = lower ? j : 0; i < (lower ? n : j + 1); ++i) {
      T s(0);
      for (int l = 0; l < k; ++l) s += entry(a, op, i, l) * conj_of(entry(a, op, j, l));
      expected(i, j) = T(alpha) * s + T(beta) * c(i, j);
      if (i == j) expected(i, j) = T(real_part(expected(i, j)));
    }
  return expected;
}

// herk split at a leaf of 64 columns, on both sides of it and of its halvings (the backend's
// leaf herk where there is one, else the portable one), and herk itself at its own leaf width.
TEMPLATE_TEST_CASE("herk updates one triangle of C by alpha op(A) op(A)^H + beta C", "[blas]",
                   float, double, Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  using Real = real_t<T>;
  const double eps = std::numeric_limits<Real>::epsilon();
  const int k = 19, leaf = 64;
  for (const int n : {1, 37, leaf, leaf + 1, 2 * leaf + 3, 300})
    for (bool lower : {true, false})
      for (Op op : {Op::none, Op::conj_transpose}) {
        CAPTURE(n, lower, static_cast<int>(op));
        const auto a = op == Op::none ? random_matrix<T>(n, k) : random_matrix<T>(k, n);
        const auto c = random_matrix<T>(n, n);
        auto C = padded_device_copy(c);
        if (n == 300)
          impl::herk(Exec(), lower, op, Real(-1.5), padded_device_copy(a), Real(0.5), C);
        else
          impl::detail::herk_with_leaf(Exec(), lower, op, Real(-1.5), padded_device_copy(a),
                                       Real(0.5), C, leaf);
        Exec().fence();
        // The other triangle comes back as it was, the diagonal real.
        CHECK(max_difference(to_host(C), herk_by_loop<T>(lower, op, -1.5, a, 0.5, c)) <
              10 * k * eps);
      }
}

// A backend's herk (Specialization<routine::herk, Space>) against the portable one on the same
// input, in the backend's memory.
template <class T, class Space>
void check_backend_herk(const Space& exec) {
  using Real = real_t<T>;
  using Memory = typename Space::memory_space;
  const double eps = std::numeric_limits<Real>::epsilon();
  const int n = 300, k = 70;
  for (bool lower : {true, false})
    for (Op op : {Op::none, Op::conj_transpose}) {
      CAPTURE(lower, static_cast<int>(op));
      const auto a = op == Op::none ? random_matrix<T>(n, k) : random_matrix<T>(k, n);
      const auto c = random_matrix<T>(n, n);
      auto fast = padded_device_copy<T, Memory>(c), reference = padded_device_copy<T, Memory>(c);
      const auto A = padded_device_copy<T, Memory>(a);
      Specialization<routine::herk, Space>::apply(exec, lower, op, Real(-1), A, Real(1), fast);
      impl::detail::portable_herk(exec, lower, op, Real(-1), A, Real(1), reference,
                                  tuning::portable_herk_leaf_width);
      exec.fence();
      CHECK(max_difference(to_host(fast), to_host(reference)) < 10 * k * eps);
    }
}

#if defined(KOKKOSKERNELS_ENABLE_TPL_BLAS)
TEMPLATE_TEST_CASE("The host BLAS herk equals the portable herk", "[blas]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  check_backend_herk<TestType>(Kokkos::DefaultHostExecutionSpace());
}
#endif

#if defined(BASALT_ENABLE_CUDA)
TEMPLATE_TEST_CASE("cuBLAS herk equals the portable herk", "[blas][cuda]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  check_backend_herk<TestType>(Kokkos::Cuda());
}

// Basalt's kernel for unit lower triangles up to 128 rows against cuBLAS' trsm (which it
// replaces) on the same input, across its tile edges; a NaN in one column of B stays there.
TEMPLATE_TEST_CASE("The CUDA unit lower solve equals cuBLAS' trsm", "[blas][cuda]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  const double eps = std::numeric_limits<real_t<T>>::epsilon();
  const Kokkos::Cuda exec;
  for (const int m : {1, 2, 31, 32, 33, 64, 97, 127, 128})
    for (const int n : {1, 9, 300}) {
      CAPTURE(m, n);
      auto a = random_matrix<T>(m, m);
      for (int j = 0; j < m; ++j)
        for (int i = 0; i < m; ++i) a(i, j) = a(i, j) / T(m);
      auto b = random_matrix<T>(m, n);
      const int poisoned = n / 2;
      b(m / 2, poisoned) = std::numeric_limits<real_t<T>>::quiet_NaN();
      const T alpha(-1.5);
      const auto A = padded_device_copy(a);
      auto fast = padded_device_copy(b), reference = padded_device_copy(b);
      Specialization<routine::trsm, Kokkos::Cuda>::apply(exec, ApplySide::left, true, Op::none,
                                                         true, alpha, A, fast);
      exec.fence();
      cublas::trsm(exec, ApplySide::left, true, Op::none, true, alpha, A, reference);
      exec.fence();
      const auto x = to_host(fast), y = to_host(reference);
      double worst = 0;
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
          // Rows above the NaN keep their values; from its row down the column is NaN.
          if (j == poisoned && i >= m / 2) {
            CHECK(std::isnan(double(real_part(x(i, j)))));
            continue;
          }
          worst = std::max(worst, double(magnitude(x(i, j) - y(i, j))));
        }
      CHECK(worst < 10 * m * eps);
    }
}
#endif

TEMPLATE_TEST_CASE("trmm computes alpha op(A) B and alpha B op(A)", "[blas]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  const int m = 23, n = 17;
  const double eps = std::numeric_limits<real_t<T>>::epsilon();
  for (ApplySide side : {ApplySide::left, ApplySide::right})
    for (bool lower : {true, false})
      for (bool unit : {true, false})
        for (Op op : {Op::none, Op::transpose, Op::conj_transpose}) {
          CAPTURE(static_cast<int>(side), lower, unit, static_cast<int>(op));
          const bool left = side == ApplySide::left;
          const int order = left ? m : n;
          // The other triangle and, for unit, the diagonal hold entries trmm must ignore.
          const auto a = random_matrix<T>(order, order);
          const auto b = random_matrix<T>(m, n);
          const T alpha(-0.75);
          auto triangle = [&](int i, int l) {  // op(tri(A))(i, l)
            const int r = op == Op::none ? i : l, c = op == Op::none ? l : i;
            if (lower ? r < c : r > c) return T(0);
            return r == c && unit ? T(1) : entry(a, op, i, l);
          };
          HostMatrix<T> expected("expected", m, n);
          for (int j = 0; j < n; ++j)
            for (int i = 0; i < m; ++i) {
              T s(0);
              for (int l = 0; l < order; ++l)
                s += left ? triangle(i, l) * b(l, j) : b(i, l) * triangle(l, j);
              expected(i, j) = alpha * s;
            }
          auto B = padded_device_copy(b);
          impl::trmm(Exec(), side, lower, op, unit, alpha, padded_device_copy(a), B);
          Exec().fence();
          CHECK(max_difference(to_host(B), expected) < 10 * order * eps);
        }
}
