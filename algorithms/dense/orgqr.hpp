#pragma once
// basalt::orgqr: the first n columns of the Q of a QR factorization, LAPACK's xORGQR (xUNGQR
// for complex scalars: the same call serves all four precisions).
//
//   basalt::orgqr(exec, A, tau);
//
// A (m x n, m >= n, LayoutLeft) holds k = tau.extent(0) <= n reflectors in its first columns
// as geqrf (or LAPACK's xGEQRF) leaves them; it is overwritten by Q(:, 0:n), Q = H(0) ...
// H(k-1). Asynchronous on exec; a workspace copy of the reflectors (m x k) is allocated per call.
#include "basalt/algorithms/dense/geqrf.hpp"

namespace basalt {

template <class ExecSpace, class AView, class TauView>
void orgqr(const ExecSpace& exec, const AView& A, const TauView& tau) {
  impl::check_qr_views<ExecSpace, AView, TauView>();
  static_assert(!std::is_const_v<typename AView::value_type>, "basalt::orgqr overwrites A");
  require_int_extents("orgqr", "A", A);
  require(A.extent(1) <= A.extent(0), "orgqr", "A", "A is ", A.extent(0), " x ", A.extent(1),
          "; Q's first n columns need m >= n");
  require(tau.extent(0) <= A.extent(1), "orgqr", "tau", "tau holds ", tau.extent(0),
          " reflectors; A has ", A.extent(1), " columns");
  impl::orgqr(exec, A, tau, tuning::qr<ExecSpace>(static_cast<int>(tau.extent(0))));
}

}  // namespace basalt
