#pragma once
// Householder QR written once over Kokkos: blocked, with recursive panels and the compact-WY
// form Q = I - V T V^H (V unit lower trapezoidal, stored below R as LAPACK stores it; T upper
// triangular). The panel halves recursively down to geqr2 (one team for short panels, a
// backend's fused panel kernel where there is one, else a few kernels per column); T is built
// recursively (seed 001, section 4.3.4: the diagonal blocks of T at one level are the T's of
// the level below, only the off-diagonal block is new, one gemm and one launch) down to the same
// width, where one team builds it column by column. Every product takes V from a zero-padded
// copy in the workspace (unit diagonal, zeros above it), so that V's triangle needs no trmm of
// its own: larfb is three calls (a gemm, a trmm with the small T, a gemm) where the unpadded
// form takes seven, a join of T two where it takes five. Each call costs a GPU ~10 us whatever
// its size, so the count matters as much as the flops.
// Every product goes through blas.hpp, so a backend's gemm and trmm (cuBLAS on CUDA) run this
// same driver on the caller's stream.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "basalt/algorithms/batched/impl/team_launch.hpp"
#include "basalt/algorithms/batched/impl/team_qr.hpp"
#include "basalt/algorithms/dense/impl/blas.hpp"
#include "basalt/algorithms/dense/impl/qr_tall_skinny.hpp"
#include "basalt/core/call_scratch.hpp"
#include "basalt/core/dispatch.hpp"
#include "basalt/core/profiling.hpp"
#include "basalt/core/side_space.hpp"
#include "basalt/core/tuning.hpp"
#include "basalt/core/views.hpp"

namespace basalt::impl {

// Scratch for one QR call, in one call scratch (core/call_scratch.hpp): T of a block of
// reflectors, larfb's W, the zero-padded copy of the reflectors, and the state of geqr2's kernel
// steps.
template <class ExecSpace, class T>
struct QrWorkViews {
  using Pieces = ScratchPieces<typename ExecSpace::memory_space>;
  template <class V>
  using Piece = typename Pieces::template Piece<V>;
  using Real = real_t<T>;

  QrWorkViews(Pieces& pieces, int nb, int w_rows, int w_cols, int v_rows, int v_cols,
              int panel_rows, int recursion_width)
      : t(pieces.template matrix<T>(nb, nb)),
        w(pieces.template matrix<T>(w_rows, w_cols)),
        v(pieces.template matrix<T>(v_rows, v_cols)),
        u(pieces.template matrix<T>(panel_rows, 1)),
        z(pieces.template matrix<T>(recursion_width, 1)),
        beta(pieces.template vector<T>(recursion_width)),
        divisor(pieces.template scalar<T>()),
        largest(pieces.template scalar<Real>()),
        sum(pieces.template scalar<Real>()) {}

