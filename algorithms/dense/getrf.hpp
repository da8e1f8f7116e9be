#pragma once
// basalt::getrf: LU factorization with partial pivoting, LAPACK's xGETRF on Kokkos Views.
//
//   int info = basalt::getrf(exec, A, ipiv);
//
// A (m x n, LayoutLeft, sub-views included) is overwritten by L (unit lower, below the
// diagonal) and U; ipiv(0..min(m,n)-1) receives LAPACK's 1-based pivots: row i was interchanged
// with row ipiv(i). info is 0, or k > 0 when U(k,k) is exactly zero: the factorization is
// completed as LAPACK completes it, and a solve with it would divide by zero. Pivots and info
// stay on the device until the end, where info is read back: the call waits for exec.
#include <Kokkos_Core.hpp>
#include <algorithm>

#include "basalt/algorithms/dense/impl/getrf_portable.hpp"
#include "basalt/core/errors.hpp"
#include "basalt/core/tuning.hpp"
#include "basalt/core/views.hpp"
#if defined(BASALT_ENABLE_CUDA)
#include "basalt/backends/cuda/dense/getf2.hpp"
#include "basalt/backends/cuda/call_scratch.hpp"
#include "basalt/backends/cuda/side_space.hpp"
#endif

namespace basalt {

namespace impl {

template <class ExecSpace, class AView, class PivView>
void check_lu_arguments(const char* routine, const AView& A, const PivView& ipiv) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "the first argument must be a Kokkos execution space instance");
  static_assert(
      is_matrix_view_v<AView> && std::is_same_v<typename AView::array_layout, Kokkos::LayoutLeft>,
      "A must be a rank-2 LayoutLeft View of float, double, Kokkos::complex<float> or "
      "Kokkos::complex<double>");
  static_assert(is_pivot_view_v<PivView>, "ipiv must be a rank-1 View of int");
  static_assert(is_accessible_from_v<ExecSpace, AView> && is_accessible_from_v<ExecSpace, PivView>,
                "A and ipiv must be accessible from the execution space");
  require_int_extents(routine, "A", A);
  const auto mn = std::min(A.extent(0), A.extent(1));
  require(ipiv.extent(0) >= mn, routine, "ipiv", "ipiv holds ", ipiv.extent(0),
          " entries; min(m, n) = ", mn, " are needed");
}

}  // namespace impl

template <class ExecSpace, class AView, class PivView>
int getrf(const ExecSpace& exec, const AView& A, const PivView& ipiv) {
  static_assert(!std::is_const_v<typename AView::value_type>, "basalt::getrf overwrites A");
  static_assert(!std::is_const_v<typename PivView::value_type>, "basalt::getrf writes ipiv");
  impl::check_lu_arguments<ExecSpace>("getrf", A, ipiv);
  if (A.extent(0) == 0 || A.extent(1) == 0) return 0;
  const impl::LuState<ExecSpace, real_t<typename AView::value_type>> state(exec);
  impl::getrf(exec, A, ipiv, state,
              tuning::lu<ExecSpace, typename AView::non_const_value_type>(
                  static_cast<int>(std::min(A.extent(0), A.extent(1)))));
  int info = 0;
  Kokkos::deep_copy(exec, Kokkos::View<int, Kokkos::HostSpace>(&info), state.info);
  exec.fence();
  return info;
}

}  // namespace basalt
