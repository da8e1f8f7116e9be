#pragma once
// Batched LU with partial pivoting and its solves: LAPACK's xGETRF, xGETRS and xGESV on every
// matrix of a batch.
//
//   basalt::getrf_batched(exec, A, ipiv, info);
//   basalt::getrs_batched(exec, op, A, ipiv, B);       // op: Op::none, transpose, conj_transpose
//   basalt::gesv_batched(exec, A, ipiv, B, info);
//
// A is a batch in either form of batch.hpp: a rank-3 View A(batch, m, n) in any layout, or a
// VariableBatch (every matrix its own m, n and leading dimension). ipiv: a rank-2 View of int
// (batch, >= min(m, n)), or a VariableBatch<int> of vectors (make_variable_vectors<int>(label,
// A), whose lengths need no check on each call, or with min_dimensions(A)); LAPACK's 1-based
// pivots. info: a rank-1 View of int, one entry per matrix: 0, or k > 0 when U(k, k) of that
// matrix is exactly zero, its factorization completed as LAPACK completes it. A singular member
// never stops the rest of the batch. getrs and gesv need square matrices; B is a batch of the
// same form with as many rows as A, overwritten by X. gesv leaves B alone for the matrices whose
// info > 0, as LAPACK does.
//
// Invalid arguments throw basalt::InvalidArgument before any work; the checks read only
// host-side sizes. Every call is asynchronous on exec.
//
// Portable path: one team per matrix; a matrix that fits in team scratch is factored there.
// CUDA: batches of matrices up to 32 x 32 go to a warp-per-matrix kernel, rows in registers;
// up to 512 x 512, to a kernel with one thread block per matrix (32-column panels in registers).
#include <Kokkos_Core.hpp>
#include <algorithm>

#include "basalt/algorithms/batched/batch.hpp"
#include "basalt/algorithms/batched/impl/batch_access.hpp"
#include "basalt/algorithms/batched/impl/team_launch.hpp"
#include "basalt/algorithms/batched/impl/team_lu.hpp"
#include "basalt/core/dispatch.hpp"
#include "basalt/core/errors.hpp"
#if defined(BASALT_ENABLE_CUDA)
#include "basalt/backends/cuda/batched/getrf_batched.hpp"
#endif

namespace basalt {

namespace portable {

template <class ExecSpace, class T, class M, class PM, class InfoView>
void getrf_batched(const ExecSpace& exec, const impl::BatchAccess<T, M>& A,
                   const impl::BatchAccess<int, PM>& ipiv, const InfoView& info,
                   const impl::BatchLaunch& launch) {
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  const int scratch = launch.scratch_bytes;
  impl::for_each_matrix(
      exec, "basalt::portable::getrf_batched", A.count, launch,
      KOKKOS_LAMBDA(const Member& team, const int b) {
        const impl::VectorRef<int> pivots = ipiv.vector(b);
        impl::staged(team, A.matrix(b), scratch, [&](const impl::MatrixRef<T>& F) {
          const int result = impl::team_getrf(team, F, pivots);
          Kokkos::single(Kokkos::PerTeam(team), [&] { info(b) = result; });
        });
      });
}

// getrs on every matrix; with a non-empty `skip`, the matrices whose skip(b) != 0 are left alone.
template <class ExecSpace, class T, class M, class PM, class BT, class BM, class SkipView>
void getrs_batched(const ExecSpace& exec, Op op, const impl::BatchAccess<T, M>& A,
                   const impl::BatchAccess<int, PM>& ipiv, const impl::BatchAccess<BT, BM>& B,
                   const SkipView& skip, const impl::BatchLaunch& launch) {
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using Value = std::remove_const_t<T>;
  const bool skipping = skip.extent(0) > 0;
  impl::for_each_matrix(
      exec, "basalt::portable::getrs_batched", A.count, launch,
      KOKKOS_LAMBDA(const Member& team, const int b) {
        if (skipping && skip(b) != 0) return;
        const impl::MatrixRef<const Value> F = A.matrix(b);
        const impl::VectorRef<const int> pivots = ipiv.vector(b);
        const impl::MatrixRef<Value> X = B.matrix(b);
        const int n = static_cast<int>(F.extent(0));
        if (op == Op::none) {
          impl::team_laswp(team, X, pivots, n, Direction::forward);
          impl::team_trsm_left(team, true, Op::none, true, F, X);
          impl::team_trsm_left(team, false, Op::none, false, F, X);
        } else {
          impl::team_trsm_left(team, false, op, false, F, X);
          impl::team_trsm_left(team, true, op, true, F, X);
          impl::team_laswp(team, X, pivots, n, Direction::backward);
        }
      });
}

}  // namespace portable

template <class ExecSpace, class ABatch, class PivBatch, class InfoView>
void getrf_batched(const ExecSpace& exec, const ABatch& A, const PivBatch& ipiv,
                   const InfoView& info) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "the first argument must be a Kokkos execution space instance");
  static_assert(!std::is_const_v<typename ABatch::value_type>,
                "basalt::getrf_batched overwrites A");
  static_assert(std::is_same_v<typename PivBatch::value_type, int>,
                "ipiv must be a writable batch of int");
  const auto a = impl::matrices<ExecSpace>(A, "getrf_batched", "A");
  const auto p = impl::vectors<ExecSpace>(ipiv, "getrf_batched", "ipiv");
  impl::require_same_count("getrf_batched", "ipiv", a, p);
  impl::require_info<ExecSpace>("getrf_batched", info, a.count);
  impl::check_min_dimension_vectors("getrf_batched", "ipiv", a, p);
  using Spec = Specialization<routine::getrf_batched, ExecSpace>;
  if constexpr (Spec::available) {
    if (Spec::handles(a)) return Spec::apply(exec, a, p, info);
  }
  portable::getrf_batched(exec, a, p, info, impl::batch_launch<ExecSpace>(a));
}

