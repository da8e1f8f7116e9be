#include "basalt/algorithms/batched/potrf_batched.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "batched/batch_support.hpp"

using namespace basalt;
using namespace basalt::test;

namespace {

// ||A - L L^H||_F / (n ||A||_F eps) (or U^H U), from the factor's triangle only.
template <class T>
double cholesky_backward_error(const HostMatrix<T>& original, const HostMatrix<T>& factor,
                               Triangle uplo) {
  const int n = original.extent(0);
  WideMatrix l("L", n, n);  // L, or U^H
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i)
      l(i, j) = uplo == Triangle::lower ? Wide(factor(i, j)) : Kokkos::conj(Wide(factor(j, i)));
  WideMatrix lh("L^H", n, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) lh(i, j) = Kokkos::conj(l(j, i));
  const WideMatrix llh = product(l, false, lh);
  const WideMatrix a = widen(original);
  WideMatrix error("E", n, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) error(i, j) = a(i, j) - llh(i, j);
  return relative(error, a, n, eps<T>());
}

struct Case {
  int n, count;
};

const std::vector<Case> fixed_cases = {{1, 40}, {2, 200}, {4, 100}, {16, 40}, {31, 10},
                                       {64, 6}, {65, 4},  {128, 2}, {257, 1}, {512, 1}};

}  // namespace

TEMPLATE_TEST_CASE("potrf_batched factors every matrix, non-SPD members mixed in",
                   "[potrf_batched]", float, double, Kokkos::complex<float>,
                   Kokkos::complex<double>) {
  using T = TestType;
  for (const Triangle uplo : {Triangle::lower, Triangle::upper})
    for (const auto [n, count] : fixed_cases) {
      CAPTURE(n, count, static_cast<int>(uplo));
      std::vector<HostMatrix<T>> originals;
      for (int b = 0; b < count; ++b) originals.push_back(spd_matrix<T>(n, b % 3 == 2));
      auto A = device_batch(originals, n, n);
      Kokkos::View<int*> info("info", count);
      potrf_batched(Exec(), uplo, A, info);
      const auto factors = to_host(A);
      const auto infos = to_host(info);
      for (int b = 0; b < count; ++b) {
        CAPTURE(b);
        if (b % 3 == 2) {
          // The negative diagonal entry min(3, n - 1) stops the factorization there or before.
          CHECK(infos(b) >= 1);
          CHECK(infos(b) <= std::min(3, n - 1) + 1);
          continue;
        }
        CHECK(infos(b) == 0);
        CHECK(cholesky_backward_error(originals[b], host_matrix(factors, b), uplo) < 30);
      }
    }
}

TEMPLATE_TEST_CASE("potrf_batched on a variable-size batch, sizes 1 to 512", "[potrf_batched]",
                   float, double, Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  const std::vector<int> sizes = {512, 1, 0, 2, 7, 30, 33, 64, 100, 150, 3, 256};
  std::vector<HostMatrix<T>> originals;
  for (size_t b = 0; b < sizes.size(); ++b)
    originals.push_back(spd_matrix<T>(sizes[b], b % 5 == 3));
  auto A = variable_batch(originals);
  Kokkos::View<int*> info("info", A.count());
  potrf_batched(Exec(), Triangle::lower, A, info);
  const auto factors = host_matrices(A);
  const auto infos = to_host(info);
  for (size_t b = 0; b < sizes.size(); ++b) {
    CAPTURE(b, sizes[b]);
    if (b % 5 == 3) {
      CHECK(infos(b) >= 1);
      continue;
    }
    CHECK(infos(b) == 0);
    CHECK(cholesky_backward_error(originals[b], factors[b], Triangle::lower) < 30);
  }
}

