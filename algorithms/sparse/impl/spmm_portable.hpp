#pragma once
// Portable SpMV and SpMM for every format: one thread per (row, vector) pair, the row's
// entries walked in order. The flat index puts consecutive threads on consecutive rows when
// the vectors are column-major (adjacent matrix entries in ELL and SELL-P, adjacent y) and on
// consecutive vectors of one row when they are row-major (the row's entries read once per
// warp, adjacent x and y).
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <type_traits>

#include "basalt/algorithms/sparse/formats.hpp"

namespace basalt::portable {

namespace impl {

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
  const O s = r / A.slice_size;
  const F begin = A.slice_ptr(s) + r % A.slice_size, end = A.slice_ptr(s + 1);
  for (F at = begin; at < end; at += A.slice_size) {
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
    if (!(alpha == Scalar(0)))
      for_each_entry(A, static_cast<Ordinal>(r), [&](const Ordinal c, const Scalar& value) {
        sum += value * element(X, c, j);
      });
    auto& y = element(Y, r, j);
    // beta = 0 overwrites y without reading it (BLAS): a NaN there does not survive.
    y = beta == Scalar(0) ? alpha * sum : alpha * sum + beta * y;
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
}

}  // namespace basalt::portable
