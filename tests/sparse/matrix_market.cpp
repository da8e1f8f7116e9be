#include "basalt/algorithms/sparse/matrix_market.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "sparse_support.hpp"

using namespace basalt;
using test::Exec;

namespace {

template <class T>
Csr<T> read(const std::string& text) {
  std::istringstream in(text);
  return read_matrix_market<T>(in);
}

// (row, column, value) of every stored entry, in storage order.
template <class T>
std::vector<std::tuple<int, int, T>> entries_of(const Csr<T>& A) {
  const auto host = copy_to<Kokkos::HostSpace>(A);
  std::vector<std::tuple<int, int, T>> all;
  for (int r = 0; r < A.num_rows; ++r)
    for (int at = host.row_map(r); at < host.row_map(r + 1); ++at)
      all.emplace_back(r, host.entries(at), host.values(at));
  return all;
}

}  // namespace

TEST_CASE("Matrix Market: columns sorted, duplicates summed", "[sparse]") {
  const auto A = read<double>(
      "%%MatrixMarket matrix coordinate real general\n"
      "% a comment\n"
      "\n"
      "3 4 5\n"
      "2 4 1.5\n"
      "1 3 -2\n"
      "2 1 4e-1\n"
      "2 4 0.25\n"
      "1 1 3\n");
  REQUIRE(A.num_rows == 3);
  REQUIRE(A.num_cols == 4);
  using E = std::tuple<int, int, double>;
  REQUIRE(entries_of(A) == std::vector<E>{{0, 0, 3.0}, {0, 2, -2.0}, {1, 0, 0.4}, {1, 3, 1.75}});
}

TEST_CASE("Matrix Market: symmetric, skew-symmetric, Hermitian, pattern and integer", "[sparse]") {
  using E = std::tuple<int, int, double>;
  REQUIRE(entries_of(read<double>("%%MatrixMarket matrix coordinate real symmetric\n"
                                  "2 2 2\n1 1 5\n2 1 -1\n")) ==
          std::vector<E>{{0, 0, 5.0}, {0, 1, -1.0}, {1, 0, -1.0}});
  REQUIRE(entries_of(read<double>("%%MatrixMarket matrix coordinate integer skew-symmetric\n"
                                  "3 3 1\n3 1 7\n")) == std::vector<E>{{0, 2, -7.0}, {2, 0, 7.0}});
  REQUIRE(entries_of(read<double>("%%MatrixMarket matrix coordinate pattern general\n"
                                  "2 3 2\n2 3\n1 2\n")) ==
          std::vector<E>{{0, 1, 1.0}, {1, 2, 1.0}});
  using Z = Kokkos::complex<double>;
  using EZ = std::tuple<int, int, Z>;
  REQUIRE(entries_of(read<Z>("%%MatrixMarket matrix coordinate complex hermitian\n"
                             "2 2 2\n1 1 2 0\n2 1 1 3\n")) ==
          std::vector<EZ>{{0, 0, Z(2, 0)}, {0, 1, Z(1, -3)}, {1, 0, Z(1, 3)}});
  // An empty matrix, and one with no entries.
  REQUIRE(read<double>("%%MatrixMarket matrix coordinate real general\n0 0 0\n").num_rows == 0);
  const auto empty = read<float>("%%MatrixMarket matrix coordinate real general\n4 2 0\n");
  REQUIRE(empty.num_rows == 4);
  REQUIRE(empty.nnz() == 0);
}

TEMPLATE_TEST_CASE("Matrix Market: written and read back unchanged", "[sparse]", float, double,
                   Kokkos::complex<float>, Kokkos::complex<double>) {
  for (const test::SparseShape& shape :
       {test::SparseShape{0, 0, 0.5}, test::SparseShape{50, 30, 0.2, true, true},
        test::SparseShape{7, 90, 0.1}}) {
    const auto A = test::random_sparse<TestType>(shape);
    std::stringstream file;
    write_matrix_market(file, A.csr);
    const auto back = read_matrix_market<TestType>(file);
    REQUIRE(back.num_rows == shape.rows);
    REQUIRE(back.num_cols == shape.cols);
    REQUIRE(entries_of(back) == entries_of(A.csr));
  }
}

