#include "basalt/algorithms/dense/getrf.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <optional>

#include "basalt/algorithms/dense/gesv.hpp"
#include "basalt/algorithms/dense/getrs.hpp"
#include "basalt/backends/host/lapacke.hpp"
#include "support.hpp"

using namespace basalt;
using test::Exec;

namespace {

using HostMatrix = Kokkos::View<Kokkos::complex<double>**, Kokkos::LayoutLeft, Kokkos::HostSpace>;

enum class Kind { random, ill_conditioned, zero_column, duplicate_rows, near_ties };

// A host matrix of the kind asked for. ill_conditioned scales the columns from 1 to 1e-12
// (single precision: 1e-6), so cond(A) is near 1e12 (1e6).
template <class T>
Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::HostSpace> make_matrix(int m, int n, Kind kind) {
  Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::HostSpace> a("A", m, n);
  test::fill_random(a);
  const double decades = std::is_same_v<real_t<T>, float> ? 6 : 12;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      if (kind == Kind::ill_conditioned && n > 1) a(i, j) *= real_t<T>(std::pow(10.0, -decades * j / (n - 1)));
      if (kind == Kind::zero_column && j == std::min(5, n - 1)) a(i, j) = T(0);
      if (kind == Kind::duplicate_rows && i == m - 1 && m > 1) a(i, j) = a(0, j);
      // Magnitudes 1 + k 2^-40, k < 1024: many exact ties, and in double many more that agree
      // in their leading 32 bits, where the CUDA panel's pivot search first compares them.
      if (kind == Kind::near_ties)
        a(i, j) = T(real_t<T>((test::random_int(0, 1) ? 1 : -1) *
                              (1 + test::random_int(0, 1023) * std::ldexp(1.0, -40))));
    }
  return a;
}

template <class View>
HostMatrix widen(const View& a) {
  HostMatrix w("wide", a.extent(0), a.extent(1));
  for (size_t j = 0; j < a.extent(1); ++j)
    for (size_t i = 0; i < a.extent(0); ++i) w(i, j) = Kokkos::complex<double>(a(i, j));
  return w;
}

double frobenius(const HostMatrix& a) {
  double s = 0;
  for (size_t j = 0; j < a.extent(1); ++j)
    for (size_t i = 0; i < a.extent(0); ++i) s += Kokkos::abs(a(i, j)) * Kokkos::abs(a(i, j));
  return std::sqrt(s);
}

// ||P A - L U||_F / (max(m, n) ||A||_F eps), in double precision arithmetic.
template <class T, class LU, class Piv>
double lu_backward_error(const HostMatrix& a, const LU& lu, const Piv& ipiv) {
  const int m = a.extent(0), n = a.extent(1), mn = std::min(m, n);
  HostMatrix pa("PA", m, n);
  Kokkos::deep_copy(pa, a);
  for (int k = 0; k < mn; ++k)
    for (int j = 0; j < n; ++j) std::swap(pa(k, j), pa(ipiv(k) - 1, j));
  const HostMatrix f = widen(lu);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      Kokkos::complex<double> s = 0;
      for (int k = 0; k <= std::min({i, j, mn - 1}); ++k) s += (k == i ? 1.0 : f(i, k)) * f(k, j);
      pa(i, j) -= s;
    }
  const double eps = std::numeric_limits<real_t<T>>::epsilon();
  if (frobenius(a) == 0) return frobenius(pa) == 0 ? 0 : INFINITY;  // A = 0: LU must be 0
  return frobenius(pa) / (std::max(m, n) * frobenius(a) * eps);
}

template <class T>
struct Factored {
  Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::HostSpace> lu;
  Kokkos::View<int*, Kokkos::HostSpace> ipiv;
  int info;
};

