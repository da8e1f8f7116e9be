#include "basalt/algorithms/dense/potrf.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "basalt/algorithms/dense/posv.hpp"
#include "basalt/algorithms/dense/potrs.hpp"
#include "basalt/backends/host/lapacke.hpp"
#include "support.hpp"
#if defined(BASALT_ENABLE_CUDA)
#include "basalt/backends/cuda/call_graphs.hpp"
#endif

using namespace basalt;
using test::Exec;

namespace {

template <class T>
using HostMatrix = Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::HostSpace>;
// Double precision arithmetic for the checks: double, or Kokkos::complex<double>.
template <class T>
using Wide = std::conditional_t<std::is_floating_point_v<T>, double, Kokkos::complex<double>>;

enum class Kind { random, ill_conditioned };

template <class T>
double eps() {
  return std::numeric_limits<real_t<T>>::epsilon();
}

template <class T>
T conj_of(const T& x) {
  if constexpr (std::is_floating_point_v<T>)
    return x;
  else
    return Kokkos::conj(x);
}

// A Hermitian positive definite matrix, both triangles filled: C = M M^H / n + I, then for
// ill_conditioned D C D with D from 1 down to 1e-5 (single precision: 1e-2), so cond(A) is near
// 1e10 (1e4); Cholesky's backward error does not depend on that scaling, its forward error does.
template <class T>
HostMatrix<T> make_spd(int n, Kind kind) {
  HostMatrix<T> m("M", n, n), a("A", n, n);
  test::fill_random(m);
  const double decades = std::is_same_v<real_t<T>, float> ? 2 : 5;
  std::vector<double> d(n, 1.0);
  if (kind == Kind::ill_conditioned && n > 1)
    for (int i = 0; i < n; ++i) d[i] = std::pow(10.0, -decades * i / (n - 1));
  for (int j = 0; j < n; ++j)
    for (int i = 0; i <= j; ++i) {
      Wide<T> s = 0;
      for (int k = 0; k < n; ++k) s += Wide<T>(m(i, k)) * conj_of(Wide<T>(m(j, k)));
      s = s / double(n) + (i == j ? 1.0 : 0.0);
      if (i == j) s = real_part(s);
      s *= d[i] * d[j];
      a(i, j) = T(s);
      a(j, i) = conj_of(T(s));
    }
  return a;
}

bool in_triangle(Triangle uplo, int i, int j) { return uplo == Triangle::lower ? i >= j : i <= j; }

template <class W>
double frobenius(const std::vector<W>& v) {
  double s = 0;
  for (const auto& x : v) s += magnitude(x) * magnitude(x);
  return std::sqrt(s);
}

// ||A - L L^H||_F / (n ||A||_F eps) (upper: U^H U), A Hermitian, F's other triangle ignored.
template <class T>
double cholesky_backward_error(const HostMatrix<T>& a, Triangle uplo, const HostMatrix<T>& f) {
  const int n = a.extent(0);
  using W = Wide<T>;
  // L, whichever triangle holds the factor; lt(k, i) = conj(L(i, k)), stored to run along k.
  std::vector<W> lt(std::size_t(n) * n, W(0));
  for (int i = 0; i < n; ++i)
    for (int k = 0; k <= i; ++k)
      lt[k + std::size_t(i) * n] = uplo == Triangle::lower ? conj_of(W(f(i, k))) : W(f(k, i));
  std::vector<W> r, whole;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      W s = 0;
      const W* li = &lt[std::size_t(i) * n];
      const W* lj = &lt[std::size_t(j) * n];
      for (int k = 0; k <= std::min(i, j); ++k) s += conj_of(li[k]) * lj[k];
      r.push_back(W(a(i, j)) - s);
      whole.push_back(W(a(i, j)));
    }
  return frobenius(r) / (n * frobenius(whole) * eps<T>());
}

template <class T>
struct Factored {
  HostMatrix<T> f;
  int info;
};

