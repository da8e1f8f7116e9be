#pragma once
// The two forms a batch of matrices takes in the batched routines.
//
// Fixed size: a rank-3 View A(batch, m, n) in any layout (LayoutLeft, LayoutRight, LayoutStride).
// basalt::make_batch allocates the recommended one: every matrix column-major and contiguous,
// one after the other (strides (lda * n, 1, lda)). The batched routines give one team to one
// matrix, so a matrix in one contiguous block is read in coalesced sweeps and a LAPACK or cuBLAS
// routine takes it as it is. LayoutLeft with the batch index first interleaves the matrices
// (batch stride 1): one team reading its matrix then uses one element of every cache line or
// memory transaction; LayoutRight stores each matrix row by row, so a column is strided.
//
// Variable size ("vbatched"): basalt::VariableBatch, every matrix with its own m, n and leading
// dimension, all in one flat array of values at per-matrix offsets. make_variable_batch builds
// one from host vectors of sizes. Per-matrix vectors (pivots, tau) of variable lengths are
// VariableBatch of one column each (make_variable_vectors).
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "basalt/core/errors.hpp"

namespace basalt {

template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
using BatchView = Kokkos::View<Scalar***, Kokkos::LayoutStride, MemorySpace>;

// batch matrices of m x n, each column-major and contiguous with leading dimension max(1, m).
template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
BatchView<Scalar, MemorySpace> make_batch(const std::string& label, int batch, int m, int n) {
  require(batch >= 0, "make_batch", "batch", "batch = ", batch, " is negative");
  require(m >= 0, "make_batch", "m", "m = ", m, " is negative");
  require(n >= 0, "make_batch", "n", "n = ", n, " is negative");
  const std::size_t ld = std::max(1, m);
  return BatchView<Scalar, MemorySpace>(label, Kokkos::LayoutStride(batch, ld * n, m, 1, n, ld));
}

// Matrix b is rows(b) x cols(b), column-major with leading dimension ld(b), starting at
// values(offset(b)). The host_ Views hold the same sizes on the host, so that argument checks
// and launch sizes never read the device. Made by make_variable_batch, which also sums up the
// sizes once, so that a call on the batch does no per-matrix work on the host beyond its
// argument checks (a call on 20000 small matrices may take only tens of microseconds on a GPU):
// the largest rows and columns, the fewest columns, how many matrices have r rows
// (with_rows(r), r = 0 .. max_rows) and the most columns among those, whether every matrix is
// square, and the matrices in order of rows, the most first (equal rows in the batch's order),
// for backends that launch matrices of like sizes together. The sizes are not to be changed
// once made: the offsets and the summary follow from them.
template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
struct VariableBatch {
  using value_type = Scalar;
  using memory_space = MemorySpace;
  using HostInts = Kokkos::View<int*, Kokkos::HostSpace>;
  using HostOffsets = Kokkos::View<std::int64_t*, Kokkos::HostSpace>;

  Kokkos::View<Scalar*, MemorySpace> values;
  Kokkos::View<int*, MemorySpace> rows, cols, ld;
  Kokkos::View<std::int64_t*, MemorySpace> offset;
  HostInts host_rows, host_cols, host_ld;
  HostOffsets host_offset;

  int max_rows = 0, max_cols = 0, min_cols = 0;
  bool all_square = true;
  HostInts with_rows, most_cols_with_rows;
  Kokkos::View<int*, MemorySpace> most_rows_first;
  // Vectors made for a batch of matrices (make_variable_vectors(label, matrices)): that batch's
  // host_rows and host_cols, by which a routine sees at once that these vectors hold min(m, n)
  // entries for each of its matrices, where a check matrix by matrix would cost a pass over
  // the sizes on every call (microseconds for 20000 matrices, on calls of tens).
  HostInts made_for_rows, made_for_cols;

