#include "basalt/algorithms/sparse/spmv.hpp"

#include <KokkosSparse_spmv.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>

#include "basalt/algorithms/sparse/convert.hpp"
#include "sparse_support.hpp"

using namespace basalt;
using test::Exec;

namespace {

const test::SparseShape shapes[] = {
    {0, 0, 0.5},
    {0, 7, 0.5},
    {7, 0, 0.5},
    {1, 1, 1.0},
    {40, 40, 0.2},
    {100, 37, 0.1},
    {37, 100, 0.1},
    {60, 60, 0.0},
    {130, 90, 0.05, true, true},
    {200, 200, 0.03, true, false},
    {64, 300, 0.0, false, true},  // one dense row, every other row empty
};

// y = alpha A x + beta y on the host, and for each entry the bound on its rounding error.
template <class T, class XHost, class YHost>
void reference(const test::SparseCase<T>& A, T alpha, const XHost& X, T beta, YHost& Y,
               std::vector<double>& bound) {
  using R = real_t<T>;
  const double eps = std::numeric_limits<R>::epsilon();
  bound.assign(Y.extent(0) * Y.extent(1), 0.0);
  for (size_t j = 0; j < Y.extent(1); ++j)
    for (int i = 0; i < A.rows; ++i) {
      T sum(0);
      double size = 0;
      for (int c = 0; c < A.cols; ++c) {
        if (A(i, c) == T(0)) continue;  // the dense product's zeros add nothing to sum or bound
        sum += A(i, c) * X(c, j);
        size += magnitude(A(i, c)) * magnitude(X(c, j));
      }
      const T old = Y(i, j);
      Y(i, j) = beta == T(0) ? alpha * sum : alpha * sum + beta * old;
      const double y_size = beta == T(0) ? 0.0 : magnitude(beta) * magnitude(old);
      bound[i + j * Y.extent(0)] = 8 * (A.cols + 4) * eps * (magnitude(alpha) * size + y_size);
    }
}

// One assertion per product (per-entry assertions would dominate the run time): the first
// entry outside its bound, if any.
template <class YHost, class ExpectedHost>
void check_close(const YHost& got, const ExpectedHost& expected, const std::vector<double>& bound) {
  for (size_t j = 0; j < got.extent(1); ++j)
    for (size_t i = 0; i < got.extent(0); ++i) {
      const double error = magnitude(got(i, j) - expected(i, j));
      if (std::isfinite(error) && error <= bound[i + j * got.extent(0)]) continue;
      CAPTURE(i, j, error, bound[i + j * got.extent(0)]);
      FAIL("an entry of the product is outside its rounding-error bound");
    }
  SUCCEED();
}

// Runs spmm (or spmv when k = 0, on a rank-1 View) with matrix M against the dense reference.
template <class T, class Layout, class Matrix>
void check_product(const test::SparseCase<T>& A, const Matrix& M, int k, T alpha, T beta) {
  CAPTURE(A.rows, A.cols, k);
  const int vectors = k == 0 ? 1 : k;
  Kokkos::View<T**, Layout, Exec::memory_space> X("X", A.cols, vectors), Y("Y", A.rows, vectors);
  auto host_X = Kokkos::create_mirror_view(X);
  auto host_Y = Kokkos::create_mirror_view(Y);
  test::fill_random(host_X);
  test::fill_random(host_Y);
  // beta = 0 must overwrite Y without reading it.
  if (beta == T(0) && host_Y.size() > 0) host_Y(0, 0) = T(std::numeric_limits<double>::quiet_NaN());
  Kokkos::deep_copy(X, host_X);
  Kokkos::deep_copy(Y, host_Y);
  std::vector<double> bound;
  auto expected = Kokkos::create_mirror(Kokkos::HostSpace(), Y);
  Kokkos::deep_copy(expected, host_Y);
  reference(A, alpha, host_X, beta, expected, bound);
  if (k == 0)
    spmv(Exec(), alpha, M, Kokkos::subview(X, Kokkos::ALL, 0), beta,
         Kokkos::subview(Y, Kokkos::ALL, 0));
  else
    spmm(Exec(), alpha, M, X, beta, Y);
  Kokkos::deep_copy(host_Y, Y);
  check_close(host_Y, expected, bound);
}

// Every alpha/beta case on SpMV and a 3-vector SpMM, the vector counts of the SELL-P kernels'
// special cases (1 and 16) on one case, both layouts.
template <class T, class Matrix>
void check_all_products(const test::SparseCase<T>& A, const Matrix& M) {
  const std::pair<T, T> alpha_beta[] = {
      {T(1), T(0)}, {T(-2.5), T(1)}, {T(0), T(0.5)}, {T(0.75), T(-1)}};
  for (const auto& [alpha, beta] : alpha_beta)
    for (int k : {0, 3}) {
      check_product<T, Kokkos::LayoutLeft>(A, M, k, alpha, beta);
      check_product<T, Kokkos::LayoutRight>(A, M, k, alpha, beta);
    }
  for (int k : {1, 16}) {
    check_product<T, Kokkos::LayoutLeft>(A, M, k, T(1.5), T(-0.5));
    check_product<T, Kokkos::LayoutRight>(A, M, k, T(1.5), T(-0.5));
  }
}

}  // namespace