// basalt::potrf on a sub-view with a leading dimension larger than n, whose other triangle holds
// NaN (never to be read or written) and whose padding rows must stay untouched; with `tune`, the
// driver under those block sizes.
template <class T>
Factored<T> factor(const HostMatrix<T>& a, Triangle uplo,
                   std::optional<tuning::Cholesky> tune = std::nullopt) {
  const int n = a.extent(0), pad = 3;
  const T sentinel(7), nan(std::numeric_limits<real_t<T>>::quiet_NaN());
  HostMatrix<T> input("input", n, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) input(i, j) = in_triangle(uplo, i, j) ? a(i, j) : nan;
  Kokkos::View<T**, Kokkos::LayoutLeft, Exec::memory_space> storage("storage", n + pad, n);
  Kokkos::deep_copy(storage, sentinel);
  auto A = Kokkos::subview(storage, std::make_pair(1, 1 + n), Kokkos::ALL);
  Kokkos::deep_copy(A, test::device_copy(input));
  int info = 0;
  if (tune) {
    const impl::CholeskyState<Exec, T> state{Exec()};
    impl::potrf(Exec(), uplo, A, state, *tune);
    info = impl::finish_potrf(Exec(), A, state);
  } else {
    info = potrf(Exec(), uplo, A);
  }
  auto stored = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), storage);
  bool padding_kept = true, other_triangle_kept = true;
  HostMatrix<T> f("F", n, n);
  for (int j = 0; j < n; ++j) {
    padding_kept = padding_kept && stored(0, j) == sentinel && stored(n + 1, j) == sentinel &&
                   stored(n + 2, j) == sentinel;
    for (int i = 0; i < n; ++i) {
      f(i, j) = stored(1 + i, j);
      if (!in_triangle(uplo, i, j))
        other_triangle_kept = other_triangle_kept && std::isnan(magnitude(f(i, j)));
    }
  }
  CHECK(padding_kept);
  CHECK(other_triangle_kept);
  return {f, info};
}

// Whether F's leading (p + 1) x (p + 1) block (p = n: all of F), in uplo's triangle, is LAPACK's
// factor R within 30 n eps ||R||_max, leaving out the entries of row and column p but the
// diagonal's: after a failure at p, LAPACK guarantees the columns before p (the rows below them
// may or may not be updated, by the blocking) and the failing diagonal's updated value.
template <class F, class R>
bool leading_block_matches(const F& f, const R& reference, Triangle uplo, int p) {
  using T = typename R::non_const_value_type;
  const int n = reference.extent(0), last = std::min(p, n - 1);
  double difference = 0, norm = 0;
  for (int j = 0; j <= last; ++j)
    for (int i = 0; i <= last; ++i) {
      if (!in_triangle(uplo, i, j) || ((i == p) != (j == p))) continue;
      difference = std::max(difference, double(magnitude(f(i, j) - reference(i, j))));
      norm = std::max(norm, double(magnitude(reference(i, j))));
    }
  return difference < 30 * n * eps<T>() * norm;
}

template <class F>
bool finite_triangle(const F& f, Triangle uplo) {
  for (size_t j = 0; j < f.extent(1); ++j)
    for (size_t i = 0; i < f.extent(0); ++i)
      if (in_triangle(uplo, i, j) && !std::isfinite(magnitude(f(i, j)))) return false;
  return true;
}

// Sizes crossing every switch of the host and GPU tunings (core/tuning.hpp): potf2 leaves of 16
// and 64 with their halvings, the portable herk's 128-column leaves, blocks of 128 and 512.
const std::vector<int> sizes = {1,   2,   15,  16,  17,  31,  32,  33,  63,  64, 65,
                                127, 128, 129, 255, 256, 257, 300, 511, 512, 513};

const char* name(Triangle uplo) { return uplo == Triangle::lower ? "lower" : "upper"; }

}  // namespace

TEMPLATE_TEST_CASE("potrf factors A = L L^H and U^H U as LAPACK does", "[potrf]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  for (const int n : sizes)
    for (Kind kind : {Kind::random, Kind::ill_conditioned}) {
      // The GPU block switch (nb = 512) is crossed by well conditioned matrices only, for time.
      if (kind == Kind::ill_conditioned && n > 300) continue;
      const auto a = make_spd<T>(n, kind);
      for (Triangle uplo : {Triangle::lower, Triangle::upper}) {
        CAPTURE(n, static_cast<int>(kind), name(uplo));
        const auto f = factor(a, uplo);
        CHECK(f.info == 0);
        CHECK(cholesky_backward_error(a, uplo, f.f) < 30);
        if (kind == Kind::random && n <= 129) {
          // Well conditioned: the factor itself must be LAPACK's to a few ulps of its norm.
          HostMatrix<T> reference("reference", n, n);
          Kokkos::deep_copy(reference, a);
          REQUIRE(lapacke::potrf(uplo, reference) == 0);
          double difference = 0, norm = 0;
          for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i)
              if (in_triangle(uplo, i, j)) {
                difference = std::max(difference, double(magnitude(f.f(i, j) - reference(i, j))));
                norm = std::max(norm, double(magnitude(reference(i, j))));
              }
          CHECK(difference < 30 * n * eps<T>() * norm);
        }
      }
    }
}

