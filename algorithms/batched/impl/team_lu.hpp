#pragma once
// Team-level LU with partial pivoting and the triangular solves, one matrix per team: the
// portable batched kernels. Kokkos Kernels' batched LU (3.4) does not pivot, hence our own.
// Columns go across the team's threads and rows across its vector lanes, so that a GPU warp
// reads a column in one sweep.
#include <Kokkos_Core.hpp>

#include "basalt/algorithms/batched/impl/batch_access.hpp"
#include "basalt/algorithms/dense/impl/getf2_portable.hpp"
#include "basalt/core/dispatch.hpp"
#include "basalt/core/views.hpp"

namespace basalt::impl {

// Unblocked right-looking LU of the m x n matrix A (LAPACK's getf2): for each column, the pivot
// search, the interchange across the whole row, the scaling and the rank-1 update. Pivots are
// 1-based; returns info (the first exactly-zero pivot's column, 1-based, or 0) on every thread.
// A zero pivot is left unscaled and the factorization goes on, as LAPACK does.
template <class Member, class T>
KOKKOS_INLINE_FUNCTION int team_getrf(const Member& team, const MatrixRef<T>& A,
                                      const VectorRef<int>& ipiv) {
  using Real = real_t<T>;
  const int m = static_cast<int>(A.extent(0)), n = static_cast<int>(A.extent(1));
  int info = 0;
  for (int j = 0; j < (m < n ? m : n); ++j) {
    Kokkos::ValLocScalar<Real, int> best;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, j, m),
        [&](const int i, Kokkos::ValLocScalar<Real, int>& found) {
          const Real v = pivot_magnitude(A(i, j));
          if (v > found.val || (v == found.val && i < found.loc)) found = {v, i};
        },
        FirstLargest<Real, Kokkos::AnonymousSpace>(best));
    // A column with no positive magnitude (zero, or NaN throughout) keeps its diagonal.
    const int p = best.val > Real(0) ? best.loc : j;
    if (p != j)
      Kokkos::parallel_for(Kokkos::TeamVectorRange(team, n), [&](const int c) {
        const T t = A(j, c);
        A(j, c) = A(p, c);
        A(p, c) = t;
      });
    Kokkos::single(Kokkos::PerTeam(team), [&] { ipiv(j) = p + 1; });
    team.team_barrier();
    const T pivot = A(j, j);
    if (pivot == T(0)) {
      if (info == 0) info = j + 1;
      continue;
    }
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, j + 1, m),
                         [&](const int i) { A(i, j) = A(i, j) / pivot; });
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, j + 1, n), [&](const int c) {
      const T u = A(j, c);
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, j + 1, m),
                           [&](const int i) { A(i, c) -= A(i, j) * u; });
    });
    team.team_barrier();
  }
  return info;
}

// B = P B (forward) or P^T B (backward) for LAPACK's 1-based interchanges ipiv(0..k-1); each
// column of B by one thread, in order.
template <class Member, class T>
KOKKOS_INLINE_FUNCTION void team_laswp(const Member& team, const MatrixRef<T>& B,
                                       const VectorRef<const int>& ipiv, int k,
                                       Direction direction) {
  const int nrhs = static_cast<int>(B.extent(1));
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nrhs), [&](const int c) {
    Kokkos::single(Kokkos::PerThread(team), [&] {
      for (int s = 0; s < k; ++s) {
        const int i = direction == Direction::forward ? s : k - 1 - s;
        const int p = ipiv(i) - 1;
        if (p == i) continue;
        const T t = B(i, c);
        B(i, c) = B(p, c);
        B(p, c) = t;
      }
    });
  });
  team.team_barrier();
}

template <class T>
KOKKOS_INLINE_FUNCTION T conjugate(const T& x) {
  if constexpr (std::is_floating_point_v<T>)
    return x;
  else
    return Kokkos::conj(x);
}

// B = op(A)^-1 B for the n x n triangular A (the `lower` or upper triangle, unit diagonal or
// not): forward substitution when op(A) is lower triangular, backward otherwise. Each column
// of B belongs to one thread; its rows go across the vector lanes.
template <class Member, class T>
KOKKOS_INLINE_FUNCTION void team_trsm_left(const Member& team, bool lower, Op op,
                                           bool unit_diagonal, const MatrixRef<const T>& A,
                                           const MatrixRef<T>& B) {
  const int n = static_cast<int>(A.extent(0)), nrhs = static_cast<int>(B.extent(1));
  auto op_a = [&](int i, int k) -> T {
    return op == Op::none ? A(i, k) : op == Op::transpose ? A(k, i) : conjugate(A(k, i));
  };
  const bool forward = lower == (op == Op::none);
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nrhs), [&](const int c) {
    for (int s = 0; s < n; ++s) {
      const int k = forward ? s : n - 1 - s;
      const T x = unit_diagonal ? B(k, c) : B(k, c) / op_a(k, k);
      const int begin = forward ? k + 1 : 0, end = forward ? n : k;
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, begin, end),
                           [&](const int i) { B(i, c) -= op_a(i, k) * x; });
      // After the vector loop, whose end every lane reaches having read B(k, c).
      Kokkos::single(Kokkos::PerThread(team), [&] { B(k, c) = x; });
    }
  });
  team.team_barrier();
}

}  // namespace basalt::impl