// basalt::getrf on the default execution space, on a sub-view with a leading dimension larger
// than m, the padding checked untouched; with `tune`, the driver under those block sizes.
template <class T>
Factored<T> factor(const Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::HostSpace>& a,
                   std::optional<tuning::Lu> tune = std::nullopt) {
  const int m = a.extent(0), n = a.extent(1), pad = 3;
  Kokkos::View<T**, Kokkos::LayoutLeft, Exec::memory_space> storage("storage", m + pad, n);
  Kokkos::deep_copy(storage, T(7));
  auto A = Kokkos::subview(storage, std::make_pair(1, 1 + m), Kokkos::ALL);
  Kokkos::deep_copy(A, Kokkos::create_mirror_view_and_copy(Exec::memory_space(), a));
  PivotVector<> ipiv("ipiv", std::min(m, n));
  int info = 0;
  if (tune) {
    const impl::LuState<Exec, real_t<T>> state{Exec()};
    impl::getrf(Exec(), A, ipiv, state, *tune);
    Kokkos::deep_copy(info, state.info);
  } else {
    info = getrf(Exec(), A, ipiv);
  }
  auto stored = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), storage);
  for (int j = 0; j < n; ++j) {
    CHECK(stored(0, j) == T(7));
    CHECK(stored(m + 1, j) == T(7));
  }
  Factored<T> f{Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::HostSpace>("LU", m, n),
                Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ipiv), info};
  Kokkos::deep_copy(f.lu, Kokkos::subview(stored, std::make_pair(1, 1 + m), Kokkos::ALL));
  return f;
}

// Sizes that cross every switch of the host and GPU tunings (core/tuning.hpp): recursion widths
// 16, 64 and 128 with their halvings, blocks of 128, 256 and 512.
const std::vector<std::pair<int, int>> shapes = {
    {1, 1},     {2, 2},     {15, 15},   {17, 17},   {31, 31},   {32, 32},  {33, 33},
    {63, 63},   {65, 65},   {127, 127}, {129, 129}, {255, 255}, {257, 257}, {300, 70},
    {70, 300},  {400, 260}, {520, 515}};

// Double precision has no near-ties among random pivots: the pivots must be LAPACK's.
template <class T>
void check_lapack_pivots(const Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::HostSpace>& a,
                         const Factored<T>& f) {
  if constexpr (std::is_same_v<real_t<T>, double>) {
    const int mn = std::min(a.extent(0), a.extent(1));
    auto reference = Kokkos::create_mirror(Kokkos::HostSpace(), a);
    Kokkos::deep_copy(reference, a);
    Kokkos::View<int*, Kokkos::HostSpace> reference_ipiv("ipiv", mn);
    CHECK(lapacke::getrf(reference, reference_ipiv) == 0);
    bool same = true;
    for (int k = 0; k < mn; ++k) same = same && f.ipiv(k) == reference_ipiv(k);
    CHECK(same);
  }
}

}  // namespace

TEMPLATE_TEST_CASE("getrf factors PA = LU as LAPACK does", "[getrf]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  for (const auto [m, n] : shapes)
    for (Kind kind : {Kind::random, Kind::ill_conditioned}) {
      CAPTURE(m, n, static_cast<int>(kind));
      const auto a = make_matrix<T>(m, n, kind);
      const auto f = factor(a);
      CHECK(f.info == 0);
      CHECK(lu_backward_error<T>(widen(a), f.lu, f.ipiv) < 30);
      check_lapack_pivots(a, f);
    }
}

// Look-ahead over many blocks (64 columns, leaves of 16): each next panel is factored on the
// side instance (on CUDA, its own stream) while exec updates the rest of the trailing matrix;
// the interchanges left of each block applied at once or at the end.
TEMPLATE_TEST_CASE("getrf with look-ahead over many blocks", "[getrf]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  for (const auto [m, n] : std::vector<std::pair<int, int>>{{520, 520}, {600, 390}, {390, 600}})
    for (Kind kind : {Kind::random, Kind::ill_conditioned})
      for (bool defer : {false, true}) {
        CAPTURE(m, n, static_cast<int>(kind), defer);
        const auto a = make_matrix<T>(m, n, kind);
        const auto f = factor(a, tuning::Lu{64, 16, 0, defer});
        CHECK(f.info == 0);
        CHECK(lu_backward_error<T>(widen(a), f.lu, f.ipiv) < 30);
        check_lapack_pivots(a, f);
      }
}