TEST_CASE("potrf_batched on 100,000 tiny matrices", "[potrf_batched]") {
  const int count = 100000, n = 2;
  // [[d, x], [x, d]] is positive definite exactly when d > |x|: every 5th has d < |x|.
  auto original = Kokkos::create_mirror_view(make_batch<double>("A", count, n, n));
  for (int b = 0; b < count; ++b) {
    const double x = random_scalar<double>(), d = b % 5 == 4 ? std::abs(x) / 2 : 1 + std::abs(x);
    original(b, 0, 0) = original(b, 1, 1) = d;
    original(b, 0, 1) = original(b, 1, 0) = x;
  }
  auto A = make_batch<double>("A", count, n, n);
  Kokkos::deep_copy(A, original);
  Kokkos::View<int*> info("info", count);
  potrf_batched(Exec(), Triangle::lower, A, info);
  const auto l = to_host(A);
  const auto infos = to_host(info);
  int wrong_info = 0, inaccurate = 0;
  for (int b = 0; b < count; ++b) {
    if (b % 5 == 4) {
      wrong_info += infos(b) != 2;
      continue;
    }
    wrong_info += infos(b) != 0;
    const double e00 = original(b, 0, 0) - l(b, 0, 0) * l(b, 0, 0);
    const double e10 = original(b, 1, 0) - l(b, 1, 0) * l(b, 0, 0);
    const double e11 = original(b, 1, 1) - l(b, 1, 0) * l(b, 1, 0) - l(b, 1, 1) * l(b, 1, 1);
    const double error = std::max({std::abs(e00), std::abs(e10), std::abs(e11)});
    inaccurate += !(error <= 30 * n * original(b, 0, 0) * eps<double>());
  }
  CHECK(wrong_info == 0);
  CHECK(inaccurate == 0);
}

TEMPLATE_TEST_CASE("potrs_batched and posv_batched solve every system", "[potrs_batched]", float,
                   double, Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  for (const Triangle uplo : {Triangle::lower, Triangle::upper})
    for (const auto [n, count] : std::vector<Case>{{1, 3}, {24, 6}, {140, 2}}) {
      CAPTURE(n, count, static_cast<int>(uplo));
      const int nrhs = 3;
      std::vector<HostMatrix<T>> a, b;
      for (int k = 0; k < count; ++k) {
        a.push_back(spd_matrix<T>(n, k == 1));
        b.push_back(random_matrix<T>(n, nrhs));
      }
      auto A = variable_batch(a);
      auto B = variable_batch(b);
      Kokkos::View<int*> info("info", count);
      posv_batched(Exec(), uplo, A, B, info);
      const auto x = host_matrices(B);
      const auto infos = to_host(info);
      for (int k = 0; k < count; ++k) {
        CAPTURE(k);
        if (k == 1) {
          CHECK(infos(k) > 0);
          CHECK(identical(x[k], b[k]));
          continue;
        }
        CHECK(infos(k) == 0);
        const WideMatrix ax = product(widen(a[k]), false, widen(x[k]));
        WideMatrix r = widen(b[k]);
        for (int j = 0; j < nrhs; ++j)
          for (int i = 0; i < n; ++i) r(i, j) -= ax(i, j);
        CHECK(frobenius(r) / (n * frobenius(widen(a[k])) * frobenius(widen(x[k])) * eps<T>()) < 30);
      }
    }
}

