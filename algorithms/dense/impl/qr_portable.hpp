#pragma once
// Householder QR written once over Kokkos: blocked, with recursive panels and the compact-WY
// form Q = I - V T V^H (V unit lower trapezoidal, stored below R as LAPACK stores it; T upper
// triangular). The panel halves recursively down to geqr2 (one team for short panels, a
// backend's fused panel kernel where there is one, else a few kernels per column); T is built
// recursively (seed 001, section 4.3.4: the diagonal blocks of T at one level are the T's of
// the level below, only the off-diagonal block is new, one gemm and three trmms) down to the
// same width, where one gemm and one team build it column by column; larfb applies a block of
// reflectors as gemms and trmms. Every product goes through blas.hpp, so a backend's
// gemm and trmm (cuBLAS on CUDA) run this same driver on the caller's stream.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "basalt/algorithms/batched/impl/team_launch.hpp"
#include "basalt/algorithms/batched/impl/team_qr.hpp"
#include "basalt/algorithms/dense/impl/blas.hpp"
#include "basalt/core/dispatch.hpp"
#include "basalt/core/profiling.hpp"
#include "basalt/core/tuning.hpp"
#include "basalt/core/views.hpp"

namespace basalt::impl {

// Scratch for one QR call, allocated once (without initialization, so no hidden fence): T of a
// block of reflectors, larfb's W, and the state of geqr2's kernel steps.
template <class ExecSpace, class T>
struct QrWork {
  using Memory = typename ExecSpace::memory_space;
  using Real = real_t<T>;
  Kokkos::View<T**, Kokkos::LayoutLeft, Memory> t;  // nb x nb
  Kokkos::View<T**, Kokkos::LayoutLeft, Memory> w;  // larfb: k x cols(C) or rows(C) x k
  Kokkos::View<T**, Kokkos::LayoutLeft, Memory> u;  // geqr2: tau v, rows x 1
  Kokkos::View<T**, Kokkos::LayoutLeft, Memory> z;  // geqr2: A^H (tau v), width x 1
  Kokkos::View<T*, Memory> beta;                    // geqr2: R's diagonal while v(j) = 1 stands in
  Kokkos::View<T, Memory> divisor;                  // geqr2: v = x / divisor
  Kokkos::View<Real, Memory> largest, sum;          // geqr2: the scaled column norm