TEMPLATE_TEST_CASE("getrf reports LAPACK's info on singular matrices", "[getrf]", float,
                   double, Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  for (const auto [m, n] : std::vector<std::pair<int, int>>{{8, 8}, {40, 40}, {300, 300}, {50, 20}}) {
    for (Kind kind : {Kind::zero_column, Kind::duplicate_rows}) {
      CAPTURE(m, n, static_cast<int>(kind));
      const auto a = make_matrix<T>(m, n, kind);
      const auto f = factor(a);
      // A zero column stays exactly zero under the updates; duplicate rows cancel only up to
      // rounding, so their info is not fixed.
      if (kind == Kind::zero_column) CHECK(f.info == std::min(5, n - 1) + 1);
      CHECK(lu_backward_error<T>(widen(a), f.lu, f.ipiv) < 30);
      bool finite = true;
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) finite = finite && std::isfinite(magnitude(f.lu(i, j)));
      CHECK(finite);  // a zero pivot is skipped, never divided by
    }
  }
}

TEST_CASE("getrf on empty, NaN and invalid input", "[getrf]") {
  Matrix<double> empty("empty", 0, 5);
  PivotVector<> none("none", 0);
  CHECK(getrf(Exec(), empty, none) == 0);

  auto a = make_matrix<double>(40, 40, Kind::random);
  a(7, 3) = std::numeric_limits<double>::quiet_NaN();
  const auto f = factor(a);  // completes; NaN spreads, no hang
  CHECK(std::isnan(f.lu(39, 39)));

  Matrix<double> A("A", 10, 10);
  Kokkos::deep_copy(A, 2.0);
  PivotVector<> short_ipiv("ipiv", 9);
  try {
    getrf(Exec(), A, short_ipiv);
    FAIL("no exception");
  } catch (const InvalidArgument& e) {
    CHECK(e.argument() == "ipiv");
  }
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A);
  CHECK(host(3, 3) == 2.0);  // untouched
}

// Columns whose largest magnitude occurs at many rows, with either sign, in every precision: the
// pivot is the first of them, whatever order the backend combines its threads' candidates in.
// Tall enough that a GPU reduces over more blocks than one block has threads, where Kokkos'
// MaxLoc returned a later row.
TEMPLATE_TEST_CASE("portable::getf2 pivots on the first of equal largest magnitudes", "[getrf]",
                   float, double, Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  const int m = 200000;
  for (int trial = 0; trial < 8; ++trial) {
    Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::HostSpace> a("a", m, 1);
    for (int i = 0; i < m; ++i) a(i, 0) = T(real_t<T>(test::random_int(-1000, 1000)) / 2000);
    int first = m;
    for (int k = 0; k < 64; ++k) {
      const int row = test::random_int(0, m - 1);
      a(row, 0) = T(test::random_int(0, 1) ? 1 : -1);
      first = std::min(first, row);
    }
    CAPTURE(trial, first);
    auto A = Kokkos::create_mirror_view_and_copy(Exec::memory_space(), a);
    PivotVector<> ipiv("ipiv", 1);
    const impl::LuState<Exec, real_t<T>> state{Exec()};
    portable::getf2(Exec(), A, ipiv, 0, state);
    auto pivots = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ipiv);
    CHECK(pivots(0) == first + 1);
  }
}