  Piece<T**> t;         // nb x nb
  Piece<T**> w;         // larfb: k x cols(C) or rows(C) x k
  Piece<T**> v;         // V padded: rows x reflectors
  Piece<T**> u;         // geqr2: tau v, rows x 1
  Piece<T**> z;         // geqr2: A^H (tau v), width x 1
  Piece<T*> beta;       // geqr2: R's diagonal while v(j) = 1 stands in
  Piece<T> divisor;     // geqr2: v = x / divisor
  Piece<Real> largest;  // geqr2: the scaled column norm
  Piece<Real> sum;
};

// QrWork(exec, nb, w_rows, w_cols, v_rows, v_cols, panel_rows, recursion_width).
template <class ExecSpace, class T>
using QrWork = ScratchViews<ExecSpace, QrWorkViews<ExecSpace, T>>;

inline std::pair<int, int> range(int begin, int end) { return {begin, end}; }

template <class View>
std::int64_t extent(const View& v, int dimension) {
  return static_cast<std::int64_t>(v.extent(dimension));
}

// dst = src^H (dst is n x m for an m x n src).
template <class ExecSpace, class SrcView, class DstView>
void copy_adjoint(const ExecSpace& exec, const SrcView& src, const DstView& dst) {
  if (src.extent(0) == 0 || src.extent(1) == 0) return;
  using Policy = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>>;
  Kokkos::parallel_for(
      "basalt::qr::copy_adjoint", Policy(exec, {0, 0}, {extent(src, 0), extent(src, 1)}),
      KOKKOS_LAMBDA(const int i, const int j) { dst(j, i) = conjugate(src(i, j)); });
}

// Vp = the reflectors stored in P as a dense matrix: zeros above the unit diagonal, V below it.
// Vp has as many rows as P or more: its rows above P's (rows of the block above this panel)
// are zero too, so that Vp's columns are those of the whole block's V.
template <class ExecSpace, class PView, class VView>
void pad_reflectors(const ExecSpace& exec, const PView& P, const VView& Vp) {
  using T = typename VView::non_const_value_type;
  if (Vp.extent(0) == 0 || Vp.extent(1) == 0) return;
  ProfilingRegion region("basalt::qr::pad");
  const int offset = static_cast<int>(Vp.extent(0) - P.extent(0));
  using Policy = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>>;
  Kokkos::parallel_for(
      "basalt::qr::pad", Policy(exec, {0, 0}, {extent(Vp, 0), extent(Vp, 1)}),
      KOKKOS_LAMBDA(const int i, const int j) {
        const int r = i - offset;
        Vp(i, j) = r < j ? T(0) : r == j ? T(1) : P(r, j);
      });
}

// Unblocked Householder QR of the p x w panel P (w <= recursion width), LAPACK's geqr2 with
// larfg's reflector (as team_geqrf, batched/impl/team_qr.hpp), for tall panels: one column at a
// time, each step a kernel over all rows: the scaled
// norm of the column below the diagonal as two reductions over its rows, the reflector, the
// scaling of v, and H(j)^H on the columns to its right as two gemms (z = A^H (tau v),
// A -= v z^H). v(j) = 1 stands on the diagonal until the panel is done; R's diagonal waits in
// work.beta. No value is read back to the host: NaN or Inf flow through, nothing loops on them.
template <class ExecSpace, class PView, class TauView, class T>
void geqr2_columns(const ExecSpace& exec, const PView& P, const TauView& tau,
                   const QrWork<ExecSpace, T>& work) {
  using Real = real_t<T>;
  using Memory = typename ExecSpace::memory_space;
  using Range = Kokkos::RangePolicy<ExecSpace>;
  const int p = static_cast<int>(P.extent(0)), w = static_cast<int>(P.extent(1));
  const int k = std::min(p, w);
  const auto largest = work.largest, sum = work.sum;
  const auto divisor = work.divisor;
  const auto beta = work.beta;
  const auto u = work.u;
  for (int j = 0; j < k; ++j) {
    Kokkos::parallel_reduce(
        "basalt::geqr2::largest", Range(exec, j + 1, p),
        KOKKOS_LAMBDA(const int i, Real& found) {
          const Real v = magnitude(P(i, j));
          if (v > found) found = v;
        },
        Kokkos::Max<Real, Memory>(largest));
    Kokkos::parallel_reduce(
        "basalt::geqr2::sum", Range(exec, j + 1, p),
        KOKKOS_LAMBDA(const int i, Real& s) {
          const Real scale = largest() > Real(0) ? largest() : Real(1);
          const Real v = magnitude(P(i, j)) / scale;
          s += v * v;
        },
        Kokkos::Sum<Real, Memory>(sum));
    Kokkos::parallel_for(
        "basalt::geqr2::reflector", Range(exec, 0, 1), KOKKOS_LAMBDA(const int) {
          const T alpha = P(j, j);
          const Real scale = largest() > Real(0) ? largest() : Real(1);
          const Real xnorm = scale * Kokkos::Experimental::sqrt(sum());
          P(j, j) = T(1);
          if (xnorm == Real(0) && imag_part(alpha) == Real(0)) {  // H(j) = I
            tau(j) = T(0);
            beta(j) = alpha;
            divisor() = T(1);
            return;
          }
          const Real alpha_re = real_part(alpha);
          const Real norm = norm3(alpha_re, imag_part(alpha), xnorm);
          const Real b = alpha_re >= Real(0) ? -norm : norm;
          if constexpr (std::is_floating_point_v<T>)
            tau(j) = (b - alpha) / b;
          else
            tau(j) = T((b - alpha_re) / b, -imag_part(alpha) / b);
          beta(j) = T(b);
          // Divided, not multiplied by a reciprocal that could overflow: |x_i| <= |beta| <=
          // |alpha - beta|, so no quotient exceeds one.
          divisor() = alpha - T(b);
        });
    Kokkos::parallel_for(
        "basalt::geqr2::scale", Range(exec, j, p), KOKKOS_LAMBDA(const int i) {
          const T t = tau(j);
          if (i == j) {
            u(0, 0) = t;
            return;
          }
          const T v = t == T(0) ? P(i, j) : P(i, j) / divisor();
          P(i, j) = v;
          u(i - j, 0) = t * v;
        });
    if (j + 1 == w) continue;
    const auto rows = range(j, p), right = range(j + 1, w);
    const auto z = Kokkos::subview(work.z, range(0, w - j - 1), Kokkos::ALL);
    gemm(exec, Op::conj_transpose, Op::none, T(1), Kokkos::subview(P, rows, right),
         Kokkos::subview(u, range(0, p - j), Kokkos::ALL), T(0), z);
    gemm(exec, Op::none, Op::conj_transpose, T(-1), Kokkos::subview(P, rows, range(j, j + 1)), z,
         T(1), Kokkos::subview(P, rows, right));
  }
  Kokkos::parallel_for(
      "basalt::geqr2::diagonal", Range(exec, 0, k),
      KOKKOS_LAMBDA(const int j) { P(j, j) = beta(j); });
}

// geqr2 by one team, batched/impl/team_qr.hpp's team_geqrf, in team scratch when the panel fits:
// one launch for the whole panel, where a short panel gives a kernel per step too little work.
template <class ExecSpace, class PView, class TauView>
void geqr2_team(const ExecSpace& exec, const PView& P, const TauView& tau) {
  using T = typename PView::non_const_value_type;
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  const int p = static_cast<int>(P.extent(0)), w = static_cast<int>(P.extent(1));
  const BatchLaunch launch = panel_launch<T>(exec, p, w);
  const int scratch = launch.scratch_bytes;
  const MatrixRef<T> A(P.data(), Kokkos::LayoutStride(p, P.stride(0), w, P.stride(1)));
  const VectorRef<T> t(tau.data(), Kokkos::LayoutStride(std::min(p, w), tau.stride(0)));
  for_each_matrix(
      exec, "basalt::geqr2::team", 1, launch, KOKKOS_LAMBDA(const Member& team, const int) {
        staged(team, A, scratch, [&](const MatrixRef<T>& F) { team_geqrf(team, F, t); });
      });
}

// Whether a backend's panel kernel took the panel (taller than tune.team_panel_rows) and factored
// it: on CUDA one fused kernel for panels within its height limit, of any width
// (backends/cuda/dense/geqr2.hpp).
template <class ExecSpace, class PView, class TauView>
bool geqr2_backend(const ExecSpace& exec, const PView& P, const TauView& tau, tuning::Qr tune) {
  using Spec = Specialization<routine::geqr2, ExecSpace>;
  if constexpr (Spec::available) {
    ProfilingRegion region("basalt::geqr2");
    return static_cast<int>(P.extent(0)) > tune.team_panel_rows && Spec::apply(exec, P, tau);
  }
  return false;
}

// geqr2: one team for panels up to tune.team_panel_rows rows; above, a backend's panel kernel
// where it takes the panel, else a kernel per step.
template <class ExecSpace, class PView, class TauView, class T>
void geqr2(const ExecSpace& exec, const PView& P, const TauView& tau,
           const QrWork<ExecSpace, T>& work, tuning::Qr tune) {
  if (static_cast<int>(P.extent(0)) <= tune.team_panel_rows) {
    ProfilingRegion region("basalt::geqr2");
    return geqr2_team(exec, P, tau);
  }
  if (geqr2_backend(exec, P, tau, tune)) return;
  ProfilingRegion region("basalt::geqr2");
  geqr2_columns(exec, P, tau, work);
}

// The diagonal blocks of T, leaf_width reflectors each (the last one narrower), from G = V^H V
// in T's upper triangle, one team per block in one launch: LAPACK's classic larft column by
// column, T(0:j, j) = -tau(j) T(0:j, 0:j) G(0:j, j) and T(j, j) = tau(j), within the block.
template <class ExecSpace, class TauView, class TView>
void larft_leaves(const ExecSpace& exec, const TauView& tau, const TView& T, int leaf_width) {
  using Scalar = typename TView::non_const_value_type;
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Scratch =
      Kokkos::View<Scalar*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  const int k = static_cast<int>(T.extent(0));
  const int leaves = (k + leaf_width - 1) / leaf_width;
  Kokkos::parallel_for(
      "basalt::larft::leaves",
      Policy(exec, leaves, Kokkos::AUTO)
          .set_scratch_size(0, Kokkos::PerTeam(Scratch::shmem_size(leaf_width))),
      KOKKOS_LAMBDA(const typename Policy::member_type& team) {
        const int first = team.league_rank() * leaf_width;
        const int width = k - first < leaf_width ? k - first : leaf_width;
        const Scratch column(team.team_scratch(0), width);  // G(0:j, j) while T(0:j, j) replaces it
        for (int j = 0; j < width; ++j) {
          const int c = first + j;
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, j),
                               [&](const int l) { column(l) = T(first + l, c); });
          team.team_barrier();
          const Scalar t = tau(c);
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, j), [&](const int i) {
            Scalar sum(0);
            for (int l = i; l < j; ++l) sum += T(first + i, first + l) * column(l);
            T(first + i, c) = -t * sum;
          });
          Kokkos::single(Kokkos::PerTeam(team), [&] { T(c, c) = t; });
          team.team_barrier();
        }
      });
}