TEST_CASE("potrf_batched on NaN and invalid input", "[potrf_batched]") {
  std::vector<HostMatrix<double>> originals;
  for (int b = 0; b < 3; ++b) originals.push_back(spd_matrix<double>(20));
  originals[1](0, 0) = std::numeric_limits<double>::quiet_NaN();
  auto A = device_batch(originals, 20, 20);
  Kokkos::View<int*> info("info", 3);
  potrf_batched(Exec(), Triangle::lower, A, info);
  const auto infos = to_host(info);
  CHECK(infos(0) == 0);
  CHECK(infos(1) == 1);  // a NaN diagonal is not positive
  CHECK(infos(2) == 0);

  auto B = device_batch(originals, 20, 20);
  Kokkos::View<int*> short_info("info", 2);
  CHECK(argument_of([&] { potrf_batched(Exec(), Triangle::lower, B, short_info); }) == "info");
  auto wide = make_batch<double>("wide", 3, 20, 21);
  CHECK(argument_of([&] { potrf_batched(Exec(), Triangle::lower, wide, info); }) == "A");
  auto rhs = make_batch<double>("rhs", 3, 19, 2);
  CHECK(argument_of([&] { potrs_batched(Exec(), Triangle::lower, B, rhs); }) == "B");
  CHECK(identical(host_matrix(to_host(B), 0), originals[0]));
  // A variable batch with one wide member among square ones.
  auto variable = make_variable_batch<double>("variable", {4, 9, 6, 2}, {4, 9, 7, 2});
  CHECK(argument_of([&] { potrf_batched(Exec(), Triangle::lower, variable, short_info); }) ==
        "info");
  Kokkos::View<int*> variable_info("info", 4);
  CHECK(argument_of([&] { potrf_batched(Exec(), Triangle::lower, variable, variable_info); }) ==
        "A");
}

#if defined(BASALT_ENABLE_CUDA)
namespace {

// The CUDA path's factor of one matrix against the portable kernel's: same info; where the
// factorization completes, an accurate factor; the leading columns it completed equal up to
// rounding; the other triangle untouched.
template <class T>
void check_against_portable(const HostMatrix<T>& original, const HostMatrix<T>& factor,
                            const HostMatrix<T>& reference, int info, int reference_info,
                            Triangle uplo) {
  REQUIRE(info == reference_info);
  const int n = original.extent(0);
  int touched = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      if (uplo == Triangle::lower ? i < j : i > j) touched += !(factor(i, j) == original(i, j));
  CHECK(touched == 0);
  const int done = info == 0 ? n : info - 1;
  if (info == 0) CHECK(cholesky_backward_error(original, factor, uplo) < 30);
  double difference = 0, size = 0;
  for (int j = 0; j < done; ++j)
    for (int i = j; i < n; ++i) {
      const auto [r, c] = uplo == Triangle::lower ? std::pair{i, j} : std::pair{j, i};
      const Wide expected = Wide(reference(r, c));
      difference = std::max(difference, double(Kokkos::abs(Wide(factor(r, c)) - expected)));
      size = std::max(size, double(Kokkos::abs(expected)));
    }
  CHECK(difference <= 64 * n * eps<T>() * size);
}

// The CUDA path and the portable team kernel on the same batches, on the GPU; kernel: the CUDA
// kernel that must take them.
template <class ABatch>
void factor_both_ways(CudaKernel kernel, Triangle uplo, const ABatch& fast, const ABatch& reference,
                      const Kokkos::View<int*>& fast_info,
                      const Kokkos::View<int*>& reference_info) {
  const Kokkos::Cuda exec;
  const auto a_fast = impl::matrices<Exec>(fast, "test", "A");
  const auto a_reference = impl::matrices<Exec>(reference, "test", "A");
  REQUIRE(cuda::potrf_batched_fits(a_fast));
  if (kernel == CudaKernel::block) REQUIRE(a_fast.max_rows > cuda::kernels::potrf_batched_max_size);
  cuda::potrf_batched(exec, uplo, a_fast, fast_info);
  portable::potrf_batched(exec, uplo, a_reference, reference_info,
                          impl::batch_launch<Exec>(a_reference));
  exec.fence();
}

// The originals factored both ways from fast and reference (two copies of them in one batch
// form), each matrix then held to check_against_portable.
template <class T, class ABatch>
void check_both_ways(CudaKernel kernel, Triangle uplo, const std::vector<HostMatrix<T>>& originals,
                     const ABatch& fast, const ABatch& reference) {
  const int count = static_cast<int>(originals.size());
  Kokkos::View<int*> fast_info("info", count), reference_info("info", count);
  factor_both_ways(kernel, uplo, fast, reference, fast_info, reference_info);
  const auto factors = host_matrices(fast);
  const auto reference_factors = host_matrices(reference);
  const auto infos = to_host(fast_info);
  const auto reference_infos = to_host(reference_info);
  for (int b = 0; b < count; ++b) {
    CAPTURE(b, originals[b].extent(0));
    check_against_portable(originals[b], factors[b], reference_factors[b], infos(b),
                           reference_infos(b), uplo);
  }
}

}  // namespace

