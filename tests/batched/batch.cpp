#include "basalt/algorithms/batched/batch.hpp"

#include <catch2/catch.hpp>
#include <random>

#include "basalt/algorithms/batched/geqrf_batched.hpp"
#include "basalt/algorithms/batched/getrf_batched.hpp"
#include "basalt/algorithms/batched/potrf_batched.hpp"
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

namespace {

using Exec = Kokkos::DefaultExecutionSpace;

// A batch of `count` 4 x 4 matrices, every one a positive definite matrix or, `pivoted`, that
// matrix with its rows reversed, which LU must pivot.
BatchView<float> batch_of(long count, bool pivoted) {
  const auto batch = make_batch<float>("A", count, 4, 4);
  Kokkos::parallel_for(
      "fill", Kokkos::RangePolicy<Exec>(0, count), KOKKOS_LAMBDA(const long b) {
        for (int j = 0; j < 4; ++j)
          for (int i = 0; i < 4; ++i) {
            const int row = pivoted ? 3 - i : i;
            batch(b, i, j) = row == j ? 5.0f + j : 1.0f / (1 + row + j);
          }
      });
  return batch;
}

// Whether x and the same entry of the matrix factored alone differ by more than rounding.
KOKKOS_INLINE_FUNCTION bool unlike(float x, float alone) {
  return !(magnitude(x - alone) <= 1e-5f * (1 + magnitude(alone)));
}

// How many of the first `count` members differ(b) says differ from the matrix factored alone.
template <class Differs>
long members_that_differ(long count, const Differs& differs) {
  long found = 0;
  Kokkos::parallel_reduce(
      "differ", Kokkos::RangePolicy<Exec>(0, count),
      KOKKOS_LAMBDA(const long b, long& sum) { sum += differs(b) ? 1 : 0; }, found);
  return found;
}

}  // namespace

// The warp kernels run a 4 x 4 matrix in 4 lanes, so 2^29 + 4096 of them take more than 2^31
// threads; each member must come out as the same matrix factored alone. Hidden (about 45 GB of
// device memory); scripts/gpu_check.sh runs it.
TEST_CASE("The batched factorizations reach every member of 2^29 + 4096 matrices",
          "[.huge][batch]") {
  const long count = (1L << 29) + 4096;
  const Exec exec;
  SECTION("getrf_batched") {
    const auto alone = batch_of(1, true);
    const auto A = batch_of(count, true);
    Kokkos::View<int**> alone_ipiv("ipiv", 1, 4), ipiv("ipiv", count, 4);
    Kokkos::View<int*> alone_info("info", 1), info("info", count);
    getrf_batched(exec, alone, alone_ipiv, alone_info);
    getrf_batched(exec, A, ipiv, info);
    CHECK(to_host(alone_ipiv)(0, 0) == 4);
    const auto differs = KOKKOS_LAMBDA(const long b) {
      bool unlike_alone = info(b) != alone_info(0);
      for (int j = 0; j < 4; ++j) {
        unlike_alone = unlike_alone || ipiv(b, j) != alone_ipiv(0, j);
        for (int i = 0; i < 4; ++i)
          unlike_alone = unlike_alone || unlike(A(b, i, j), alone(0, i, j));
      }
      return unlike_alone;
    };
    CHECK(members_that_differ(count, differs) == 0);
  }
  SECTION("potrf_batched") {
    const auto alone = batch_of(1, false);
    const auto A = batch_of(count, false);
    Kokkos::View<int*> alone_info("info", 1), info("info", count);
    potrf_batched(exec, Triangle::lower, alone, alone_info);
    potrf_batched(exec, Triangle::lower, A, info);
    CHECK(to_host(alone_info)(0) == 0);
    const auto differs = KOKKOS_LAMBDA(const long b) {
      bool unlike_alone = info(b) != alone_info(0);
      for (int j = 0; j < 4; ++j)
        for (int i = j; i < 4; ++i)
          unlike_alone = unlike_alone || unlike(A(b, i, j), alone(0, i, j));
      return unlike_alone;
    };
    CHECK(members_that_differ(count, differs) == 0);
  }
  SECTION("geqrf_batched") {
    const auto alone = batch_of(1, true);
    const auto A = batch_of(count, true);
    Kokkos::View<float**> alone_tau("tau", 1, 4), tau("tau", count, 4);
    geqrf_batched(exec, alone, alone_tau);
    geqrf_batched(exec, A, tau);
    const auto differs = KOKKOS_LAMBDA(const long b) {
      bool unlike_alone = false;
      for (int j = 0; j < 4; ++j) {
        unlike_alone = unlike_alone || unlike(tau(b, j), alone_tau(0, j));
        for (int i = 0; i < 4; ++i)
          unlike_alone = unlike_alone || unlike(A(b, i, j), alone(0, i, j));
      }
      return unlike_alone;
    };
    CHECK(members_that_differ(count, differs) == 0);
  }
}
