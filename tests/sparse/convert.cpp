#include "basalt/algorithms/sparse/convert.hpp"

#include <catch2/catch.hpp>
#include <climits>
#include <utility>
#include <vector>

#include "sparse_support.hpp"

using namespace basalt;
using test::Exec;

namespace {

using T = Kokkos::complex<double>;
using Rows = std::vector<std::vector<std::pair<int, T>>>;

Rows rows_of(const Csr<T>& A) {
  const auto host = copy_to<Kokkos::HostSpace>(A);
  Rows rows(A.num_rows);
  for (int r = 0; r < A.num_rows; ++r)
    for (int at = host.row_map(r); at < host.row_map(r + 1); ++at)
      rows[r].emplace_back(host.entries(at), host.values(at));
  return rows;
}

// Row r's stored entries; padding (column -1, value 0) must come after them and only there.
void take(std::vector<std::pair<int, T>>& row, bool& padding, int column, T value) {
  if (column < 0) {
    padding = true;
    REQUIRE(column == -1);
    REQUIRE(value == T(0));
    return;
  }
  REQUIRE_FALSE(padding);
  row.emplace_back(column, value);
}

Rows rows_of(const Ell<T>& A) {
  auto columns = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A.columns);
  auto values = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A.values);
  Rows rows(A.num_rows);
  for (int r = 0; r < A.num_rows; ++r) {
    bool padding = false;
    for (int k = 0; k < A.width; ++k) take(rows[r], padding, columns(r, k), values(r, k));
  }
  return rows;
}

Rows rows_of(const SellP<T>& A) {
  auto slice_ptr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A.slice_ptr);
  auto columns = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A.columns);
  auto values = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A.values);
  REQUIRE(slice_ptr.extent(0) == static_cast<size_t>(A.num_slices() + 1));
  REQUIRE(slice_ptr(0) == 0);
  REQUIRE(static_cast<size_t>(slice_ptr(A.num_slices())) == columns.extent(0));
  Rows rows(A.num_slices() * A.slice_size);
  for (int s = 0; s < A.num_slices(); ++s) {
    const int size = slice_ptr(s + 1) - slice_ptr(s);
    REQUIRE(size % (A.slice_size * A.alignment) == 0);
    const int width = size / A.slice_size;
    size_t longest = 0;
    for (int lane = 0; lane < A.slice_size; ++lane) {
      auto& row = rows[s * A.slice_size + lane];
      bool padding = false;
      for (int k = 0; k < width; ++k) {
        const int at = slice_ptr(s) + k * A.slice_size + lane;
        take(row, padding, columns(at), values(at));
      }
      longest = std::max(longest, row.size());
    }
    // Padded to the slice's longest row rounded up to the alignment, no further.
    REQUIRE(static_cast<size_t>(width) == (longest + A.alignment - 1) / A.alignment * A.alignment);
  }
  // The rows that pad the last slice are empty.
  for (size_t r = A.num_rows; r < rows.size(); ++r) REQUIRE(rows[r].empty());
  rows.resize(A.num_rows);
  return rows;
}

}  // namespace

TEST_CASE("CSR converts to ELL and SELL-P with every entry in place", "[sparse]") {
  const test::SparseShape shapes[] = {{0, 0, 0.5},   {0, 4, 0.5},
                                      {5, 0, 0.5},   {1, 1, 1.0},
                                      {33, 20, 0.0}, {70, 50, 0.1, true, true},
                                      {64, 64, 0.3}, {129, 10, 0.4, true, false}};
  for (const auto& shape : shapes) {
    CAPTURE(shape.rows, shape.cols, shape.density);
    const auto A = test::random_sparse<T>(shape);
    const Rows expected = rows_of(A.csr);

    const auto ell = to_ell(Exec(), A.csr);
    size_t longest = 0;
    for (const auto& row : expected) longest = std::max(longest, row.size());
    REQUIRE(ell.width == static_cast<int>(longest));
    REQUIRE(ell.num_cols == shape.cols);
    REQUIRE(rows_of(ell) == expected);

    for (int slice : {1, 2, 8, 32})
      for (int alignment : {1, 3, 4}) {
        CAPTURE(slice, alignment);
        const auto sellp = to_sellp(Exec(), A.csr, slice, alignment);
        REQUIRE(sellp.num_cols == shape.cols);
        REQUIRE(rows_of(sellp) == expected);
      }
  }
}

TEST_CASE("to_sellp names a bad slice size or alignment", "[sparse]") {
  const auto A = test::random_sparse<T>({10, 10, 0.3});
  REQUIRE_THROWS_WITH(to_sellp(Exec(), A.csr, 12, 4), Catch::Contains("'slice_size'"));
  REQUIRE_THROWS_WITH(to_sellp(Exec(), A.csr, 0, 4), Catch::Contains("'slice_size'"));
  REQUIRE_THROWS_WITH(to_sellp(Exec(), A.csr, 8, 0), Catch::Contains("'alignment'"));
}

// Small CSRs whose padded forms pass 2^31 - 1 entries: with the default int offsets that size
// wrapped (the ELL and SELL-P allocations of the wrapped or the true size then failed or were
// garbage); each must be refused naming A, before anything that size is allocated.
TEST_CASE("to_ell and to_sellp refuse a padded size past the offset type", "[sparse]") {
  // 70000 rows, one of 40000 entries: ELL 2.8e9 entries; SELL-P of 32-row slices 1.28e6, of
  // 65536-row slices 2.6e9.
  const auto one_long = test::long_rows_csr<T>(70000, 40000, {5}, 40000);
  CHECK(test::argument_of([&] { to_ell(Exec(), one_long); }) == "A");
  const auto fits = to_sellp(Exec(), one_long, 32, 4);
  CHECK(fits.stored() == 40000 * 32);
  CHECK(test::argument_of([&] { to_sellp(Exec(), one_long, 65536, 4); }) == "A");
  // Two slices of 1.3e9 entries each: each fits an int, their sum does not.
  const auto two_long = test::long_rows_csr<T>(65536, 40000, {0, 40000}, 40000);
  CHECK(test::argument_of([&] { to_sellp(Exec(), two_long, 32768, 4); }) == "A");
  // One entry padded by the alignment to 2^26 x 32 = 2^31.
  const auto single = test::long_rows_csr<T>(1, 1, {0}, 1);
  CHECK(test::argument_of([&] { to_sellp(Exec(), single, 32, 1 << 26); }) == "A");
}

TEST_CASE("SellP::num_slices does not wrap for row counts near the ordinal's maximum", "[sparse]") {
  SellP<T> A;
  A.num_rows = INT_MAX;
  A.slice_size = 32;
  CHECK(A.num_slices() == INT_MAX / 32 + 1);
  A.slice_size = 1;
  CHECK(A.num_slices() == INT_MAX);
  A.num_rows = 64;
  A.slice_size = 32;
  CHECK(A.num_slices() == 2);
  A.num_rows = 65;
  CHECK(A.num_slices() == 3);
}
