#include "matrix_market.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

using basalt::perf::read_matrix_market;

namespace {

std::string write_file(const std::string& text) {
  char path[] = "/tmp/basalt-test-XXXXXX";
  close(mkstemp(path));
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST_CASE("Matrix Market files become dense column-major matrices", "[perf]") {
  const auto array = read_matrix_market(write_file(
      "%%MatrixMarket matrix array real general\n% comment\n2 3\n1\n2\n3\n4\n5\n6\n"));
  CHECK(array.m == 2);
  CHECK(array.n == 3);
  CHECK(array(1, 0).real() == 2);
  CHECK(array(0, 2).real() == 5);

  const auto symmetric = read_matrix_market(write_file(
      "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n1 1 4.5\n3 1 -2\n"));
  CHECK(symmetric(2, 0).real() == -2);
  CHECK(symmetric(0, 2).real() == -2);
  CHECK(symmetric(1, 1).real() == 0);

  const auto hermitian = read_matrix_market(
      write_file("%%MatrixMarket matrix coordinate complex hermitian\n2 2 1\n2 1 1 3\n"));
  CHECK(hermitian(1, 0) == std::complex<double>(1, 3));
  CHECK(hermitian(0, 1) == std::complex<double>(1, -3));
}

TEST_CASE("malformed Matrix Market files give a one-line error", "[perf]") {
  CHECK_THROWS_WITH(read_matrix_market("/nonexistent/file.mtx"), Catch::Contains("cannot read"));
  CHECK_THROWS_WITH(read_matrix_market(write_file("hello\n")), Catch::Contains("banner"));
  CHECK_THROWS_WITH(
      read_matrix_market(write_file("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n")),
      Catch::Contains("outside"));
  CHECK_THROWS_WITH(
      read_matrix_market(write_file("%%MatrixMarket matrix array real general\n2 2\n1\n2\n")),
      Catch::Contains("missing"));
}
