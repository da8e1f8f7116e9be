#pragma once
// Team-level Householder QR and the application of its Q, one matrix per team: the portable
// batched kernels, with LAPACK's storage (reflectors below the diagonal, R on and above it,
// tau apart).
#include <Kokkos_Core.hpp>
#include <cfloat>

#include "basalt/algorithms/batched/impl/batch_access.hpp"
#include "basalt/algorithms/batched/impl/team_cholesky.hpp"
#include "basalt/algorithms/batched/impl/team_lu.hpp"
#include "basalt/core/dispatch.hpp"
#include "basalt/core/views.hpp"

namespace basalt::impl {

template <class T>
KOKKOS_INLINE_FUNCTION real_t<T> imag_part(const T& x) {
  if constexpr (std::is_floating_point_v<T>)
    return real_t<T>(0);
  else
    return x.imag();
}

// sqrt(a^2 + b^2 + c^2) without overflow or underflow (LAPACK's dlapy3).
template <class Real>
KOKKOS_INLINE_FUNCTION Real norm3(Real a, Real b, Real c) {
  a = a < 0 ? -a : a;
  b = b < 0 ? -b : b;
  c = c < 0 ? -c : c;
  const Real largest = a > b ? (a > c ? a : c) : (b > c ? b : c);
  if (!(largest > Real(0))) return largest + a + b + c;  // zero, or NaN passed on
  a /= largest;
  b /= largest;
  c /= largest;
  return largest * Kokkos::Experimental::sqrt(a * a + b * b + c * c);
}

// ||A(begin:m, j)||_2: the plain sum of squares where it is finite and large enough that the
// squares lost to underflow cannot matter (each under the smallest normal number, so together
// under eps of the sum), else scaled by the largest magnitude so that no square overflows or
// underflows; 0 for an empty or zero column, NaN when the column holds one. Every thread gets
// the result.
template <class Member, class T>
KOKKOS_INLINE_FUNCTION real_t<T> team_column_norm(const Member& team, const MatrixRef<T>& A, int j,
                                                  int begin) {
  using Real = real_t<T>;
  const int m = static_cast<int>(A.extent(0));
  Real squares = 0;
  Kokkos::parallel_reduce(
      Kokkos::TeamThreadRange(team, begin, m),
      [&](const int i, Real& s) {
        const Real re = real_part(A(i, j)), im = imag_part(A(i, j));
        s += re * re + im * im;
      },
      squares);
  constexpr Real smallest_normal = sizeof(Real) == 4 ? Real(FLT_MIN) : Real(DBL_MIN);
  constexpr Real finite_max = sizeof(Real) == 4 ? Real(FLT_MAX) : Real(DBL_MAX);
  constexpr Real eps = sizeof(Real) == 4 ? Real(FLT_EPSILON) : Real(DBL_EPSILON);
  if (squares >= Real(m - begin) * (smallest_normal / eps) && squares <= finite_max)
    return Kokkos::Experimental::sqrt(squares);
  Real largest = 0;  // Max's identity is the lowest value: an empty range leaves it there
  Kokkos::parallel_reduce(
      Kokkos::TeamThreadRange(team, begin, m),
      [&](const int i, Real& found) {
        const Real v = magnitude(A(i, j));
        if (v > found) found = v;
      },
      Kokkos::Max<Real>(largest));
  const Real scale = largest > Real(0) ? largest : Real(1);
  Real sum = 0;
  Kokkos::parallel_reduce(
      Kokkos::TeamThreadRange(team, begin, m),
      [&](const int i, Real& s) {
        const Real v = magnitude(A(i, j)) / scale;
        s += v * v;
      },
      sum);
  return scale * Kokkos::Experimental::sqrt(sum);
}

// Unblocked Householder QR of the m x n matrix A (LAPACK's geqr2): H(j) = I - tau(j) v v^H
// with v(j) = 1 (not stored) and v below the diagonal of column j; R on and above the diagonal.
// The reflector is LAPACK's larfg: beta = -sign(re alpha) ||(alpha, x)||, tau = (beta - alpha) /
// beta, v = x / (alpha - beta), and H(j)^H applied to the columns right of j.
template <class Member, class T>
KOKKOS_INLINE_FUNCTION void team_geqrf(const Member& team, const MatrixRef<T>& A,
                                       const VectorRef<T>& tau) {
  using Real = real_t<T>;
  const int m = static_cast<int>(A.extent(0)), n = static_cast<int>(A.extent(1));
  for (int j = 0; j < (m < n ? m : n); ++j) {
    const T alpha = A(j, j);
    const Real xnorm = team_column_norm(team, A, j, j + 1);
    team.team_barrier();                                    // every thread has read column j
    if (xnorm == Real(0) && imag_part(alpha) == Real(0)) {  // H(j) = I
      Kokkos::single(Kokkos::PerTeam(team), [&] { tau(j) = T(0); });
      continue;
    }
    const Real alpha_re = real_part(alpha);
    const Real norm = norm3(alpha_re, imag_part(alpha), xnorm);
    const Real beta = alpha_re >= Real(0) ? -norm : norm;
    T t;
    if constexpr (std::is_floating_point_v<T>)
      t = (beta - alpha) / beta;
    else
      t = T((beta - alpha_re) / beta, -imag_part(alpha) / beta);
    // Each entry divided, not multiplied by a reciprocal that could overflow: |x_i| <= |beta|
    // <= |alpha - beta|, so no quotient exceeds one.
    const T denominator = alpha - T(beta);
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, j + 1, m),
                         [&](const int i) { A(i, j) = A(i, j) / denominator; });
    Kokkos::single(Kokkos::PerTeam(team), [&] {
      A(j, j) = T(beta);
      tau(j) = t;
    });
    team.team_barrier();
    const T applied = conjugate(t);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, j + 1, n), [&](const int c) {
      T w;
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, j + 1, m),
          [&](const int i, T& s) { s += conjugate(A(i, j)) * A(i, c); }, w);
      w += A(j, c);
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, j + 1, m),
                           [&](const int i) { A(i, c) -= applied * A(i, j) * w; });
      Kokkos::single(Kokkos::PerThread(team), [&] { A(j, c) -= applied * w; });
    });
    team.team_barrier();
  }
}