  QrWork(int nb, int w_rows, int w_cols, int panel_rows, int recursion_width) {
    const auto alloc = [](const std::string& label) {
      return Kokkos::view_alloc(Kokkos::WithoutInitializing, label);
    };
    t = decltype(t)(alloc("basalt::qr::t"), nb, nb);
    w = decltype(w)(alloc("basalt::qr::w"), w_rows, w_cols);
    u = decltype(u)(alloc("basalt::qr::u"), panel_rows, 1);
    z = decltype(z)(alloc("basalt::qr::z"), recursion_width, 1);
    beta = decltype(beta)(alloc("basalt::qr::beta"), recursion_width);
    divisor = decltype(divisor)(alloc("basalt::qr::divisor"));
    largest = decltype(largest)(alloc("basalt::qr::largest"));
    sum = decltype(sum)(alloc("basalt::qr::sum"));
  }
};

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

// dst = src, or dst -= src with subtract.
template <class ExecSpace, class SrcView, class DstView>
void copy_or_subtract(const ExecSpace& exec, const SrcView& src, const DstView& dst,
                      bool subtract) {
  if (src.extent(0) == 0 || src.extent(1) == 0) return;
  using Policy = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>>;
  Kokkos::parallel_for(
      "basalt::qr::copy", Policy(exec, {0, 0}, {extent(src, 0), extent(src, 1)}),
      KOKKOS_LAMBDA(const int i, const int j) {
        if (subtract)
          dst(i, j) -= src(i, j);
        else
          dst(i, j) = src(i, j);
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
  BatchLaunch launch{tuning::batched_team<ExecSpace>(p, w), 0};
  const std::size_t bytes = sizeof(T) * p * w + alignof(T);
  if (bytes <= static_cast<std::size_t>(launch.team.scratch_bytes))
    launch.scratch_bytes = static_cast<int>(bytes);
  const int scratch = launch.scratch_bytes;
  const MatrixRef<T> A(P.data(), Kokkos::LayoutStride(p, P.stride(0), w, P.stride(1)));
  const VectorRef<T> t(tau.data(), Kokkos::LayoutStride(std::min(p, w), tau.stride(0)));
  for_each_matrix(
      exec, "basalt::geqr2::team", 1, launch, KOKKOS_LAMBDA(const Member& team, const int) {
        staged(team, A, scratch, [&](const MatrixRef<T>& F) { team_geqrf(team, F, t); });
      });
}

// geqr2: one team for panels up to tune.team_panel_rows rows; above, a backend's panel kernel
// where it takes the panel (on CUDA one fused kernel for panels within its height limit,
// backends/cuda/dense/geqr2.hpp), else a kernel per step.
template <class ExecSpace, class PView, class TauView, class T>
void geqr2(const ExecSpace& exec, const PView& P, const TauView& tau,
           const QrWork<ExecSpace, T>& work, tuning::Qr tune) {
  ProfilingRegion region("basalt::geqr2");
  if (static_cast<int>(P.extent(0)) <= tune.team_panel_rows) return geqr2_team(exec, P, tau);
  using Spec = Specialization<routine::geqr2, ExecSpace>;
  if constexpr (Spec::available)
    if (Spec::apply(exec, P, tau)) return;
  geqr2_columns(exec, P, tau, work);
}

// T's off-diagonal block for the reflectors of V (p x k, p >= k) split after k1, given T11 and
// T22: T12 = -T11 (V1^H V2) T22, where V1^H V2 = V1(k1:k)^H V2(k1:k) + V1(k:p)^H V2(k:p) and
// V2(k1:k) is unit lower triangular (R's entries above its diagonal are never read).
template <class ExecSpace, class VView, class TView>
void larft_join(const ExecSpace& exec, const VView& V, const TView& T, int k1) {
  using Scalar = typename TView::non_const_value_type;
  const int p = static_cast<int>(V.extent(0)), k = static_cast<int>(V.extent(1));
  const auto left = range(0, k1), right = range(k1, k);
  const auto T12 = Kokkos::subview(T, left, right);
  copy_adjoint(exec, Kokkos::subview(V, right, left), T12);
  trmm(exec, ApplySide::right, true, Op::none, true, Scalar(1), Kokkos::subview(V, right, right),
       T12);
  gemm(exec, Op::conj_transpose, Op::none, Scalar(1), Kokkos::subview(V, range(k, p), left),
       Kokkos::subview(V, range(k, p), right), Scalar(1), T12);
  trmm(exec, ApplySide::left, false, Op::none, false, Scalar(-1), Kokkos::subview(T, left, left),
       T12);
  trmm(exec, ApplySide::right, false, Op::none, false, Scalar(1), Kokkos::subview(T, right, right),
       T12);
}

// T for a few reflectors (V p x k, p >= k), LAPACK's classic larft: G = V^H V, one gemm for the
// rows below V's k x k top and one team adding the top (unit diagonal, zeros above it), then,
// column by column in that team, T(0:j, j) = -tau(j) T(0:j, 0:j) G(0:j, j) and T(j, j) = tau(j).
template <class ExecSpace, class VView, class TauView, class TView>
void larft_leaf(const ExecSpace& exec, const VView& V, const TauView& tau, const TView& T) {
  using Scalar = typename TView::non_const_value_type;
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Scratch =
      Kokkos::View<Scalar*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  const int p = static_cast<int>(V.extent(0)), k = static_cast<int>(V.extent(1));
  const bool below = p > k;
  if (below)
    gemm(exec, Op::conj_transpose, Op::none, Scalar(1),
         Kokkos::subview(V, range(k, p), Kokkos::ALL), Kokkos::subview(V, range(k, p), Kokkos::ALL),
         Scalar(0), T);
  Kokkos::parallel_for(
      "basalt::larft::leaf",
      Policy(exec, 1, Kokkos::AUTO).set_scratch_size(0, Kokkos::PerTeam(Scratch::shmem_size(k))),
      KOKKOS_LAMBDA(const typename Policy::member_type& team) {
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k), [&](const int j) {
          for (int i = 0; i < j; ++i) {
            Scalar g = conjugate(V(j, i));
            for (int r = j + 1; r < k; ++r) g += conjugate(V(r, i)) * V(r, j);
            T(i, j) = below ? T(i, j) + g : g;
          }
        });
        team.team_barrier();
        const Scratch column(team.team_scratch(0), k);  // G(0:j, j) while T(0:j, j) replaces it
        for (int j = 0; j < k; ++j) {
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, j),
                               [&](const int l) { column(l) = T(l, j); });
          team.team_barrier();
          const Scalar t = tau(j);
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, j), [&](const int i) {
            Scalar sum(0);
            for (int l = i; l < j; ++l) sum += T(i, l) * column(l);
            T(i, j) = -t * sum;
          });
          Kokkos::single(Kokkos::PerTeam(team), [&] { T(j, j) = t; });
          team.team_barrier();
        }
      });
}

