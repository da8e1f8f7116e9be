#pragma once
// Portable SpMV and SpMM for every format: one thread per (row, vector) pair, the row's
// entries walked in order. The flat index puts consecutive threads on consecutive rows when
// the vectors are column-major (adjacent matrix entries in ELL and SELL-P, adjacent y) and on
// consecutive vectors of one row when they are row-major (the row's entries read once per
// warp, adjacent x and y).
//
// A CSR row longer than long_row_entries would hold up the whole kernel on one thread (power-law
// matrices have rows of nearly every column), so the first kernel only scales its y by beta and
// a second one splits the matrix's entries into chunks of long_row_entries, one team per chunk,
// each adding its part of the long rows it meets to y atomically. ELL and SELL-P pad every row
// of a slice to the longest, so they suit bounded row lengths only.
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <type_traits>

#include "basalt/algorithms/sparse/formats.hpp"

namespace basalt::portable {

namespace impl {

inline constexpr std::int64_t long_row_entries = 1024;

// Whether row r is left to the long-row kernel: CSR rows longer than long_row_entries.
template <class Matrix, class Ordinal>
KOKKOS_INLINE_FUNCTION bool is_long_row(const Matrix& A, Ordinal r) {
  if constexpr (Matrix::format == SparseFormat::csr)
    return static_cast<std::int64_t>(A.row_map(r + 1) - A.row_map(r)) > long_row_entries;
  else
    return false;
}

// f(column, value) for each stored entry of row r, padding excluded.
template <class S, class O, class M, class F, class Visit>
KOKKOS_INLINE_FUNCTION void for_each_entry(const Csr<S, O, M, F>& A, O r, const Visit& visit) {
  for (F at = A.row_map(r); at < A.row_map(r + 1); ++at) visit(A.entries(at), A.values(at));
}

template <class S, class O, class M, class F, class Visit>
KOKKOS_INLINE_FUNCTION void for_each_entry(const Ell<S, O, M, F>& A, O r, const Visit& visit) {
  for (O k = 0; k < A.width; ++k) {
    const O c = A.columns(r, k);
    if (c < 0) return;
    visit(c, A.values(r, k));
  }
}

template <class S, class O, class M, class F, class Visit>
KOKKOS_INLINE_FUNCTION void for_each_entry(const SellP<S, O, M, F>& A, O r, const Visit& visit) {
  // In int64: with an int Offset, `at` steps past the last slice's end, which can exceed INT_MAX.
  const O s = r / A.slice_size;
  const std::int64_t end = A.slice_ptr(s + 1);
  for (std::int64_t at = static_cast<std::int64_t>(A.slice_ptr(s)) + r % A.slice_size; at < end;
       at += A.slice_size) {
    const O c = A.columns(at);
    if (c < 0) return;
    visit(c, A.values(at));
  }
}

// Element (i, j) of a block of vectors; a rank-1 View is a block of one.
template <class View>
KOKKOS_INLINE_FUNCTION decltype(auto) element(const View& v, std::int64_t i, std::int64_t j) {
  if constexpr (View::rank == 1)
    return v(i);
  else
    return v(i, j);
}

template <class View>
inline constexpr bool vectors_contiguous_v =
    View::rank == 2 && std::is_same_v<typename View::array_layout, Kokkos::LayoutRight>;

template <class Matrix, class XView, class YView>
struct Spmm {
  using Scalar = typename Matrix::scalar_type;
  using Ordinal = typename Matrix::ordinal_type;
  Matrix A;
  XView X;
  YView Y;
  Scalar alpha, beta;
  std::int64_t num_rows, num_vectors;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    constexpr bool by_vector = vectors_contiguous_v<YView>;
    const std::int64_t r = by_vector ? i / num_vectors : i % num_rows;
    const std::int64_t j = by_vector ? i % num_vectors : i / num_rows;
    Scalar sum(0);
    if (!(alpha == Scalar(0)) && !is_long_row(A, static_cast<Ordinal>(r)))
      for_each_entry(A, static_cast<Ordinal>(r), [&](const Ordinal c, const Scalar& value) {
        sum += value * element(X, c, j);
      });
    auto& y = element(Y, r, j);
    // beta = 0 overwrites y without reading it (BLAS): a NaN there does not survive.
    y = beta == Scalar(0) ? alpha * sum : alpha * sum + beta * y;
  }
};

// The row holding entry e of a CSR matrix (the last r with row_map(r) <= e), by bisection.
template <class RowMap>
KOKKOS_INLINE_FUNCTION std::int64_t row_of_entry(const RowMap& row_map, std::int64_t num_rows,
                                                 std::int64_t e) {
  std::int64_t low = 0, high = num_rows;  // row_map(low) <= e < row_map(high)
  while (high - low > 1) {
    const std::int64_t middle = low + (high - low) / 2;
    if (static_cast<std::int64_t>(row_map(middle)) <= e)
      low = middle;
    else
      high = middle;
  }
  return low;
}

// Y(r, :) += alpha A(r, :) X for the rows is_long_row leaves out: one team per chunk of
// long_row_entries entries. A long row has more entries than a chunk, so only the rows of a
// chunk's first and last entries can be long.
template <class Matrix, class XView, class YView, class Member>
struct LongRows {
  using Scalar = typename Matrix::scalar_type;
  Matrix A;
  XView X;
  YView Y;
  Scalar alpha;
  std::int64_t num_rows, num_entries, num_vectors;

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const std::int64_t begin = team.league_rank() * long_row_entries;
    const std::int64_t end =
        begin + long_row_entries < num_entries ? begin + long_row_entries : num_entries;
    const std::int64_t first = row_of_entry(A.row_map, num_rows, begin);
    const std::int64_t last = row_of_entry(A.row_map, num_rows, end - 1);
    add_part(team, first, begin, end);
    if (last != first) add_part(team, last, begin, end);
  }

