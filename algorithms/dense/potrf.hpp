#pragma once
// basalt::potrf: Cholesky factorization of a Hermitian positive definite matrix, LAPACK's xPOTRF
// on Kokkos Views.
//
//   int info = basalt::potrf(exec, Triangle::lower, A);   // A = L L^H; Triangle::upper: U^H U
//
// A (n x n, LayoutLeft, sub-views included) holds the Hermitian (real: symmetric) matrix in the
// given triangle; that triangle is overwritten by the factor and the other is not touched.
// info is 0, or k > 0 when the leading minor of order k is not positive definite (a diagonal
// that is not positive, NaN included): columns before k are factored, A(k, k) holds its updated
// value as LAPACK leaves it, and the rest of the triangle is unspecified (finite for finite A).
// info stays on the device until the end, where it is read back: the call waits for exec. On CUDA,
// below tuning::cholesky_recorded_below, the second call on the same A (address, order, leading
// dimension, triangle) records its work as a graph and later ones replay it.
#include <Kokkos_Core.hpp>
#include <optional>

#include "basalt/algorithms/dense/impl/potrf_portable.hpp"
#include "basalt/core/cholesky_state.hpp"
#include "basalt/core/errors.hpp"
#include "basalt/core/recorded_call.hpp"
#include "basalt/core/tuning.hpp"
#include "basalt/core/views.hpp"
#if defined(BASALT_ENABLE_CUDA)
#include "basalt/backends/cuda/call_scratch.hpp"
#include "basalt/backends/cuda/dense/potf2.hpp"
#include "basalt/backends/cuda/recorded_call.hpp"
#include "basalt/backends/cuda/side_space.hpp"
#endif

namespace basalt {

namespace impl {

template <class ExecSpace, class AView>
void check_cholesky_matrix(const char* routine, const AView& A) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "the first argument must be a Kokkos execution space instance");
  static_assert(
      is_matrix_view_v<AView> && std::is_same_v<typename AView::array_layout, Kokkos::LayoutLeft>,
      "A must be a rank-2 LayoutLeft View of float, double, Kokkos::complex<float> or "
      "Kokkos::complex<double>");
  static_assert(is_accessible_from_v<ExecSpace, AView>,
                "A must be accessible from the execution space");
  require_int_extents(routine, "A", A);
  require(A.extent(0) == A.extent(1), routine, "A", "A is ", A.extent(0), " x ", A.extent(1),
          "; it must be square");
}

}  // namespace impl

namespace impl {

// basalt::potrf under `tune`, past the checks; with `record`, a backend that records calls
// (core/recorded_call.hpp) may record it and replay it.
template <class ExecSpace, class AView>
int potrf_call(const ExecSpace& exec, Triangle uplo, const AView& A, tuning::Cholesky tune,
               bool record) {
  using State = CholeskyState<ExecSpace, typename AView::non_const_value_type>;
  const auto queue = [&](const ExecSpace& space, const State& state) {
    potrf(space, uplo, A, state, tune);
  };
  std::optional<CallKey> key;
  if (record)
    key = call_key(queue, A,
                   {static_cast<int>(uplo), tune.block, tune.panel_width, tune.recursion_width,
                    tune.leaf_look_ahead_rows});
  return run_call<State>(exec, key, queue,
                         [&](const State& state) { return finish_potrf(exec, A, state); });
}

}  // namespace impl

template <class ExecSpace, class AView>
int potrf(const ExecSpace& exec, Triangle uplo, const AView& A) {
  static_assert(!std::is_const_v<typename AView::value_type>, "basalt::potrf overwrites A");
  impl::check_cholesky_matrix<ExecSpace>("potrf", A);
  const int n = A.extent_int(0);
  if (n == 0) return 0;
  return impl::potrf_call(exec, uplo, A,
                          tuning::cholesky<ExecSpace, typename AView::non_const_value_type>(n),
                          n < tuning::cholesky_recorded_below);
}

}  // namespace basalt