// Look-ahead over many blocks (128 columns, leaf panels of 32, diagonal blocks of 16): each next
// panel is factored on the side instance (on CUDA, its own stream) while exec updates the rest
// of the trailing matrix; and a failure in a later block. Panels halved, leaf by leaf (each
// leaf's update of the panel's later columns on the side's side instance), and leaf by leaf
// from 300 rows down.
TEMPLATE_TEST_CASE("potrf with look-ahead over many blocks", "[potrf]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  for (const int leaf_look_ahead_rows : {0, 300, 1 << 30}) {
    CAPTURE(leaf_look_ahead_rows);
    const tuning::Cholesky tune{128, 32, 16, leaf_look_ahead_rows};
    for (const int n : {300, 521})
      for (Kind kind : {Kind::random, Kind::ill_conditioned})
        for (Triangle uplo : {Triangle::lower, Triangle::upper}) {
          CAPTURE(n, static_cast<int>(kind), name(uplo));
          const auto a = make_spd<T>(n, kind);
          const auto f = factor(a, uplo, tune);
          CHECK(f.info == 0);
          CHECK(cholesky_backward_error(a, uplo, f.f) < 30);
        }
    for (Triangle uplo : {Triangle::lower, Triangle::upper}) {
      CAPTURE(name(uplo));
      auto a = make_spd<T>(300, Kind::random);
      a(200, 200) = T(-1);
      CHECK(factor(a, uplo, tune).info == 201);
    }
  }
}

TEMPLATE_TEST_CASE("potrf reports LAPACK's info on matrices that are not positive definite",
                   "[potrf]", float, double, Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  // (n, position of the negative diagonal): the first column, inside a potf2 leaf, at a leaf's
  // edge, past the first host block and in the last column.
  const std::vector<std::pair<int, int>> cases = {{1, 0},    {8, 0},     {40, 5},    {40, 16},
                                                  {200, 15}, {200, 130}, {300, 299}, {600, 520}};
  for (const auto [n, p] : cases)
    for (Triangle uplo : {Triangle::lower, Triangle::upper}) {
      CAPTURE(n, p, name(uplo));
      auto a = make_spd<T>(n, Kind::random);
      a(p, p) = T(-1);
      const auto f = factor(a, uplo);
      HostMatrix<T> reference("reference", n, n);
      Kokkos::deep_copy(reference, a);
      const int reference_info = lapacke::potrf(uplo, reference);
      CHECK(reference_info == p + 1);
      CHECK(f.info == reference_info);
      CHECK(finite_triangle(f.f, uplo));
      CHECK(leading_block_matches(f.f, reference, uplo, p));
    }
}

// Calls on one matrix whose contents change between them: on CUDA the second call records its
// work and the later ones replay it (backends/cuda/call_graphs.hpp), and each must still factor
// what A holds at the time, a failure included.
TEMPLATE_TEST_CASE("potrf called again on the same matrix", "[potrf]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  for (const int n : {40, 530}) {
    const auto a = make_spd<T>(n, Kind::random), b = make_spd<T>(n, Kind::random);
    auto failing = make_spd<T>(n, Kind::random);
    const int p = n / 2;
    failing(p, p) = T(-1);
    for (Triangle uplo : {Triangle::lower, Triangle::upper}) {
      Kokkos::View<T**, Kokkos::LayoutLeft, Exec::memory_space> A("A", n, n);
#if defined(BASALT_ENABLE_CUDA)
      const long replays_before = cuda::replays_launched(Exec().cuda_device());
#endif
      int call = 0;
      for (const auto& input : {a, b, failing, a, failing, b}) {
        CAPTURE(n, name(uplo), call++);
        Kokkos::deep_copy(A, test::device_copy(input));
        const int info = potrf(Exec(), uplo, A);
        const auto f = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A);
        HostMatrix<T> reference("reference", n, n);
        Kokkos::deep_copy(reference, input);
        const int reference_info = lapacke::potrf(uplo, reference);
        CHECK(info == reference_info);
        CHECK(leading_block_matches(f, reference, uplo, info == 0 ? n : info - 1));
      }
#if defined(BASALT_ENABLE_CUDA)
      // Every call from the second on (the first too where an earlier test's matrix of the same
      // order lay at the same address).
      CHECK(cuda::replays_launched(Exec().cuda_device()) - replays_before >= 5);
#endif
    }
  }
}