TEMPLATE_TEST_CASE("spmv and spmm match the dense product in every format", "[sparse]", float,
                   double, Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  for (const auto& shape : shapes) {
    CAPTURE(shape.rows, shape.cols, shape.density, shape.empty_rows, shape.dense_row);
    const auto A = test::random_sparse<T>(shape);
    check_all_products(A, A.csr);
    check_all_products(A, to_ell(Exec(), A.csr));
    for (const auto [slice, alignment] : {std::pair{1, 1}, std::pair{4, 3}, std::pair{32, 4}}) {
      CAPTURE(slice, alignment);
      check_all_products(A, to_sellp(Exec(), A.csr, slice, alignment));
    }
  }
}

// Rows longer than portable::impl::long_row_entries go to the chunked kernel: a full row among
// short ones, and rows that all are long (with empty rows between), so that chunks start and end
// inside long rows and hold two of them.
TEMPLATE_TEST_CASE("spmv and spmm on CSR rows longer than a chunk", "[sparse]", float, double,
                   Kokkos::complex<double>) {
  static_assert(portable::impl::long_row_entries < 2100);
  for (const test::SparseShape shape : {test::SparseShape{300, 2100, 0.01, false, true},
                                        test::SparseShape{40, 2500, 0.5, true, true}}) {
    const auto A = test::random_sparse<TestType>(shape);
    check_all_products(A, A.csr);
  }
}

// An int64 offset type: the kernels' positions (SELL-P's slice offsets, the long-row chunks) and
// the conversions in that type, against the dense product.
TEST_CASE("spmv and spmm with int64 offsets in every format", "[sparse]") {
  using T = double;
  for (const test::SparseShape shape : {test::SparseShape{130, 90, 0.05, true, true},
                                        test::SparseShape{40, 2100, 0.02, true, true}}) {
    CAPTURE(shape.rows, shape.cols);
    const auto A = test::random_sparse<T>(shape);
    const auto wide = test::with_offset<std::int64_t>(A.csr);
    check_all_products(A, wide);
    check_all_products(A, to_ell(Exec(), wide));
    for (const auto [slice, alignment] : {std::pair{1, 1}, std::pair{4, 3}, std::pair{32, 4}}) {
      CAPTURE(slice, alignment);
      check_all_products(A, to_sellp(Exec(), wide, slice, alignment));
    }
  }
}

