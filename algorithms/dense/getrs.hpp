#pragma once
// basalt::getrs: solves op(A) X = B with the LU factors from basalt::getrf (LAPACK's xGETRS).
//
//   basalt::getrs(exec, op, A, ipiv, B);   // op: Op::none, Op::transpose, Op::conj_transpose
//
// A (n x n) and ipiv are getrf's output; B (n x nrhs, LayoutLeft) is overwritten by X.
// Asynchronous on exec: it returns before the solve is done.
#include "basalt/algorithms/dense/getrf.hpp"
#include "basalt/algorithms/dense/impl/blas.hpp"
#include "basalt/algorithms/dense/laswp.hpp"

namespace basalt {

template <class ExecSpace, class AView, class PivView, class BView>
void getrs(const ExecSpace& exec, Op op, const AView& A, const PivView& ipiv, const BView& B) {
  impl::check_lu_arguments<ExecSpace>("getrs", A, ipiv);
  static_assert(is_matrix_view_v<BView> &&
                    std::is_same_v<typename BView::array_layout, Kokkos::LayoutLeft> &&
                    std::is_same_v<typename BView::non_const_value_type,
                                   typename AView::non_const_value_type> &&
                    !std::is_const_v<typename BView::value_type>,
                "basalt::getrs: B must be a writable rank-2 LayoutLeft View of A's scalar type");
  static_assert(is_accessible_from_v<ExecSpace, BView>,
                "basalt::getrs: B must be accessible from the execution space");
  require_int_extents("getrs", "B", B);
  const int n = static_cast<int>(A.extent(0));
  require(A.extent(1) == A.extent(0), "getrs", "A", "A is ", A.extent(0), " x ", A.extent(1),
          "; it must be square");
  require(B.extent(0) == A.extent(0), "getrs", "B", "B has ", B.extent(0), " rows; A has ", n);
  if (n == 0 || B.extent(1) == 0) return;
  using T = typename AView::non_const_value_type;
  if (op == Op::none) {
    impl::apply_laswp(exec, B, ipiv, 1, n, Direction::forward);
    impl::trsm_left(exec, true, Op::none, true, T(1), A, B);
    impl::trsm_left(exec, false, Op::none, false, T(1), A, B);
  } else {
    impl::trsm_left(exec, false, op, false, T(1), A, B);
    impl::trsm_left(exec, true, op, true, T(1), A, B);
    impl::apply_laswp(exec, B, ipiv, 1, n, Direction::backward);
  }
}

}  // namespace basalt