TEST_CASE("potrf on empty, NaN, Inf and invalid input", "[potrf]") {
  Matrix<double> empty("empty", 0, 0);
  CHECK(potrf(Exec(), Triangle::lower, empty) == 0);
  Matrix<double> no_rhs("B", 0, 3);
  potrs(Exec(), Triangle::upper, empty, no_rhs);
  CHECK(posv(Exec(), Triangle::lower, empty, no_rhs) == 0);

  // A NaN on the diagonal is not positive: info there, as LAPACK's xPOTRF (DISNAN) reports.
  for (const int p : {0, 20, 140}) {
    for (Triangle uplo : {Triangle::lower, Triangle::upper}) {
      CAPTURE(p, name(uplo));
      auto a = make_spd<double>(200, Kind::random);
      a(p, p) = std::numeric_limits<double>::quiet_NaN();
      CHECK(factor(a, uplo).info == p + 1);
      a(p, p) = std::numeric_limits<double>::infinity();  // infinite, but positive: no hang
      factor(a, uplo);
    }
  }

  Matrix<double> rectangular("A", 10, 9), square("A", 10, 10), wrong_rows("B", 9, 2);
  for (const auto& call : std::vector<std::function<void()>>{
           [&] { potrf(Exec(), Triangle::lower, rectangular); },
           [&] { potrs(Exec(), Triangle::lower, rectangular, wrong_rows); },
           [&] { posv(Exec(), Triangle::upper, rectangular, wrong_rows); }}) {
    try {
      call();
      FAIL("no exception");
    } catch (const InvalidArgument& e) {
      CHECK(e.argument() == "A");
    }
  }
  Kokkos::deep_copy(square, 2.0);
  for (const auto& call : std::vector<std::function<void()>>{
           [&] { potrs(Exec(), Triangle::lower, square, wrong_rows); },
           [&] { posv(Exec(), Triangle::upper, square, wrong_rows); }}) {
    try {
      call();
      FAIL("no exception");
    } catch (const InvalidArgument& e) {
      CHECK(e.argument() == "B");
    }
  }
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), square);
  CHECK(host(3, 3) == 2.0);  // untouched
}

// ||B - A X||_F / (n ||A||_F ||X||_F eps), A Hermitian (both triangles in a).
template <class T>
double solve_residual(const HostMatrix<T>& a, const HostMatrix<T>& b, const HostMatrix<T>& x) {
  const int n = a.extent(0), nrhs = b.extent(1);
  using W = Wide<T>;
  std::vector<W> r, whole, xs;
  for (int c = 0; c < nrhs; ++c)
    for (int i = 0; i < n; ++i) {
      W s = b(i, c);
      for (int k = 0; k < n; ++k) s -= W(a(i, k)) * W(x(k, c));
      r.push_back(s);
      xs.push_back(W(x(i, c)));
    }
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) whole.push_back(W(a(i, j)));
  return frobenius(r) / (n * frobenius(whole) * frobenius(xs) * eps<T>());
}

