// Dense QR (geqrf, orgqr, ormqr, gels) against LAPACKE and against explicit products, computed on
// the host in complex<double>. Shapes cross every switch of the host tuning (tuning::qr: blocks
// of 64 columns, recursive panels and T down to 8): 1, 2, 7, 8, 9, 63, 64, 65, 129 columns,
// tall-skinny and wide shapes, zero sizes, padded sub-views; geqr2's paths (one team, the
// backend's panel kernel or a kernel per step) through the driver with a tuning that switches
// between them inside a factorization. On CUDA, the fused panel kernel beside the portable geqr2.
#include "basalt/algorithms/dense/geqrf.hpp"

#include <catch2/catch.hpp>
#include <climits>
#include <cmath>
#include <limits>

#include "basalt/algorithms/dense/gels.hpp"
#include "basalt/algorithms/dense/orgqr.hpp"
#include "basalt/algorithms/dense/ormqr.hpp"
#include "basalt/backends/host/lapacke.hpp"
#include "batched/batch_support.hpp"

using namespace basalt;
using namespace basalt::test;

namespace {

template <class T>
using HostVector = Kokkos::View<T*, Kokkos::HostSpace>;
template <class T>
using DeviceMatrix = Kokkos::View<T**, Kokkos::LayoutLeft, Exec::memory_space>;

// dst = src, both on the device, any strides.
template <class Dst, class Src>
void copy_into(const Dst& dst, const Src& src) {
  Kokkos::parallel_for(
      Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2>>(
          {0, 0}, {static_cast<long>(src.extent(0)), static_cast<long>(src.extent(1))}),
      KOKKOS_LAMBDA(const int i, const int j) { dst(i, j) = src(i, j); });
  Kokkos::fence();
}

// A device copy of host, inside a larger matrix when padded: a sub-view whose column stride
// exceeds its row count and whose first entry is not the allocation's.
template <class T>
auto device_matrix(const HostMatrix<T>& host, bool padded) {
  const int m = host.extent(0), n = host.extent(1), pad = padded ? 3 : 0;
  DeviceMatrix<T> storage("storage", m + pad, n + (padded ? 1 : 0));
  auto inner = Kokkos::subview(storage, std::make_pair(pad / 2, pad / 2 + m),
                               std::make_pair(padded ? 1 : 0, (padded ? 1 : 0) + n));
  DeviceMatrix<T> contiguous("contiguous", m, n);
  Kokkos::deep_copy(contiguous, host);
  copy_into(inner, contiguous);
  return inner;
}

template <class View>
HostMatrix<typename View::non_const_value_type> host_copy(const View& v) {
  DeviceMatrix<typename View::non_const_value_type> contiguous("contiguous", v.extent(0),
                                                               v.extent(1));
  copy_into(contiguous, v);
  HostMatrix<typename View::non_const_value_type> host("host", v.extent(0), v.extent(1));
  Kokkos::deep_copy(host, contiguous);
  return host;
}

template <class T>
HostMatrix<T> copy(const HostMatrix<T>& a) {
  HostMatrix<T> c("copy", a.extent(0), a.extent(1));
  Kokkos::deep_copy(c, a);
  return c;
}

enum class Kind { random, zero_column, graded };

// Random; with column min(3, n - 1) zero; or with columns graded over six orders of magnitude.
template <class T>
HostMatrix<T> test_matrix(int m, int n, Kind kind) {
  HostMatrix<T> a = random_matrix<T>(m, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      if (kind == Kind::zero_column && j == std::min(3, n - 1)) a(i, j) = T(0);
      if (kind == Kind::graded) a(i, j) *= T(std::pow(10.0, -6.0 * j / std::max(1, n - 1)));
    }
  return a;
}

// Q's first `cols` columns (k <= cols <= m) from the k reflectors of factors and tau, by
// LAPACKE's orgqr: the reference.
template <class T>
HostMatrix<T> lapack_q(const HostMatrix<T>& factors, const HostVector<T>& tau, int cols) {
  const int m = factors.extent(0), k = tau.extent(0);
  HostMatrix<T> q("Q", m, cols);
  for (int j = 0; j < k; ++j)
    for (int i = 0; i < m; ++i) q(i, j) = factors(i, j);
  lapacke::orgqr(q, tau);
  return q;
}

template <class T>
WideMatrix upper(const HostMatrix<T>& factors, int rows) {
  WideMatrix r("R", rows, factors.extent(1));
  for (size_t j = 0; j < factors.extent(1); ++j)
    for (int i = 0; i <= std::min<int>(j, rows - 1); ++i) r(i, j) = Wide(factors(i, j));
  return r;
}

inline WideMatrix difference(const WideMatrix& a, const WideMatrix& b) {
  WideMatrix d("D", a.extent(0), a.extent(1));
  for (size_t j = 0; j < a.extent(1); ++j)
    for (size_t i = 0; i < a.extent(0); ++i) d(i, j) = a(i, j) - b(i, j);
  return d;
}

inline WideMatrix adjoint(const WideMatrix& a) {
  WideMatrix h("H", a.extent(1), a.extent(0));
  for (size_t j = 0; j < a.extent(1); ++j)
    for (size_t i = 0; i < a.extent(0); ++i) h(j, i) = Kokkos::conj(a(i, j));
  return h;
}

inline WideMatrix rows_of(const WideMatrix& a, int rows) {
  WideMatrix r("rows", rows, a.extent(1));
  for (size_t j = 0; j < a.extent(1); ++j)
    for (int i = 0; i < rows; ++i) r(i, j) = a(i, j);
  return r;
}

// ||I - Q^H Q||_F / (m eps)
template <class T>
double orthogonality(const HostMatrix<T>& q) {
  WideMatrix e = product(widen(q), true, widen(q));
  for (size_t i = 0; i < e.extent(0); ++i) e(i, i) -= 1;
  return q.extent(0) == 0 ? 0 : frobenius(e) / (q.extent(0) * eps<T>());
}

template <class T>
HostVector<T> to_host_vector(const Kokkos::View<T*, Exec::memory_space>& v, int length) {
  HostVector<T> h("tau", length);
  Kokkos::deep_copy(h, Kokkos::subview(v, std::make_pair(0, length)));
  return h;
}

struct Shape {
  int m, n;
};

// Every element as it was, NaN where it was NaN.
template <class T>
bool unchanged(const HostMatrix<T>& after, const HostMatrix<T>& before) {
  for (size_t j = 0; j < before.extent(1); ++j)
    for (size_t i = 0; i < before.extent(0); ++i) {
      const T x = after(i, j), y = before(i, j);
      if (!(x == y) && !(x != x && y != y)) return false;
    }
  return true;
}

const std::vector<Shape> qr_shapes = {{1, 1},    {2, 2},   {2, 1},    {1, 5},     {5, 1},
                                      {7, 7},    {8, 8},   {9, 9},    {17, 16},   {33, 20},
                                      {63, 63},  {64, 64}, {65, 65},  {129, 129}, {500, 9},
                                      {300, 70}, {20, 90}, {70, 200}, {4130, 40}, {5000, 9}};

// Runs factor(A, tau) on a device copy of a (m x n) and checks A = QR with LAPACK's orgqr on the
// result, orthogonality, tau = 0 for the zero column, and our orgqr beside LAPACK's.
template <class T, class Factor>
void check_geqrf(const HostMatrix<T>& a, Kind kind, bool padded, const Factor& factor) {
  const int m = a.extent(0), n = a.extent(1), k = std::min(m, n);
  auto A = device_matrix(a, padded);
  Kokkos::View<T*, Exec::memory_space> tau("tau", k + 2);
  factor(A, tau);
  const auto factors = host_copy(A);
  const auto t = to_host_vector(tau, k);
  // LAPACK's orgqr on our reflectors: the storage is LAPACK's.
  const auto q = lapack_q(factors, t, k);
  CHECK(relative(difference(widen(a), product(widen(q), false, upper(factors, k))), widen(a),
                 std::max(m, n), eps<T>()) < 30);
  CHECK(orthogonality(q) < 30);
  if (kind == Kind::zero_column && std::min(3, n - 1) < k) CHECK(t(std::min(3, n - 1)) == T(0));
  // Our orgqr on our reflectors, beside LAPACK's.
  HostMatrix<T> reflectors("reflectors", m, k);
  Kokkos::deep_copy(reflectors, Kokkos::subview(factors, Kokkos::ALL, std::make_pair(0, k)));
  auto Q = device_matrix(reflectors, !padded);
  orgqr(Exec(), Q, Kokkos::subview(tau, std::make_pair(0, k)));
  const auto ours = host_copy(Q);
  CHECK(orthogonality(ours) < 30);
  CHECK(relative(difference(widen(ours), widen(q)), widen(q), m, eps<T>()) < 30);
}

}  // namespace

