#pragma once
// Batched Cholesky factorization and its solves: LAPACK's xPOTRF, xPOTRS and xPOSV on every
// matrix of a batch.
//
//   basalt::potrf_batched(exec, uplo, A, info);     // uplo: Triangle::lower (A = L L^H) or upper
//   basalt::potrs_batched(exec, uplo, A, B);
//   basalt::posv_batched(exec, uplo, A, B, info);
//
// A is a batch of n x n Hermitian positive definite matrices in either form of batch.hpp, only
// its `uplo` triangle referenced and overwritten by the factor. info: a rank-1 View of int, one
// entry per matrix: 0, or k > 0 when the leading minor of order k is not positive definite
// (the factorization of that matrix stops there, as LAPACK's does). A non-positive-definite
// member never stops the rest of the batch. B: a batch of the same form, as many rows as A,
// overwritten by X; posv leaves B alone for the matrices whose info > 0.
//
// Invalid arguments throw basalt::InvalidArgument before any work; the checks read only
// host-side sizes. Every call is asynchronous on exec.
//
// Portable path: one team per matrix; a matrix that fits in team scratch is factored there.
// CUDA: matrices up to 32 x 32 go to a kernel with one warp segment per matrix; up to 512 x 512,
// to a kernel with one thread block per matrix (32-column panels, the trailing update as
// register-tiled products from shared memory).
#include <Kokkos_Core.hpp>

#include "basalt/algorithms/batched/batch.hpp"
#include "basalt/algorithms/batched/getrf_batched.hpp"
#include "basalt/algorithms/batched/impl/batch_access.hpp"
#include "basalt/algorithms/batched/impl/team_cholesky.hpp"
#include "basalt/algorithms/batched/impl/team_launch.hpp"
#include "basalt/algorithms/batched/impl/team_lu.hpp"
#include "basalt/core/dispatch.hpp"
#include "basalt/core/errors.hpp"
#if defined(BASALT_ENABLE_CUDA)
#include "basalt/backends/cuda/batched/potrf_batched.hpp"
#endif

namespace basalt {

namespace portable {

template <class ExecSpace, class T, class M, class InfoView>
void potrf_batched(const ExecSpace& exec, Triangle uplo, const impl::BatchAccess<T, M>& A,
                   const InfoView& info, const impl::BatchLaunch& launch) {
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  const int scratch = launch.scratch_bytes;
  impl::for_each_matrix(
      exec, "basalt::portable::potrf_batched", A.count, launch,
      KOKKOS_LAMBDA(const Member& team, const int b) {
        impl::staged(team, A.matrix(b), scratch, [&](const impl::MatrixRef<T>& F) {
          const int result = impl::team_potrf(team, uplo, F);
          Kokkos::single(Kokkos::PerTeam(team), [&] { info(b) = result; });
        });
      });
}

// potrs on every matrix; with a non-empty `skip`, the matrices whose skip(b) != 0 are left alone.
template <class ExecSpace, class T, class M, class BT, class BM, class SkipView>
void potrs_batched(const ExecSpace& exec, Triangle uplo, const impl::BatchAccess<T, M>& A,
                   const impl::BatchAccess<BT, BM>& B, const SkipView& skip,
                   const impl::BatchLaunch& launch) {
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using Value = std::remove_const_t<T>;
  const bool skipping = skip.extent(0) > 0;
  impl::for_each_matrix(
      exec, "basalt::portable::potrs_batched", A.count, launch,
      KOKKOS_LAMBDA(const Member& team, const int b) {
        if (skipping && skip(b) != 0) return;
        const impl::MatrixRef<const Value> F = A.matrix(b);
        const impl::MatrixRef<Value> X = B.matrix(b);
        // A = L L^H: L Y = B, then L^H X = Y; A = U^H U: U^H Y = B, then U X = Y.
        const bool lower = uplo == Triangle::lower;
        impl::team_trsm_left(team, lower, lower ? Op::none : Op::conj_transpose, false, F, X);
        impl::team_trsm_left(team, lower, lower ? Op::conj_transpose : Op::none, false, F, X);
      });
}

}  // namespace portable

namespace impl {

template <class A, class B>
void check_cholesky_solve(const char* routine, const A& a, const B& x) {
  require_same_count(routine, "B", a, x);
  check_square(routine, a);
  check_each_matrix(
      routine,
      [](int b, const auto& need, const HostSizes& a_sizes, const HostSizes& b_sizes) {
        need(b_sizes.rows[b] == a_sizes.rows[b], "B", "matrix ", b, ": B has ", b_sizes.rows[b],
             " rows; A has ", a_sizes.rows[b]);
      },
      a, x);
}

}  // namespace impl

template <class ExecSpace, class ABatch, class InfoView>
void potrf_batched(const ExecSpace& exec, Triangle uplo, const ABatch& A, const InfoView& info) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "the first argument must be a Kokkos execution space instance");
  static_assert(!std::is_const_v<typename ABatch::value_type>,
                "basalt::potrf_batched overwrites A");
  const auto a = impl::matrices<ExecSpace>(A, "potrf_batched", "A");
  impl::require_info<ExecSpace>("potrf_batched", info, a.count);
  impl::check_square("potrf_batched", a);
  using Spec = Specialization<routine::potrf_batched, ExecSpace>;
  if constexpr (Spec::available) {
    if (Spec::handles(a)) return Spec::apply(exec, uplo, a, info);
  }
  portable::potrf_batched(exec, uplo, a, info, impl::batch_launch<ExecSpace>(a));
}

template <class ExecSpace, class ABatch, class BBatch>
void potrs_batched(const ExecSpace& exec, Triangle uplo, const ABatch& A, const BBatch& B) {
  impl::check_same_scalar<ABatch, BBatch>();
  const auto a = impl::matrices<ExecSpace>(A, "potrs_batched", "A");
  const auto x = impl::matrices<ExecSpace>(B, "potrs_batched", "B");
  impl::check_cholesky_solve("potrs_batched", a, x);
  portable::potrs_batched(exec, uplo, a, x, Kokkos::View<int*, typename ExecSpace::memory_space>(),
                          impl::solve_launch<ExecSpace>(x));
}

template <class ExecSpace, class ABatch, class BBatch, class InfoView>
void posv_batched(const ExecSpace& exec, Triangle uplo, const ABatch& A, const BBatch& B,
                  const InfoView& info) {
  impl::check_same_scalar<ABatch, BBatch>();
  const auto a = impl::matrices<ExecSpace>(A, "posv_batched", "A");
  const auto x = impl::matrices<ExecSpace>(B, "posv_batched", "B");
  impl::check_cholesky_solve("posv_batched", a, x);
  potrf_batched(exec, uplo, A, info);
  portable::potrs_batched(exec, uplo, a, x, info, impl::solve_launch<ExecSpace>(x));
}

}  // namespace basalt
