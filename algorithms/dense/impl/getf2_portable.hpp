#pragma once
// The LU panel written over Kokkos: getf2, column by column, three kernels per column (seed 000's
// design D1: pivot search, interchange, fused scaling and rank-1 update). Every backend can run
// it; the CUDA backend's fused kernel (D2) hands panels too tall for it back to this one.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <climits>
#include <type_traits>

#include "basalt/core/views.hpp"

namespace basalt {

namespace impl {

// LAPACK's pivot magnitude: |re| + |im| for complex numbers (izamax), |x| for real ones.
template <class T>
KOKKOS_INLINE_FUNCTION real_t<T> pivot_magnitude(const T& x) {
  if constexpr (std::is_floating_point_v<T>)
    return magnitude(x);
  else
    return magnitude(x.real()) + magnitude(x.imag());
}

// The largest magnitude, the smallest row among equals (LAPACK's first maximum), whatever order
// the threads' candidates are combined in: Kokkos' MaxLoc keeps either on a tie, which made the
// pivot of a tall panel with equal magnitudes depend on the reduction's shape. The result is a
// scalar (a team's reduction) or a View in Space (a device's, left there).
template <class Real, class Space>
struct FirstLargest {
  using reducer = FirstLargest;
  using value_type = Kokkos::ValLocScalar<Real, int>;
  using result_view_type = Kokkos::View<value_type, Space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  KOKKOS_INLINE_FUNCTION explicit FirstLargest(value_type& result)
      : result_(&result), references_scalar_(true) {}
  explicit FirstLargest(const Kokkos::View<value_type, Space>& result)
      : result_(result.data()), references_scalar_(false) {}

  KOKKOS_INLINE_FUNCTION void join(value_type& dest, const value_type& src) const {
    if (src.val > dest.val || (src.val == dest.val && src.loc < dest.loc)) {
      dest.val = src.val;
      dest.loc = src.loc;
    }
  }
  KOKKOS_INLINE_FUNCTION void join(volatile value_type& dest,
                                   const volatile value_type& src) const {
    if (src.val > dest.val || (src.val == dest.val && src.loc < dest.loc)) {
      dest.val = src.val;
      dest.loc = src.loc;
    }
  }
  // -1: a zero entry is still a candidate, a NaN never is.
  KOKKOS_INLINE_FUNCTION void init(value_type& v) const {
    v.val = Real(-1);
    v.loc = INT_MAX;
  }
  KOKKOS_INLINE_FUNCTION value_type& reference() const { return *result_.data(); }
  KOKKOS_INLINE_FUNCTION result_view_type view() const { return result_; }
  KOKKOS_INLINE_FUNCTION bool references_scalar() const { return references_scalar_; }

 private:
  result_view_type result_;
  bool references_scalar_;
};

}  // namespace impl

namespace portable {

// Unblocked LU of an m x w panel (w <= m), columns in order: pivot search (LAPACK's first
// largest magnitude), interchange across the panel, scaling and rank-1 update. Pivots are 1-based
// within the panel; a zero pivot sets state.info to offset + its column unless an earlier one did,
// and is left unscaled, as LAPACK.
template <class ExecSpace, class PView, class PivView, class State>
void getf2(const ExecSpace& exec, const PView& P, const PivView& ipiv, int offset,
           const State& state) {
  using T = typename PView::non_const_value_type;
  using Real = real_t<T>;
  const int m = static_cast<int>(P.extent(0)), w = static_cast<int>(P.extent(1));
  const auto best = state.best;
  const auto info = state.info;
  for (int jj = 0; jj < std::min(m, w); ++jj) {
    Kokkos::parallel_reduce(
        "basalt::portable::getf2::pivot", Kokkos::RangePolicy<ExecSpace>(exec, jj, m),
        KOKKOS_LAMBDA(const int i, typename State::Best& found) {
          const Real v = impl::pivot_magnitude(P(i, jj));
          if (v > found.val || (v == found.val && i < found.loc)) {
            found.val = v;
            found.loc = i;
          }
        },
        impl::FirstLargest<Real, typename ExecSpace::memory_space>(best));
    Kokkos::parallel_for(
        "basalt::portable::getf2::interchange", Kokkos::RangePolicy<ExecSpace>(exec, 0, w),
        KOKKOS_LAMBDA(const int c) {
          // An all-zero (or all-NaN) column keeps its diagonal, as LAPACK's i*amax returns 1.
          const int p = best().val > Real(0) ? best().loc : jj;
          if (c == 0) ipiv(jj) = p + 1;
          if (p != jj) {
            const T t = P(jj, c);
            P(jj, c) = P(p, c);
            P(p, c) = t;
          }
        });
    Kokkos::parallel_for(
        "basalt::portable::getf2::update", Kokkos::RangePolicy<ExecSpace>(exec, jj, m),
        KOKKOS_LAMBDA(const int i) {
          const T pivot = P(jj, jj);
          if (i == jj) {
            if (pivot == T(0) && info() == 0) info() = offset + jj + 1;
            return;
          }
          if (pivot == T(0)) return;
          const T l = P(i, jj) / pivot;
          P(i, jj) = l;
          for (int c = jj + 1; c < w; ++c) P(i, c) -= l * P(jj, c);
        });
  }
}

}  // namespace portable

}  // namespace basalt