TEMPLATE_TEST_CASE("getrs solves op(A) X = B", "[getrs]", float, double, Kokkos::complex<float>,
                   Kokkos::complex<double>) {
  using T = TestType;
  for (const int n : {1, 33, 257})
    for (const int nrhs : {1, 5})
      for (const Op op : {Op::none, Op::transpose, Op::conj_transpose}) {
        CAPTURE(n, nrhs, static_cast<int>(op));
        const auto a = make_matrix<T>(n, n, Kind::random);
        auto b = make_matrix<T>(n, nrhs, Kind::random);
        auto A = test::device_copy(a);
        Kokkos::View<T**, Kokkos::LayoutLeft, Exec::memory_space> B("B", n, nrhs);
        Kokkos::deep_copy(B, b);
        PivotVector<> ipiv("ipiv", n);
        REQUIRE(getrf(Exec(), A, ipiv) == 0);
        getrs(Exec(), op, A, ipiv, B);
        const HostMatrix x = widen(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), B));
        // ||B - op(A) X||_F / (n ||A||_F ||X||_F eps)
        const HostMatrix wa = widen(a);
        HostMatrix r = widen(b);
        for (int c = 0; c < nrhs; ++c)
          for (int i = 0; i < n; ++i)
            for (int k = 0; k < n; ++k) {
              const auto aik = op == Op::none ? wa(i, k)
                               : op == Op::transpose ? wa(k, i)
                                                     : Kokkos::conj(wa(k, i));
              r(i, c) -= aik * x(k, c);
            }
        const double eps = std::numeric_limits<real_t<T>>::epsilon();
        CHECK(frobenius(r) / (n * frobenius(wa) * frobenius(x) * eps) < 30);
      }
}

TEST_CASE("gesv solves, and leaves B alone when A is singular", "[gesv]") {
  const int n = 60;
  const auto a = make_matrix<double>(n, n, Kind::zero_column);
  auto A = test::device_copy(a);
  Matrix<double> B("B", n, 2);
  Kokkos::deep_copy(B, 1.0);
  PivotVector<> ipiv("ipiv", n);
  CHECK(gesv(Exec(), A, ipiv, B) == 6);
  auto b = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), B);
  CHECK(b(n - 1, 1) == 1.0);

  auto good = test::device_copy(make_matrix<double>(n, n, Kind::random));
  Matrix<double> wrong_rows("B", n + 1, 2);
  CHECK_THROWS_AS(gesv(Exec(), good, ipiv, wrong_rows), InvalidArgument);
  CHECK(gesv(Exec(), good, ipiv, B) == 0);
}

#if defined(BASALT_ENABLE_CUDA)
// The CUDA panel (the fused kernels, or the portable kernels above their height limit) against the
// portable getf2 on the same panels, on the GPU.
template <class T>
void compare_cuda_getf2(const std::vector<std::pair<int, int>>& panels) {
  using Panel = Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::CudaSpace>;
  const Kokkos::Cuda exec;
  for (const auto [m, w] : panels)
    for (Kind kind : {Kind::random, Kind::zero_column, Kind::near_ties}) {
      CAPTURE(m, w, static_cast<int>(kind));
      const auto a = make_matrix<T>(m, w, kind);
      Panel fast("fast", m, w), reference("reference", m, w);
      Kokkos::deep_copy(fast, a);
      Kokkos::deep_copy(reference, a);
      PivotVector<Kokkos::CudaSpace> fast_ipiv("ipiv", w), reference_ipiv("ipiv", w);
      const impl::LuState<Kokkos::Cuda, real_t<T>> fast_state{exec}, reference_state{exec};
      cuda::getf2(exec, fast, fast_ipiv, 3, fast_state);
      portable::getf2(exec, reference, reference_ipiv, 3, reference_state);
      exec.fence();
      auto lu = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fast);
      auto ipiv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fast_ipiv);
      auto reference_lu = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), reference);
      auto ref_ipiv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), reference_ipiv);
      int info = 0, reference_info = 0;
      Kokkos::deep_copy(info, fast_state.info);
      Kokkos::deep_copy(reference_info, reference_state.info);
      CHECK(info == reference_info);
      if (kind == Kind::zero_column) CHECK(info == 3 + std::min(5, w - 1) + 1);
      CHECK(lu_backward_error<T>(widen(a), lu, ipiv) < 30);
      if constexpr (std::is_same_v<real_t<T>, double>) {
        bool same = true;
        for (int k = 0; k < w; ++k) same = same && ipiv(k) == ref_ipiv(k);
        CHECK(same);
        HostMatrix difference = widen(lu);
        const HostMatrix r = widen(reference_lu);
        for (int j = 0; j < w; ++j)
          for (int i = 0; i < m; ++i) difference(i, j) -= r(i, j);
        CHECK(frobenius(difference) <= 1e-12 * frobenius(r));
      }
    }
}

