#pragma once
// Portable laswp: LAPACK's sequence of row interchanges, columns in parallel. Each column
// applies the swaps in order, so every backend gets LAPACK's result; rows move once per swap
// (the row-by-row loop that backends/cuda replaces with a one-move permutation).
#include <Kokkos_Core.hpp>

#include "basalt/core/dispatch.hpp"

namespace basalt::portable {

template <class ExecSpace, class AView, class PivView>
void laswp(const ExecSpace& exec, const AView& A, const PivView& ipiv, int k1, int k2,
           Direction direction) {
  const int n = static_cast<int>(A.extent(1));
  if (n == 0 || k2 < k1) return;
  const bool forward = direction == Direction::forward;
  Kokkos::parallel_for(
      "basalt::portable::laswp", Kokkos::RangePolicy<ExecSpace>(exec, 0, n),
      KOKKOS_LAMBDA(const int j) {
        for (int step = 0; step <= k2 - k1; ++step) {
          const int k = forward ? k1 - 1 + step : k2 - 1 - step;
          const int p = ipiv(k) - 1;
          if (p == k) continue;
          const auto row_k = A(k, j);
          A(k, j) = A(p, j);
          A(p, j) = row_k;
        }
      });
}

}  // namespace basalt::portable
