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

// The same matrix with another offset type: row_map copied, entries and values shared.
template <class Offset, class T>
Csr<T, int, Exec::memory_space, Offset> with_offset(const Csr<T>& A) {
  const auto row_map = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A.row_map);
  Kokkos::View<Offset*, Kokkos::HostSpace> wide("row_map", row_map.extent(0));
  for (size_t r = 0; r < row_map.extent(0); ++r) wide(r) = row_map(r);
  Csr<T, int, Exec::memory_space, Offset> B;
  B.num_rows = A.num_rows;
  B.num_cols = A.num_cols;
  B.row_map = Kokkos::create_mirror_view_and_copy(Exec::memory_space(), wide);
  B.entries = A.entries;
  B.values = A.values;
  return B;
}

// A num_rows x num_cols CSR whose rows `long_rows` hold columns 0 to length - 1 (value 1), the
// others nothing: few entries, but padded to num_rows x length in ELL.
template <class T>
Csr<T> long_rows_csr(int num_rows, int num_cols, const std::vector<int>& long_rows, int length) {
  Csr<T, int, Kokkos::HostSpace> host;
  host.num_rows = num_rows;
  host.num_cols = num_cols;
  Kokkos::View<int*, Kokkos::HostSpace> row_map("row_map", num_rows + 1);
  for (int r : long_rows) row_map(r + 1) = length;
  for (int r = 0; r < num_rows; ++r) row_map(r + 1) += row_map(r);
  host.row_map = row_map;
  const size_t nnz = static_cast<size_t>(row_map(num_rows));
  host.entries = Kokkos::View<int*, Kokkos::HostSpace>("entries", nnz);
  host.values = Kokkos::View<T*, Kokkos::HostSpace>("values", nnz);
  for (size_t e = 0; e < nnz; ++e) {
    host.entries(e) = static_cast<int>(e % length);
    host.values(e) = T(1);
  }
  return copy_to<Exec::memory_space>(host);
}

}  // namespace basalt::test