// The hidden case's matrix: 2^21 rows of 1025 entries (2^31 + 2^21 in all), each row's columns
// in order, and x; small integers, so that every product's sum is exact.
namespace huge {
using Offset = std::int64_t;
constexpr int rows = 1 << 21, cols = 1 << 20, per_row = 1025;
KOKKOS_INLINE_FUNCTION int column(int i, int k) { return i * 7 % (cols - per_row) + k; }
KOKKOS_INLINE_FUNCTION double value(int i, int k) { return 1 + (i + k) % 3; }
KOKKOS_INLINE_FUNCTION double x_at(int j) { return j % 5; }

Csr<double, int, Exec::memory_space, Offset> matrix() {
  Csr<double, int, Exec::memory_space, Offset> A;
  A.num_rows = rows;
  A.num_cols = cols;
  Kokkos::View<Offset*, Exec::memory_space> row_map("row_map", rows + 1);
  const decltype(A.entries) entries("entries", Offset(rows) * per_row);
  const decltype(A.values) values("values", Offset(rows) * per_row);
  Kokkos::parallel_for(
      "fill", Kokkos::RangePolicy<Exec>(0, rows), KOKKOS_LAMBDA(const int i) {
        const Offset first = Offset(i) * per_row;
        row_map(i + 1) = first + per_row;
        for (int k = 0; k < per_row; ++k) {
          entries(first + k) = column(i, k);
          values(first + k) = value(i, k);
        }
      });
  A.row_map = row_map;
  A.entries = entries;
  A.values = values;
  return A;
}

// Rows of y or Y (y's sums times 1 and -2) that differ from expected: exactly, since every sum
// is an integer below 2^14.
template <class YView, class YsView>
int wrong_rows(const YView& y, const YsView& Y, const YView& expected) {
  int wrong = 0;
  Kokkos::parallel_reduce(
      "compare", Kokkos::RangePolicy<Exec>(0, rows),
      KOKKOS_LAMBDA(const int i, int& count) {
        count += y(i) != expected(i) || Y(i, 0) != expected(i) || Y(i, 1) != -2 * expected(i);
      },
      wrong);
  return wrong;
}
}  // namespace huge

// More stored entries than int counts, in int64 offsets: the positions past 2^31 in the CSR
// kernel (rows longer than a chunk) and in SELL-P's slices, on the build's device. y is checked
// exactly against sums from the formulas that made A, not from A. Hidden (about 26 GB in CSR and
// as much again in SELL-P): run it with "[huge]".
TEST_CASE("spmv and spmm past 2^31 stored entries, int64 offsets", "[.huge][sparse]") {
  using T = double;
  using huge::rows, huge::cols, huge::per_row;
  auto A = huge::matrix();
  REQUIRE(A.nnz() > huge::Offset(std::numeric_limits<int>::max()));
  Kokkos::View<T*, Exec::memory_space> x("x", cols), expected("expected", rows), y("y", rows);
  Kokkos::View<T**, Kokkos::LayoutRight, Exec::memory_space> X("X", cols, 2), Y("Y", rows, 2);
  Kokkos::parallel_for(
      "x", Kokkos::RangePolicy<Exec>(0, cols), KOKKOS_LAMBDA(const int j) {
        x(j) = X(j, 0) = huge::x_at(j);
        X(j, 1) = -2 * huge::x_at(j);
      });
  Kokkos::parallel_for(
      "expected", Kokkos::RangePolicy<Exec>(0, rows), KOKKOS_LAMBDA(const int i) {
        T sum = 0;
        for (int k = 0; k < per_row; ++k) sum += huge::value(i, k) * huge::x_at(huge::column(i, k));
        expected(i) = sum;
      });
  spmv(Exec(), T(1), A, x, T(0), y);
  spmm(Exec(), T(1), A, X, T(0), Y);
  CHECK(huge::wrong_rows(y, Y, expected) == 0);
  const auto sellp = to_sellp(Exec(), A, 32, 4);
  REQUIRE(sellp.stored() > huge::Offset(std::numeric_limits<int>::max()));
  Kokkos::deep_copy(y, T(-1));
  Kokkos::deep_copy(Y, T(-1));
  spmv(Exec(), T(1), sellp, x, T(0), y);
  spmm(Exec(), T(1), sellp, X, T(0), Y);
  CHECK(huge::wrong_rows(y, Y, expected) == 0);
}

