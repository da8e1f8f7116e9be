#pragma once
// Batched Householder QR, the application of its Q and least squares: LAPACK's xGEQRF,
// xORMQR / xUNMQR and xGELS on every matrix of a batch.
//
//   basalt::geqrf_batched(exec, A, tau);
//   basalt::ormqr_batched(exec, side, op, A, tau, C);  // C = op(Q) C (left), C op(Q) (right)
//   basalt::ormqr_batched(exec, op, A, tau, C);        // side left
//   basalt::gels_batched(exec, op, A, B, info);        // min ||B - op(A) X|| or min-norm X
//   basalt::gels_batched(exec, A, B, info);            // op none
//
// A is a batch of m x n matrices in either form of batch.hpp, overwritten by R (on and above
// the diagonal) and the Householder vectors (below it), LAPACK's storage; tau: a rank-2 View
// (batch, >= min(m, n)) or a VariableBatch of vectors (make_variable_vectors<T>(label, A),
// whose lengths need no check on each call, or with min_dimensions(A)). ormqr applies the k =
// length-of-tau reflectors from the left (C has m rows) or the right (C has m columns);
// Op::transpose is taken for real scalars (where it is the conjugate transpose) and refused for
// complex ones, as xUNMQR and xGELS refuse 'T'.
//
// gels, as xGELS: B holds max(m, n) rows per matrix. For op(A) with at least as many rows as
// columns it is the least-squares solution, X in B's first columns-of-op(A) rows (the rest
// hold the residual's rotated components); with fewer rows (an underdetermined system) it is
// the minimum-norm solution, X filling B. A is overwritten by its QR factors (m >= n) or by its
// LQ factors in xGELQF's storage (m < n: L on and below the diagonal, the reflectors to its
// right), computed as the QR of A^H in a workspace. A member without full rank gets
// info(b) = k > 0, the first zero diagonal of R (or L); its B is left as xGELS leaves it:
// Q^H B when the least-squares step ran first (op none with m >= n, op^H with m < n),
// untouched otherwise. min(m, n) = 0 gives X = 0. Other members are not affected.
//
// Invalid arguments throw basalt::InvalidArgument before any work; the checks read only
// host-side sizes. Every call is asynchronous on exec.
//
// Portable path: one team per matrix; a matrix that fits in team scratch is factored there.
// CUDA: geqrf_batched on matrices up to 32 x 32 goes to a kernel with one warp segment per matrix,
// up to 512 x 512 (256 in complex double) to one with a thread block per matrix (fixed or
// variable batches alike).
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <vector>

#include "basalt/algorithms/batched/batch.hpp"
#include "basalt/algorithms/batched/getrf_batched.hpp"
#include "basalt/algorithms/batched/impl/batch_access.hpp"
#include "basalt/algorithms/batched/impl/team_launch.hpp"
#include "basalt/algorithms/batched/impl/team_lu.hpp"
#include "basalt/algorithms/batched/impl/team_qr.hpp"
#include "basalt/core/dispatch.hpp"
#include "basalt/core/errors.hpp"
#if defined(BASALT_ENABLE_CUDA)
#include "basalt/backends/cuda/batched/geqrf_batched.hpp"
#endif

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

// gels' factorization: the QR of A itself where m >= n, else the QR of A^H, formed in W's
// matrix b (n x m) and written back into A as its adjoint, which is xGELQF's LQ storage.
template <class ExecSpace, class T, class M, class WM, class TM>
void gels_factor_batched(const ExecSpace& exec, const impl::BatchAccess<T, M>& A,
                         const impl::BatchAccess<T, WM>& W, const impl::BatchAccess<T, TM>& tau,
                         const impl::BatchLaunch& launch) {
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  const int scratch = launch.scratch_bytes;
  impl::for_each_matrix(
      exec, "basalt::portable::gels_batched::factor", A.count, launch,
      KOKKOS_LAMBDA(const Member& team, const int b) {
        const impl::VectorRef<T> t = tau.vector(b);
        const auto factor = [&](const impl::MatrixRef<T>& F) { impl::team_geqrf(team, F, t); };
        const impl::MatrixRef<T> a = A.matrix(b);
        if (a.extent(0) >= a.extent(1)) return impl::staged(team, a, scratch, factor);
        const impl::MatrixRef<T> w = W.matrix(b);
        impl::team_copy_adjoint(team, a, w);
        team.team_barrier();
        impl::staged(team, w, scratch, factor);
        team.team_barrier();
        impl::team_copy_adjoint(team, w, a);
      });
}