namespace impl {

// getrs_batched's checks, shared with gesv_batched: square A, pivots for all its rows, B with
// as many rows as A.
template <class A, class P, class B>
void check_lu_solve(const char* routine, const A& a, const P& p, const B& x) {
  require_same_count(routine, "ipiv", a, p);
  require_same_count(routine, "B", a, x);
  check_square(routine, a);
  check_each_matrix(
      routine,
      [](int b, const auto& need, const HostSizes& a_sizes, const HostSizes& ipiv_sizes,
         const HostSizes& b_sizes) {
        need(ipiv_sizes.rows[b] >= a_sizes.rows[b], "ipiv", "matrix ", b, ": ipiv holds ",
             ipiv_sizes.rows[b], " entries; ", a_sizes.rows[b], " are needed");
        need(b_sizes.rows[b] == a_sizes.rows[b], "B", "matrix ", b, ": B has ", b_sizes.rows[b],
             " rows; A has ", a_sizes.rows[b]);
      },
      a, p, x);
}

template <class ABatch, class BBatch>
void check_same_scalar() {
  static_assert(std::is_same_v<batch_scalar_t<ABatch>, batch_scalar_t<BBatch>>,
                "A and B must hold the same scalar type");
  static_assert(!std::is_const_v<typename BBatch::value_type>, "B is overwritten by X");
}

}  // namespace impl

template <class ExecSpace, class ABatch, class PivBatch, class BBatch>
void getrs_batched(const ExecSpace& exec, Op op, const ABatch& A, const PivBatch& ipiv,
                   const BBatch& B) {
  impl::check_same_scalar<ABatch, BBatch>();
  const auto a = impl::matrices<ExecSpace>(A, "getrs_batched", "A");
  const auto p = impl::vectors<ExecSpace>(ipiv, "getrs_batched", "ipiv");
  const auto x = impl::matrices<ExecSpace>(B, "getrs_batched", "B");
  impl::check_lu_solve("getrs_batched", a, p, x);
  portable::getrs_batched(exec, op, a, p, x, Kokkos::View<int*, typename ExecSpace::memory_space>(),
                          impl::solve_launch<ExecSpace>(x));
}

template <class ExecSpace, class ABatch, class PivBatch, class BBatch, class InfoView>
void gesv_batched(const ExecSpace& exec, const ABatch& A, const PivBatch& ipiv, const BBatch& B,
                  const InfoView& info) {
  impl::check_same_scalar<ABatch, BBatch>();
  const auto a = impl::matrices<ExecSpace>(A, "gesv_batched", "A");
  const auto p = impl::vectors<ExecSpace>(ipiv, "gesv_batched", "ipiv");
  const auto x = impl::matrices<ExecSpace>(B, "gesv_batched", "B");
  impl::check_lu_solve("gesv_batched", a, p, x);
  getrf_batched(exec, A, ipiv, info);
  portable::getrs_batched(exec, Op::none, a, p, x, info, impl::solve_launch<ExecSpace>(x));
}

}  // namespace basalt