TEMPLATE_TEST_CASE("geqrf: A = QR with LAPACK's storage", "[geqrf]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  int index = 0;
  for (const auto [m, n] : qr_shapes)
    for (Kind kind : {Kind::random, Kind::zero_column, Kind::graded}) {
      const bool padded = ++index % 2 == 0;
      CAPTURE(m, n, static_cast<int>(kind), padded);
      check_geqrf(test_matrix<T>(m, n, kind), kind, padded,
                  [](const auto& A, const auto& tau) { geqrf(Exec(), A, tau); });
    }
}

// Cholesky QR with Householder reconstruction (qr_tall_skinny.hpp), called directly so that a
// silent fallback cannot pass for it: taken on well-conditioned matrices, where its result is
// LAPACK's geqrf up to rounding; on columns graded over six orders of magnitude in double
// (kappa_1(R1) near 1e6, so R1^-1 is applied by trsm); on matrices whose top block is already
// upper triangular. Refused, with A and tau untouched, for a zero column, two equal columns, NaN
// and Inf.
TEMPLATE_TEST_CASE("geqrf on tall-skinny matrices by Cholesky QR", "[geqrf]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  constexpr bool single = std::is_same_v<real_t<T>, float>;
  enum class Input { random, graded, triangular_top, zero_column, equal_columns, nan, inf };
  int index = 0;
  for (const auto [m, n] : std::vector<Shape>{{2000, 32}, {640, 40}, {3001, 64}, {700, 1}})
    for (Input input : {Input::random, Input::graded, Input::triangular_top, Input::zero_column,
                        Input::equal_columns, Input::nan, Input::inf}) {
      if (n < 2 && input == Input::equal_columns) continue;
      const bool padded = ++index % 2 == 0;
      CAPTURE(m, n, static_cast<int>(input), padded);
      auto a = test_matrix<T>(m, n, input == Input::graded ? Kind::graded : Kind::random);
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
          if (input == Input::triangular_top && i < n && i > j) a(i, j) = T(0);
          if (input == Input::zero_column && j == n / 2) a(i, j) = T(0);
          if (input == Input::equal_columns && j == n - 1) a(i, j) = a(i, 0);
        }
      if (input == Input::nan) a(m / 3, n / 2) = T(std::numeric_limits<real_t<T>>::quiet_NaN());
      if (input == Input::inf) a(m / 3, n / 2) = T(std::numeric_limits<real_t<T>>::infinity());
      auto A = device_matrix(a, padded);
      Kokkos::View<T*, Exec::memory_space> tau("tau", n);
      const bool taken = impl::geqrf_tall_skinny(Exec(), A, tau);
      const bool refused = input == Input::zero_column || input == Input::equal_columns ||
                           input == Input::nan || input == Input::inf;
      if (refused || (single && input == Input::graded)) {
        CHECK(taken != refused);  // a graded single-precision matrix may go either way
        if (!taken) {
          CHECK(unchanged(host_copy(A), a));
          const auto t = to_host_vector(tau, n);
          for (int j = 0; j < n; ++j) CHECK(t(j) == T(0));
          continue;
        }
      }
      REQUIRE(taken);
      const auto factors = host_copy(A);
      const auto t = to_host_vector(tau, n);
      const auto q = lapack_q(factors, t, n);
      CHECK(relative(difference(widen(a), product(widen(q), false, upper(factors, n))), widen(a), m,
                     eps<T>()) < 30);
      CHECK(orthogonality(q) < 30);
      // LAPACK's own factors and tau.
      auto lapack = copy(a);
      HostVector<T> lapack_tau("tau", n);
      lapacke::geqrf(lapack, lapack_tau);
      CHECK(relative(difference(widen(factors), widen(lapack)), widen(lapack), m, eps<T>()) < 30);
      HostMatrix<T> ours_tau("tau", n, 1), their_tau("tau", n, 1);
      for (int j = 0; j < n; ++j) {
        ours_tau(j, 0) = t(j);
        their_tau(j, 0) = lapack_tau(j);
      }
      CHECK(relative(difference(widen(ours_tau), widen(their_tau)), widen(their_tau), m, eps<T>()) <
            30);
    }
}

