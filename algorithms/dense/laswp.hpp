#pragma once
// basalt::laswp: LAPACK's xLASWP on Kokkos Views.
//
//   basalt::laswp(exec, A, ipiv, k1, k2, direction)
//
// For k = k1..k2 (forward) or k2..k1 (backward), interchange row k of A with row ipiv(k);
// k1, k2 and the entries of ipiv are 1-based, as in LAPACK. A is m x n in any layout
// (LayoutLeft, LayoutRight or a LayoutStride sub-view), in float, double or their complex
// types; ipiv is a View of int holding at least k2 entries. Both must be reachable from exec.
//
// Every pivot in ipiv(k1..k2) is checked to lie in 1..m before A is touched; a bad one throws
// std::invalid_argument and leaves A unchanged. With no columns or an empty range (k2 = k1 - 1)
// nothing is read or done. That check reads the pivots back on the host,
// so the call waits for exec to finish the check (not the permutation).
#include "basalt/algorithms/dense/impl/laswp_portable.hpp"
#include "basalt/core/dispatch.hpp"
#include "basalt/core/errors.hpp"
#include "basalt/core/profiling.hpp"
#include "basalt/core/views.hpp"
#if defined(BASALT_ENABLE_CUDA)
#include "basalt/backends/cuda/dense/laswp.hpp"
#endif

#include <Kokkos_Core.hpp>

namespace basalt {

namespace impl {

template <class ExecSpace, class PivView>
void check_pivots(const ExecSpace& exec, const PivView& ipiv, int k1, int k2, int m) {
  int first_bad = k2 + 1;
  Kokkos::parallel_reduce(
      "basalt::laswp::check_pivots", Kokkos::RangePolicy<ExecSpace>(exec, k1 - 1, k2),
      KOKKOS_LAMBDA(const int k, int& first) {
        if ((ipiv(k) < 1 || ipiv(k) > m) && k + 1 < first) first = k + 1;
      },
      Kokkos::Min<int>(first_bad));
  if (first_bad <= k2) {
    int value = 0;
    Kokkos::deep_copy(exec, Kokkos::View<int, Kokkos::HostSpace>(&value),
                      Kokkos::subview(ipiv, first_bad - 1));
    exec.fence();
    require(false, "laswp", "ipiv", "ipiv(", first_bad, ") = ", value, " is not a row of A (1..", m,
            ")");
  }
}

// laswp without argument checks, for drivers whose pivots are their own: the backend's
// specialization where there is one, else the portable code.
template <class ExecSpace, class AView, class PivView>
void apply_laswp(const ExecSpace& exec, const AView& A, const PivView& ipiv, int k1, int k2,
                 Direction direction) {
  if (k2 < k1 || A.extent(0) == 0 || A.extent(1) == 0) return;
  ProfilingRegion region("basalt::laswp");
  using Spec = Specialization<routine::laswp, ExecSpace>;
  if constexpr (Spec::available)
    Spec::apply(exec, A, ipiv, k1, k2, direction);
  else
    portable::laswp(exec, A, ipiv, k1, k2, direction);
}

}  // namespace impl

template <class ExecSpace, class AView, class PivView>
void laswp(const ExecSpace& exec, const AView& A, const PivView& ipiv, int k1, int k2,
           Direction direction = Direction::forward) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "basalt::laswp: the first argument must be a Kokkos execution space instance");
  static_assert(is_matrix_view_v<AView>,
                "basalt::laswp: A must be a rank-2 View of float, double, "
                "Kokkos::complex<float> or Kokkos::complex<double>");
  static_assert(!std::is_const_v<typename AView::value_type>,
                "basalt::laswp: A is overwritten and cannot be a View of const");
  static_assert(is_pivot_view_v<PivView>, "basalt::laswp: ipiv must be a rank-1 View of int");
  static_assert(is_accessible_from_v<ExecSpace, AView> && is_accessible_from_v<ExecSpace, PivView>,
                "basalt::laswp: A and ipiv must be accessible from the execution space");

  require_int_extents("laswp", "A", A);
  const int m = static_cast<int>(A.extent(0));
  const int npiv = static_cast<int>(ipiv.extent(0));
  require(k1 >= 1, "laswp", "k1", "k1 = ", k1, " must be at least 1");
  require(k2 >= k1 - 1, "laswp", "k2", "k2 = ", k2, " is below k1 - 1 = ", k1 - 1);
  require(k2 <= npiv, "laswp", "k2", "k2 = ", k2, " exceeds the length of ipiv, ", npiv);
  require(k2 <= m, "laswp", "k2", "k2 = ", k2, " exceeds the number of rows of A, ", m);
  if (k2 < k1 || A.extent(1) == 0) return;
  impl::check_pivots(exec, ipiv, k1, k2, m);
  impl::apply_laswp(exec, A, ipiv, k1, k2, direction);
}

}  // namespace basalt