// One level of T's recursion, in one launch: for every pair of consecutive blocks of `half`
// reflectors (the first [a, a + half), the second [a + half, min(a + 2 half, k))) whose T's are
// on T's diagonal, the pair's off-diagonal block T12 = -T11 G12 T22, G12 = V1^H V2 read as
// G21^H from T's strictly lower part, where the caller left G21 = V2^H V1, so that no team
// reads what another writes. One team per column of the second blocks: x = G12 T22(:, j), then
// T12(:, j) = -T11 x.
template <class ExecSpace, class TView>
void larft_join_level(const ExecSpace& exec, const TView& T, int half) {
  using Scalar = typename TView::non_const_value_type;
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Scratch =
      Kokkos::View<Scalar*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  const int k = static_cast<int>(T.extent(0));
  const int pairs = (k + 2 * half - 1) / (2 * half);
  Kokkos::parallel_for(
      "basalt::larft::join",
      Policy(exec, pairs * half, Kokkos::AUTO)
          .set_scratch_size(0, Kokkos::PerTeam(Scratch::shmem_size(half))),
      KOKKOS_LAMBDA(const typename Policy::member_type& team) {
        const int a = team.league_rank() / half * 2 * half, j = team.league_rank() % half;
        const int r = a + half, c = r + j;
        if (c >= k) return;
        const Scratch x(team.team_scratch(0), half);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, half), [&](const int i) {
          Scalar sum(0);
          for (int l = 0; l <= j; ++l) sum += conjugate(T(r + l, a + i)) * T(r + l, c);
          x(i) = sum;
        });
        team.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, half), [&](const int i) {
          Scalar sum(0);
          for (int l = i; l < half; ++l) sum += T(a + i, a + l) * x(l);
          T(a + i, c) = -sum;
        });
      });
}

}  // namespace basalt::impl