// The panel's geqr2 paths, whichever the backend's tuning prefers: one team up to 100 rows, the
// backend's panel kernel (CUDA's fused kernel) or a kernel per step above, within one
// factorization.
TEMPLATE_TEST_CASE("geqrf with either geqr2", "[geqrf]", float, double, Kokkos::complex<float>,
                   Kokkos::complex<double>) {
  using T = TestType;
  for (const int team_rows : {0, 100, 1 << 30})
    for (const auto [m, n] :
         std::vector<Shape>{{1, 1}, {9, 9}, {130, 40}, {300, 70}, {500, 9}, {129, 129}, {40, 150}})
      for (Kind kind : {Kind::random, Kind::zero_column}) {
        CAPTURE(team_rows, m, n, static_cast<int>(kind));
        const tuning::Qr tune{64, 64, 8, team_rows};
        check_geqrf(test_matrix<T>(m, n, kind), kind, m % 2 == 0,
                    [&](const auto& A, const auto& tau) { impl::geqrf(Exec(), A, tau, tune); });
      }
}

// Look-ahead over many blocks (48 columns, leaves of 16): each next panel is factored on the side
// instance (on CUDA, its own stream) with the second workspace while exec applies the block's
// Q^H to the rest of the trailing matrix.
TEMPLATE_TEST_CASE("geqrf with look-ahead over many blocks", "[geqrf]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  const tuning::Qr tune{48, 48, 16, 100};
  int index = 0;
  for (const auto [m, n] : std::vector<Shape>{{300, 250}, {250, 300}, {400, 100}})
    for (Kind kind : {Kind::random, Kind::graded}) {
      const bool padded = ++index % 2 == 0;
      CAPTURE(m, n, static_cast<int>(kind), padded);
      check_geqrf(test_matrix<T>(m, n, kind), kind, padded,
                  [&](const auto& A, const auto& tau) { impl::geqrf(Exec(), A, tau, tune); });
    }
}

