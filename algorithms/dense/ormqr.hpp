#pragma once
// basalt::ormqr: multiplies by the Q of a QR factorization, LAPACK's xORMQR (xUNMQR for complex
// scalars: the same call serves all four precisions).
//
//   basalt::ormqr(exec, side, op, A, tau, C);   // C = op(Q) C (ApplySide::left), C op(Q) (right)
//
// A (nq x >= k, LayoutLeft) holds k = tau.extent(0) reflectors as geqrf leaves them, nq = the
// rows of C (left) or its columns (right); Q = H(0) ... H(k-1) is nq x nq. op: Op::none,
// Op::conj_transpose, or Op::transpose for real scalars (there the same); complex scalars
// refuse Op::transpose, as xUNMQR does. C (LayoutLeft) is overwritten. Asynchronous on exec.
#include "basalt/algorithms/dense/geqrf.hpp"

namespace basalt {

template <class ExecSpace, class AView, class TauView, class CView>
void ormqr(const ExecSpace& exec, ApplySide side, Op op, const AView& A, const TauView& tau,
           const CView& C) {
  impl::check_qr_views<ExecSpace, AView, TauView>();
  static_assert(is_matrix_view_v<CView> &&
                    std::is_same_v<typename CView::array_layout, Kokkos::LayoutLeft> &&
                    std::is_same_v<typename CView::non_const_value_type,
                                   typename AView::non_const_value_type> &&
                    !std::is_const_v<typename CView::value_type>,
                "basalt::ormqr: C must be a writable rank-2 LayoutLeft View of A's scalar type");
  static_assert(is_accessible_from_v<ExecSpace, CView>,
                "basalt::ormqr: C must be accessible from the execution space");
  using T = typename AView::non_const_value_type;
  require(op != Op::transpose || std::is_floating_point_v<T>, "ormqr", "op",
          "Q of a complex QR is applied as Op::none or Op::conj_transpose");
  require_int_extents("ormqr", "A", A);
  require_int_extents("ormqr", "C", C);
  const bool left = side == ApplySide::left;
  const auto nq = left ? C.extent(0) : C.extent(1);
  require(A.extent(0) == nq, "ormqr", "C", "C has ", nq, left ? " rows" : " columns", "; A has ",
          A.extent(0), " rows");
  require(tau.extent(0) <= std::min(A.extent(0), A.extent(1)), "ormqr", "tau", "tau holds ",
          tau.extent(0), " reflectors; A is ", A.extent(0), " x ", A.extent(1));
  impl::ormqr(exec, side, op, A, tau, C,
              tuning::qr_applied<ExecSpace>(static_cast<int>(tau.extent(0)),
                                            static_cast<long>(left ? C.extent(1) : C.extent(0))));
}

}  // namespace basalt