// The warp-segment CUDA kernel against the portable team kernel on the same batches, on the GPU:
// check_against_portable on each matrix. Every segment width, both triangles, fixed and
// variable batches (zero-order members too), a batch that does not fill its last warp.
TEMPLATE_TEST_CASE("cuda::potrf_batched equals portable::potrf_batched", "[potrf_batched][cuda]",
                   float, double, Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  std::vector<std::vector<HostMatrix<T>>> batches;
  for (const int n : {1, 2, 3, 4, 5, 8, 9, 12, 16, 17, 24, 31, 32}) {
    std::vector<HostMatrix<T>> batch;
    for (int b = 0; b < 37; ++b) batch.push_back(spd_matrix<T>(n, b % 5 == 2));
    batches.push_back(batch);
  }
  std::vector<HostMatrix<T>> mixed;
  for (const int n : {1, 32, 0, 7, 3, 17, 20, 9})
    mixed.push_back(spd_matrix<T>(n, mixed.size() % 3 == 1));
  batches.push_back(mixed);

  for (const Triangle uplo : {Triangle::lower, Triangle::upper})
    for (size_t k = 0; k < batches.size(); ++k) {
      const auto& originals = batches[k];
      CAPTURE(k, static_cast<int>(uplo));
      check_both_ways(CudaKernel::warp, uplo, originals, variable_batch(originals),
                      variable_batch(originals));
      // The uniform batches as fixed batches too: n = 4, 8, 12, 16, 24 and 32 take the kernels
      // built for full matrices of their size class.
      const int n = originals[0].extent(0);
      if (k + 1 < batches.size())
        check_both_ways(CudaKernel::warp, uplo, originals, device_batch(originals, n, n),
                        device_batch(originals, n, n));
    }

  // Every warp size class in one variable batch, members that are not positive definite in
  // each: two waves hold them, so one launch takes them all, each class in blocks of its own.
  std::vector<HostMatrix<T>> every_class;
  for (int b = 0; b < 300; ++b) every_class.push_back(spd_matrix<T>(1 + (b * 5) % 32, b % 7 == 3));
  for (const Triangle uplo : {Triangle::lower, Triangle::upper})
    check_both_ways(CudaKernel::warp, uplo, every_class, variable_batch(every_class),
                    variable_batch(every_class));

  // A variable batch too large for two waves of its largest class, so that its warp classes go
  // to one launch with each class in its own code (those above: one code for each segment width).
  const int count = 9000;
  const int resident = Kokkos::Cuda().cuda_device_prop().multiProcessorCount *
                       cuda::kernels::potrf_batched_small_resident_matrices<cuda::scalar_t<T>>(32);
  REQUIRE(count > 2 * resident);
  std::vector<HostMatrix<T>> many;
  for (int b = 0; b < count; ++b) many.push_back(spd_matrix<T>(b % 33, b % 7 == 3));
  check_both_ways(CudaKernel::warp, Triangle::lower, many, variable_batch(many),
                  variable_batch(many));

  // Variable batches whose largest class is 24 or 20 rows, whose launch's kernel is held to fewer
  // registers in double and stops its warps early (potrf_classes_held): sizes 0 to 24 beyond two
  // waves, 1 to 20 within them.
  std::vector<HostMatrix<T>> beyond, within;
  for (int b = 0; b < count; ++b) beyond.push_back(spd_matrix<T>(b % 25, b % 7 == 3));
  for (int b = 0; b < 300; ++b) within.push_back(spd_matrix<T>(1 + (b * 3) % 20, b % 7 == 3));
  check_both_ways(CudaKernel::warp, Triangle::lower, beyond, variable_batch(beyond),
                  variable_batch(beyond));
  for (const Triangle uplo : {Triangle::lower, Triangle::upper})
    check_both_ways(CudaKernel::warp, uplo, within, variable_batch(within), variable_batch(within));
}