// The GPU's tuning on this backend: geqrf's 128-column blocks, panels halved down to 16 columns
// where no backend kernel takes them whole, ormqr's and orgqr's 256-column blocks, T joined over
// blocks of up to 128 reflectors; widths not powers of two split unevenly.
TEMPLATE_TEST_CASE("QR routines with the GPU's tuning", "[geqrf][ormqr][orgqr]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  const tuning::Qr tune{128, 256, 16, 256};
  int index = 0;
  for (const auto [m, n] : std::vector<Shape>{{300, 300}, {520, 257}, {200, 330}})
    for (Kind kind : {Kind::random, Kind::zero_column, Kind::graded}) {
      const bool padded = ++index % 2 == 0;
      CAPTURE(m, n, static_cast<int>(kind), padded);
      check_geqrf(test_matrix<T>(m, n, kind), kind, padded,
                  [&](const auto& A, const auto& tau) { impl::geqrf(Exec(), A, tau, tune); });
    }
  for (const auto [m, k] : std::vector<Shape>{{300, 300}, {520, 257}, {400, 100}}) {
    CAPTURE(m, k);
    auto factors = test_matrix<T>(m, k, Kind::random);
    HostVector<T> t("tau", k);
    lapacke::geqrf(factors, t);
    const auto tau = device_copy(t);
    auto Q = device_matrix(factors, true);
    impl::orgqr(Exec(), Q, tau, tune);
    const auto q = lapack_q(factors, t, k);
    CHECK(relative(difference(widen(host_copy(Q)), widen(q)), widen(q), m, eps<T>()) < 30);
    for (ApplySide side : {ApplySide::left, ApplySide::right})
      for (Op op : {Op::none, Op::conj_transpose}) {
        CAPTURE(static_cast<int>(side), static_cast<int>(op));
        const bool left = side == ApplySide::left;
        const auto c = left ? random_matrix<T>(m, 7) : random_matrix<T>(7, m);
        auto C = device_matrix(c, false), reference = device_matrix(c, true);
        const auto A = device_matrix(factors, false);
        impl::ormqr(Exec(), side, op, A, tau, C, tune);
        ormqr(Exec(), side, op, A, tau, reference);
        const WideMatrix expected = widen(host_copy(reference));
        CHECK(relative(difference(widen(host_copy(C)), expected), expected, m, eps<T>()) < 30);
      }
  }
}

TEMPLATE_TEST_CASE("orgqr on LAPACK's geqrf output", "[geqrf][orgqr]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  for (const auto [m, n] : qr_shapes) {
    if (m < n) continue;
    CAPTURE(m, n);
    const auto a = test_matrix<T>(m, n, Kind::random);
    auto factors = copy(a);
    HostVector<T> t("tau", n);
    lapacke::geqrf(factors, t);
    // Fewer reflectors than columns too: Q(:, 0:n) of the first k.
    for (int k : {n, n / 2}) {
      CAPTURE(k);
      auto Q = device_matrix(factors, k != n);
      orgqr(Exec(), Q, device_copy(Kokkos::subview(t, std::make_pair(0, k))));
      const auto ours = host_copy(Q);
      CHECK(orthogonality(ours) < 30);
      HostVector<T> tk("tau", k);
      Kokkos::deep_copy(tk, Kokkos::subview(t, std::make_pair(0, k)));
      CHECK(relative(difference(widen(ours), widen(lapack_q(factors, tk, n))), widen(ours), m,
                     eps<T>()) < 30);
      if (k == n)
        CHECK(relative(difference(widen(a), product(widen(ours), false, upper(factors, n))),
                       widen(a), m, eps<T>()) < 30);
    }
  }
}

