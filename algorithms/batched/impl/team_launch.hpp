#pragma once
// How the portable batched kernels run: one team per matrix (a TeamPolicy whose league is the
// batch), and a matrix small enough copied into team scratch, worked on there and copied back.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstddef>

#include "basalt/algorithms/batched/impl/batch_access.hpp"
#include "basalt/core/tuning.hpp"

namespace basalt::impl {

// Where a batched kernel runs and how much team scratch each team gets (0: none).
struct BatchLaunch {
  tuning::BatchedTeam team;
  int scratch_bytes = 0;
};

// The default launch for a batch: team scratch for the largest of its matrices that fits under
// the tuning's limit, none when no matrix fits (those are worked on in place).
template <class ExecSpace, class T, class Memory>
BatchLaunch batch_launch(const BatchAccess<T, Memory>& A) {
  BatchLaunch launch{tuning::batched_team<ExecSpace>(A.max_rows, A.max_cols), 0};
  using Value = std::remove_const_t<T>;
  for (int b = 0; b < (A.variable ? A.count : std::min(A.count, 1)); ++b) {
    const std::size_t bytes = sizeof(Value) * A.host_rows(b) * A.host_cols(b) + alignof(Value);
    if (bytes <= static_cast<std::size_t>(launch.team.scratch_bytes))
      launch.scratch_bytes = std::max(launch.scratch_bytes, static_cast<int>(bytes));
  }
  return launch;
}

// The launch of one team over one rows x cols panel of T (tuning::panel_team), the panel staged
// in team scratch when it fits.
template <class T, class ExecSpace>
BatchLaunch panel_launch(const ExecSpace& exec, int rows, int cols) {
  BatchLaunch launch{tuning::panel_team(exec, rows, cols), 0};
  const std::size_t bytes = sizeof(T) * rows * cols + alignof(T);
  if (bytes <= static_cast<std::size_t>(launch.team.scratch_bytes))
    launch.scratch_bytes = static_cast<int>(bytes);
  return launch;
}

// The launch of a solve: lanes along the rows of B, threads across its columns, no scratch.
template <class ExecSpace, class T, class Memory>
BatchLaunch solve_launch(const BatchAccess<T, Memory>& B) {
  return {tuning::batched_team<ExecSpace>(B.max_rows, B.max_cols), 0};
}

// Runs body(team, b) for every b in [0, count), one team each.
template <class ExecSpace, class Body>
void for_each_matrix(const ExecSpace& exec, const char* label, int count, const BatchLaunch& launch,
                     const Body& body) {
  if (count == 0) return;
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Member = typename Policy::member_type;
  auto kernel = KOKKOS_LAMBDA(const Member& team) { body(team, team.league_rank()); };
  auto policy_of = [&](int team_size) {
    Policy policy(exec, count, team_size, launch.team.vector_length);
    if (launch.scratch_bytes > 0) policy.set_scratch_size(0, Kokkos::PerTeam(launch.scratch_bytes));
    return policy;
  };
  Policy policy = policy_of(launch.team.team_size);
  const int most = policy.team_size_max(kernel, Kokkos::ParallelForTag());
  if (most < launch.team.team_size) policy = policy_of(std::max(1, most));
  Kokkos::parallel_for(label, policy, kernel);
}

// dst = src, columns across the team, rows across the vector lanes.
template <class Member, class T>
KOKKOS_INLINE_FUNCTION void team_copy(const Member& team, const MatrixRef<T>& src,
                                      const MatrixRef<T>& dst) {
  const int m = static_cast<int>(src.extent(0)), n = static_cast<int>(src.extent(1));
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](const int j) {
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, m),
                         [&](const int i) { dst(i, j) = src(i, j); });
  });
}

// work(M) on matrix A: M is a column-major copy in team scratch when A fits in the team's
// scratch, written back afterwards; otherwise M is A itself, in global memory.
template <class Member, class T, class Work>
KOKKOS_INLINE_FUNCTION void staged(const Member& team, const MatrixRef<T>& A, int scratch_bytes,
                                   const Work& work) {
  const int m = static_cast<int>(A.extent(0)), n = static_cast<int>(A.extent(1));
  const std::size_t bytes = sizeof(T) * m * n;
  if (bytes == 0 || bytes + alignof(T) > static_cast<std::size_t>(scratch_bytes)) return work(A);
  T* copy = static_cast<T*>(team.team_scratch(0).get_shmem_aligned(bytes, alignof(T)));
  const MatrixRef<T> S(copy, Kokkos::LayoutStride(m, 1, n, m));
  team_copy(team, A, S);
  team.team_barrier();
  work(S);
  team.team_barrier();
  team_copy(team, S, A);
}

}  // namespace basalt::impl
