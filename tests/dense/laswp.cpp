#include "basalt/algorithms/dense/laswp.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "basalt/backends/host/lapacke.hpp"
#include "support.hpp"

using namespace basalt;
using test::Exec;

namespace {

enum class Pivots { getrf_like, anywhere, own_row };

std::vector<int> random_pivots(int m, int count, Pivots kind) {
  std::vector<int> ipiv(count);
  for (int k = 0; k < count; ++k) {
    switch (kind) {
      case Pivots::getrf_like:
        ipiv[k] = test::random_int(k + 1, m);
        break;
      case Pivots::anywhere:
        ipiv[k] = test::random_int(1, m);
        break;
      case Pivots::own_row:
        ipiv[k] = k + 1;
        break;
    }
  }
  return ipiv;
}

template <class Space = Exec::memory_space>
Kokkos::View<int*, Space> device_pivots(const std::vector<int>& ipiv) {
  Kokkos::View<int*, Space> d("ipiv", ipiv.size());
  Kokkos::deep_copy(d, Kokkos::View<const int*, Kokkos::HostSpace>(ipiv.data(), ipiv.size()));
  return d;
}

struct Case {
  int m, n, k1, k2;
  Pivots pivots;
  Direction direction;
};

// Runs basalt::laswp on the default execution space and LAPACKE on the host, on the same
// random matrix, in the layout Layout; `padded` makes A a sub-view of a larger allocation.
template <class T, class Layout>
void check_against_lapacke(const Case& c, bool padded) {
  CAPTURE(c.m, c.n, c.k1, c.k2, static_cast<int>(c.pivots), static_cast<int>(c.direction), padded);
  const int pad = padded ? 5 : 0;
  Kokkos::View<T**, Layout, Exec::memory_space> storage("A", c.m + pad, c.n + pad);
  auto A = Kokkos::subview(storage, std::make_pair(pad / 2, pad / 2 + c.m),
                           std::make_pair(pad / 2, pad / 2 + c.n));
  auto host_storage = Kokkos::create_mirror_view(storage);
  test::fill_random(host_storage);
  Kokkos::deep_copy(storage, host_storage);
  auto expected_storage = Kokkos::create_mirror(storage);
  Kokkos::deep_copy(expected_storage, host_storage);
  auto expected = Kokkos::subview(expected_storage, std::make_pair(pad / 2, pad / 2 + c.m),
                                  std::make_pair(pad / 2, pad / 2 + c.n));

  const auto ipiv = random_pivots(c.m, c.k2, c.pivots);
  laswp(Exec(), A, device_pivots(ipiv), c.k1, c.k2, c.direction);
  lapacke::laswp(expected, Kokkos::View<const int*, Kokkos::HostSpace>(ipiv.data(), ipiv.size()),
                 c.k1, c.k2, c.direction);

  auto result = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), storage);
  // Every element, the padding included, equals LAPACKE's: rows only move.
  CHECK(test::identical(result, expected_storage));
}

const std::vector<Case> cases = {
    {1, 1, 1, 1, Pivots::getrf_like, Direction::forward},
    {7, 3, 1, 7, Pivots::anywhere, Direction::forward},
    {7, 3, 1, 7, Pivots::anywhere, Direction::backward},
    {40, 17, 5, 20, Pivots::anywhere, Direction::forward},
    {40, 17, 5, 20, Pivots::getrf_like, Direction::backward},
    {64, 64, 1, 64, Pivots::own_row, Direction::forward},
    {200, 33, 1, 200, Pivots::getrf_like, Direction::forward},
    {300, 70, 129, 256, Pivots::getrf_like, Direction::forward},
    {513, 9, 1, 300, Pivots::anywhere, Direction::backward},
    {1000, 5, 600, 1000, Pivots::anywhere, Direction::forward},
};

}  // namespace

TEMPLATE_TEST_CASE("laswp applies LAPACK's row interchanges", "[laswp]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  for (const auto& c : cases) {
    for (bool padded : {false, true}) {
      check_against_lapacke<TestType, Kokkos::LayoutLeft>(c, padded);
      check_against_lapacke<TestType, Kokkos::LayoutRight>(c, padded);
    }
  }
}

TEST_CASE("laswp on empty ranges and zero sizes does nothing", "[laswp]") {
  Matrix<double> A("A", 4, 0);
  PivotVector<> ipiv("ipiv", 4);
  CHECK_NOTHROW(laswp(Exec(), A, ipiv, 1, 4));  // no columns: pivots are not read
  Matrix<double> empty("empty", 0, 3);
  PivotVector<> none("none", 0);
  CHECK_NOTHROW(laswp(Exec(), empty, none, 1, 0));

  Matrix<double> B("B", 3, 2);
  Kokkos::deep_copy(B, 1.5);
  CHECK_NOTHROW(laswp(Exec(), B, device_pivots({3, 3, 3}), 3, 2));  // k2 = k1 - 1: empty
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), B);
  CHECK(host(0, 0) == 1.5);
}

