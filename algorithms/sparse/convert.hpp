#pragma once
// Conversions from CSR, run on the execution space where the matrix lives:
//
//   auto ell = basalt::to_ell(exec, csr);
//   auto sellp = basalt::to_sellp(exec, csr, slice_size = 32, alignment = 4);
//
// Row order and the order of entries within a row are kept; padding is described in
// formats.hpp. The widths are read back to size the allocations, so both calls wait for exec.
#include <Kokkos_Core.hpp>

#include "basalt/algorithms/sparse/formats.hpp"
#include "basalt/core/errors.hpp"

namespace basalt {

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
  // Kokkos' Max over no rows is the ordinal's lowest value, hence the guard.
  Ordinal width = 0;
  if (A.num_rows > 0)
    Kokkos::parallel_reduce(
        "basalt::to_ell::width", Kokkos::RangePolicy<ExecSpace>(exec, 0, A.num_rows),
        KOKKOS_LAMBDA(const Ordinal r, Ordinal& widest) {
          const Ordinal length = static_cast<Ordinal>(row_map(r + 1) - row_map(r));
          if (length > widest) widest = length;
        },
        Kokkos::Max<Ordinal>(width));
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

  // Each slice's size (padded width times slice_size), scanned into the slice offsets.
  sellp.slice_ptr = decltype(sellp.slice_ptr)(Kokkos::view_alloc(exec, "basalt::SellP::slice_ptr"),
                                              num_slices + 1);
  const auto slice_ptr = sellp.slice_ptr;
  Kokkos::parallel_scan(
      "basalt::to_sellp::slice_ptr", Kokkos::RangePolicy<ExecSpace>(exec, 0, num_slices),
      KOKKOS_LAMBDA(const Ordinal s, Offset& offset, const bool final) {
        Ordinal width = 0;
        const Ordinal end =
            s * slice_size + slice_size < num_rows ? s * slice_size + slice_size : num_rows;
        for (Ordinal r = s * slice_size; r < end; ++r) {
          const Ordinal length = static_cast<Ordinal>(row_map(r + 1) - row_map(r));
          if (length > width) width = length;
        }
        width = (width + alignment - 1) / alignment * alignment;
        offset += static_cast<Offset>(width) * slice_size;
        if (final) slice_ptr(s + 1) = offset;
      });
  Offset stored = 0;
  Kokkos::deep_copy(exec, Kokkos::View<Offset, Kokkos::HostSpace>(&stored),
                    Kokkos::subview(slice_ptr, num_slices));
  exec.fence();

  sellp.columns = decltype(sellp.columns)(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "basalt::SellP::columns"), stored);
  sellp.values = decltype(sellp.values)(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "basalt::SellP::values"), stored);
  const auto columns = sellp.columns;
  const auto sellp_values = sellp.values;
  Kokkos::parallel_for(
      "basalt::to_sellp::fill",
      Kokkos::RangePolicy<ExecSpace>(exec, 0, static_cast<Ordinal>(num_slices * slice_size)),
      KOKKOS_LAMBDA(const Ordinal r) {
        const Ordinal s = r / slice_size, lane = r % slice_size;
        const Ordinal width = static_cast<Ordinal>((slice_ptr(s + 1) - slice_ptr(s)) / slice_size);
        const Offset begin = r < num_rows ? row_map(r) : Offset(0);
        const Ordinal length = r < num_rows ? static_cast<Ordinal>(row_map(r + 1) - begin) : 0;
        for (Ordinal k = 0; k < width; ++k) {
          const Offset at = slice_ptr(s) + static_cast<Offset>(k) * slice_size + lane;
          columns(at) = k < length ? entries(begin + k) : Ordinal(-1);
          sellp_values(at) = k < length ? values(begin + k) : Scalar(0);
        }
      });
  return sellp;
}

}  // namespace basalt
