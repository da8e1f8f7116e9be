#include "basalt/core/flops.hpp"

#include <catch2/catch.hpp>

using namespace basalt;

TEST_CASE("flop counts follow LAPACK Working Note 41", "[core][flops]") {
  const double n = 1000;
  // Leading terms: getrf 2/3 n^3, potrf 1/3 n^3, geqrf 4/3 n^3, gemm 2 n^3.
  CHECK(flops::getrf<double>(n, n) == Approx(2.0 / 3 * n * n * n).epsilon(2e-3));
  CHECK(flops::potrf<double>(n) == Approx(1.0 / 3 * n * n * n).epsilon(2e-3));
  CHECK(flops::geqrf<double>(n, n) == Approx(4.0 / 3 * n * n * n).epsilon(3e-3));
  CHECK(flops::gemm<double>(n, n, n) == 2 * n * n * n);
  // Exact small cases of LAWN 41: a 1x1 LU counts one multiplication (the reciprocal); a 2x2
  // LU four multiplications and one addition.
  CHECK(flops::getrf<double>(1, 1) == Approx(1));
  CHECK(flops::getrf<double>(2, 2) == Approx(5));
  // Rectangular LU counts are symmetric in m and n; complex weighs 6 per mul, 2 per add.
  CHECK(flops::getrf<float>(300, 200) == flops::getrf<float>(200, 300));
  CHECK(flops::gemm<Kokkos::complex<double>>(10, 10, 10) == 8 * 1000);
  CHECK(flops::laswp_bytes<double>(100, 10) == 2 * 100 * 10 * 8);
  // ormqr: n reflectors of length n on an n x n C, about n^3 multiplications and n^3 additions;
  // the right side is the left one with m and n exchanged.
  CHECK(flops::ormqr<double>(true, n, n, n) == Approx(2.0 * n * n * n).epsilon(3e-3));
  CHECK(flops::ormqr<double>(false, 300, 200, 50) == flops::ormqr<double>(true, 200, 300, 50));
}