TEST_CASE("laswp rejects bad arguments and leaves A untouched", "[laswp]") {
  const int m = 10, n = 4;
  Matrix<double> A("A", m, n);
  auto host = Kokkos::create_mirror_view(A);
  test::fill_random(host);
  Kokkos::deep_copy(A, host);
  const std::vector<int> good = random_pivots(m, m, Pivots::getrf_like);

  auto expect_invalid = [&](const std::vector<int>& ipiv, int k1, int k2, const std::string& arg) {
    CAPTURE(k1, k2, arg);
    try {
      laswp(Exec(), A, device_pivots(ipiv), k1, k2);
      FAIL("no exception");
    } catch (const InvalidArgument& e) {
      CHECK(e.argument() == arg);
      CHECK(std::string(e.what()).find("laswp") != std::string::npos);
    }
    auto after = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A);
    CHECK(test::identical(after, host));
  };

  auto bad = good;
  bad[6] = m + 1;
  expect_invalid(bad, 1, m, "ipiv");
  bad[6] = 0;
  expect_invalid(bad, 1, m, "ipiv");
  bad[6] = -3;
  expect_invalid(bad, 3, 8, "ipiv");
  expect_invalid(good, 0, 3, "k1");
  expect_invalid(good, 5, 3, "k2");
  expect_invalid(std::vector<int>(good.begin(), good.begin() + 5), 1, 6, "k2");
  Matrix<double> short_A("short", 4, n);
  CHECK_THROWS_AS(laswp(Exec(), short_A, device_pivots(good), 1, 6), InvalidArgument);
  // A bad pivot outside k1..k2 is never read, so it is no error.
  bad = good;
  bad[9] = m + 7;
  CHECK_NOTHROW(laswp(Exec(), A, device_pivots(bad), 1, 9));
}

#if defined(BASALT_ENABLE_CUDA)
// The CUDA specialization against the portable implementation on the same input, on the GPU,
// across both of its movers (in place by columns, with 1 to 16 rows a thread; through the
// workspace for row-major A or touched rows beyond shared memory) and one to 64 segments.
TEMPLATE_TEST_CASE("cuda::laswp equals portable::laswp", "[laswp][cuda]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  const std::vector<Case> gpu_cases = {
      {50, 4, 1, 50, Pivots::anywhere, Direction::forward},
      {2000, 300, 1, 256, Pivots::getrf_like, Direction::forward},
      // Either side of the one-kernel path's bounds (512 interchanges, 512 columns).
      {600, 512, 1, 512, Pivots::anywhere, Direction::forward},
      {600, 513, 1, 512, Pivots::anywhere, Direction::backward},
      {3000, 700, 1, 513, Pivots::getrf_like, Direction::forward},
      {2000, 300, 1, 256, Pivots::anywhere, Direction::backward},
      {4096, 64, 1, 4096, Pivots::getrf_like, Direction::forward},
      {20000, 8, 1, 20000, Pivots::getrf_like, Direction::backward},
      {20000, 8, 3001, 11000, Pivots::anywhere, Direction::forward},
      {40000, 3, 1, 40000, Pivots::anywhere, Direction::backward},
  };
  for (const auto& c : gpu_cases) {
    CAPTURE(c.m, c.n, c.k1, c.k2, static_cast<int>(c.pivots), static_cast<int>(c.direction));
    const auto ipiv = device_pivots(random_pivots(c.m, c.k2, c.pivots));
    auto run_both = [&](auto layout) {
      using Layout = decltype(layout);
      Kokkos::View<TestType**, Layout, Kokkos::CudaSpace> fast("fast", c.m, c.n);
      auto host = Kokkos::create_mirror_view(fast);
      test::fill_random(host);
      Kokkos::deep_copy(fast, host);
      Kokkos::View<TestType**, Layout, Kokkos::CudaSpace> reference("reference", c.m, c.n);
      Kokkos::deep_copy(reference, fast);
      const Kokkos::Cuda exec;
      cuda::laswp(exec, fast, ipiv, c.k1, c.k2, c.direction);
      portable::laswp(exec, reference, ipiv, c.k1, c.k2, c.direction);
      exec.fence();
      auto fast_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fast);
      auto reference_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), reference);
      CHECK(test::identical(fast_host, reference_host));
      CHECK(!test::identical(fast_host, host));  // something moved: the test can fail
    };
    run_both(Kokkos::LayoutLeft());
    run_both(Kokkos::LayoutRight());
  }
}
#endif