TEST_CASE("spmm takes strided sub-views", "[sparse]") {
  using T = Kokkos::complex<double>;
  const auto A = test::random_sparse<T>({50, 30, 0.2, true, true});
  const auto sellp = to_sellp(Exec(), A.csr, 8, 2);
  Kokkos::View<T**, Kokkos::LayoutLeft, Exec::memory_space> X_storage("X", 35, 9),
      Y_storage("Y", 56, 9);
  const auto X = Kokkos::subview(X_storage, std::make_pair(2, 32), std::make_pair(1, 9));
  const auto Y = Kokkos::subview(Y_storage, std::make_pair(3, 53), std::make_pair(1, 9));
  auto host_X = Kokkos::create_mirror_view(X_storage),
       host_Y = Kokkos::create_mirror_view(Y_storage);
  test::fill_random(host_X);
  test::fill_random(host_Y);
  Kokkos::deep_copy(X_storage, host_X);
  Kokkos::deep_copy(Y_storage, host_Y);
  auto expected = Kokkos::create_mirror(Kokkos::HostSpace(), Y_storage);
  Kokkos::deep_copy(expected, host_Y);
  auto expected_Y = Kokkos::subview(expected, std::make_pair(3, 53), std::make_pair(1, 9));
  std::vector<double> bound;
  reference(A, T(2, 1), Kokkos::subview(host_X, std::make_pair(2, 32), std::make_pair(1, 9)),
            T(0.5, -1), expected_Y, bound);
  spmm(Exec(), T(2, 1), sellp, X, T(0.5, -1), Y);
  Kokkos::deep_copy(host_Y, Y_storage);
  check_close(Kokkos::subview(host_Y, std::make_pair(3, 53), std::make_pair(1, 9)), expected_Y,
              bound);
  // Outside the sub-view nothing moved.
  for (int j = 0; j < 9; ++j)
    for (int i = 0; i < 56; ++i)
      if (j == 0 || i < 3 || i >= 53) REQUIRE(host_Y(i, j) == expected(i, j));
}

TEST_CASE("spmv agrees with Kokkos Kernels on a CrsMatrix, without copying it", "[sparse]") {
  using T = double;
  const auto A = test::random_sparse<T>({80, 60, 0.1, true, true});
  const auto crs = to_crs_matrix<Exec>(A.csr);
  const auto back = make_csr(crs);
  REQUIRE(back.values.data() == A.csr.values.data());
  REQUIRE(back.entries.data() == A.csr.entries.data());
  REQUIRE(back.row_map.data() == A.csr.row_map.data());
  Kokkos::View<T*, Exec::memory_space> x("x", 60), ours("ours", 80), theirs("theirs", 80);
  Kokkos::deep_copy(x, 1.5);
  Kokkos::deep_copy(ours, 2.0);
  Kokkos::deep_copy(theirs, 2.0);
  spmv(Exec(), 3.0, back, x, -1.0, ours);
  KokkosSparse::spmv("N", 3.0, crs, x, -1.0, theirs);
  auto host_ours = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ours);
  auto host_theirs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), theirs);
  for (int i = 0; i < 80; ++i) REQUIRE(std::abs(host_ours(i) - host_theirs(i)) <= 1e-12 * 80);
}

TEST_CASE("spmv and spmm name the argument whose size does not fit", "[sparse]") {
  const auto A = test::random_sparse<double>({6, 4, 0.5});
  Kokkos::View<double*, Exec::memory_space> x("x", 4), y("y", 6), wrong("wrong", 5);
  Kokkos::View<double**, Exec::memory_space> X("X", 4, 2), Y("Y", 6, 2), Y3("Y3", 6, 3);
  CHECK(test::argument_of([&] { spmv(Exec(), 1.0, A.csr, wrong, 0.0, y); }) == "x");
  CHECK(test::argument_of([&] { spmv(Exec(), 1.0, A.csr, x, 0.0, wrong); }) == "y");
  CHECK(test::argument_of([&] { spmm(Exec(), 1.0, A.csr, Y, 0.0, Y); }) == "X");
  CHECK(test::argument_of([&] { spmm(Exec(), 1.0, A.csr, X, 0.0, Y3); }) == "Y");
  CHECK(test::argument_of([&] { spmm(Exec(), 1.0, A.csr, X, 0.0, Y); }) == "none");
}