  int count() const { return static_cast<int>(host_rows.extent(0)); }
};

namespace impl {

// make_variable_batch's summary of the sizes (VariableBatch). The order is a counting sort by
// rows, descending, so equal rows keep the batch's order.
template <class Scalar, class MemorySpace>
void summarize_sizes(VariableBatch<Scalar, MemorySpace>& batch) {
  using HostInts = typename VariableBatch<Scalar, MemorySpace>::HostInts;
  const int count = batch.count();
  batch.min_cols = count > 0 ? batch.host_cols(0) : 0;
  for (int b = 0; b < count; ++b) {
    batch.max_rows = std::max(batch.max_rows, batch.host_rows(b));
    batch.max_cols = std::max(batch.max_cols, batch.host_cols(b));
    batch.min_cols = std::min(batch.min_cols, batch.host_cols(b));
    batch.all_square = batch.all_square && batch.host_rows(b) == batch.host_cols(b);
  }
  batch.with_rows = HostInts("with_rows", batch.max_rows + 1);
  batch.most_cols_with_rows = HostInts("most_cols_with_rows", batch.max_rows + 1);
  for (int b = 0; b < count; ++b) {
    const int r = batch.host_rows(b);
    ++batch.with_rows(r);
    batch.most_cols_with_rows(r) = std::max(batch.most_cols_with_rows(r), batch.host_cols(b));
  }
  std::vector<int> next_slot(batch.max_rows + 1);
  for (int r = batch.max_rows, slot = 0; r >= 0; --r) {
    next_slot[r] = slot;
    slot += batch.with_rows(r);
  }
  HostInts order("most_rows_first", count);
  for (int b = 0; b < count; ++b) order(next_slot[batch.host_rows(b)]++) = b;
  batch.most_rows_first = Kokkos::create_mirror_view_and_copy(MemorySpace(), order);
}

}  // namespace impl

// One matrix of rows[b] x cols[b] per entry, leading dimension max(1, rows[b]), zero-filled.
template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
VariableBatch<Scalar, MemorySpace> make_variable_batch(const std::string& label,
                                                       const std::vector<int>& rows,
                                                       const std::vector<int>& cols) {
  require(rows.size() == cols.size(), "make_variable_batch", "cols", "cols has ", cols.size(),
          " entries; rows has ", rows.size());
  require(rows.size() <= static_cast<std::size_t>(INT_MAX), "make_variable_batch", "rows",
          "rows has ", rows.size(), " entries, over 2^31 - 1 matrices");
  const int count = static_cast<int>(rows.size());
  VariableBatch<Scalar, MemorySpace> batch;
  batch.host_rows = typename VariableBatch<Scalar, MemorySpace>::HostInts("rows", count);
  batch.host_cols = typename VariableBatch<Scalar, MemorySpace>::HostInts("cols", count);
  batch.host_ld = typename VariableBatch<Scalar, MemorySpace>::HostInts("ld", count);
  batch.host_offset = typename VariableBatch<Scalar, MemorySpace>::HostOffsets("offset", count);
  std::int64_t total = 0;
  for (int b = 0; b < count; ++b) {
    require(rows[b] >= 0, "make_variable_batch", "rows", "rows[", b, "] = ", rows[b],
            " is negative");
    require(cols[b] >= 0, "make_variable_batch", "cols", "cols[", b, "] = ", cols[b],
            " is negative");
    batch.host_rows(b) = rows[b];
    batch.host_cols(b) = cols[b];
    batch.host_ld(b) = std::max(1, rows[b]);
    batch.host_offset(b) = total;
    total += std::int64_t(batch.host_ld(b)) * cols[b];
  }
  batch.values = Kokkos::View<Scalar*, MemorySpace>(label, total);
  impl::summarize_sizes(batch);
  auto to_device = [](const auto& host) {
    return Kokkos::create_mirror_view_and_copy(MemorySpace(), host);
  };
  batch.rows = to_device(batch.host_rows);
  batch.cols = to_device(batch.host_cols);
  batch.ld = to_device(batch.host_ld);
  batch.offset = to_device(batch.host_offset);
  return batch;
}

// Vectors of lengths[b] entries (pivots, tau): a VariableBatch of one column per matrix.
template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
VariableBatch<Scalar, MemorySpace> make_variable_vectors(const std::string& label,
                                                         const std::vector<int>& lengths) {
  return make_variable_batch<Scalar, MemorySpace>(label, lengths,
                                                  std::vector<int>(lengths.size(), 1));
}

// min(m, n) of every matrix of a variable batch: the lengths of its pivot and tau vectors.
template <class Scalar, class MemorySpace>
std::vector<int> min_dimensions(const VariableBatch<Scalar, MemorySpace>& batch) {
  std::vector<int> lengths(batch.count());
  for (int b = 0; b < batch.count(); ++b)
    lengths[b] = std::min(batch.host_rows(b), batch.host_cols(b));
  return lengths;
}

// The pivot or tau vectors of a variable batch of matrices: min(m, n) entries for each. The
// routines then skip checking their lengths matrix by matrix (VariableBatch::made_for_rows).
template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space,
          class MatrixScalar, class MatrixSpace>
VariableBatch<Scalar, MemorySpace> make_variable_vectors(
    const std::string& label, const VariableBatch<MatrixScalar, MatrixSpace>& matrices) {
  auto vectors = make_variable_vectors<Scalar, MemorySpace>(label, min_dimensions(matrices));
  vectors.made_for_rows = matrices.host_rows;
  vectors.made_for_cols = matrices.host_cols;
  return vectors;
}

}  // namespace basalt
