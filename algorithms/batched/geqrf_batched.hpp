#pragma once
// Batched Householder QR, the application of its Q and least squares: LAPACK's xGEQRF,
// xORMQR / xUNMQR and xGELS (no transpose, m >= n) on every matrix of a batch.
//
//   basalt::geqrf_batched(exec, A, tau);
//   basalt::ormqr_batched(exec, side, op, A, tau, C);  // C = op(Q) C (left), C op(Q) (right)
//   basalt::ormqr_batched(exec, op, A, tau, C);        // side left
//   basalt::gels_batched(exec, A, B, info);       // min ||B - A X||, X in B's first n rows
//
// A is a batch of m x n matrices in either form of batch.hpp, overwritten by R (on and above
// the diagonal) and the Householder vectors (below it), LAPACK's storage; tau: a rank-2 View
// (batch, >= min(m, n)) or a VariableBatch of vectors (make_variable_vectors with
// min_dimensions(A)). ormqr applies the k = length-of-tau reflectors from the left (C has m
// rows) or the right (C has m columns); Op::transpose is taken for real scalars (where it is
// the conjugate transpose) and refused for complex ones, as xUNMQR refuses 'T'. gels
// needs m >= n for every matrix (the underdetermined case is not provided) and full rank:
// info(b) = k > 0 when R(k, k) of matrix b is exactly zero, and then B is left alone for it.
//
// Invalid arguments throw basalt::InvalidArgument before any work; the checks read only
// host-side sizes. Every call is asynchronous on exec.
//
// Portable path: one team per matrix; a matrix that fits in team scratch is factored there.
#include <Kokkos_Core.hpp>
#include <algorithm>

#include "basalt/algorithms/batched/batch.hpp"
#include "basalt/algorithms/batched/getrf_batched.hpp"
#include "basalt/algorithms/batched/impl/batch_access.hpp"
#include "basalt/algorithms/batched/impl/team_launch.hpp"
#include "basalt/algorithms/batched/impl/team_lu.hpp"
#include "basalt/algorithms/batched/impl/team_qr.hpp"
#include "basalt/core/dispatch.hpp"
#include "basalt/core/errors.hpp"

namespace basalt {

namespace portable {

template <class ExecSpace, class T, class M, class TM>
void geqrf_batched(const ExecSpace& exec, const impl::BatchAccess<T, M>& A,
                   const impl::BatchAccess<T, TM>& tau, const impl::BatchLaunch& launch) {
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  const int scratch = launch.scratch_bytes;
  impl::for_each_matrix(
      exec, "basalt::portable::geqrf_batched", A.count, launch,
      KOKKOS_LAMBDA(const Member& team, const int b) {
        const impl::VectorRef<T> t = tau.vector(b);
        impl::staged(team, A.matrix(b), scratch,
                     [&](const impl::MatrixRef<T>& F) { impl::team_geqrf(team, F, t); });
      });
}

// C = op(Q) C (left) or C op(Q) (right) with the first min(length of tau, columns of A)
// reflectors of every matrix.
template <class ExecSpace, class T, class M, class TT, class TM, class CT, class CM>
void ormqr_batched(const ExecSpace& exec, ApplySide side, Op op, const impl::BatchAccess<T, M>& A,
                   const impl::BatchAccess<TT, TM>& tau, const impl::BatchAccess<CT, CM>& C,
                   const impl::BatchLaunch& launch) {
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using Value = std::remove_const_t<T>;
  impl::for_each_matrix(
      exec, "basalt::portable::ormqr_batched", A.count, launch,
      KOKKOS_LAMBDA(const Member& team, const int b) {
        const impl::MatrixRef<const Value> F = A.matrix(b);
        const impl::VectorRef<const Value> t = tau.vector(b);
        const int k = static_cast<int>(t.extent(0) < F.extent(1) ? t.extent(0) : F.extent(1));
        if (side == ApplySide::left)
          impl::team_apply_q(team, op, F, t, k, C.matrix(b));
        else
          impl::team_apply_q_right(team, op, F, t, k, C.matrix(b));
      });
}

// The least-squares solve after geqrf_batched (m >= n): info(b) = the first zero diagonal of
// R, else B = Q^H B and its first n rows solved with R.
template <class ExecSpace, class T, class M, class TM, class BM, class InfoView>
void gels_solve_batched(const ExecSpace& exec, const impl::BatchAccess<T, M>& A,
                        const impl::BatchAccess<T, TM>& tau, const impl::BatchAccess<T, BM>& B,
                        const InfoView& info, const impl::BatchLaunch& launch) {
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  impl::for_each_matrix(
      exec, "basalt::portable::gels_batched", A.count, launch,
      KOKKOS_LAMBDA(const Member& team, const int b) {
        const impl::MatrixRef<const T> F = A.matrix(b);
        const int n = static_cast<int>(F.extent(1));
        int result = 0;
        for (int j = 0; j < n && result == 0; ++j)
          if (F(j, j) == T(0)) result = j + 1;
        Kokkos::single(Kokkos::PerTeam(team), [&] { info(b) = result; });
        if (result != 0) return;
        const impl::MatrixRef<T> X = B.matrix(b);
        impl::team_apply_q(team, Op::conj_transpose, F, impl::VectorRef<const T>(tau.vector(b)), n,
                           X);
        const impl::MatrixRef<const T> R(F.data(),
                                         Kokkos::LayoutStride(n, F.stride(0), n, F.stride(1)));
        const impl::MatrixRef<T> top(
            X.data(), Kokkos::LayoutStride(n, X.stride(0), X.extent(1), X.stride(1)));
        impl::team_trsm_left(team, false, Op::none, false, R, top);
      });
}

}  // namespace portable

template <class ExecSpace, class ABatch, class TauBatch>
void geqrf_batched(const ExecSpace& exec, const ABatch& A, const TauBatch& tau) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "the first argument must be a Kokkos execution space instance");
  static_assert(!std::is_const_v<typename ABatch::value_type>,
                "basalt::geqrf_batched overwrites A");
  static_assert(std::is_same_v<typename TauBatch::value_type, typename ABatch::value_type>,
                "tau must be a writable batch of A's scalar type");
  const auto a = impl::matrices<ExecSpace>(A);
  const auto t = impl::vectors<ExecSpace>(tau, "geqrf_batched", "tau");
  impl::require_same_count("geqrf_batched", "tau", a, t);
  for (int b = 0; b < impl::matrices_to_check(a.count, a, t); ++b)
    require(t.host_rows(b) >= std::min(a.host_rows(b), a.host_cols(b)), "geqrf_batched", "tau",
            "matrix ", b, ": tau holds ", t.host_rows(b),
            " entries; min(m, n) = ", std::min(a.host_rows(b), a.host_cols(b)), " are needed");
  portable::geqrf_batched(exec, a, t, impl::batch_launch<ExecSpace>(a));
}