TEST_CASE("Matrix Market: a malformed file names its line", "[sparse]") {
  const std::string general = "%%MatrixMarket matrix coordinate real general\n";
  const std::pair<std::string, std::string> cases[] = {
      {"", "input:0: empty file"},
      {"%%MatrixMarket matrix array real general\n2 2\n", "input:1: format 'array'"},
      {"%MatrixMarket matrix coordinate real general\n", "input:1: no '%%MatrixMarket matrix'"},
      {"%%MatrixMarket matrix coordinate real sideways\n", "input:1: symmetry 'sideways'"},
      {"%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 1\n",
       "input:1: a complex matrix cannot be read into a real"},
      {general + "% only comments\n", "input:2: no size line"},
      {general + "3 3\n", "input:2: the size line must be"},
      {general + "3 -3 1\n", "input:2: the size line must be"},
      {general + "2 2 2\n1 1 1.0\n", "input:3: the file ends after 1 of 2 entries"},
      {general + "2 2 1\n1 1 1.0\n2 2 1.0\n", "input:4: more entries than the 1"},
      {general + "2 2 2\n1 1 1.0\n3 1 2.0\n", "input:4: entry (3, 1) is outside the 2 x 2"},
      {general + "2 2 1\n0 1 1.0\n", "input:3: entry (0, 1) is outside"},
      {general + "2 2 1\n1 1 abc\n", "input:3: a real entry's value is missing or malformed"},
      {general + "2 2 1\n1 1\n", "input:3: a real entry's value"},
      {general + "2 2 1\n1 x 1\n", "input:3: an entry must start with its row and column"},
      {general + "2 2 1\n1 1 1.0 2.0\n", "input:3: unexpected '2.0' after the entry"},
      {"%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 2 1\n",
       "input:3: a symmetric file holds the lower triangle only"},
      {"%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 1\n",
       "input:3: a skew-symmetric file has no diagonal"},
      {"%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n",
       "input:2: a symmetric matrix must be square"},
      {"%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 2.5\n",
       "input:3: unexpected '.5'"},
  };
  for (const auto& [text, message] : cases) {
    CAPTURE(text);
    REQUIRE_THROWS_AS(read<double>(text), InvalidArgument);
    REQUIRE_THROWS_WITH(read<double>(text), Catch::Contains(message));
  }
  REQUIRE_THROWS_WITH(read_matrix_market<double>(std::string("/nonexistent/a.mtx")),
                      Catch::Contains("'path'"));
}

// Sizes in the size line past what the ordinal and offset types hold, or past memory: each
// throws naming the file, before anything that size is reserved (the count went to
// std::vector::reserve unchecked: bad_alloc or length_error, not a named argument).
TEST_CASE("Matrix Market: sizes past the types or memory name the file", "[sparse]") {
  const std::string general = "%%MatrixMarket matrix coordinate real general\n";
  const std::string symmetric = "%%MatrixMarket matrix coordinate real symmetric\n";
  const std::pair<std::string, std::string> cases[] = {
      {general + "3000000000 1 0\n", "input:2: the matrix is too large for the ordinal type"},
      {general + "1 3000000000 0\n", "input:2: the matrix is too large for the ordinal type"},
      {general + "2 2 3000000000\n1 1 1\n",
       "input:2: the size line announces 3000000000 entries, more than the offset type holds"},
  };
  for (const auto& [text, message] : cases) {
    CAPTURE(text);
    CHECK_THROWS_AS(read<double>(text), InvalidArgument);
    CHECK_THROWS_WITH(read<double>(text), Catch::Contains(message));
  }
  // int offsets: 2^31 - 1 entries fit the type; their 51 GB either are not there (a bad file) or
  // the file ends early. Either way a named argument.
  CHECK_THROWS_AS(read<double>(general + "2 2 2147483647\n1 1 1\n"), InvalidArgument);
  // int64 offsets: counts the type holds but no memory does (length_error from reserve before).
  for (const std::string& text : {general + "2 2 1000000000000000000\n1 1 1\n",
                                  symmetric + "2 2 5000000000000000000\n1 1 1\n"}) {
    CAPTURE(text);
    const auto read_wide = [&] {
      std::istringstream in(text);
      return read_matrix_market<double, int, Kokkos::HostSpace, std::int64_t>(in);
    };
    CHECK_THROWS_AS(read_wide(), InvalidArgument);
    CHECK_THROWS_WITH(read_wide(), Catch::Contains("input:2: the size line announces") &&
                                       Catch::Contains("more than memory holds"));
  }
}