TEMPLATE_TEST_CASE("ormqr against Q formed explicitly, every side and op", "[geqrf][ormqr]", float,
                   double, Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  const int others = 13;
  std::vector<Op> ops = {Op::none, Op::conj_transpose};
  if (std::is_floating_point_v<T>) ops.push_back(Op::transpose);
  int index = 0;
  for (const auto [m, n] :
       std::vector<Shape>{{1, 1}, {9, 9}, {40, 7}, {70, 70}, {150, 65}, {30, 100}, {129, 129}})
    for (int fewer : {0, 3}) {
      const int k = std::max(0, std::min(m, n) - fewer);
      // With fewer reflectors, a zero column: its reflector is H = I (tau = 0).
      auto factors = test_matrix<T>(m, n, fewer == 0 ? Kind::random : Kind::zero_column);
      HostVector<T> all("tau", std::min(m, n));
      lapacke::geqrf(factors, all);
      HostVector<T> t("tau", k);
      Kokkos::deep_copy(t, Kokkos::subview(all, std::make_pair(0, k)));
      const WideMatrix q = widen(lapack_q(factors, t, m));  // m x m
      for (ApplySide side : {ApplySide::left, ApplySide::right})
        for (Op op : ops) {
          const bool padded = ++index % 2 == 0;
          CAPTURE(m, n, k, static_cast<int>(side), static_cast<int>(op), padded);
          const bool left = side == ApplySide::left;
          const auto c = left ? random_matrix<T>(m, others) : random_matrix<T>(others, m);
          auto C = device_matrix(c, padded);
          ormqr(Exec(), side, op, device_matrix(factors, !padded), device_copy(t), C);
          const WideMatrix op_q = op == Op::none ? q : adjoint(q);
          const WideMatrix expected =
              left ? product(op_q, false, widen(c)) : product(widen(c), false, op_q);
          CHECK(relative(difference(widen(host_copy(C)), expected), expected, m, eps<T>()) < 30);
        }
    }
}

TEMPLATE_TEST_CASE("gels: least squares and minimum norm", "[geqrf][gels]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  const int nrhs = 3;
  std::vector<Op> ops = {Op::none, Op::conj_transpose};
  if (std::is_floating_point_v<T>) ops.push_back(Op::transpose);
  int index = 0;
  for (const auto [m, n] : std::vector<Shape>{
           {1, 1}, {1, 3}, {3, 1}, {5, 5}, {60, 30}, {30, 60}, {150, 70}, {70, 150}, {300, 9}})
    for (Op op : ops) {
      const bool padded = ++index % 2 == 0;
      CAPTURE(m, n, static_cast<int>(op), padded);
      const bool adjoint_op = op != Op::none;
      const int rows = adjoint_op ? n : m, cols = adjoint_op ? m : n;  // op(A) is rows x cols
      const auto a = random_matrix<T>(m, n);
      const auto b = random_matrix<T>(std::max(m, n), nrhs);
      auto A = device_matrix(a, padded);
      auto B = device_matrix(b, !padded);
      CHECK(gels(Exec(), op, A, B) == 0);
      const auto x = host_copy(B);
      auto la = copy(a);
      auto lb = copy(b);
      REQUIRE(lapacke::gels(op, la, lb) == 0);
      // A holds the factors xGELS leaves (QR, or LQ for wide A): R or L agrees with LAPACK's up to
      // signs of the reflectors, which are LAPACK's, so it agrees entrywise.
      CHECK(relative(difference(widen(host_copy(A)), widen(la)), widen(la), std::max(m, n),
                     eps<T>()) < 30);
      const WideMatrix wa = adjoint_op ? adjoint(widen(a)) : widen(a);
      const WideMatrix solution = rows_of(widen(x), cols);
      const WideMatrix r = difference(rows_of(widen(b), rows), product(wa, false, solution));
      if (rows >= cols) {  // the normal equations: op(A)^H r = 0
        const double scale = frobenius(wa) * (frobenius(wa) * frobenius(solution) + frobenius(r));
        CHECK(frobenius(product(wa, true, r)) / (std::max(m, n) * scale * eps<T>()) < 30);
      } else {  // minimum norm: LAPACK's solution, and a small residual
        const WideMatrix expected = rows_of(widen(lb), cols);
        CHECK(relative(difference(solution, expected), expected, cols, eps<T>()) < 30);
        CHECK(frobenius(r) / (cols * frobenius(wa) * frobenius(solution) * eps<T>()) < 30);
      }
    }
}

TEMPLATE_TEST_CASE("gels without full rank: LAPACK's info and B", "[geqrf][gels]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  for (const auto [m, n] : std::vector<Shape>{{40, 20}, {20, 40}, {70, 70}})
    for (Op op : {Op::none, Op::conj_transpose})
      for (bool zero : {false, true}) {
        CAPTURE(m, n, static_cast<int>(op), zero);
        // A zero column of A (tall) or row (wide): R or L gets an exact zero on its diagonal.
        auto a = random_matrix<T>(m, n);
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < m; ++i)
            if (zero || (m >= n ? j : i) == 5) a(i, j) = T(0);
        const auto b = random_matrix<T>(std::max(m, n), 2);
        auto A = device_matrix(a, true);
        auto B = device_matrix(b, true);
        const int info = gels(Exec(), op, A, B);
        auto la = copy(a);
        auto lb = copy(b);
        const int expected = lapacke::gels(op, la, lb);
        CHECK(info == expected);
        CHECK(info == (zero ? 0 : 6));
        CHECK(relative(difference(widen(host_copy(B)), widen(lb)), widen(lb), std::max(m, n),
                       eps<T>()) < 30);
      }
}

