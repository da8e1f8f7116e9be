#include "basalt/algorithms/batched/batch.hpp"

#include <catch2/catch.hpp>
#include <random>

#include "batched/batch_support.hpp"

using namespace basalt;
using namespace basalt::test;

TEST_CASE("make_variable_batch sums up its sizes", "[batch]") {
  std::mt19937 rng(Catch::rngSeed());
  for (const int count : {0, 1, 7, 5000}) {
    CAPTURE(count);
    std::vector<int> rows(count), cols(count);
    for (int b = 0; b < count; ++b) {
      rows[b] = std::uniform_int_distribution<int>(0, 40)(rng);
      cols[b] = std::uniform_int_distribution<int>(0, 40)(rng);
    }
    const auto batch = make_variable_batch<double>("batch", rows, cols);
    REQUIRE(batch.count() == count);
    const int max_rows = count ? *std::max_element(rows.begin(), rows.end()) : 0;
    CHECK(batch.max_rows == max_rows);
    CHECK(batch.max_cols == (count ? *std::max_element(cols.begin(), cols.end()) : 0));
    CHECK(batch.min_cols == (count ? *std::min_element(cols.begin(), cols.end()) : 0));
    CHECK(batch.all_square == (rows == cols));
    CHECK(make_variable_batch<double>("square", rows, rows).all_square);
    REQUIRE(static_cast<int>(batch.with_rows.extent(0)) == max_rows + 1);
    for (int r = 0; r <= max_rows; ++r) {
      int with = 0, most_cols = 0;
      for (int b = 0; b < count; ++b)
        if (rows[b] == r) {
          ++with;
          most_cols = std::max(most_cols, cols[b]);
        }
      CHECK(batch.with_rows(r) == with);
      CHECK(batch.most_cols_with_rows(r) == most_cols);
    }
    // A permutation, rows never increasing, equal rows in the batch's order.
    const auto order = to_host(batch.most_rows_first);
    REQUIRE(static_cast<int>(order.extent(0)) == count);
    std::vector<int> seen(count, 0);
    for (int s = 0; s < count; ++s) {
      REQUIRE(order(s) >= 0);
      REQUIRE(order(s) < count);
      ++seen[order(s)];
      if (s > 0) {
        CHECK(rows[order(s - 1)] >= rows[order(s)]);
        if (rows[order(s - 1)] == rows[order(s)]) CHECK(order(s - 1) < order(s));
      }
    }
    CHECK(std::count(seen.begin(), seen.end(), 1) == count);
  }
}

TEST_CASE("make_variable_vectors for a batch of matrices", "[batch]") {
  const std::vector<int> rows = {3, 0, 7, 5}, cols = {4, 2, 7, 1};
  const auto A = make_variable_batch<float>("A", rows, cols);
  const auto tau = make_variable_vectors<float>("tau", A);
  REQUIRE(tau.count() == A.count());
  for (int b = 0; b < A.count(); ++b) {
    CHECK(tau.host_rows(b) == std::min(rows[b], cols[b]));
    CHECK(tau.host_cols(b) == 1);
  }
  CHECK(tau.made_for_rows.data() == A.host_rows.data());
  CHECK(tau.made_for_cols.data() == A.host_cols.data());
  CHECK(make_variable_vectors<float>("tau", min_dimensions(A)).made_for_rows.data() == nullptr);
}