TEST_CASE("padding never reads x: a NaN in x reaches only the rows that use it", "[sparse]") {
  using T = double;
  const auto A = test::random_sparse<T>({45, 12, 0.2, true, true});
  Kokkos::View<T*, Exec::memory_space> x("x", 12), y("y", 45);
  Kokkos::deep_copy(x, 1.0);
  Kokkos::deep_copy(Kokkos::subview(x, 0), std::numeric_limits<T>::quiet_NaN());
  auto check = [&](const auto& M) {
    spmv(Exec(), 1.0, M, x, 0.0, y);
    auto host_y = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    for (int i = 0; i < 45; ++i) {
      CAPTURE(i);
      REQUIRE(std::isnan(host_y(i)) == (A(i, 0) != 0));
    }
  };
  check(A.csr);
  check(to_ell(Exec(), A.csr));
  check(to_sellp(Exec(), A.csr, 8, 4));
}

#if defined(BASALT_ENABLE_CUDA)
// The specialization against the portable kernel on the same operands (both also meet the dense
// reference above, through basalt::spmm's dispatch): every vector-group size and threads per row,
// more vectors than one pass takes, the 16-byte loads (even leading dimension) and scalar loads
// (odd), beta = 0 over NaN.
TEMPLATE_TEST_CASE("cuda::sellp_spmm equals portable::spmm", "[sparse][cuda]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  using T = TestType;
  const auto A = test::random_sparse<T>({300, 250, 0.04, true, true});
  for (const auto [slice, alignment] : {std::pair{32, 4}, std::pair{8, 1}}) {
    const auto sellp = to_sellp(Exec(), A.csr, slice, alignment);
    for (int k : {1, 2, 3, 4, 7, 8, 9, 16, 19, 32, 33, 70}) {
      for (const auto [alpha, beta] : {std::pair{T(1), T(0)}, std::pair{T(-0.5), T(2)}}) {
        CAPTURE(slice, alignment, k);
        Kokkos::View<T**, Kokkos::LayoutRight, Exec::memory_space> X("X", 250, k),
            ours("ours", 300, k), portable_Y("portable", 300, k);
        auto host_X = Kokkos::create_mirror_view(X);
        auto host_Y = Kokkos::create_mirror_view(ours);
        test::fill_random(host_X);
        test::fill_random(host_Y);
        if (beta == T(0)) host_Y(0, 0) = T(std::numeric_limits<double>::quiet_NaN());
        Kokkos::deep_copy(X, host_X);
        Kokkos::deep_copy(ours, host_Y);
        Kokkos::deep_copy(portable_Y, host_Y);
        REQUIRE(Specialization<routine::spmm, Kokkos::Cuda>::applies(X, ours));
        cuda::sellp_spmm(Kokkos::Cuda(), alpha, sellp, X, beta, ours);
        portable::spmm(Kokkos::Cuda(), alpha, sellp, X, beta, portable_Y);
        auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ours);
        auto expected = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), portable_Y);
        const double eps = std::numeric_limits<real_t<T>>::epsilon();
        check_close(got, expected, std::vector<double>(300 * k, 64 * 250 * eps));
      }
    }
  }
}

// More vectors than gridDim.y's 65535 passes take (16 complex<double> vectors a pass): the launch
// failed with an invalid configuration; now one launch per 65535 passes.
TEST_CASE("cuda::sellp_spmm takes more vectors than one launch's grid", "[sparse][cuda]") {
  using T = Kokkos::complex<double>;
  const auto A = test::random_sparse<T>({3, 2, 1.0});
  const auto sellp = to_sellp(Exec(), A.csr, 32, 4);
  const int k = 65535 * 16 + 5;
  Kokkos::View<T**, Kokkos::LayoutRight, Exec::memory_space> X("X", 2, k), ours("ours", 3, k),
      portable_Y("portable", 3, k);
  auto host_X = Kokkos::create_mirror_view(X);
  test::fill_random(host_X);
  Kokkos::deep_copy(X, host_X);
  cuda::sellp_spmm(Kokkos::Cuda(), T(1), sellp, X, T(0), ours);
  portable::spmm(Kokkos::Cuda(), T(1), sellp, X, T(0), portable_Y);
  auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ours);
  auto expected = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), portable_Y);
  const double eps = std::numeric_limits<double>::epsilon();
  check_close(got, expected, std::vector<double>(3 * static_cast<size_t>(k), 64 * 2 * eps));
}
#endif