TEMPLATE_TEST_CASE("QR routines on zero sizes", "[geqrf]", float, Kokkos::complex<double>) {
  using T = TestType;
  for (const auto [m, n] : std::vector<Shape>{{0, 0}, {0, 5}, {5, 0}}) {
    CAPTURE(m, n);
    DeviceMatrix<T> A("A", m, n);
    Kokkos::View<T*, Exec::memory_space> tau("tau", 0);
    geqrf(Exec(), A, tau);
    if (m >= n) orgqr(Exec(), A, tau);
    DeviceMatrix<T> C("C", m, 4), D("D", 4, m);
    ormqr(Exec(), ApplySide::left, Op::none, A, tau, C);
    ormqr(Exec(), ApplySide::right, Op::conj_transpose, A, tau, D);
    const auto b = random_matrix<T>(std::max(m, n), 2);
    auto B = device_matrix(b, false);
    CHECK(gels(Exec(), Op::none, A, B) == 0);
    CHECK(frobenius(widen(host_copy(B))) == 0);
  }
  // No right-hand sides: A is left as it is.
  const auto a = random_matrix<T>(6, 4);
  auto A = device_matrix(a, false);
  DeviceMatrix<T> B("B", 6, 0);
  CHECK(gels(Exec(), Op::none, A, B) == 0);
  CHECK(identical(host_copy(A), a));
}

TEMPLATE_TEST_CASE("geqrf and gels on NaN and Inf return", "[geqrf]", double,
                   Kokkos::complex<float>) {
  using T = TestType;
  for (const auto bad :
       {std::numeric_limits<real_t<T>>::quiet_NaN(), std::numeric_limits<real_t<T>>::infinity()})
    for (const auto [m, n] : std::vector<Shape>{{90, 70}, {4200, 20}}) {  // team, kernel steps
      auto a = random_matrix<T>(m, n);
      a(m / 2, 10) = T(bad);
      auto A = device_matrix(a, false);
      Kokkos::View<T*, Exec::memory_space> tau("tau", n);
      geqrf(Exec(), A, tau);
      const auto factors = host_copy(A);
      CHECK(!std::isfinite(Kokkos::abs(Wide(factors(n - 1, n - 1)))));
      auto B = device_matrix(random_matrix<T>(m, 2), false);
      auto A2 = device_matrix(a, false);
      gels(Exec(), Op::none, A2, B);  // any info; it must return
    }
}

TEMPLATE_TEST_CASE("QR routines reject bad arguments", "[geqrf]", double, Kokkos::complex<float>) {
  using T = TestType;
  DeviceMatrix<T> A("A", 6, 4), wide("wide", 4, 6), C("C", 5, 3), B("B", 5, 2);
  Kokkos::View<T*, Exec::memory_space> tau3("tau", 3), tau4("tau", 4), tau5("tau", 5);
  CHECK(argument_of([&] { geqrf(Exec(), A, tau3); }) == "tau");
  CHECK(argument_of([&] { orgqr(Exec(), wide, tau3); }) == "A");
  CHECK(argument_of([&] { orgqr(Exec(), A, tau5); }) == "tau");
  CHECK(argument_of([&] { ormqr(Exec(), ApplySide::left, Op::none, A, tau4, C); }) == "C");
  CHECK(argument_of([&] { ormqr(Exec(), ApplySide::right, Op::none, A, tau4, C); }) == "C");
  CHECK(argument_of([&] {
          ormqr(Exec(), ApplySide::left, Op::none, A, tau5, DeviceMatrix<T>("C", 6, 2));
        }) == "tau");
  CHECK(argument_of([&] { gels(Exec(), Op::none, A, B); }) == "B");
  // More rows than an int counts (A's memory, never read: the check comes first).
  const Kokkos::View<T**, Kokkos::LayoutLeft, Exec::memory_space,
                     Kokkos::MemoryTraits<Kokkos::Unmanaged>>
      too_tall(A.data(), std::size_t(INT_MAX) + 1, 1);
  CHECK(argument_of([&] { geqrf(Exec(), too_tall, tau3); }) == "A");
  CHECK(argument_of([&] { gels(Exec(), Op::none, too_tall, B); }) == "A");
  if constexpr (!std::is_floating_point_v<T>) {
    CHECK(argument_of([&] {
            ormqr(Exec(), ApplySide::left, Op::transpose, A, tau4, DeviceMatrix<T>("C", 6, 2));
          }) == "op");
    CHECK(argument_of([&] { gels(Exec(), Op::transpose, A, DeviceMatrix<T>("B", 6, 2)); }) == "op");
  }
}