  // Y(r, :) += alpha A(r, begin:end) X(begin:end, :) when row r is long.
  KOKKOS_INLINE_FUNCTION void add_part(const Member& team, std::int64_t r, std::int64_t begin,
                                       std::int64_t end) const {
    if (!is_long_row(A, r)) return;
    const std::int64_t row_begin = A.row_map(r), row_end = A.row_map(r + 1);
    const std::int64_t from = row_begin > begin ? row_begin : begin;
    const std::int64_t to = row_end < end ? row_end : end;
    for (std::int64_t j = 0; j < num_vectors; ++j) {
      Scalar sum(0);
      Kokkos::parallel_reduce(
          Kokkos::TeamThreadRange(team, from, to),
          [&](const std::int64_t at, Scalar& partial) {
            partial += A.values(at) * element(X, A.entries(at), j);
          },
          sum);
      Kokkos::single(Kokkos::PerTeam(team),
                     [&] { Kokkos::atomic_add(&element(Y, r, j), alpha * sum); });
    }
  }
};

}  // namespace impl

// Y = alpha A X + beta Y for rank-1 (SpMV) or rank-2 (SpMM) X and Y; no argument checks.
template <class ExecSpace, class Matrix, class XView, class YView>
void spmm(const ExecSpace& exec, typename Matrix::scalar_type alpha, const Matrix& A,
          const XView& X, typename Matrix::scalar_type beta, const YView& Y) {
  const std::int64_t num_vectors = YView::rank == 1 ? 1 : Y.extent(YView::rank - 1);
  const std::int64_t total = static_cast<std::int64_t>(A.num_rows) * num_vectors;
  if (total == 0) return;
  Kokkos::parallel_for(
      "basalt::portable::spmm",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(exec, 0, total),
      impl::Spmm<Matrix, XView, YView>{A, X, Y, alpha, beta, A.num_rows, num_vectors});
  if constexpr (Matrix::format == SparseFormat::csr) {
    const std::int64_t num_entries = A.values.extent(0);
    if (alpha == typename Matrix::scalar_type(0) || num_entries <= impl::long_row_entries) return;
    using Policy = Kokkos::TeamPolicy<ExecSpace>;
    const auto chunks = (num_entries + impl::long_row_entries - 1) / impl::long_row_entries;
    Kokkos::parallel_for("basalt::portable::spmm_long_rows",
                         Policy(exec, static_cast<int>(chunks), Kokkos::AUTO),
                         impl::LongRows<Matrix, XView, YView, typename Policy::member_type>{
                             A, X, Y, alpha, A.num_rows, num_entries, num_vectors});
  }
}

}  // namespace basalt::portable