// LAPACK's larft (forward, columnwise): the upper triangular T (k x k) with H(0) ... H(k-1) =
// I - V T V^H for the k reflectors of V (p x k, p >= k) and tau. Recursive above leaf_width
// reflectors (the halves' T's, then larft_join), larft_leaf below.
template <class ExecSpace, class VView, class TauView, class TView>
void larft(const ExecSpace& exec, const VView& V, const TauView& tau, const TView& T,
           int leaf_width) {
  ProfilingRegion region("basalt::larft");
  const int p = static_cast<int>(V.extent(0)), k = static_cast<int>(V.extent(1));
  if (k == 0) return;
  if (k <= leaf_width) return larft_leaf(exec, V, tau, T);
  const int k1 = k / 2;
  const auto left = range(0, k1), right = range(k1, k);
  larft(exec, Kokkos::subview(V, Kokkos::ALL, left), Kokkos::subview(tau, left),
        Kokkos::subview(T, left, left), leaf_width);
  larft(exec, Kokkos::subview(V, range(k1, p), right), Kokkos::subview(tau, right),
        Kokkos::subview(T, right, right), leaf_width);
  larft_join(exec, V, T, k1);
}

// LAPACK's larfb (forward, columnwise): C = op(Q) C (side left, C p x n) or C op(Q) (side
// right, C n x p) for Q = I - V T V^H, V p x k; op is Op::none or the adjoint. Three trmms with
// V's unit lower triangle and T, two gemms with the rest of V; W holds V^H C or C V.
template <class ExecSpace, class VView, class TView, class CView, class WView>
void larfb(const ExecSpace& exec, ApplySide side, Op op, const VView& V, const TView& T,
           const CView& C, const WView& work) {
  using Scalar = typename CView::non_const_value_type;
  ProfilingRegion region("basalt::larfb");
  const int p = static_cast<int>(V.extent(0)), k = static_cast<int>(V.extent(1));
  if (k == 0 || C.extent(0) == 0 || C.extent(1) == 0) return;
  const Op op_t = op == Op::none ? Op::none : Op::conj_transpose;
  const auto V1 = Kokkos::subview(V, range(0, k), Kokkos::ALL);
  const auto V2 = Kokkos::subview(V, range(k, p), Kokkos::ALL);
  if (side == ApplySide::left) {
    const int n = static_cast<int>(C.extent(1));
    const auto W = Kokkos::subview(work, range(0, k), range(0, n));
    const auto C1 = Kokkos::subview(C, range(0, k), Kokkos::ALL);
    const auto C2 = Kokkos::subview(C, range(k, p), Kokkos::ALL);
    copy_or_subtract(exec, C1, W, false);
    trmm(exec, ApplySide::left, true, Op::conj_transpose, true, Scalar(1), V1, W);
    gemm(exec, Op::conj_transpose, Op::none, Scalar(1), V2, C2, Scalar(1), W);
    trmm(exec, ApplySide::left, false, op_t, false, Scalar(1), T, W);
    gemm(exec, Op::none, Op::none, Scalar(-1), V2, W, Scalar(1), C2);
    trmm(exec, ApplySide::left, true, Op::none, true, Scalar(1), V1, W);
    copy_or_subtract(exec, W, C1, true);
  } else {
    const int rows = static_cast<int>(C.extent(0));
    const auto W = Kokkos::subview(work, range(0, rows), range(0, k));
    const auto C1 = Kokkos::subview(C, Kokkos::ALL, range(0, k));
    const auto C2 = Kokkos::subview(C, Kokkos::ALL, range(k, p));
    copy_or_subtract(exec, C1, W, false);
    trmm(exec, ApplySide::right, true, Op::none, true, Scalar(1), V1, W);
    gemm(exec, Op::none, Op::none, Scalar(1), C2, V2, Scalar(1), W);
    trmm(exec, ApplySide::right, false, op_t, false, Scalar(1), T, W);
    gemm(exec, Op::none, Op::conj_transpose, Scalar(-1), W, V2, Scalar(1), C2);
    trmm(exec, ApplySide::right, true, Op::conj_transpose, true, Scalar(1), V1, W);
    copy_or_subtract(exec, W, C1, true);
  }
}