#if defined(BASALT_ENABLE_CUDA)
namespace {

enum class PanelKind { random, zero_column, graded, huge, tiny, ill_conditioned, triangular };

// A p x w panel; huge and tiny ones are random times scale (a power of two whose squares
// overflow or underflow), ill-conditioned ones have columns within 1e-2 of the first, triangular
// ones are zero below the diagonal (LAPACK's reflectors are then the identity for real scalars:
// the Cholesky QR path must leave such a panel to Householder QR).
template <class T>
HostMatrix<T> panel_matrix(int p, int w, PanelKind kind, double scale) {
  switch (kind) {
    case PanelKind::zero_column:
      return test_matrix<T>(p, w, Kind::zero_column);
    case PanelKind::graded:
      return test_matrix<T>(p, w, Kind::graded);
    default:
      break;
  }
  HostMatrix<T> a = random_matrix<T>(p, w);
  for (int j = 0; j < w; ++j)
    for (int i = 0; i < p; ++i) {
      if (kind == PanelKind::ill_conditioned && j > 0) a(i, j) = a(i, 0) + T(1e-2) * a(i, j);
      if (kind == PanelKind::triangular && i > j) a(i, j) = T(0);
      a(i, j) *= T(scale);
    }
  return a;
}

template <class T>
double panel_scale(PanelKind kind) {
  const int e = 3 * std::numeric_limits<real_t<T>>::max_exponent / 4;
  return kind == PanelKind::huge   ? std::ldexp(1.0, e)
         : kind == PanelKind::tiny ? std::ldexp(1.0, -e)
                                   : 1.0;
}

inline WideMatrix scaled(WideMatrix a, double factor) {
  for (size_t j = 0; j < a.extent(1); ++j)
    for (size_t i = 0; i < a.extent(0); ++i) a(i, j) *= factor;
  return a;
}

// max |a - b| (or max |a| without b) over R's part (on and above the diagonal) or V's (below).
template <class T>
double largest_gap(const HostMatrix<T>& a, const HostMatrix<T>* b, bool r_part) {
  double largest = 0;
  for (size_t j = 0; j < a.extent(1); ++j)
    for (size_t i = 0; i < a.extent(0); ++i)
      if ((i <= j) == r_part)
        largest = std::max<double>(largest,
                                   Kokkos::abs(Wide(a(i, j)) - (b ? Wide((*b)(i, j)) : Wide(0))));
  return largest;
}

// The CUDA panel kernel against the portable geqr2 (a kernel per step) on the same panels, and
// A = QR with LAPACK's orgqr on its result; panels above the kernel's height limit must be
// refused.
template <class T>
void compare_cuda_geqr2(const std::vector<Shape>& panels, const std::vector<PanelKind>& kinds) {
  using Panel = Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::CudaSpace>;
  const Kokkos::Cuda exec;
  for (const auto [p, w] : panels)
    for (PanelKind kind : kinds) {
      CAPTURE(p, w, static_cast<int>(kind));
      const double scale = panel_scale<T>(kind);
      const auto a = panel_matrix<T>(p, w, kind, scale);
      Panel fast("fast", p, w), reference("reference", p, w);
      Kokkos::deep_copy(fast, a);
      Kokkos::deep_copy(reference, a);
      Kokkos::View<T*, Exec::memory_space> fast_tau("tau", w), reference_tau("tau", w);
      const bool taken = cuda::geqr2(exec, fast, fast_tau);
      REQUIRE(taken == (p <= cuda::geqr2_height_limit<T>(exec, w)));
      if (!taken) continue;
      const impl::QrWork<Kokkos::Cuda, T> work(exec, w, 1, 1, 0, 0, p, w);
      impl::geqr2_columns(exec, reference, reference_tau, work);
      exec.fence();
      const auto factors = host_copy(fast), expected = host_copy(reference);
      const auto tau = to_host_vector(fast_tau, w), expected_tau = to_host_vector(reference_tau, w);

      const auto q = lapack_q(factors, tau, w);
      const WideMatrix unscaled = scaled(widen(a), 1 / scale);
      CHECK(relative(difference(unscaled,
                                product(widen(q), false, scaled(upper(factors, w), 1 / scale))),
                     unscaled, p, eps<T>()) < 30);
      CHECK(orthogonality(q) < 30);
      if (kind == PanelKind::zero_column) CHECK(tau(std::min(3, w - 1)) == T(0));
      if (kind == PanelKind::triangular && std::is_same_v<T, real_t<T>>)
        for (int j = 0; j < w; ++j) CHECK(tau(j) == T(0));

      // Beside the portable geqr2: R relative to its largest entry, V (entries at most one) and
      // tau (between 1 and 2, or 0) absolutely. The ill-conditioned panels' V and R move by the
      // conditioning times the rounding: compared in double precision only.
      const bool ill = kind == PanelKind::ill_conditioned;
      if (ill && std::is_same_v<real_t<T>, float>) continue;
      const double tolerance = (ill ? 100 : 1) * 10 * w * std::sqrt(double(p)) * eps<T>();
      CHECK(largest_gap(factors, &expected, true) <=
            tolerance * largest_gap<T>(expected, nullptr, true));
      CHECK(largest_gap(factors, &expected, false) <= tolerance);
      double tau_gap = 0;
      for (int j = 0; j < w; ++j)
        tau_gap = std::max<double>(tau_gap, Kokkos::abs(Wide(tau(j)) - Wide(expected_tau(j))));
      CHECK(tau_gap <= tolerance);
    }
}

const std::vector<PanelKind> every_panel_kind = {
    PanelKind::random, PanelKind::zero_column,     PanelKind::graded,    PanelKind::huge,
    PanelKind::tiny,   PanelKind::ill_conditioned, PanelKind::triangular};

}  // namespace