TEMPLATE_TEST_CASE("cuda::getf2 equals portable::getf2", "[getrf][cuda]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  // Up to 4096 rows (2048 in complex double) the slab kernel (D3; square panels, widths past a
  // whole slab, each count of rows a thread holds) led by one block, then by a cluster of
  // blocks up to eight times that (on GPUs with clusters; 2, 4 or 8 rows a thread, switching at
  // 8192 and 16384 rows), above it the grid-barrier kernel (D2).
  compare_cuda_getf2<TestType>({{1, 1},
                                {40, 7},
                                {64, 64},
                                {100, 1},
                                {300, 70},
                                {513, 100},
                                {1000, 32},
                                {1025, 36},
                                {2048, 128},
                                {2049, 128},
                                {5000, 16},
                                {20000, 32},
                                {4000, 256},
                                {4096, 42},
                                {4097, 40},
                                {6144, 128},
                                {8193, 64},
                                {12000, 48},
                                {16384, 20},
                                {16385, 16},
                                {32768, 8},
                                {32769, 8}});
}

// NaN and Inf in a panel: each kernel (one leader, a leading cluster, the grid-barrier kernel)
// finishes, with pivots in range; a column of NaN only has no candidate and keeps its diagonal.
TEST_CASE("cuda::getf2 on NaN and Inf", "[getrf][cuda]") {
  using Panel = Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::CudaSpace>;
  const Kokkos::Cuda exec;
  for (const int m : {1000, 6000, 40000}) {
    CAPTURE(m);
    const int w = 24;
    auto a = make_matrix<double>(m, w, Kind::random);
    a(7, 3) = std::numeric_limits<double>::quiet_NaN();
    a(m - 1, 10) = std::numeric_limits<double>::infinity();
    for (int i = 0; i < m; ++i) a(i, 17) = std::numeric_limits<double>::quiet_NaN();
    Panel panel("panel", m, w);
    Kokkos::deep_copy(panel, a);
    PivotVector<Kokkos::CudaSpace> ipiv("ipiv", w);
    const impl::LuState<Kokkos::Cuda, double> state{exec};
    cuda::getf2(exec, panel, ipiv, 0, state);
    exec.fence();
    auto pivots = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ipiv);
    bool in_range = true;
    for (int k = 0; k < w; ++k) in_range = in_range && pivots(k) >= k + 1 && pivots(k) <= m;
    CHECK(in_range);
    CHECK(pivots(17) == 18);
    auto lu = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), panel);
    CHECK(std::isnan(lu(m - 1, w - 1)));
  }
}

// Kept apart from the case above: compute-sanitizer takes long over panels this tall.
TEMPLATE_TEST_CASE("cuda::getf2 at the fused kernel's height limit", "[getrf][cuda][limit]",
                   float, double, Kokkos::complex<float>, Kokkos::complex<double>) {
  const int limit = cuda::getf2_height_limit<TestType>(Kokkos::Cuda(), 32);
  REQUIRE(limit > 20000);
  compare_cuda_getf2<TestType>({{limit - 1, 32}, {limit, 32}, {limit + 1, 32}});
}
#endif
