#pragma once
// geqrf of a tall-skinny matrix: Cholesky QR twice, then the Householder vectors reconstructed
// from the orthonormal factor (Ballard, Demmel, Grigori, Jacquelin, Knight and Nguyen,
// "Reconstructing Householder vectors from tall-skinny QR", 2015), so that A ends as Householder
// QR leaves it: LAPACK's storage, equal to LAPACK's geqrf up to rounding. Every pass over the m
// rows is a gemm, which a GPU streams near memory speed, where a Householder panel waits on a
// barrier per column.
//
//   A^H A = R1^H R1,  W = A R1^-1                       Cholesky QR
//   W^H W = R2^H R2,  Q = W R2^-1,  R = R2 R1           again: Q orthonormal to working precision
//   Q - [S; 0] = L U                                    LU without pivoting, S = diag(+-1) taken
//                                                       at each step against the pivot's real
//                                                       part, so that |pivot| >= 1
//   V = L,  tau = -diag(U) S,  R := S R
//
// Only Q's top n x n block is formed; below it V = W (R2^-1 U^-1), one gemm into A. A product
// with an explicit triangular inverse puts about kappa(R) u into the residual, so R1^-1 is
// applied by trsm (backward stable, slower on a GPU) where kappa_1(R1) exceeds
// inverse_condition_limit. Cholesky QR needs kappa(A) below about u^-1/2: the path gives up and
// leaves A untouched when a Cholesky factorization fails (an ill-conditioned or rank-deficient
// A, a zero column, NaN, Inf), when W is not close to orthonormal, or when U is ill-conditioned;
// geqrf then runs Householder QR. Those verdicts are made on the device and read back twice,
// the path's only waits for exec.
#include <Kokkos_Core.hpp>
#include <utility>

#include "basalt/algorithms/dense/impl/blas.hpp"
#include "basalt/algorithms/dense/impl/potrf_portable.hpp"
#include "basalt/core/call_scratch.hpp"
#include "basalt/core/cholesky_state.hpp"
#include "basalt/core/profiling.hpp"
#include "basalt/core/tuning.hpp"
#include "basalt/core/views.hpp"
#if defined(BASALT_ENABLE_CUDA)
#include "basalt/backends/cuda/dense/potf2.hpp"
#endif

namespace basalt::impl {

// Whether geqrf hands an m x n matrix to geqrf_tall_skinny.
inline bool tall_skinny(int m, int n, tuning::Qr tune) {
  return n > 0 && n <= tune.block && tune.tall_skinny_ratio > 0 &&
         static_cast<long>(m) >= static_cast<long>(tune.tall_skinny_ratio) * n;
}

namespace tall_skinny_qr {

// A triangle whose kappa_1 stays below this is applied as an explicit inverse by gemm.
constexpr double inverse_condition_limit = 1000;
// W = A R1^-1 is close enough to orthonormal for one more Cholesky QR when kappa_1(R2) <= 4.
constexpr double orthonormal_condition_limit = 4;

enum Verdict : int { give_up = 0, by_inverse = 1, by_solve = 2 };

template <class ExecSpace, class T>
struct WorkViews {
  using Pieces = ScratchPieces<typename ExecSpace::memory_space>;
  using Matrix = typename Pieces::template Piece<T**>;

  WorkViews(Pieces& pieces, int n)
      : gram1(pieces.template matrix<T>(n, n)),
        gram2(pieces.template matrix<T>(n, n)),
        inverse1(pieces.template matrix<T>(n, n)),
        inverse2(pieces.template matrix<T>(n, n)),
        lu(pieces.template matrix<T>(n, n)),
        lu_inverse(pieces.template matrix<T>(n, n)),
        signs(pieces.template vector<real_t<T>>(n)),
        verdict(pieces.template scalar<int>()) {}

  Matrix gram1, gram2;        // n x n: A^H A and W^H W, then R1 and R2 in their upper triangles
  Matrix inverse1, inverse2;  // R1^-1, R2^-1; inverse1 later R2^-1 U^-1
  Matrix lu, lu_inverse;      // Q's top block, then L and U; U^-1
  typename Pieces::template Piece<real_t<T>*> signs;  // S
  typename Pieces::template Piece<int> verdict;       // written by each judgement before it is read
};

// The scratch of one call (core/call_scratch.hpp), and the two Cholesky factorizations' states.
template <class ExecSpace, class T>
struct Work : ScratchViews<ExecSpace, WorkViews<ExecSpace, T>> {
  Work(const ExecSpace& exec, int n)
      : ScratchViews<ExecSpace, WorkViews<ExecSpace, T>>(exec, n), first(exec), second(exec) {}

