#pragma once
// Conversions from CSR, run on the execution space where the matrix lives:
//
//   auto ell = basalt::to_ell(exec, csr);
//   auto sellp = basalt::to_sellp(exec, csr, slice_size = 32, alignment = 4);
//
// Row order and the order of entries within a row are kept; padding is described in
// formats.hpp. The widths are read back to size the allocations, so both calls wait for exec.
// A padded size past the Offset type's range (a small CSR can pad to billions of entries: one
// long row among many short ones) throws InvalidArgument naming A, before any allocation.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "basalt/algorithms/sparse/formats.hpp"
#include "basalt/core/errors.hpp"

namespace basalt {

namespace impl {

// The most entries an Offset counts, as int64 (an unsigned 64-bit Offset: int64's maximum).
template <class Offset>
constexpr std::int64_t offset_limit() {
  constexpr auto max = std::numeric_limits<Offset>::max();
  constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();
  return static_cast<std::uint64_t>(max) > static_cast<std::uint64_t>(int64_max)
             ? int64_max
             : static_cast<std::int64_t>(max);
}

}  // namespace impl

template <class ExecSpace, class Scalar, class Ordinal, class MemorySpace, class Offset>
Ell<Scalar, Ordinal, MemorySpace, Offset> to_ell(
    const ExecSpace& exec, const Csr<Scalar, Ordinal, MemorySpace, Offset>& A) {
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, MemorySpace>::accessible,
                "basalt::to_ell: A must be accessible from the execution space");
  Ell<Scalar, Ordinal, MemorySpace, Offset> ell;
  ell.num_rows = A.num_rows;
  ell.num_cols = A.num_cols;
  const auto row_map = A.row_map;
  const auto entries = A.entries;
  const auto values = A.values;
  // Kokkos' Max over no rows is the type's lowest value, hence the guard. In int64: with
  // duplicate entries a row can be longer than the ordinal type counts.
  std::int64_t longest = 0;
  if (A.num_rows > 0)
    Kokkos::parallel_reduce(
        "basalt::to_ell::width", Kokkos::RangePolicy<ExecSpace>(exec, 0, A.num_rows),
        KOKKOS_LAMBDA(const Ordinal r, std::int64_t& widest) {
          const auto length = static_cast<std::int64_t>(row_map(r + 1) - row_map(r));
          if (length > widest) widest = length;
        },
        Kokkos::Max<std::int64_t>(longest));
  require(longest <= std::numeric_limits<Ordinal>::max(), "to_ell", "A", "A has a row of ", longest,
          " entries, more than the ordinal type holds");
  const std::int64_t limit = impl::offset_limit<Offset>();
  require(longest == 0 || A.num_rows <= limit / longest, "to_ell", "A", "A's ELL form needs ",
          A.num_rows, " x ", longest, " entries (rows x longest row), more than the ",
          "offset type holds (", limit, ")");
  const Ordinal width = static_cast<Ordinal>(longest);
  ell.width = width;
  ell.columns = decltype(ell.columns)(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "basalt::Ell::columns"), A.num_rows,
      width);
  ell.values = decltype(ell.values)(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "basalt::Ell::values"), A.num_rows,
      width);
  const auto columns = ell.columns;
  const auto ell_values = ell.values;
  Kokkos::parallel_for(
      "basalt::to_ell::fill", Kokkos::RangePolicy<ExecSpace>(exec, 0, A.num_rows),
      KOKKOS_LAMBDA(const Ordinal r) {
        const Offset begin = row_map(r);
        const Ordinal length = static_cast<Ordinal>(row_map(r + 1) - begin);
        for (Ordinal k = 0; k < width; ++k) {
          columns(r, k) = k < length ? entries(begin + k) : Ordinal(-1);
          ell_values(r, k) = k < length ? values(begin + k) : Scalar(0);
        }
      });
  return ell;
}