// Recursive QR of the p x w panel P (p >= w) with its T (w x w): the left half, its Q^H on the
// right half, the lower right part, then T's off-diagonal block; geqr2 and larft below the
// recursion width.
template <class ExecSpace, class PView, class TauView, class TView, class T>
void factor_panel(const ExecSpace& exec, const PView& P, const TauView& tau, const TView& Tf,
                  const QrWork<ExecSpace, T>& work, tuning::Qr tune) {
  const int p = static_cast<int>(P.extent(0)), w = static_cast<int>(P.extent(1));
  if (w <= tune.recursion_width) {
    geqr2(exec, P, tau, work, tune);
    larft(exec, P, tau, Tf, tune.recursion_width);
    return;
  }
  const int n1 = w / 2;
  const auto left = range(0, n1), right = range(n1, w);
  factor_panel(exec, Kokkos::subview(P, Kokkos::ALL, left), Kokkos::subview(tau, left),
               Kokkos::subview(Tf, left, left), work, tune);
  larfb(exec, ApplySide::left, Op::conj_transpose, Kokkos::subview(P, Kokkos::ALL, left),
        Kokkos::subview(Tf, left, left), Kokkos::subview(P, Kokkos::ALL, right), work.w);
  factor_panel(exec, Kokkos::subview(P, range(n1, p), right), Kokkos::subview(tau, right),
               Kokkos::subview(Tf, right, right), work, tune);
  larft_join(exec, P, Tf, n1);
}

// Blocked Householder QR of A (m x n): per block of nb columns, the recursive panel with its T,
// then Q^H of the panel on the trailing columns.
template <class ExecSpace, class AView, class TauView>
void geqrf(const ExecSpace& exec, const AView& A, const TauView& tau, tuning::Qr tune) {
  using T = typename AView::non_const_value_type;
  const int m = static_cast<int>(A.extent(0)), n = static_cast<int>(A.extent(1));
  const int k = std::min(m, n);
  if (k == 0) return;
  const int nb = std::min(tune.block, k);
  const QrWork<ExecSpace, T> work(nb, nb, std::max(n, nb), m, std::min(tune.recursion_width, nb));
  for (int j = 0; j < k; j += nb) {
    const int jb = std::min(nb, k - j);
    const auto rows = range(j, m), block = range(j, j + jb);
    const auto Tf = Kokkos::subview(work.t, range(0, jb), range(0, jb));
    factor_panel(exec, Kokkos::subview(A, rows, block), Kokkos::subview(tau, block), Tf, work,
                 tune);
    if (j + jb < n)
      larfb(exec, ApplySide::left, Op::conj_transpose, Kokkos::subview(A, rows, block), Tf,
            Kokkos::subview(A, rows, range(j + jb, n)), work.w);
  }
}