namespace basalt::portable {

// larft's T (k x k, upper triangular) from G = V^H V, which the caller left in all of T, and
// tau: the leaves' diagonal blocks of leaf_width reflectors in one launch, then one launch per
// level of the recursion, blocks of leaf_width, 2 leaf_width, ... joined in pairs. T's strictly
// lower part keeps G's and is never read as T.
template <class ExecSpace, class TauView, class TView>
void larft_factor(const ExecSpace& exec, const TauView& tau, const TView& T, int leaf_width) {
  const int k = static_cast<int>(T.extent(0));
  impl::larft_leaves(exec, tau, T, leaf_width);
  for (int half = leaf_width; half < k; half *= 2) impl::larft_join_level(exec, T, half);
}

}  // namespace basalt::portable

namespace basalt::impl {

// LAPACK's larft (forward, columnwise): the upper triangular T (k x k) with H(0) ... H(k-1) =
// I - V T V^H for the k reflectors of the padded Vp (p x k, p >= k) and tau. G = V^H V for all
// the reflectors in one gemm into T, then T from G: a backend's kernel where it takes T (CUDA's:
// one launch), else portable::larft_factor's leaves and joins of leaf_width.
template <class ExecSpace, class VView, class TauView, class TView>
void larft(const ExecSpace& exec, const VView& Vp, const TauView& tau, const TView& T,
           int leaf_width) {
  using Scalar = typename TView::non_const_value_type;
  using Spec = Specialization<routine::larft_factor, ExecSpace>;
  ProfilingRegion region("basalt::larft");
  const int k = static_cast<int>(Vp.extent(1));
  if (k == 0) return;
  gemm(exec, Op::conj_transpose, Op::none, Scalar(1), Vp, Vp, Scalar(0), T);
  if constexpr (Spec::available)
    if (Spec::apply(exec, tau, T)) return;
  portable::larft_factor(exec, tau, T, leaf_width);
}

// T^-1 for the k reflectors of the padded Vp (p x k) and tau, without T (the UT transform,
// Joffrain et al. 2006): T^-1 = triu(V^H V, 1) + diag(1 / tau), the inverse of larft's T.
// A reflector with tau = 0 (H = I) has no such entry: its column of Vp and its row and column of
// T^-1 are zeroed and its diagonal set to one, which leaves it out of V T V^H as T's zero row and
// column leave it out. One gemm and one launch, where larft adds a launch for the leaves and one
// per level of joins (ormqr with one column, d 8192 on an H200: 3.1-3.5 ms against 5.0 with
// larft's T).
template <class ExecSpace, class VView, class TauView, class TView>
void larft_inverse(const ExecSpace& exec, const VView& Vp, const TauView& tau, const TView& Tinv) {
  using Scalar = typename TView::non_const_value_type;
  ProfilingRegion region("basalt::larft");
  const int k = static_cast<int>(Vp.extent(1)), p = static_cast<int>(Vp.extent(0));
  if (k == 0) return;
  gemm(exec, Op::conj_transpose, Op::none, Scalar(1), Vp, Vp, Scalar(0), Tinv);
  Kokkos::parallel_for(
      "basalt::larft::inverse", Kokkos::RangePolicy<ExecSpace>(exec, 0, k),
      KOKKOS_LAMBDA(const int j) {
        if (tau(j) != Scalar(0)) {
          Tinv(j, j) = Scalar(1) / tau(j);
          return;
        }
        for (int i = 0; i < p; ++i) Vp(i, j) = Scalar(0);
        for (int l = 0; l < k; ++l) {
          if (l < j) Tinv(l, j) = Scalar(0);
          if (l > j) Tinv(j, l) = Scalar(0);
        }
        Tinv(j, j) = Scalar(1);
      });
}

// LAPACK's larfb (forward, columnwise): C = op(Q) C (side left, C p x n) or C op(Q) (side
// right, C n x p) for Q = I - V T V^H, with V padded (Vp p x k); op is Op::none or the adjoint.
// W = V^H C (or C V) over all p rows as one gemm, W = op(T) W (or W op(T)), C -= V W (or W V^H).
// T holds T (larft's), or T^-1 where t_inverted (larft_inverse's), then applied by a solve.
template <class ExecSpace, class VView, class TView, class CView, class WView>
void larfb(const ExecSpace& exec, ApplySide side, Op op, const VView& Vp, const TView& T,
           const CView& C, const WView& work, bool t_inverted = false) {
  using Scalar = typename CView::non_const_value_type;
  ProfilingRegion region("basalt::larfb");
  const int k = static_cast<int>(Vp.extent(1));
  if (k == 0 || C.extent(0) == 0 || C.extent(1) == 0) return;
  const Op op_t = op == Op::none ? Op::none : Op::conj_transpose;
  const auto apply_t = [&](ApplySide t_side, const auto& W) {
    if (t_inverted)
      trsm(exec, t_side, false, op_t, false, Scalar(1), T, W);
    else
      trmm(exec, t_side, false, op_t, false, Scalar(1), T, W);
  };
  if (side == ApplySide::left) {
    const auto W = Kokkos::subview(work, range(0, k), range(0, static_cast<int>(C.extent(1))));
    gemm(exec, Op::conj_transpose, Op::none, Scalar(1), Vp, C, Scalar(0), W);
    apply_t(ApplySide::left, W);
    gemm(exec, Op::none, Op::none, Scalar(-1), Vp, W, Scalar(1), C);
  } else {
    const auto W = Kokkos::subview(work, range(0, static_cast<int>(C.extent(0))), range(0, k));
    gemm(exec, Op::none, Op::none, Scalar(1), C, Vp, Scalar(0), W);
    apply_t(ApplySide::right, W);
    gemm(exec, Op::none, Op::conj_transpose, Scalar(-1), W, Vp, Scalar(1), C);
  }
}

// Recursive QR of the p x w panel P (p >= w) with its T (w x w) and its padded reflectors in
// Vp (w columns, P's rows at its bottom, zeros in the rows above them): the left half, its Q^H
// on the right half, the lower right part, then T's off-diagonal block; geqr2 and larft below
// the recursion width. A backend's panel kernel that factors the whole panel in one launch
// (CUDA's, by leaves with their updates inside) takes it instead of the recursion, which costs
// a GPU some ten calls a leaf; then only T remains to build.
template <class ExecSpace, class PView, class TauView, class TView, class VView, class T>
void factor_panel(const ExecSpace& exec, const PView& P, const TauView& tau, const TView& Tf,
                  const VView& Vp, const QrWork<ExecSpace, T>& work, tuning::Qr tune) {
  const int p = static_cast<int>(P.extent(0)), w = static_cast<int>(P.extent(1));
  const int offset = static_cast<int>(Vp.extent(0)) - p;
  const bool leaf = w <= tune.recursion_width;
  if (leaf) geqr2(exec, P, tau, work, tune);
  if (leaf || geqr2_backend(exec, P, tau, tune)) {
    pad_reflectors(exec, P, Vp);
    larft(exec, Kokkos::subview(Vp, range(offset, offset + p), Kokkos::ALL), tau, Tf,
          tune.recursion_width);
    return;
  }
  // The left half at least as wide as the right: one join of blocks of n1 makes T.
  const int n1 = (w + 1) / 2;
  const auto left = range(0, n1), right = range(n1, w);
  factor_panel(exec, Kokkos::subview(P, Kokkos::ALL, left), Kokkos::subview(tau, left),
               Kokkos::subview(Tf, left, left), Kokkos::subview(Vp, Kokkos::ALL, left), work, tune);
  larfb(exec, ApplySide::left, Op::conj_transpose,
        Kokkos::subview(Vp, range(offset, offset + p), left), Kokkos::subview(Tf, left, left),
        Kokkos::subview(P, Kokkos::ALL, right), work.w);
  factor_panel(exec, Kokkos::subview(P, range(n1, p), right), Kokkos::subview(tau, right),
               Kokkos::subview(Tf, right, right), Kokkos::subview(Vp, Kokkos::ALL, right), work,
               tune);
  // G21 = V2^H V1 below T's diagonal for the join; V2 is zero above the panel's row n1.
  const auto below = range(offset + n1, offset + p);
  gemm(exec, Op::conj_transpose, Op::none, T(1), Kokkos::subview(Vp, below, right),
       Kokkos::subview(Vp, below, left), T(0), Kokkos::subview(Tf, right, left));
  larft_join_level(exec, Tf, n1);
}

// Blocked Householder QR of A (m x n): per block of nb columns, the recursive panel with its T
// and padded reflectors, then Q^H of the panel on the trailing columns, with look-ahead as in
// getrf: the next block column first, then its panel on a side instance while exec applies
// Q^H to the rest. Two workspaces alternate by block, so that the next panel writes its T and
// reflectors while exec's larfb reads this block's. A tall-skinny A tries Cholesky QR first.
template <class ExecSpace, class AView, class TauView>
void geqrf(const ExecSpace& exec, const AView& A, const TauView& tau, tuning::Qr tune) {
  using T = typename AView::non_const_value_type;
  const int m = static_cast<int>(A.extent(0)), n = static_cast<int>(A.extent(1));
  const int k = std::min(m, n);
  if (k == 0) return;
  if (tall_skinny(m, n, tune) && geqrf_tall_skinny(exec, A, tau)) return;
  const int nb = std::min(tune.factor_block, k);
  const auto make_work = [&](bool used) {
    return used ? QrWork<ExecSpace, T>(exec, nb, nb, std::max(n, nb), m, nb, m,
                                       std::min(tune.recursion_width, nb))
                : QrWork<ExecSpace, T>(exec, 0, 0, 0, 0, 0, 0, 0);
  };
  const QrWork<ExecSpace, T> work[2] = {make_work(true), make_work(k > nb)};
  const auto work_of = [&](int j) -> const QrWork<ExecSpace, T>& { return work[j / nb % 2]; };
  const auto reflectors = [&](int j) {
    return Kokkos::subview(work_of(j).v, range(0, m - j), range(0, std::min(nb, k - j)));
  };
  const auto t_factor = [&](int j) {
    const int jb = std::min(nb, k - j);
    return Kokkos::subview(work_of(j).t, range(0, jb), range(0, jb));
  };
  const auto panel = [&](const ExecSpace& space, int j) {
    const auto block = range(j, std::min(j + nb, k));
    factor_panel(space, Kokkos::subview(A, range(j, m), block), Kokkos::subview(tau, block),
                 t_factor(j), reflectors(j), work_of(j), tune);
  };
  const SideSpace<ExecSpace> side(exec);
  panel(exec, 0);
  for (int j = 0; j < k; j += nb) {
    const int next = std::min(j + nb, k), next_end = std::min(next + nb, k);
    // Q^H of block j on columns [first, last).
    const auto update = [&](int first, int last) {
      if (first < last)
        larfb(exec, ApplySide::left, Op::conj_transpose, reflectors(j), t_factor(j),
              Kokkos::subview(A, range(j, m), range(first, last)), work_of(j).w);
    };
    update(next, next_end);
    if (next < k) panel(side.fork(), next);
    update(next_end, n);
    side.join();
  }
}

// ormqr's scratch: the padded reflectors and T^-1 twice over, alternating by block (the second
// empty unless `alternate`: one block), and larfb's W (exec's alone).
template <class ExecSpace, class T>
struct OrmqrWorkViews {
  using Pieces = ScratchPieces<typename ExecSpace::memory_space>;
  using Matrix = typename Pieces::template Piece<T**>;