// C = op(Q) C for Q = H(0) H(1) ... H(k-1) from team_geqrf's A and tau (LAPACK's ormqr, side
// left); op is Op::none or the (conjugate) transpose. Each column of C belongs to one thread.
template <class Member, class T>
KOKKOS_INLINE_FUNCTION void team_apply_q(const Member& team, Op op, const MatrixRef<const T>& A,
                                         const VectorRef<const T>& tau, int k,
                                         const MatrixRef<T>& C) {
  const int m = static_cast<int>(C.extent(0)), nrhs = static_cast<int>(C.extent(1));
  const bool adjoint = op != Op::none;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nrhs), [&](const int c) {
    for (int s = 0; s < k; ++s) {
      const int j = adjoint ? s : k - 1 - s;
      const T t = adjoint ? conjugate(tau(j)) : tau(j);
      if (t == T(0)) continue;
      T w;
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, j + 1, m),
          [&](const int i, T& sum) { sum += conjugate(A(i, j)) * C(i, c); }, w);
      w += C(j, c);
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, j + 1, m),
                           [&](const int i) { C(i, c) -= t * A(i, j) * w; });
      Kokkos::single(Kokkos::PerThread(team), [&] { C(j, c) -= t * w; });
    }
  });
  team.team_barrier();
}

// C = C op(Q) for the same Q (LAPACK's ormqr, side right): C H = C - tau (C v) v^H, the
// reflectors in the order H(0) first for op none and H(k-1)^H first for the adjoint. Each row
// of C belongs to one thread.
template <class Member, class T>
KOKKOS_INLINE_FUNCTION void team_apply_q_right(const Member& team, Op op,
                                               const MatrixRef<const T>& A,
                                               const VectorRef<const T>& tau, int k,
                                               const MatrixRef<T>& C) {
  const int rows = static_cast<int>(C.extent(0)), m = static_cast<int>(C.extent(1));
  const bool adjoint = op != Op::none;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows), [&](const int r) {
    for (int s = 0; s < k; ++s) {
      const int j = adjoint ? k - 1 - s : s;
      const T t = adjoint ? conjugate(tau(j)) : tau(j);
      if (t == T(0)) continue;
      T w;
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, j + 1, m),
          [&](const int i, T& sum) { sum += C(r, i) * A(i, j); }, w);
      w += C(r, j);
      const T tw = t * w;
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, j + 1, m),
                           [&](const int i) { C(r, i) -= tw * conjugate(A(i, j)); });
      Kokkos::single(Kokkos::PerThread(team), [&] { C(r, j) -= tw; });
    }
  });
  team.team_barrier();
}

// dst = src^H (dst is n x m for an m x n src), columns of src across the team.
template <class Member, class T>
KOKKOS_INLINE_FUNCTION void team_copy_adjoint(const Member& team, const MatrixRef<T>& src,
                                              const MatrixRef<T>& dst) {
  const int m = static_cast<int>(src.extent(0)), n = static_cast<int>(src.extent(1));
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](const int j) {
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, m),
                         [&](const int i) { dst(j, i) = conjugate(src(i, j)); });
  });
}

}  // namespace basalt::impl