TEMPLATE_TEST_CASE("cuda::geqr2 equals the portable geqr2", "[geqrf][cuda]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  compare_cuda_geqr2<TestType>({{257, 1},
                                {257, 7},
                                {257, 32},
                                {1000, 16},
                                {1000, 32},
                                {64, 64},
                                {300, 48},
                                {1000, 64},
                                {4097, 1},
                                {4097, 7},
                                {4097, 16},
                                {4097, 32},
                                {4097, 100},
                                {20000, 32}},
                               every_panel_kind);
}

// Kept apart from the case above: compute-sanitizer takes long over panels this tall.
TEMPLATE_TEST_CASE("cuda::geqr2 at the fused kernel's height limit", "[geqrf][cuda][limit]", float,
                   double, Kokkos::complex<float>, Kokkos::complex<double>) {
  const int limit = cuda::geqr2_height_limit<TestType>(Kokkos::Cuda(), 32);
  REQUIRE(limit > 20000);
  compare_cuda_geqr2<TestType>({{limit - 1, 32}, {limit, 32}, {limit + 1, 32}},
                               {PanelKind::random, PanelKind::huge});
}

// The CUDA larft factor beside the portable leaves and joins, on the Gram matrix and tau of a
// factorization's reflectors (a zero column among them, so a zero tau): sizes around the leaf
// width and each level of joins, up to the kernel's limit (64), and past it. T's upper triangle
// relative to its largest entry (the same sums, so within a few roundings); its strict lower
// part (G's) untouched.
TEMPLATE_TEST_CASE("cuda::larft_factor equals portable::larft_factor", "[geqrf][cuda]", float,
                   double, Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  const Kokkos::Cuda exec;
  const int limit = cuda::kernels::larft_factor_limit(exec.cuda_device(), sizeof(T));
  REQUIRE(limit == 64);
  for (const int k : {1, 2, 15, 16, 17, 31, 33, 48, 64}) {
    CAPTURE(k);
    const int m = 2 * k + 3;
    const auto A = device_matrix(test_matrix<T>(m, k, Kind::zero_column), false);
    Kokkos::View<T*, Exec::memory_space> tau("tau", k);
    geqrf(exec, A, tau);
    DeviceMatrix<T> Vp("Vp", m, k), fast("fast", k, k), reference("reference", k, k);
    impl::pad_reflectors(exec, A, Vp);
    impl::gemm(exec, Op::conj_transpose, Op::none, T(1), Vp, Vp, T(0), fast);
    Kokkos::deep_copy(exec, reference, fast);
    const auto gram = host_copy(fast);
    REQUIRE(cuda::larft_factor(exec, tau, fast));
    portable::larft_factor(exec, tau, reference, 16);
    exec.fence();
    const auto t = host_copy(fast), expected = host_copy(reference);
    double largest = 0, gap = 0;
    for (int j = 0; j < k; ++j)
      for (int i = 0; i < k; ++i) {
        if (i > j) {
          CHECK(t(i, j) == gram(i, j));
          continue;
        }
        largest = std::max<double>(largest, Kokkos::abs(Wide(expected(i, j))));
        gap = std::max<double>(gap, Kokkos::abs(Wide(t(i, j)) - Wide(expected(i, j))));
      }
    CHECK(gap <= 10 * k * eps<T>() * largest);
  }
  DeviceMatrix<T> too_wide("too wide", limit + 1, limit + 1);
  Kokkos::View<T*, Exec::memory_space> tau("tau", limit + 1);
  CHECK_FALSE(cuda::larft_factor(exec, tau, too_wide));
}

// The whole factorization where the driver hands every panel to the kernel, tall-skinny shapes
// (Cholesky QR switched off) and square ones (the last panels no taller than wide) included.
TEMPLATE_TEST_CASE("geqrf through the CUDA panel kernel", "[geqrf][cuda]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  int index = 0;
  for (const auto [m, n] :
       std::vector<Shape>{{3000, 300}, {20000, 64}, {1000, 257}, {300, 300}, {129, 129}})
    for (Kind kind : {Kind::random, Kind::zero_column, Kind::graded}) {
      tuning::Qr tune = tuning::qr<Exec>(std::min(m, n));
      tune.tall_skinny_ratio = 0;
      const bool padded = ++index % 2 == 0;
      CAPTURE(m, n, static_cast<int>(kind), padded);
      check_geqrf(test_matrix<T>(m, n, kind), kind, padded,
                  [&](const auto& A, const auto& tau) { impl::geqrf(Exec(), A, tau, tune); });
    }
}
#endif