  OrmqrWorkViews(Pieces& pieces, int nq, int nb, bool alternate, int w_rows, int w_cols)
      : v{pieces.template matrix<T>(nq, nb), pieces.template matrix<T>(nq, alternate ? nb : 0)},
        t_inverse{pieces.template matrix<T>(nb, nb),
                  pieces.template matrix<T>(alternate ? nb : 0, alternate ? nb : 0)},
        w(pieces.template matrix<T>(w_rows, w_cols)) {}

  Matrix v[2], t_inverse[2], w;
};

// OrmqrWork(exec, nq, nb, alternate, w_rows, w_cols).
template <class ExecSpace, class T>
using OrmqrWork = ScratchViews<ExecSpace, OrmqrWorkViews<ExecSpace, T>>;

// C = op(Q) C (left) or C op(Q) (right) for Q = H(0) ... H(k-1), the k = length of tau
// reflectors of A (nq x >= k, nq = rows of C on the left, columns on the right), nb at a time:
// the block's reflectors padded, T^-1 (larft_inverse), then larfb solving with it, blocks taken
// in the order the product needs. A block's padded reflectors and T^-1 depend on A alone, so the
// next block's are built on a side instance while exec applies this one's, in two workspaces that
// alternate by block (as geqrf's look-ahead); C's width does not change what that building costs
// (perf/NOTES.md, "ormqr on the GPU").
template <class ExecSpace, class AView, class TauView, class CView>
void ormqr(const ExecSpace& exec, ApplySide side, Op op, const AView& A, const TauView& tau,
           const CView& C, tuning::Qr tune) {
  using T = typename CView::non_const_value_type;
  const bool left = side == ApplySide::left;
  const int k = static_cast<int>(tau.extent(0)), nq = static_cast<int>(A.extent(0));
  if (k == 0 || C.extent(0) == 0 || C.extent(1) == 0) return;
  const int nb = std::min(tune.block, k);
  const int other = static_cast<int>(left ? C.extent(1) : C.extent(0));
  const bool forward = left == (op != Op::none);
  const int blocks = (k + nb - 1) / nb;
  const OrmqrWork<ExecSpace, T> work(exec, nq, nb, blocks > 1, left ? nb : other,
                                     left ? other : nb);
  const auto& v = work.v;
  const auto& t_inverse = work.t_inverse;
  const auto& w = work.w;
  const auto first = [&](int b) { return (forward ? b : blocks - 1 - b) * nb; };
  const auto reflectors = [&](int b) {
    const int i = first(b);
    return Kokkos::subview(v[b % 2], range(0, nq - i), range(0, std::min(nb, k - i)));
  };
  const auto t_factor = [&](int b) {
    const int ib = std::min(nb, k - first(b));
    return Kokkos::subview(t_inverse[b % 2], range(0, ib), range(0, ib));
  };
  const auto prepare = [&](const ExecSpace& space, int b) {
    const int i = first(b), ib = std::min(nb, k - i);
    pad_reflectors(space, Kokkos::subview(A, range(i, nq), range(i, i + ib)), reflectors(b));
    larft_inverse(space, reflectors(b), Kokkos::subview(tau, range(i, i + ib)), t_factor(b));
  };
  const SideSpace<ExecSpace> look_ahead(exec);
  prepare(exec, 0);
  for (int b = 0; b < blocks; ++b) {
    if (b + 1 < blocks) prepare(look_ahead.fork(), b + 1);
    const int i = first(b);
    larfb(exec, side, op, reflectors(b), t_factor(b),
          left ? Kokkos::subview(C, range(i, nq), Kokkos::ALL)
               : Kokkos::subview(C, Kokkos::ALL, range(i, nq)),
          w, true);
    look_ahead.join();
  }
}

// The first n columns of Q = H(0) ... H(k-1) (m x n, m >= n >= k) in place of the reflectors,
// LAPACK's orgqr: the reflectors are copied aside, padded, A set to the identity and the blocks
// applied last to first, each only to the columns from its own on (the identity's columns left
// of a block are untouched by it and every later one).
template <class ExecSpace, class AView, class TauView>
void orgqr(const ExecSpace& exec, const AView& A, const TauView& tau, tuning::Qr tune) {
  using T = typename AView::non_const_value_type;
  const int m = static_cast<int>(A.extent(0)), n = static_cast<int>(A.extent(1));
  const int k = static_cast<int>(tau.extent(0));
  if (n == 0) return;
  const int nb = std::min(tune.block, k);
  const QrWork<ExecSpace, T> work(exec, nb, nb, n, m, k, 0, 0);
  pad_reflectors(exec, Kokkos::subview(A, Kokkos::ALL, range(0, k)), work.v);
  using Policy = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>>;
  Kokkos::parallel_for(
      "basalt::orgqr::identity", Policy(exec, {0, 0}, {m, n}),
      KOKKOS_LAMBDA(const int i, const int j) { A(i, j) = i == j ? T(1) : T(0); });
  if (k == 0) return;
  for (int i = (k - 1) / nb * nb; i >= 0; i -= nb) {
    const int ib = std::min(nb, k - i);
    const auto Vp = Kokkos::subview(work.v, range(i, m), range(i, i + ib));
    const auto Tf = Kokkos::subview(work.t, range(0, ib), range(0, ib));
    larft(exec, Vp, Kokkos::subview(tau, range(i, i + ib)), Tf, tune.recursion_width);
    larfb(exec, ApplySide::left, Op::none, Vp, Tf, Kokkos::subview(A, range(i, m), range(i, n)),
          work.w);
  }
}

}  // namespace basalt::impl
