#pragma once
// Random sparse matrices for the sparse tests, built on the host as a dense pattern (the
// reference) and as a Csr in the default execution space's memory.
#include <vector>

#include "basalt/algorithms/sparse/formats.hpp"
#include "support.hpp"

namespace basalt::test {

// How a random matrix's rows are filled.
struct SparseShape {
  int rows, cols;
  double density;           // chance of each entry being stored
  bool empty_rows = false;  // every third row empty
  bool dense_row = false;   // row 0 full
};

template <class T>
struct SparseCase {
  std::vector<T> dense;  // column-major rows x cols, zero where nothing is stored
  Csr<T> csr;
  int rows, cols;
  T operator()(int i, int j) const { return dense[i + static_cast<size_t>(j) * rows]; }
};

template <class T>
SparseCase<T> random_sparse(const SparseShape& shape) {
  SparseCase<T> c{std::vector<T>(static_cast<size_t>(shape.rows) * shape.cols, T(0)),
                  {},
                  shape.rows,
                  shape.cols};
  Csr<T, int, Kokkos::HostSpace> host;
  host.num_rows = shape.rows;
  host.num_cols = shape.cols;
  Kokkos::View<int*, Kokkos::HostSpace> row_map("row_map", shape.rows + 1);
  std::vector<int> entries;
  std::vector<T> values;
  std::bernoulli_distribution stored(shape.density);
  for (int i = 0; i < shape.rows; ++i) {
    const bool empty = shape.empty_rows && i % 3 == 1;
    const bool full = shape.dense_row && i == 0;
    for (int j = 0; j < shape.cols; ++j) {
      if (empty || !(full || stored(rng()))) continue;
      const T v = random_scalar<T>();
      c.dense[i + static_cast<size_t>(j) * shape.rows] = v;
      entries.push_back(j);
      values.push_back(v);
    }
    row_map(i + 1) = static_cast<int>(entries.size());
  }
  host.row_map = row_map;
  host.entries = Kokkos::View<int*, Kokkos::HostSpace>("entries", entries.size());
  host.values = Kokkos::View<T*, Kokkos::HostSpace>("values", values.size());
  for (size_t e = 0; e < entries.size(); ++e) {
    host.entries(e) = entries[e];
    host.values(e) = values[e];
  }
  c.csr = copy_to<Exec::memory_space>(host);
  return c;
}

}  // namespace basalt::test
