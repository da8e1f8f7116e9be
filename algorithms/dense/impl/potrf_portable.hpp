#pragma once
// Cholesky factorization, written once over Kokkos (seed 000's algorithm): a blocked loop whose
// diagonal blocks are factored recursively, halving down to a block that potf2 factors column
// by column. Right-looking (trsm and herk on the whole trailing matrix after each block) rather
// than the paper's left-looking: one large herk per block is the shape cuBLAS and OpenBLAS run
// nearest their gemm rate, and today's MAGMA potrf_native made the same choice. Every building
// block (potf2, trsm, herk) goes through the dispatch, so a backend that specializes them runs
// this same driver.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <utility>

#include "basalt/algorithms/dense/impl/blas.hpp"
#include "basalt/algorithms/dense/impl/potf2_portable.hpp"
#include "basalt/core/cholesky_state.hpp"
#include "basalt/core/dispatch.hpp"
#include "basalt/core/profiling.hpp"
#include "basalt/core/tuning.hpp"
#include "basalt/core/views.hpp"

namespace basalt::impl {

template <class ExecSpace, class DView, class State>
void apply_potf2(const ExecSpace& exec, Triangle uplo, const DView& D, int offset,
                 const State& state) {
  ProfilingRegion region("basalt::potf2");
  using Spec = Specialization<routine::potf2, ExecSpace>;
  if constexpr (Spec::available)
    Spec::apply(exec, uplo, D, offset, state);
  else
    portable::potf2(exec, uplo, D, offset, state);
}

// Given the factored leading block (columns `factored`), the block beside it becomes its part of
// the factor and the trailing block (columns `rest`) its Schur complement: lower,
// A21 := A21 L11^-H and A22 -= A21 A21^H; upper, A12 := U11^-H A12 and A22 -= A12^H A12.
template <class ExecSpace, class AView>
void update_trailing(const ExecSpace& exec, Triangle uplo, const AView& A,
                     std::pair<int, int> factored, std::pair<int, int> rest) {
  using T = typename AView::non_const_value_type;
  using Real = real_t<T>;
  const auto A11 = Kokkos::subview(A, factored, factored), A22 = Kokkos::subview(A, rest, rest);
  if (uplo == Triangle::lower) {
    const auto A21 = Kokkos::subview(A, rest, factored);
    trsm(exec, ApplySide::right, true, Op::conj_transpose, false, T(1), A11, A21);
    herk(exec, true, Op::none, Real(-1), A21, Real(1), A22);
  } else {
    const auto A12 = Kokkos::subview(A, factored, rest);
    trsm(exec, ApplySide::left, false, Op::conj_transpose, false, T(1), A11, A12);
    herk(exec, false, Op::conj_transpose, Real(-1), A12, Real(1), A22);
  }
}

// Recursive Cholesky of a diagonal block (seed 000's RDPOTF2): the leading half, the update of
// the trailing half, the trailing half.
template <class ExecSpace, class DView, class State>
void factor_diagonal(const ExecSpace& exec, Triangle uplo, const DView& D, int offset,
                     const State& state, int recursion_width) {
  const int w = static_cast<int>(D.extent(0));
  if (w <= recursion_width) return apply_potf2(exec, uplo, D, offset, state);
  const int w1 = w / 2;
  const auto first = std::make_pair(0, w1), second = std::make_pair(w1, w);
  factor_diagonal(exec, uplo, Kokkos::subview(D, first, first), offset, state, recursion_width);
  update_trailing(exec, uplo, D, first, second);
  factor_diagonal(exec, uplo, Kokkos::subview(D, second, second), offset + w1, state,
                  recursion_width);
}

// Blocked right-looking Cholesky of the n x n A: for each block of nb columns, its diagonal
// block recursively, then trsm and herk on the trailing matrix. Info stays in state.
template <class ExecSpace, class AView, class State>
void potrf(const ExecSpace& exec, Triangle uplo, const AView& A, const State& state,
           tuning::Cholesky tune) {
  const int n = static_cast<int>(A.extent(0));
  for (int j = 0; j < n; j += tune.block) {
    const int jb = std::min(tune.block, n - j);
    const auto block = std::make_pair(j, j + jb);
    factor_diagonal(exec, uplo, Kokkos::subview(A, block, block), j, state, tune.recursion_width);
    if (j + jb < n) update_trailing(exec, uplo, A, block, std::make_pair(j + jb, n));
  }
}

// Reads info back (the one wait of the call) and, after a failure, puts the failing diagonal
// entry back where potf2 took it from, as LAPACK leaves it.
template <class ExecSpace, class AView, class State>
int finish_potrf(const ExecSpace& exec, const AView& A, const State& state) {
  int info = 0;
  Kokkos::deep_copy(exec, Kokkos::View<int, Kokkos::HostSpace>(&info), state.info);
  exec.fence();
  if (info > 0) {
    const auto failed_diagonal = state.failed_diagonal;
    Kokkos::parallel_for(
        "basalt::potrf::restore_diagonal", Kokkos::RangePolicy<ExecSpace>(exec, info - 1, info),
        KOKKOS_LAMBDA(const int k) { A(k, k) = failed_diagonal(); });
    exec.fence();
  }
  return info;
}

}  // namespace basalt::impl