namespace {

// A Hermitian test matrix of one of six kinds: positive definite; not, from diagonal entry
// min(3, n - 1) (spd_matrix's); not, from diagonal entry n - 5 (a failure in a later panel);
// positive definite and graded (D A D, D = diag(2^-(i / 8)), exactly); not, from diagonal entry
// 31 (the last column of the first 32-column panel); not, from diagonal entry 32 (the first of
// the second).
template <class T>
HostMatrix<T> cholesky_test_matrix(int n, int kind) {
  HostMatrix<T> a = spd_matrix<T>(n, kind == 1);
  if (kind == 2 && n > 4) a(n - 5, n - 5) = T(-1);
  if (kind == 4 && n > 31) a(31, 31) = T(-1);
  if (kind == 5 && n > 32) a(32, 32) = T(-1);
  if (kind == 3)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        a(i, j) = T(a(i, j) * real_t<T>(std::ldexp(1.0, -(i / 8) - (j / 8))));
  return a;
}

}  // namespace

// The block-per-matrix CUDA kernel (orders 33 to 512, in builds for blocks of up to 256, 384
// and 512 threads; by 16-column panels in complex arithmetic; its update by pairs of panels in
// some builds, complex double's at 385 to 416 rows, and at each panel's own L21 stride in double
// from 449 rows and complex double from 417) against the portable team kernel on the GPU:
// fixed batches on both sides of every panel edge, variable batches of orders 0 to 256,
// 0 to 65 and 0 to 512 (the block kernel takes them in a launch per 32 rows, each with blocks
// sized for its largest), fixed batches of interleaved and of row-major matrices, both
// triangles, failures in the first and in later panels and on a panel's first and last columns,
// a NaN member, and the limit.
TEMPLATE_TEST_CASE("cuda::potrf_batched's block kernel equals portable::potrf_batched",
                   "[potrf_batched][cuda]", float, double, Kokkos::complex<float>,
                   Kokkos::complex<double>) {
  using T = TestType;
  const Kokkos::Cuda exec;
  // The originals in a fixed batch of layout Layout, factored both ways and compared.
  const auto check_fixed = [&](Triangle uplo, auto layout,
                               const std::vector<HostMatrix<T>>& originals) {
    const int n = originals[0].extent(0);
    check_both_ways(CudaKernel::block, uplo, originals,
                    device_batch_in<decltype(layout)>(originals, n, n),
                    device_batch_in<decltype(layout)>(originals, n, n));
  };

  for (const Triangle uplo : {Triangle::lower, Triangle::upper}) {
    CAPTURE(static_cast<int>(uplo));
    for (const auto [n, count] :
         std::vector<Case>{{33, 8},  {47, 6},  {63, 6},  {64, 6},  {65, 6},  {100, 6}, {127, 6},
                           {128, 6}, {200, 6}, {255, 6}, {256, 6}, {257, 6}, {300, 6}, {384, 6},
                           {400, 6}, {417, 6}, {448, 6}, {449, 6}, {480, 6}, {511, 6}, {512, 6}}) {
      CAPTURE(n);
      std::vector<HostMatrix<T>> originals;
      for (int b = 0; b < count; ++b) originals.push_back(cholesky_test_matrix<T>(n, b % 6));
      check_fixed(uplo, Kokkos::LayoutStride(), originals);
    }

    for (const std::vector<int>& sizes :
         {std::vector<int>{1, 256, 33,  0,  5,  47, 128, 64,  100, 31, 255,
                           2, 96,  129, 32, 63, 65, 127, 200, 40,  70},
          std::vector<int>{65, 40, 33, 64, 7, 0, 50, 36, 65, 64, 60, 34},
          std::vector<int>{512, 1, 300, 0, 257, 33, 450, 100, 256, 384}}) {
      std::vector<HostMatrix<T>> originals;
      for (size_t b = 0; b < sizes.size(); ++b)
        originals.push_back(cholesky_test_matrix<T>(sizes[b], b % 6));
      CAPTURE(sizes.size());
      check_both_ways(CudaKernel::block, uplo, originals, variable_batch(originals),
                      variable_batch(originals));
    }

    // Matrices interleaved (LayoutLeft) and stored by rows (LayoutRight): any strides.
    for (const int n : {33, 64, 100, 256}) {
      CAPTURE(n);
      std::vector<HostMatrix<T>> originals;
      for (int b = 0; b < 6; ++b) originals.push_back(cholesky_test_matrix<T>(n, b));
      check_fixed(uplo, Kokkos::LayoutLeft(), originals);
      check_fixed(uplo, Kokkos::LayoutRight(), originals);
    }
  }

  // A NaN diagonal stops its matrix at once; a NaN below the diagonal reaches a diagonal later.
  {
    const int n = 100, count = 3;
    std::vector<HostMatrix<T>> originals;
    for (int b = 0; b < count; ++b) originals.push_back(spd_matrix<T>(n));
    originals[1](0, 0) = T(std::numeric_limits<real_t<T>>::quiet_NaN());
    originals[2](60, 50) = originals[2](50, 60) = T(std::numeric_limits<real_t<T>>::quiet_NaN());
    auto fast = device_batch(originals, n, n);
    auto reference = device_batch(originals, n, n);
    Kokkos::View<int*> fast_info("info", count), reference_info("info", count);
    factor_both_ways(CudaKernel::block, Triangle::lower, fast, reference, fast_info,
                     reference_info);
    const auto infos = to_host(fast_info);
    const auto reference_infos = to_host(reference_info);
    CHECK(infos(0) == 0);
    CHECK(infos(1) == 1);
    CHECK(infos(2) == reference_infos(2));
    CHECK(infos(2) > 0);
  }

  const int limit = cuda::kernels::potrf_batched_block_max_size;
  CHECK(cuda::potrf_batched_fits(
      impl::matrices<Exec>(make_batch<T>("A", 2, limit, limit), "test", "A")));
  CHECK(!cuda::potrf_batched_fits(
      impl::matrices<Exec>(make_batch<T>("A", 2, limit + 1, limit + 1), "test", "A")));
  std::vector<HostMatrix<T>> beyond = {spd_matrix<T>(limit + 1), spd_matrix<T>(40)};
  auto A = variable_batch(beyond);
  CHECK(!cuda::potrf_batched_fits(impl::matrices<Exec>(A, "test", "A")));
  Kokkos::View<int*> info("info", A.count());
  potrf_batched(exec, Triangle::lower, A, info);
  const auto factors = host_matrices(A);
  const auto infos = to_host(info);
  for (int b = 0; b < 2; ++b) {
    CAPTURE(b);
    CHECK(infos(b) == 0);
    CHECK(cholesky_backward_error(beyond[b], factors[b], Triangle::lower) < 30);
  }
}
#endif

TEST_CASE("potrf_batched reaches every member of 2^29 + 4096 matrices", "[.huge][potrf_batched]") {
  const auto alone = batch_of_one_matrix(1, false);
  const auto A = batch_of_one_matrix(huge_batch, false);
  Kokkos::View<int*> alone_info("info", 1), info("info", huge_batch);
  potrf_batched(Exec(), Triangle::lower, alone, alone_info);
  potrf_batched(Exec(), Triangle::lower, A, info);
  CHECK(to_host(alone_info)(0) == 0);
  const auto differs = KOKKOS_LAMBDA(const long b) {
    bool unlike_alone = info(b) != alone_info(0);
    for (int j = 0; j < 4; ++j)
      for (int i = j; i < 4; ++i) unlike_alone = unlike_alone || unlike(A(b, i, j), alone(0, i, j));
    return unlike_alone;
  };
  CHECK(members_that_differ(huge_batch, differs) == 0);
}
