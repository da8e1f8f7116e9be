#pragma once
// basalt::geqrf: Householder QR, LAPACK's xGEQRF on Kokkos Views.
//
//   basalt::geqrf(exec, A, tau);
//
// A (m x n, LayoutLeft, sub-views included) is overwritten by R (on and above the diagonal) and
// the Householder vectors (below it); tau(0..min(m, n)-1) receives their scalar factors: Q =
// H(0) ... H(k-1), H(j) = I - tau(j) v v^H, v(j) = 1, LAPACK's storage, so that LAPACK's
// orgqr / ormqr take the result and basalt::orgqr / ormqr take LAPACK's. A zero column gives
// tau = 0. QR has no breakdown: no info. Asynchronous on exec, except for a tall-skinny A
// (m >= 16 n, n up to the block size): that takes Cholesky QR with Householder reconstruction
// (impl/qr_tall_skinny.hpp), the same factors up to rounding from gemms alone, and waits for
// exec twice to check that A is conditioned well enough for it; where it is not, Householder QR.
#include <Kokkos_Core.hpp>
#include <algorithm>

#include "basalt/algorithms/dense/impl/qr_portable.hpp"
#include "basalt/core/errors.hpp"
#include "basalt/core/tuning.hpp"
#include "basalt/core/views.hpp"
#if defined(BASALT_ENABLE_CUDA)
#include "basalt/backends/cuda/dense/geqr2.hpp"
#include "basalt/backends/cuda/dense/larft.hpp"
#include "basalt/backends/cuda/call_scratch.hpp"
#include "basalt/backends/cuda/side_space.hpp"
#endif

namespace basalt {

namespace impl {

// What every QR routine asks of a matrix argument and of tau.
template <class ExecSpace, class AView, class TauView>
void check_qr_views() {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "the first argument must be a Kokkos execution space instance");
  static_assert(
      is_matrix_view_v<AView> && std::is_same_v<typename AView::array_layout, Kokkos::LayoutLeft>,
      "A must be a rank-2 LayoutLeft View of float, double, Kokkos::complex<float> or "
      "Kokkos::complex<double>");
  static_assert(Kokkos::is_view<TauView>::value && TauView::rank == 1 &&
                    std::is_same_v<typename TauView::non_const_value_type,
                                   typename AView::non_const_value_type>,
                "tau must be a rank-1 View of A's scalar type");
  static_assert(is_accessible_from_v<ExecSpace, AView> && is_accessible_from_v<ExecSpace, TauView>,
                "A and tau must be accessible from the execution space");
}

}  // namespace impl

template <class ExecSpace, class AView, class TauView>
void geqrf(const ExecSpace& exec, const AView& A, const TauView& tau) {
  impl::check_qr_views<ExecSpace, AView, TauView>();
  static_assert(!std::is_const_v<typename AView::value_type>, "basalt::geqrf overwrites A");
  static_assert(!std::is_const_v<typename TauView::value_type>, "basalt::geqrf writes tau");
  require_int_extents("geqrf", "A", A);
  const auto k = std::min(A.extent(0), A.extent(1));
  require(tau.extent(0) >= k, "geqrf", "tau", "tau holds ", tau.extent(0),
          " entries; min(m, n) = ", k, " are needed");
  impl::geqrf(exec, A, tau, tuning::qr<ExecSpace>(static_cast<int>(k)));
}

}  // namespace basalt