template <class ExecSpace, class ABatch, class TauBatch, class CBatch>
void ormqr_batched(const ExecSpace& exec, ApplySide side, Op op, const ABatch& A,
                   const TauBatch& tau, const CBatch& C) {
  impl::check_same_scalar<ABatch, CBatch>();
  static_assert(std::is_same_v<impl::batch_scalar_t<TauBatch>, impl::batch_scalar_t<ABatch>>,
                "tau must hold A's scalar type");
  using T = impl::batch_scalar_t<ABatch>;
  require(op != Op::transpose || std::is_floating_point_v<T>, "ormqr_batched", "op",
          "Q of a complex QR is applied as Op::none or Op::conj_transpose");
  const auto a = impl::matrices<ExecSpace>(A);
  const auto t = impl::vectors<ExecSpace>(tau, "ormqr_batched", "tau");
  const auto c = impl::matrices<ExecSpace>(C);
  impl::require_same_count("ormqr_batched", "tau", a, t);
  impl::require_same_count("ormqr_batched", "C", a, c);
  const bool left = side == ApplySide::left;
  for (int b = 0; b < impl::matrices_to_check(a.count, a, t, c); ++b) {
    require(t.host_rows(b) <= std::min(a.host_rows(b), a.host_cols(b)), "ormqr_batched", "tau",
            "matrix ", b, ": tau holds ", t.host_rows(b), " reflectors; A is ", a.host_rows(b),
            " x ", a.host_cols(b));
    require((left ? c.host_rows(b) : c.host_cols(b)) == a.host_rows(b), "ormqr_batched", "C",
            "matrix ", b, ": C has ", left ? c.host_rows(b) : c.host_cols(b),
            left ? " rows" : " columns", "; A has ", a.host_rows(b), " rows");
  }
  portable::ormqr_batched(exec, side, op, a, t, c, impl::solve_launch<ExecSpace>(c));
}

// Side left: C = op(Q) C.
template <class ExecSpace, class ABatch, class TauBatch, class CBatch>
void ormqr_batched(const ExecSpace& exec, Op op, const ABatch& A, const TauBatch& tau,
                   const CBatch& C) {
  ormqr_batched(exec, ApplySide::left, op, A, tau, C);
}

template <class ExecSpace, class ABatch, class BBatch, class InfoView>
void gels_batched(const ExecSpace& exec, const ABatch& A, const BBatch& B, const InfoView& info) {
  static_assert(!std::is_const_v<typename ABatch::value_type>, "basalt::gels_batched overwrites A");
  impl::check_same_scalar<ABatch, BBatch>();
  using T = impl::batch_scalar_t<ABatch>;
  const auto a = impl::matrices<ExecSpace>(A);
  const auto x = impl::matrices<ExecSpace>(B);
  impl::require_same_count("gels_batched", "B", a, x);
  impl::require_info<ExecSpace>("gels_batched", info, a.count);
  for (int b = 0; b < impl::matrices_to_check(a.count, a, x); ++b) {
    require(a.host_rows(b) >= a.host_cols(b), "gels_batched", "A", "matrix ", b, " is ",
            a.host_rows(b), " x ", a.host_cols(b), "; only m >= n (least squares) is provided");
    require(x.host_rows(b) == a.host_rows(b), "gels_batched", "B", "matrix ", b, ": B has ",
            x.host_rows(b), " rows; A has ", a.host_rows(b));
  }
  using Memory = typename ExecSpace::memory_space;
  if constexpr (impl::is_variable_batch_v<ABatch>) {
    const auto tau =
        make_variable_vectors<T, Memory>("basalt::gels_batched::tau", min_dimensions(A));
    geqrf_batched(exec, A, tau);
    portable::gels_solve_batched(exec, a, impl::vectors<ExecSpace>(tau, "gels_batched", "tau"), x,
                                 info, impl::solve_launch<ExecSpace>(x));
  } else {
    const Kokkos::View<T**, Memory> tau("basalt::gels_batched::tau", a.count,
                                        std::min(a.fixed_rows, a.fixed_cols));
    geqrf_batched(exec, A, tau);
    portable::gels_solve_batched(exec, a, impl::vectors<ExecSpace>(tau, "gels_batched", "tau"), x,
                                 info, impl::solve_launch<ExecSpace>(x));
  }
}

}  // namespace basalt