// The solve after gels_factor_batched. F (p x q, p >= q) is the factored A or A^H; op(A) is
// F or F^H. Least squares (op(A) = F): B = Q^H B, then R X = B(0:q). Minimum norm
// (op(A) = F^H): R^H Y = B(0:q), B(q:p) = 0, X = Q B. info(b): the first zero diagonal of R,
// checked where xGELS's xTRTRS checks it.
template <class ExecSpace, class T, class M, class WM, class TM, class BM, class InfoView>
void gels_solve_batched(const ExecSpace& exec, Op op, const impl::BatchAccess<T, M>& A,
                        const impl::BatchAccess<T, WM>& W, const impl::BatchAccess<T, TM>& tau,
                        const impl::BatchAccess<T, BM>& B, const InfoView& info,
                        const impl::BatchLaunch& launch) {
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  impl::for_each_matrix(
      exec, "basalt::portable::gels_batched", A.count, launch,
      KOKKOS_LAMBDA(const Member& team, const int b) {
        const impl::MatrixRef<T> a = A.matrix(b);
        const bool wide = a.extent(0) < a.extent(1);
        const impl::MatrixRef<const T> F = wide ? W.matrix(b) : a;
        const int p = static_cast<int>(F.extent(0)), q = static_cast<int>(F.extent(1));
        const impl::MatrixRef<T> X = B.matrix(b);
        const int nrhs = static_cast<int>(X.extent(1));
        auto zero_rows = [&](const int begin) {
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nrhs), [&](const int c) {
            Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, begin, p),
                                 [&](const int i) { X(i, c) = T(0); });
          });
          team.team_barrier();
        };
        if (q == 0) {  // xGELS: B = 0 when min(m, n) = 0
          Kokkos::single(Kokkos::PerTeam(team), [&] { info(b) = 0; });
          return zero_rows(0);
        }
        const bool minimum_norm = (op != Op::none) != wide;
        const impl::VectorRef<const T> t = tau.vector(b);
        if (!minimum_norm) impl::team_apply_q(team, Op::conj_transpose, F, t, q, X);
        int result = 0;
        for (int j = 0; j < q && result == 0; ++j)
          if (F(j, j) == T(0)) result = j + 1;
        Kokkos::single(Kokkos::PerTeam(team), [&] { info(b) = result; });
        if (result != 0) return;
        const impl::MatrixRef<const T> R(F.data(),
                                         Kokkos::LayoutStride(q, F.stride(0), q, F.stride(1)));
        const impl::MatrixRef<T> top(X.data(),
                                     Kokkos::LayoutStride(q, X.stride(0), nrhs, X.stride(1)));
        if (!minimum_norm) return impl::team_trsm_left(team, false, Op::none, false, R, top);
        impl::team_trsm_left(team, false, Op::conj_transpose, false, R, top);
        zero_rows(q);
        impl::team_apply_q(team, Op::none, F, t, q, X);
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
  const auto a = impl::matrices<ExecSpace>(A, "geqrf_batched", "A");
  const auto t = impl::vectors<ExecSpace>(tau, "geqrf_batched", "tau");
  impl::require_same_count("geqrf_batched", "tau", a, t);
  impl::check_min_dimension_vectors("geqrf_batched", "tau", a, t);
  using Spec = Specialization<routine::geqrf_batched, ExecSpace>;
  if constexpr (Spec::available) {
    if (Spec::handles(a)) return Spec::apply(exec, a, t);
  }
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
  const auto a = impl::matrices<ExecSpace>(A, "ormqr_batched", "A");
  const auto t = impl::vectors<ExecSpace>(tau, "ormqr_batched", "tau");
  const auto c = impl::matrices<ExecSpace>(C, "ormqr_batched", "C");
  impl::require_same_count("ormqr_batched", "tau", a, t);
  impl::require_same_count("ormqr_batched", "C", a, c);
  const bool left = side == ApplySide::left;
  impl::check_each_matrix(
      "ormqr_batched",
      [left](int b, const auto& need, const impl::HostSizes& a_sizes,
             const impl::HostSizes& tau_sizes, const impl::HostSizes& c_sizes) {
        need(tau_sizes.rows[b] <= std::min(a_sizes.rows[b], a_sizes.cols[b]), "tau", "matrix ", b,
             ": tau holds ", tau_sizes.rows[b], " reflectors; A is ", a_sizes.rows[b], " x ",
             a_sizes.cols[b]);
        const int c_extent = left ? c_sizes.rows[b] : c_sizes.cols[b];
        need(c_extent == a_sizes.rows[b], "C", "matrix ", b, ": C has ", c_extent,
             left ? " rows" : " columns", "; A has ", a_sizes.rows[b], " rows");
      },
      a, t, c);
  portable::ormqr_batched(exec, side, op, a, t, c, impl::solve_launch<ExecSpace>(c));
}

