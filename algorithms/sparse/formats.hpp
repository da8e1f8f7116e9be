#pragma once
// Sparse matrix formats: CSR, ELL and SELL-P, each templated on scalar, ordinal, memory space
// and offset type (the type of positions into the stored entries).
//
// - Csr: row_map (num_rows + 1 offsets), entries (column indices), values. Shares its Views
//   with a KokkosSparse::CrsMatrix both ways (make_csr, to_crs_matrix): no copy.
// - Ell: every row padded to the longest row's length (width); columns and values are
//   num_rows x width, column-major, so consecutive rows are adjacent in memory.
// - SellP: ELL per slice of slice_size rows (a power of two), each slice's width padded to a
//   multiple of alignment (Anzt et al.'s SELL-P: `alignment` threads may share a row without
//   bounds checks); within a slice column-major; slice_ptr(s) is where slice s starts. The last
//   slice is padded with empty rows.
//
// Padding entries hold column -1 and value 0. They sit at the end of their row, so kernels stop
// at the first -1 and never read x there (a NaN in x reaches only the rows that use it).
#include <KokkosSparse_CrsMatrix.hpp>
#include <Kokkos_Core.hpp>
#include <type_traits>

#include "basalt/core/dispatch.hpp"
#include "basalt/core/views.hpp"

namespace basalt {

template <class Scalar, class Ordinal = int,
          class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space, class Offset = Ordinal>
struct Csr {
  static_assert(is_basalt_scalar_v<Scalar>, "basalt::Csr: Scalar must be float, double or complex");
  static_assert(std::is_signed_v<Ordinal>, "basalt::Csr: Ordinal must be a signed integer");
  using scalar_type = Scalar;
  using ordinal_type = Ordinal;
  using offset_type = Offset;
  using memory_space = MemorySpace;
  static constexpr SparseFormat format = SparseFormat::csr;

  Ordinal num_rows = 0, num_cols = 0;
  Kokkos::View<const Offset*, MemorySpace> row_map;  // num_rows + 1 entries, row_map(0) = 0
  Kokkos::View<Ordinal*, MemorySpace> entries;       // column of each stored entry
  Kokkos::View<Scalar*, MemorySpace> values;

  Offset nnz() const { return static_cast<Offset>(values.extent(0)); }
};

template <class Scalar, class Ordinal = int,
          class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space, class Offset = Ordinal>
struct Ell {
  static_assert(std::is_signed_v<Ordinal>, "basalt::Ell: Ordinal must be a signed integer");
  using scalar_type = Scalar;
  using ordinal_type = Ordinal;
  using offset_type = Offset;
  using memory_space = MemorySpace;
  static constexpr SparseFormat format = SparseFormat::ell;

  Ordinal num_rows = 0, num_cols = 0, width = 0;
  Kokkos::View<Ordinal**, Kokkos::LayoutLeft, MemorySpace> columns;  // num_rows x width
  Kokkos::View<Scalar**, Kokkos::LayoutLeft, MemorySpace> values;

  Offset stored() const { return static_cast<Offset>(num_rows) * width; }
};

template <class Scalar, class Ordinal = int,
          class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space, class Offset = Ordinal>
struct SellP {
  static_assert(std::is_signed_v<Ordinal>, "basalt::SellP: Ordinal must be a signed integer");
  using scalar_type = Scalar;
  using ordinal_type = Ordinal;
  using offset_type = Offset;
  using memory_space = MemorySpace;
  static constexpr SparseFormat format = SparseFormat::sellp;

  Ordinal num_rows = 0, num_cols = 0;
  Ordinal slice_size = 32, alignment = 4;
  Kokkos::View<Offset*, MemorySpace> slice_ptr;  // num_slices + 1 entries
  Kokkos::View<Ordinal*, MemorySpace> columns;   // slice_ptr(num_slices) entries
  Kokkos::View<Scalar*, MemorySpace> values;

  // Not (num_rows + slice_size - 1) / slice_size: that sum wraps for num_rows near the maximum.
  Ordinal num_slices() const { return num_rows / slice_size + (num_rows % slice_size != 0); }
  Offset stored() const { return static_cast<Offset>(values.extent(0)); }
};

template <class T>
struct is_sparse_format : std::false_type {};
template <class S, class O, class M, class F>
struct is_sparse_format<Csr<S, O, M, F>> : std::true_type {};
template <class S, class O, class M, class F>
struct is_sparse_format<Ell<S, O, M, F>> : std::true_type {};
template <class S, class O, class M, class F>
struct is_sparse_format<SellP<S, O, M, F>> : std::true_type {};
template <class T>
inline constexpr bool is_sparse_format_v = is_sparse_format<T>::value;

// A Csr over a KokkosSparse::CrsMatrix's own Views.
template <class Scalar, class Ordinal, class Device, class Traits, class Size>
Csr<Scalar, Ordinal, typename Device::memory_space, Size> make_csr(
    const KokkosSparse::CrsMatrix<Scalar, Ordinal, Device, Traits, Size>& A) {
  Csr<Scalar, Ordinal, typename Device::memory_space, Size> csr;
  csr.num_rows = A.numRows();
  csr.num_cols = A.numCols();
  csr.row_map = A.graph.row_map;
  csr.entries = A.graph.entries;
  csr.values = A.values;
  return csr;
}

// The same matrix as a KokkosSparse::CrsMatrix over the Csr's Views, for Kokkos Kernels' routines.
template <class ExecSpace, class Scalar, class Ordinal, class MemorySpace, class Offset>
auto to_crs_matrix(const Csr<Scalar, Ordinal, MemorySpace, Offset>& A) {
  using Device = Kokkos::Device<ExecSpace, MemorySpace>;
  using Matrix = KokkosSparse::CrsMatrix<Scalar, Ordinal, Device, void, Offset>;
  typename Matrix::staticcrsgraph_type graph(A.entries, A.row_map);
  return Matrix("basalt::Csr", A.num_cols, A.values, graph);
}

// A deep copy of a Csr in another memory space (host <-> device).
template <class ToSpace, class Scalar, class Ordinal, class MemorySpace, class Offset>
Csr<Scalar, Ordinal, ToSpace, Offset> copy_to(const Csr<Scalar, Ordinal, MemorySpace, Offset>& A) {
  Csr<Scalar, Ordinal, ToSpace, Offset> copy;
  copy.num_rows = A.num_rows;
  copy.num_cols = A.num_cols;
  Kokkos::View<Offset*, ToSpace> row_map(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "basalt::Csr::row_map"), A.row_map.extent(0));
  Kokkos::deep_copy(row_map, A.row_map);
  copy.row_map = row_map;
  copy.entries = Kokkos::View<Ordinal*, ToSpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "basalt::Csr::entries"), A.entries.extent(0));
  Kokkos::deep_copy(copy.entries, A.entries);
  copy.values = Kokkos::View<Scalar*, ToSpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "basalt::Csr::values"), A.values.extent(0));
  Kokkos::deep_copy(copy.values, A.values);
  return copy;
}

}  // namespace basalt