TEMPLATE_TEST_CASE("potrs and posv solve A X = B", "[potrs][posv]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  for (const int n : {1, 33, 257})
    for (const int nrhs : {1, 5})
      for (Kind kind : {Kind::random, Kind::ill_conditioned})
        for (Triangle uplo : {Triangle::lower, Triangle::upper}) {
          CAPTURE(n, nrhs, static_cast<int>(kind), name(uplo));
          const auto a = make_spd<T>(n, kind);
          HostMatrix<T> b("b", n, nrhs);
          test::fill_random(b);
          // potrs on a padded sub-view of B, after potrf.
          auto A = test::device_copy(a);
          Kokkos::View<T**, Kokkos::LayoutLeft, Exec::memory_space> storage("storage", n + 2, nrhs);
          auto B = Kokkos::subview(storage, std::make_pair(1, 1 + n), Kokkos::ALL);
          Kokkos::deep_copy(B, test::device_copy(b));
          REQUIRE(potrf(Exec(), uplo, A) == 0);
          potrs(Exec(), uplo, A, B);
          auto stored = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), storage);
          HostMatrix<T> x("x", n, nrhs);
          Kokkos::deep_copy(x, Kokkos::subview(stored, std::make_pair(1, 1 + n), Kokkos::ALL));
          CHECK(solve_residual(a, b, x) < 30);
          // posv in one call.
          auto A2 = test::device_copy(a);
          auto B2 = test::device_copy(b);
          CHECK(posv(Exec(), uplo, A2, B2) == 0);
          CHECK(solve_residual(a, b, Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), B2)) <
                30);
        }
}

TEST_CASE("posv leaves B alone when A is not positive definite", "[posv]") {
  const int n = 60;
  auto a = make_spd<double>(n, Kind::random);
  a(20, 20) = -5;
  auto A = test::device_copy(a);
  Matrix<double> B("B", n, 2);
  Kokkos::deep_copy(B, 1.0);
  CHECK(posv(Exec(), Triangle::lower, A, B) == 21);
  auto b = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), B);
  bool untouched = true;
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < n; ++i) untouched = untouched && b(i, c) == 1.0;
  CHECK(untouched);
}

#if defined(BASALT_ENABLE_CUDA)
namespace {

enum class Failure { none, negative, nan };

// The diagonal entry a(column, column) made to fail Cholesky as `failure` says.
template <class T>
void plant(const HostMatrix<T>& a, Failure failure, int column) {
  if (failure == Failure::negative) a(column, column) = T(-1);
  if (failure == Failure::nan) a(column, column) = T(std::numeric_limits<real_t<T>>::quiet_NaN());
}

}  // namespace

// The CUDA diagonal-block kernel against the portable potf2 on the same blocks, on the GPU:
// factored (well and ill conditioned), failing at a negative or NaN diagonal on both sides of
// the kernel's 32-column tiles and at the first column of a tile's 8-column blocks (complex
// types'; info, the failing entry, the identity after it), and after an earlier failure (the
// whole block the identity); widths around the tiles and up to the widest the kernel takes.
TEMPLATE_TEST_CASE("cuda::potf2 equals portable::potf2", "[potrf][cuda]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  using Block = Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::CudaSpace>;
  const Kokkos::Cuda exec;
  const int widest = cuda::potf2_width_limit<T>(exec);
  REQUIRE(widest >= tuning::cholesky<Kokkos::Cuda, T>(0).recursion_width);
  REQUIRE(widest >= 128);
  struct Case {
    Kind kind;
    Failure failure;
    int column;  // of the failing diagonal
    bool earlier_failure;
  };
  for (const int n : {1, 2, 7, 31, 32, 33, 64, 65, 100, 128, widest - 1, widest}) {
    std::vector<Case> cases = {{Kind::random, Failure::none, -1, false},
                               {Kind::ill_conditioned, Failure::none, -1, false},
                               {Kind::random, Failure::none, -1, true}};
    for (const int column : {0, 1, 8, 31, 32, 33, 56, 63, 64, n / 2, n - 1}) {
      if (column >= n) continue;
      cases.push_back({Kind::random, Failure::negative, column, false});
      cases.push_back({Kind::random, Failure::nan, column, false});
    }
    cases.push_back({Kind::random, Failure::negative, n / 2, true});
    for (const Case& c : cases)
      for (Triangle uplo : {Triangle::lower, Triangle::upper}) {
        CAPTURE(n, static_cast<int>(c.kind), static_cast<int>(c.failure), c.column,
                c.earlier_failure, name(uplo));
        auto a = make_spd<T>(n, c.kind);
        plant(a, c.failure, c.column);
        Block fast("fast", n, n), reference("reference", n, n);
        Kokkos::deep_copy(fast, a);
        Kokkos::deep_copy(reference, a);
        const impl::CholeskyState<Kokkos::Cuda, T> fast_state{exec}, reference_state{exec};
        if (c.earlier_failure) {
          Kokkos::deep_copy(fast_state.info, 2);
          Kokkos::deep_copy(reference_state.info, 2);
        }
        cuda::potf2(exec, uplo, fast, 10, fast_state);
        portable::potf2(exec, uplo, reference, 10, reference_state);
        exec.fence();
        int info = 0, reference_info = 0;
        Kokkos::deep_copy(info, fast_state.info);
        Kokkos::deep_copy(reference_info, reference_state.info);
        const bool fails_here = c.failure != Failure::none && !c.earlier_failure;
        CHECK(info == reference_info);
        CHECK(info == (c.earlier_failure ? 2 : fails_here ? 10 + c.column + 1 : 0));
        if (fails_here) {  // the failing entry is kept only where info is set
          T failed(0), reference_failed(0);
          Kokkos::deep_copy(failed, fast_state.failed_diagonal);
          Kokkos::deep_copy(reference_failed, reference_state.failed_diagonal);
          if (c.failure == Failure::nan) {
            CHECK(std::isnan(magnitude(failed)));
            CHECK(std::isnan(magnitude(reference_failed)));
          } else {
            CHECK(magnitude(failed - reference_failed) <= 30 * n * eps<T>());
          }
        }
        auto f = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fast);
        auto r = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), reference);
        double difference = 0;
        bool finite = true;
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < n; ++i) {  // the other triangle too: neither may touch it
            difference = std::max(difference, double(magnitude(f(i, j) - r(i, j))));
            finite = finite && std::isfinite(magnitude(f(i, j)));
          }
        CHECK(finite);
        CHECK(difference <= 30 * n * eps<T>());
        if (c.failure == Failure::none && !c.earlier_failure)
          CHECK(cholesky_backward_error(a, uplo, f) < 30);
      }
  }
}

