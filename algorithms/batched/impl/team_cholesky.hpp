#pragma once
// Team-level Cholesky factorization, one matrix per team: the portable batched kernel.
#include <Kokkos_Core.hpp>

#include "basalt/algorithms/batched/impl/batch_access.hpp"
#include "basalt/algorithms/batched/impl/team_lu.hpp"
#include "basalt/core/dispatch.hpp"
#include "basalt/core/views.hpp"

namespace basalt::impl {

// Unblocked right-looking Cholesky of the n x n Hermitian A (LAPACK's potf2), the `uplo`
// triangle only: A = L L^H (lower) or U^H U (upper). Returns info on every thread: 0, or the
// 1-based column whose updated diagonal is not positive (or NaN), where it stops as LAPACK
// does, that diagonal left holding its updated value.
template <class Member, class T>
KOKKOS_INLINE_FUNCTION int team_potrf(const Member& team, Triangle uplo, const MatrixRef<T>& A) {
  using Real = real_t<T>;
  const int n = static_cast<int>(A.extent(0));
  for (int j = 0; j < n; ++j) {
    const Real d = real_part(A(j, j));
    if (!(d > Real(0))) return j + 1;
    const Real root = Kokkos::Experimental::sqrt(d);
    team.team_barrier();  // every thread has read A(j, j)
    Kokkos::single(Kokkos::PerTeam(team), [&] { A(j, j) = T(root); });
    if (uplo == Triangle::lower) {
      Kokkos::parallel_for(Kokkos::TeamVectorRange(team, j + 1, n),
                           [&](const int i) { A(i, j) = A(i, j) / root; });
      team.team_barrier();
      // A(c:n, c) -= L(c:n, j) L(c, j)^H for the columns c right of j.
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, j + 1, n), [&](const int c) {
        const T l = conjugate(A(c, j));
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, c, n),
                             [&](const int i) { A(i, c) -= A(i, j) * l; });
      });
    } else {
      Kokkos::parallel_for(Kokkos::TeamVectorRange(team, j + 1, n),
                           [&](const int c) { A(j, c) = A(j, c) / root; });
      team.team_barrier();
      // A(j+1:c, c) -= U(j, j+1:c)^H U(j, c) for the columns c right of j.
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, j + 1, n), [&](const int c) {
        const T u = A(j, c);
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, j + 1, c + 1),
                             [&](const int i) { A(i, c) -= conjugate(A(j, i)) * u; });
      });
    }
    team.team_barrier();
  }
  return 0;
}

}  // namespace basalt::impl