  CholeskyState<ExecSpace, T> first, second;
};

// X = R^-1 for the upper triangle of R (n x n); X comes out upper triangular, zeros below.
template <class ExecSpace, class RView, class XView>
void invert_upper(const ExecSpace& exec, const RView& R, const XView& X) {
  using T = typename XView::non_const_value_type;
  const int n = static_cast<int>(X.extent(0));
  Kokkos::parallel_for(
      "basalt::qr::tall_skinny::identity",
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>>(exec, {0, 0}, {n, n}),
      KOKKOS_LAMBDA(const int i, const int j) { X(i, j) = i == j ? T(1) : T(0); });
  trsm(exec, ApplySide::left, false, Op::none, false, T(1), R, X);
}

// Whether kappa_1(R) = ||R||_1 ||X||_1 (X = R^-1, both upper triangles) is at most `limit`; never
// when either holds NaN or Inf. Every thread of the team gets the answer.
template <class Member, class RView, class XView>
KOKKOS_INLINE_FUNCTION bool condition_within(const Member& team, const RView& R, const XView& X,
                                             double limit) {
  using Real = real_t<typename RView::non_const_value_type>;
  const int n = static_cast<int>(R.extent(0));
  const auto column_sum = [&](const auto& M, int j) {
    Real sum = 0;
    for (int i = 0; i <= j; ++i) sum += magnitude(M(i, j));
    return sum;
  };
  const auto norm_1 = [&](const auto& M) {
    Real norm = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, n),
        [&](const int j, Real& most) {
          const Real sum = column_sum(M, j);
          most = sum > most ? sum : most;
        },
        Kokkos::Max<Real>(norm));
    return norm;
  };
  const Real r_norm = norm_1(R), x_norm = norm_1(X);
  int not_finite = 0;
  // x - x is 0 for a finite x, NaN for NaN and Inf; a sum of magnitudes is NaN or Inf when any
  // of its terms is.
  Kokkos::parallel_reduce(
      Kokkos::TeamThreadRange(team, n),
      [&](const int j, int& count) {
        const Real r = column_sum(R, j), x = column_sum(X, j);
        count += r - r == Real(0) && x - x == Real(0) ? 0 : 1;
      },
      not_finite);
  return not_finite == 0 && static_cast<double>(r_norm) * static_cast<double>(x_norm) <= limit;
}

// Q's top n x n block B, in place, as Q - S = L U without pivoting: before step j, S(j) = +1 when
// the pivot's real part is negative, else -1, so that |pivot - S(j)| >= 1. L (unit diagonal)
// ends strictly below B's diagonal, U on and above it. One team of as many threads as the
// backend allows: its n steps each update the trailing block, up to n^2 entries.
template <class ExecSpace, class BView, class SView>
void modified_lu(const ExecSpace& exec, const BView& B, const SView& S) {
  using T = typename BView::non_const_value_type;
  using Real = real_t<T>;
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  ProfilingRegion region("basalt::qr::modified_lu");
  const int n = static_cast<int>(B.extent(0));
  const auto factor = KOKKOS_LAMBDA(const typename Policy::member_type& team) {
    for (int j = 0; j < n; ++j) {
      const Real sign = real_part(B(j, j)) < Real(0) ? Real(1) : Real(-1);
      const T pivot = B(j, j) - T(sign);
      team.team_barrier();  // every thread has read B(j, j)
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, j + 1, n),
                           [&](const int i) { B(i, j) = B(i, j) / pivot; });
      Kokkos::single(Kokkos::PerTeam(team), [&] {
        B(j, j) = pivot;
        S(j) = sign;
      });
      team.team_barrier();
      const int rest = n - j - 1;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rest * rest), [&](const int k) {
        const int i = j + 1 + k % rest, c = j + 1 + k / rest;
        B(i, c) -= B(i, j) * B(j, c);
      });
      team.team_barrier();
    }
  };
  const int threads = Policy(exec, 1, 1).team_size_max(factor, Kokkos::ParallelForTag());
  Kokkos::parallel_for("basalt::qr::tall_skinny::modified_lu", Policy(exec, 1, threads), factor);
}

// Runs judge(team) in one team and returns its verdict on the host: the path's only waits.
template <class ExecSpace, class VerdictView, class Judge>
Verdict decide(const ExecSpace& exec, const VerdictView& verdict, const Judge& judge) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  Kokkos::parallel_for(
      "basalt::qr::tall_skinny::verdict", Policy(exec, 1, Kokkos::AUTO),
      KOKKOS_LAMBDA(const typename Policy::member_type& team) {
        const Verdict v = judge(team);
        Kokkos::single(Kokkos::PerTeam(team), [&] { verdict() = v; });
      });
  int host = give_up;
  Kokkos::deep_copy(exec, Kokkos::View<int, Kokkos::HostSpace>(&host), verdict);
  exec.fence();
  return static_cast<Verdict>(host);
}