// The CUDA panel kernel against the portable leaf panel on the same panels (its potf2 the team
// kernel, so that no kernel of the CUDA backend computes the reference), on the GPU: lower (tall)
// and upper (wide) panels in a larger array, with one chunk of rows below, several, and more chunks
// than the device holds blocks at once (the blocks' loop over further chunks; with 8000 rows below
// on the look-ahead stream, where the kernel takes a quarter of the SMs); factored, failing at
// a negative or NaN diagonal, and after an earlier failure (the diagonal block the identity, the
// rows below untouched). Where the diagonal block fails, the rows below are compared in the columns
// before the failure only: after it they are unspecified, but finite.
TEMPLATE_TEST_CASE("cuda::potrf_panel equals portable::potrf_panel", "[potrf][cuda]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  using Storage = Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::CudaSpace>;
  const Kokkos::Cuda exec;
  const int widest = cuda::potrf_panel_width_limit<T>(exec);
  REQUIRE(widest >= 64);
  const int leaf = std::min(widest, tuning::cholesky<Kokkos::Cuda, T>(0).panel_width);
  struct Case {
    Failure failure;
    int column;  // of the failing diagonal
    bool earlier_failure;
  };
  for (const int w : {1, 33, 64, leaf, widest})
    for (const int below : {0, 1, 64, 65, 300, 8000, 20000}) {
      if (below >= 8000 && w != leaf) continue;  // the loop over further chunks, once
      const Kokkos::Cuda fast_space = below == 8000 ? cuda::side_instance(exec) : exec;
      std::vector<Case> cases = {{Failure::none, -1, false}, {Failure::negative, w / 2, false}};
      if (below < 8000) {
        for (const int column : {0, w - 1}) cases.push_back({Failure::negative, column, false});
        cases.push_back({Failure::nan, w / 2, false});
        cases.push_back({Failure::none, -1, true});
      }
      for (const Case& c : cases)
        for (Triangle uplo : {Triangle::lower, Triangle::upper}) {
          CAPTURE(w, below, static_cast<int>(c.failure), c.column, c.earlier_failure, name(uplo));
          const bool lower = uplo == Triangle::lower;
          // The panel in lower terms, L(i, j) for i < w + below, j < w; stored transposed and
          // conjugated when upper. The diagonal block's other triangle holds NaN.
          const auto d = make_spd<T>(w, Kind::random);
          plant(d, c.failure, c.column);
          HostMatrix<T> l("L", w + below, w);
          test::fill_random(l);
          for (int j = 0; j < w; ++j)
            for (int i = 0; i < w; ++i)
              l(i, j) = i >= j ? d(i, j) : T(std::numeric_limits<real_t<T>>::quiet_NaN());
          const int rows = lower ? w + below : w, cols = lower ? w : w + below, pad = 2;
          HostMatrix<T> p("P", rows + pad, cols);
          Kokkos::deep_copy(p, T(7));
          for (int j = 0; j < w; ++j)
            for (int i = 0; i < w + below; ++i) {
              if (lower)
                p(1 + i, j) = l(i, j);
              else
                p(1 + j, i) = conj_of(l(i, j));
            }
          Storage fast_storage("fast", rows + pad, cols),
              reference_storage("reference", rows + pad, cols);
          Kokkos::deep_copy(fast_storage, p);
          Kokkos::deep_copy(reference_storage, p);
          const auto panel_rows = std::make_pair(1, 1 + rows);
          const auto fast = Kokkos::subview(fast_storage, panel_rows, Kokkos::ALL);
          const auto reference = Kokkos::subview(reference_storage, panel_rows, Kokkos::ALL);
          // Each state on the instance that uses it: the state's info = 0 is a kernel, which
          // the look-ahead instance's higher priority could otherwise overtake (the cases of
          // 8000 rows failed so when other processes shared the GPU).
          const impl::CholeskyState<Kokkos::Cuda, T> fast_state{fast_space}, reference_state{exec};
          if (c.earlier_failure) {
            Kokkos::deep_copy(fast_state.info, 2);
            Kokkos::deep_copy(reference_state.info, 2);
          }
          cuda::potrf_panel(fast_space, uplo, fast, 10, fast_state, 16);
          fast_space.fence();
          const auto diagonal = std::make_pair(0, w), beside = std::make_pair(w, w + below);
          const auto D = Kokkos::subview(reference, diagonal, diagonal);
          portable::potf2(exec, uplo, D, 10, reference_state);
          if (lower)
            impl::trsm(exec, ApplySide::right, true, Op::conj_transpose, false, T(1), D,
                       Kokkos::subview(reference, beside, diagonal));
          else
            impl::trsm(exec, ApplySide::left, false, Op::conj_transpose, false, T(1), D,
                       Kokkos::subview(reference, diagonal, beside));
          exec.fence();
          int info = 0, reference_info = 0;
          Kokkos::deep_copy(info, fast_state.info);
          Kokkos::deep_copy(reference_info, reference_state.info);
          const bool fails_here = c.failure != Failure::none && !c.earlier_failure;
          CHECK(info == reference_info);
          CHECK(info == (c.earlier_failure ? 2 : fails_here ? 10 + c.column + 1 : 0));
          if (fails_here && c.failure == Failure::negative) {
            T failed(0), reference_failed(0);
            Kokkos::deep_copy(failed, fast_state.failed_diagonal);
            Kokkos::deep_copy(reference_failed, reference_state.failed_diagonal);
            CHECK(magnitude(failed - reference_failed) <= 30 * w * eps<T>());
          }
          auto f = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fast_storage);
          auto r = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), reference_storage);
          const int compared_columns = fails_here ? c.column : w;
          double difference = 0, norm = 0;
          bool finite = true, kept = true;
          for (int j = 0; j < cols; ++j)
            for (int i = 0; i < rows + pad; ++i) {
              const int li = lower ? i - 1 : j, lj = lower ? j : i - 1;  // in lower terms
              if (i == 0 || i == rows + 1) {
                kept = kept && f(i, j) == T(7);
                continue;
              }
              if (li < w && li < lj) {  // the other triangle of the diagonal block
                kept = kept && std::isnan(magnitude(f(i, j)));
                continue;
              }
              finite = finite && std::isfinite(magnitude(f(i, j)));
              if (li >= w && lj >= compared_columns) continue;
              difference = std::max(difference, double(magnitude(f(i, j) - r(i, j))));
              norm = std::max(norm, double(magnitude(r(i, j))));
            }
          CHECK(kept);
          CHECK(finite);
          CHECK(difference <= 30 * w * eps<T>() * std::max(norm, 1.0));
        }
    }
}

