#pragma once
// basalt::potrs: solves A X = B with the Cholesky factor from basalt::potrf (LAPACK's xPOTRS).
//
//   basalt::potrs(exec, Triangle::lower, A, B);
//
// A (n x n) is potrf's output for the same triangle; B (n x nrhs, LayoutLeft) is overwritten by
// X. Asynchronous on exec: it returns before the solve is done.
#include "basalt/algorithms/dense/impl/blas.hpp"
#include "basalt/algorithms/dense/potrf.hpp"

namespace basalt {

template <class ExecSpace, class AView, class BView>
void potrs(const ExecSpace& exec, Triangle uplo, const AView& A, const BView& B) {
  impl::check_cholesky_matrix<ExecSpace>("potrs", A);
  static_assert(is_matrix_view_v<BView> &&
                    std::is_same_v<typename BView::array_layout, Kokkos::LayoutLeft> &&
                    std::is_same_v<typename BView::non_const_value_type,
                                   typename AView::non_const_value_type> &&
                    !std::is_const_v<typename BView::value_type>,
                "basalt::potrs: B must be a writable rank-2 LayoutLeft View of A's scalar type");
  static_assert(is_accessible_from_v<ExecSpace, BView>,
                "basalt::potrs: B must be accessible from the execution space");
  require_int_extents("potrs", "B", B);
  require(B.extent(0) == A.extent(0), "potrs", "B", "B has ", B.extent(0), " rows; A has ",
          A.extent(0));
  if (A.extent(0) == 0 || B.extent(1) == 0) return;
  using T = typename AView::non_const_value_type;
  // A = L L^H: L Y = B, then L^H X = Y; A = U^H U: U^H Y = B, then U X = Y.
  const bool lower = uplo == Triangle::lower;
  impl::trsm_left(exec, lower, lower ? Op::none : Op::conj_transpose, false, T(1), A, B);
  impl::trsm_left(exec, lower, lower ? Op::conj_transpose : Op::none, false, T(1), A, B);
}

}  // namespace basalt
