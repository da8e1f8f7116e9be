#pragma once
// The Cholesky diagonal block, written once over Kokkos: the batched kernel's team Cholesky
// (algorithms/batched/impl/team_cholesky.hpp) on one block, one team, in team scratch when the
// block fits there.
#include <Kokkos_Core.hpp>
#include <cstddef>

#include "basalt/algorithms/batched/impl/team_cholesky.hpp"
#include "basalt/algorithms/batched/impl/team_launch.hpp"
#include "basalt/core/cholesky_state.hpp"
#include "basalt/core/dispatch.hpp"
#include "basalt/core/tuning.hpp"

namespace basalt::portable {

// Unblocked Cholesky of the `uplo` triangle of the w x w block D, whose first column is column
// `offset` + 1 of the whole matrix (for info). When D fails at its column k, info becomes
// offset + k, D(k, k) moves to state.failed_diagonal, and columns k.. of the triangle become the
// identity; a block reached after an earlier failure becomes the identity whole
// (core/cholesky_state.hpp says why).
template <class ExecSpace, class DView, class T>
void potf2(const ExecSpace& exec, Triangle uplo, const DView& D, int offset,
           const impl::CholeskyState<ExecSpace, T>& state) {
  const int w = static_cast<int>(D.extent(0));
  if (w == 0) return;
  const impl::MatrixRef<T> block(D.data(), Kokkos::LayoutStride(w, D.stride(0), w, D.stride(1)));
  impl::BatchLaunch launch{tuning::batched_team<ExecSpace>(w, w), 0};
  const std::size_t bytes = sizeof(T) * w * w + alignof(T);
  if (bytes <= static_cast<std::size_t>(launch.team.scratch_bytes))
    launch.scratch_bytes = static_cast<int>(bytes);
  const int scratch = launch.scratch_bytes;
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  const auto info = state.info;
  const auto failed_diagonal = state.failed_diagonal;
  impl::for_each_matrix(
      exec, "basalt::potf2", 1, launch, KOKKOS_LAMBDA(const Member& team, int) {
        int first_unfactored = 0;  // 0-based column
        if (info() == 0) {
          int result = 0;
          impl::staged(team, block, scratch, [&](const impl::MatrixRef<T>& F) {
            result = impl::team_potrf(team, uplo, F);
          });
          if (result == 0) return;
          first_unfactored = result - 1;
          team.team_barrier();  // every thread has read info and written its part of D
          Kokkos::single(Kokkos::PerTeam(team), [&] {
            info() = offset + result;
            failed_diagonal() = block(first_unfactored, first_unfactored);
          });
          team.team_barrier();
        }
        const int k = first_unfactored;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k, w), [&](const int c) {
          const int top = uplo == Triangle::lower ? c : k,
                    bottom = uplo == Triangle::lower ? w : c + 1;
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, top, bottom),
                               [&](const int i) { block(i, c) = T(i == c ? 1 : 0); });
        });
      });
}

}  // namespace basalt::portable