// The CUDA trapezoid update against the portable one (cuBLAS' herk and gemm) on the same
// sub-views of one matrix, as Cholesky's panels lay them out: both triangles, sizes around the
// kernel's 32 x 32 tiles and 32-column steps, unaligned offsets, k and rows on both sides of
// the kernel's limits (k: 256 in double and complex double, 512 in single); every entry outside
// the trapezoid must come back untouched (the check that remains in complex single, which the
// kernel does not take, where both sides are the portable code).
TEMPLATE_TEST_CASE("cuda::herk_trapezoid equals portable::herk_trapezoid", "[potrf][cuda]", float,
                   double, Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  using Matrix = Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::CudaSpace>;
  const Kokkos::Cuda exec;
  struct Shape {
    int m, n, k;
  };
  for (const Shape s :
       {Shape{0, 0, 5}, Shape{7, 3, 0}, Shape{1, 1, 1}, Shape{64, 64, 32}, Shape{65, 63, 33},
        Shape{130, 1, 7}, Shape{200, 128, 128}, Shape{300, 200, 70}, Shape{1000, 256, 256},
        Shape{129, 129, 512}, Shape{150, 100, 520}, Shape{4096, 70, 256}, Shape{4097, 70, 96}})
    for (Triangle uplo : {Triangle::lower, Triangle::upper})
      for (const int first : {1, 2, 4}) {
        const bool lower = uplo == Triangle::lower;
        CAPTURE(s.m, s.n, s.k, name(uplo), first);
        // Lower: L in columns [1, 1 + k), C in [1 + k, 1 + k + n), both rows [first, first + m).
        // Upper: the transpose. The first rows put L's columns at each alignment that the CUDA
        // kernel's 16-byte copies tell apart (two entries of double, four of float), L's leading
        // dimension along m being a multiple of 4; m of every remainder included.
        const int along_m = (s.m + first + 1 + 3) / 4 * 4;
        const int rows = lower ? along_m : s.k + s.n + 3, cols = lower ? s.k + s.n + 3 : along_m;
        HostMatrix<T> a("a", rows, cols);
        test::fill_random(a);
        const auto m_range = std::make_pair(first, first + s.m),
                   k_range = std::make_pair(1, 1 + s.k);
        const auto n_range = std::make_pair(1 + s.k, 1 + s.k + s.n);
        Matrix fast("fast", rows, cols), reference("reference", rows, cols);
        Kokkos::deep_copy(fast, a);
        Kokkos::deep_copy(reference, a);
        if (lower) {
          cuda::herk_trapezoid(exec, uplo, Kokkos::subview(fast, m_range, k_range),
                               Kokkos::subview(fast, m_range, n_range));
          portable::herk_trapezoid(exec, uplo, Kokkos::subview(reference, m_range, k_range),
                                   Kokkos::subview(reference, m_range, n_range));
        } else {
          cuda::herk_trapezoid(exec, uplo, Kokkos::subview(fast, k_range, m_range),
                               Kokkos::subview(fast, n_range, m_range));
          portable::herk_trapezoid(exec, uplo, Kokkos::subview(reference, k_range, m_range),
                                   Kokkos::subview(reference, n_range, m_range));
        }
        exec.fence();
        auto f = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fast);
        auto r = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), reference);
        double difference = 0;
        bool kept = true, changed = s.k == 0 || s.m == 0 || s.n == 0;
        for (int j = 0; j < cols; ++j)
          for (int i = 0; i < rows; ++i) {
            const int ci = (lower ? i : j) - first, cj = (lower ? j : i) - 1 - s.k;  // lower terms
            const bool inside = ci >= 0 && ci < s.m && cj >= 0 && cj < s.n && ci >= cj;
            if (!inside) {
              kept = kept && f(i, j) == a(i, j);
              continue;
            }
            changed = changed || f(i, j) != a(i, j);
            difference = std::max(difference, double(magnitude(f(i, j) - r(i, j))));
          }
        CHECK(kept);
        CHECK(changed);
        CHECK(difference <= 30 * (s.k + 1) * eps<T>());
      }
}
#endif