template <class ExecSpace, class Scalar, class Ordinal, class MemorySpace, class Offset>
SellP<Scalar, Ordinal, MemorySpace, Offset> to_sellp(
    const ExecSpace& exec, const Csr<Scalar, Ordinal, MemorySpace, Offset>& A,
    Ordinal slice_size = 32, Ordinal alignment = 4) {
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, MemorySpace>::accessible,
                "basalt::to_sellp: A must be accessible from the execution space");
  require(slice_size > 0 && (slice_size & (slice_size - 1)) == 0, "to_sellp", "slice_size",
          "slice_size = ", slice_size, " is not a power of two");
  require(alignment > 0, "to_sellp", "alignment", "alignment = ", alignment, " is not positive");
  SellP<Scalar, Ordinal, MemorySpace, Offset> sellp;
  sellp.num_rows = A.num_rows;
  sellp.num_cols = A.num_cols;
  sellp.slice_size = slice_size;
  sellp.alignment = alignment;
  const Ordinal num_slices = sellp.num_slices();
  const Ordinal num_rows = A.num_rows;
  const auto row_map = A.row_map;
  const auto entries = A.entries;
  const auto values = A.values;

  // Each slice's size (its longest row padded to a multiple of alignment, times slice_size),
  // scanned into the slice offsets. Summed in double, exact below 2^53, so that a total past the
  // Offset type is caught instead of wrapping; no allocation reaches 2^53 entries.
  sellp.slice_ptr = decltype(sellp.slice_ptr)(Kokkos::view_alloc(exec, "basalt::SellP::slice_ptr"),
                                              static_cast<std::size_t>(num_slices) + 1);
  const auto slice_ptr = sellp.slice_ptr;
  const double limit = std::min(static_cast<double>(impl::offset_limit<Offset>()), 0x1p53 - 1);
  double total = 0;
  Kokkos::parallel_scan(
      "basalt::to_sellp::slice_ptr", Kokkos::RangePolicy<ExecSpace>(exec, 0, num_slices),
      KOKKOS_LAMBDA(const Ordinal s, double& offset, const bool final) {
        const std::int64_t first = static_cast<std::int64_t>(s) * slice_size;
        const std::int64_t end = first + slice_size < num_rows ? first + slice_size : num_rows;
        std::int64_t width = 0;
        for (std::int64_t r = first; r < end; ++r) {
          const auto length = static_cast<std::int64_t>(row_map(r + 1) - row_map(r));
          if (length > width) width = length;
        }
        const std::int64_t groups = width / alignment + (width % alignment != 0);
        offset += static_cast<double>(groups) * alignment * slice_size;
        if (final) slice_ptr(s + 1) = offset <= limit ? static_cast<Offset>(offset) : Offset(0);
      },
      total);
  exec.fence();
  require(total <= limit, "to_sellp", "A", "A's SELL-P form (slice_size ", slice_size,
          ", alignment ", alignment, ") needs ",
          total < 0x1p63 ? std::to_string(static_cast<long long>(total)) : "over 2^63",
          " entries, over the limit of ", static_cast<std::int64_t>(limit),
          " (the offset type's maximum, or 2^53 - 1 if less)");
  const auto stored = static_cast<Offset>(total);

  sellp.columns = decltype(sellp.columns)(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "basalt::SellP::columns"), stored);
  sellp.values = decltype(sellp.values)(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "basalt::SellP::values"), stored);
  const auto columns = sellp.columns;
  const auto sellp_values = sellp.values;
  // Rows and widths in int64 and Offset: the padded row count and a slice's padded width can
  // pass the ordinal type.
  Kokkos::parallel_for(
      "basalt::to_sellp::fill",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(
          exec, 0, static_cast<std::int64_t>(num_slices) * slice_size),
      KOKKOS_LAMBDA(const std::int64_t r) {
        const Ordinal s = static_cast<Ordinal>(r / slice_size);
        const Ordinal lane = static_cast<Ordinal>(r % slice_size);
        const Offset width = (slice_ptr(s + 1) - slice_ptr(s)) / slice_size;
        const Offset begin = r < num_rows ? row_map(r) : Offset(0);
        const Offset length = r < num_rows ? row_map(r + 1) - begin : Offset(0);
        for (Offset k = 0; k < width; ++k) {
          const Offset at = slice_ptr(s) + k * slice_size + lane;
          columns(at) = k < length ? entries(begin + k) : Ordinal(-1);
          sellp_values(at) = k < length ? values(begin + k) : Scalar(0);
        }
      });
  return sellp;
}

}  // namespace basalt
