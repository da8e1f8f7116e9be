#pragma once
// Portable laswp: LAPACK's sequence of row interchanges, columns in parallel. Each column
// applies the swaps in order, so every backend gets LAPACK's result; rows move once per swap
// (the row-by-row loop that backends/cuda replaces with a one-move permutation). A thread takes
// tuning::laswp_columns_per_thread columns and applies each swap to all of them.
#include <Kokkos_Core.hpp>

#include "basalt/core/dispatch.hpp"
#include "basalt/core/tuning.hpp"

namespace basalt::portable {

// Interchanges k1..k2 (1-based, in `direction`) on columns [first, last) of A.
template <class AView, class PivView>
KOKKOS_INLINE_FUNCTION void interchange_rows(const AView& A, const PivView& ipiv, int k1, int k2,
                                             Direction direction, int first, int last) {
  for (int step = 0; step <= k2 - k1; ++step) {
    const int k = direction == Direction::forward ? k1 - 1 + step : k2 - 1 - step;
    const int p = ipiv(k) - 1;
    if (p == k) continue;
    for (int j = first; j < last; ++j) {
      const auto row_k = A(k, j);
      A(k, j) = A(p, j);
      A(p, j) = row_k;
    }
  }
}

template <class ExecSpace, class AView, class PivView>
void laswp(const ExecSpace& exec, const AView& A, const PivView& ipiv, int k1, int k2,
           Direction direction) {
  const int n = static_cast<int>(A.extent(1));
  if (n == 0 || k2 < k1) return;
  const int width = tuning::laswp_columns_per_thread<ExecSpace>();
  Kokkos::parallel_for(
      "basalt::portable::laswp", Kokkos::RangePolicy<ExecSpace>(exec, 0, (n + width - 1) / width),
      KOKKOS_LAMBDA(const int chunk) {
        const int first = chunk * width;
        interchange_rows(A, ipiv, k1, k2, direction, first, first + width < n ? first + width : n);
      });
}

}  // namespace basalt::portable