// Side left: C = op(Q) C.
template <class ExecSpace, class ABatch, class TauBatch, class CBatch>
void ormqr_batched(const ExecSpace& exec, Op op, const ABatch& A, const TauBatch& tau,
                   const CBatch& C) {
  ormqr_batched(exec, ApplySide::left, op, A, tau, C);
}

template <class ExecSpace, class ABatch, class BBatch, class InfoView>
void gels_batched(const ExecSpace& exec, Op op, const ABatch& A, const BBatch& B,
                  const InfoView& info) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "the first argument must be a Kokkos execution space instance");
  static_assert(!std::is_const_v<typename ABatch::value_type>, "basalt::gels_batched overwrites A");
  impl::check_same_scalar<ABatch, BBatch>();
  using T = impl::batch_scalar_t<ABatch>;
  require(op != Op::transpose || std::is_floating_point_v<T>, "gels_batched", "op",
          "a complex system is solved as Op::none or Op::conj_transpose");
  const auto a = impl::matrices<ExecSpace>(A, "gels_batched", "A");
  const auto x = impl::matrices<ExecSpace>(B, "gels_batched", "B");
  impl::require_same_count("gels_batched", "B", a, x);
  impl::require_info<ExecSpace>("gels_batched", info, a.count);
  impl::check_each_matrix(
      "gels_batched",
      [](int b, const auto& need, const impl::HostSizes& a_sizes, const impl::HostSizes& b_sizes) {
        need(b_sizes.rows[b] == std::max(a_sizes.rows[b], a_sizes.cols[b]), "B", "matrix ", b,
             ": B has ", b_sizes.rows[b], " rows; A is ", a_sizes.rows[b], " x ", a_sizes.cols[b],
             " and needs max(m, n)");
      },
      a, x);
  using Memory = typename ExecSpace::memory_space;
  const auto run = [&](const auto& tau, const auto& work) {
    const auto t = impl::vectors<ExecSpace>(tau, "gels_batched", "tau");
    const auto w = impl::matrices<ExecSpace>(work, "gels_batched", "work");
    portable::gels_factor_batched(exec, a, w, t, impl::batch_launch<ExecSpace>(a));
    portable::gels_solve_batched(exec, op, a, w, t, x, info, impl::solve_launch<ExecSpace>(x));
  };
  if constexpr (impl::is_variable_batch_v<ABatch>) {
    // A^H for the members with m < n; nothing for the others.
    std::vector<int> work_rows(a.count), work_cols(a.count);
    for (int b = 0; b < a.count; ++b) {
      const bool wide = a.host_rows(b) < a.host_cols(b);
      work_rows[b] = wide ? a.host_cols(b) : 0;
      work_cols[b] = wide ? a.host_rows(b) : 0;
    }
    run(make_variable_vectors<T, Memory>("basalt::gels_batched::tau", min_dimensions(A)),
        make_variable_batch<T, Memory>("basalt::gels_batched::work", work_rows, work_cols));
  } else {
    const bool wide = a.fixed_rows < a.fixed_cols;
    run(Kokkos::View<T**, Memory>("basalt::gels_batched::tau", a.count,
                                  std::min(a.fixed_rows, a.fixed_cols)),
        make_batch<T, Memory>("basalt::gels_batched::work", wide ? a.count : 0, a.fixed_cols,
                              a.fixed_rows));
  }
}

// Op none: min ||B - A X|| for m >= n, the minimum-norm solution of A X = B for m < n.
template <class ExecSpace, class ABatch, class BBatch, class InfoView>
void gels_batched(const ExecSpace& exec, const ABatch& A, const BBatch& B, const InfoView& info) {
  gels_batched(exec, Op::none, A, B, info);
}

}  // namespace basalt