// C = op(Q) C (left) or C op(Q) (right) for Q = H(0) ... H(k-1), the k = length of tau
// reflectors of A (nq x >= k, nq = rows of C on the left, columns on the right), nb at a time:
// larft, then larfb, blocks taken in the order the product needs.
template <class ExecSpace, class AView, class TauView, class CView>
void ormqr(const ExecSpace& exec, ApplySide side, Op op, const AView& A, const TauView& tau,
           const CView& C, tuning::Qr tune) {
  using T = typename CView::non_const_value_type;
  const bool left = side == ApplySide::left;
  const int k = static_cast<int>(tau.extent(0)), nq = static_cast<int>(A.extent(0));
  if (k == 0 || C.extent(0) == 0 || C.extent(1) == 0) return;
  const int nb = std::min(tune.block, k);
  const int other = static_cast<int>(left ? C.extent(1) : C.extent(0));
  const QrWork<ExecSpace, T> work(nb, left ? nb : other, left ? other : nb, 0, 0);
  const bool forward = left == (op != Op::none);
  const int blocks = (k + nb - 1) / nb;
  for (int b = 0; b < blocks; ++b) {
    const int i = (forward ? b : blocks - 1 - b) * nb, ib = std::min(nb, k - i);
    const auto V = Kokkos::subview(A, range(i, nq), range(i, i + ib));
    const auto Tf = Kokkos::subview(work.t, range(0, ib), range(0, ib));
    larft(exec, V, Kokkos::subview(tau, range(i, i + ib)), Tf, tune.recursion_width);
    larfb(exec, side, op, V, Tf,
          left ? Kokkos::subview(C, range(i, nq), Kokkos::ALL)
               : Kokkos::subview(C, Kokkos::ALL, range(i, nq)),
          work.w);
  }
}

// The first n columns of Q = H(0) ... H(k-1) (m x n, m >= n >= k) in place of the reflectors,
// LAPACK's orgqr: the reflectors are copied aside, A set to the identity and the blocks applied
// last to first, each only to the columns from its own on (the identity's columns left of a
// block are untouched by it and every later one).
template <class ExecSpace, class AView, class TauView>
void orgqr(const ExecSpace& exec, const AView& A, const TauView& tau, tuning::Qr tune) {
  using T = typename AView::non_const_value_type;
  using Memory = typename ExecSpace::memory_space;
  const int m = static_cast<int>(A.extent(0)), n = static_cast<int>(A.extent(1));
  const int k = static_cast<int>(tau.extent(0));
  if (n == 0) return;
  Kokkos::View<T**, Kokkos::LayoutLeft, Memory> V(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "basalt::orgqr::v"), m, k);
  copy_or_subtract(exec, Kokkos::subview(A, Kokkos::ALL, range(0, k)), V, false);
  using Policy = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>>;
  Kokkos::parallel_for(
      "basalt::orgqr::identity", Policy(exec, {0, 0}, {m, n}),
      KOKKOS_LAMBDA(const int i, const int j) { A(i, j) = i == j ? T(1) : T(0); });
  if (k == 0) return;
  const int nb = std::min(tune.block, k);
  const QrWork<ExecSpace, T> work(nb, nb, n, 0, 0);
  for (int i = (k - 1) / nb * nb; i >= 0; i -= nb) {
    const int ib = std::min(nb, k - i);
    const auto Vi = Kokkos::subview(V, range(i, m), range(i, i + ib));
    const auto Tf = Kokkos::subview(work.t, range(0, ib), range(0, ib));
    larft(exec, Vi, Kokkos::subview(tau, range(i, i + ib)), Tf, tune.recursion_width);
    larfb(exec, ApplySide::left, Op::none, Vi, Tf, Kokkos::subview(A, range(i, m), range(i, n)),
          work.w);
  }
}

}  // namespace basalt::impl