// A's top n x n block: R = S R2 R1 on and above the diagonal, L below it; tau = -diag(U) S.
template <class ExecSpace, class AView, class TauView, class T>
void write_top_block(const ExecSpace& exec, const AView& A, const TauView& tau,
                     const Work<ExecSpace, T>& work) {
  const int n = static_cast<int>(A.extent(1));
  const auto R1 = work.gram1, R2 = work.gram2, LU = work.lu;
  const auto S = work.signs;
  Kokkos::parallel_for(
      "basalt::qr::tall_skinny::top_block",
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>>(exec, {0, 0}, {n, n}),
      KOKKOS_LAMBDA(const int i, const int j) {
        if (i > j) {
          A(i, j) = LU(i, j);
          return;
        }
        T r = T(0);
        for (int k = i; k <= j; ++k) r += R2(i, k) * R1(k, j);
        A(i, j) = T(S(i)) * r;
        if (i == j) tau(j) = -LU(j, j) * T(S(j));
      });
}

}  // namespace tall_skinny_qr

// geqrf of the m x n A (m >= n > 0) by the path above. Returns false, with A and tau untouched,
// where Cholesky QR does not apply; geqrf then runs Householder QR.
template <class ExecSpace, class AView, class TauView>
bool geqrf_tall_skinny(const ExecSpace& exec, const AView& A, const TauView& tau) {
  using namespace tall_skinny_qr;
  using T = typename AView::non_const_value_type;
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  const int m = static_cast<int>(A.extent(0)), n = static_cast<int>(A.extent(1));
  const Work<ExecSpace, T> work(exec, n);
  const auto top = std::make_pair(0, n), below = std::make_pair(n, m);
  const auto cholesky = tuning::cholesky<ExecSpace, T>(n);

  gemm(exec, Op::conj_transpose, Op::none, T(1), A, A, T(0), work.gram1);
  potrf(exec, Triangle::upper, work.gram1, work.first, cholesky);
  invert_upper(exec, work.gram1, work.inverse1);
  // The judgements capture Views, not work: its Cholesky states own their scratch, uncopied.
  const auto first_info = work.first.info, second_info = work.second.info;
  const auto gram1 = work.gram1, inverse1 = work.inverse1, gram2 = work.gram2,
             inverse2 = work.inverse2, lu = work.lu, lu_inverse = work.lu_inverse;
  const Verdict first = decide(
      exec, work.verdict, KOKKOS_LAMBDA(const Member& team) {
        if (first_info() != 0) return give_up;
        return condition_within(team, gram1, inverse1, inverse_condition_limit) ? by_inverse
                                                                                : by_solve;
      });
  if (first == give_up) return false;
  // W = A R1^-1, m x n: allocated only once the path is taken.
  const Kokkos::View<T**, Kokkos::LayoutLeft, typename ExecSpace::memory_space> W(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "basalt::qr::tall_skinny::w"), m, n);
  if (first == by_inverse) {
    gemm(exec, Op::none, Op::none, T(1), A, work.inverse1, T(0), W);
  } else {
    Kokkos::deep_copy(exec, W, A);
    trsm(exec, ApplySide::right, false, Op::none, false, T(1), work.gram1, W);
  }

  gemm(exec, Op::conj_transpose, Op::none, T(1), W, W, T(0), work.gram2);
  potrf(exec, Triangle::upper, work.gram2, work.second, cholesky);
  invert_upper(exec, work.gram2, work.inverse2);
  gemm(exec, Op::none, Op::none, T(1), Kokkos::subview(W, top, Kokkos::ALL), work.inverse2, T(0),
       work.lu);
  modified_lu(exec, work.lu, work.signs);
  invert_upper(exec, work.lu, work.lu_inverse);
  const Verdict second = decide(
      exec, work.verdict, KOKKOS_LAMBDA(const Member& team) {
        const bool orthonormal =
            condition_within(team, gram2, inverse2, orthonormal_condition_limit);
        const bool u_conditioned = condition_within(team, lu, lu_inverse, inverse_condition_limit);
        return second_info() == 0 && orthonormal && u_conditioned ? by_inverse : give_up;
      });
  if (second == give_up) return false;

  gemm(exec, Op::none, Op::none, T(1), work.inverse2, work.lu_inverse, T(0), work.inverse1);
  gemm(exec, Op::none, Op::none, T(1), Kokkos::subview(W, below, Kokkos::ALL), work.inverse1, T(0),
       Kokkos::subview(A, below, Kokkos::ALL));
  write_top_block(exec, A, tau, work);
  return true;
}

}  // namespace basalt::impl
