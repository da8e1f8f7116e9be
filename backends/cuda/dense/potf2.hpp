#pragma once
// The CUDA specializations of the Cholesky diagonal block (basalt::portable::potf2's contract)
// and of the leaf panel (basalt::portable::potrf_panel's): one kernel, the diagonal block in
// shared memory; the portable code for a block wider than shared memory holds. The panels'
// trapezoid update (herk_trapezoid.hpp) comes with them, so every user of the driver sees all
// three.
#include <Kokkos_Core.hpp>
#include <algorithm>

#include "basalt/algorithms/dense/impl/potf2_portable.hpp"
#include "basalt/algorithms/dense/impl/potrf_portable.hpp"
#include "basalt/backends/cuda/call_scratch.hpp"
#include "basalt/backends/cuda/dense/herk_trapezoid.hpp"
#include "basalt/backends/cuda/dense/potf2_launch.hpp"
#include "basalt/backends/cuda/scalar.hpp"
#include "basalt/core/cholesky_state.hpp"
#include "basalt/core/dispatch.hpp"

namespace basalt {

namespace cuda {

// The widest diagonal block of T the kernel takes on exec's device, alone and with rows below.
template <class T>
int potf2_width_limit(const Kokkos::Cuda& exec) {
  return kernels::potf2_width_limit(exec.cuda_device(), sizeof(T));
}
template <class T>
int potrf_panel_width_limit(const Kokkos::Cuda& exec) {
  return kernels::potrf_panel_width_limit(exec.cuda_device(), sizeof(T));
}

namespace detail {

template <class PView, class T>
void launch_potrf_panel(const Kokkos::Cuda& exec, Triangle uplo, const PView& P, int offset,
                        const impl::CholeskyState<Kokkos::Cuda, T>& state) {
  kernels::PanelProblem problem;
  problem.w = static_cast<int>(std::min(P.extent(0), P.extent(1)));
  problem.rows_below = static_cast<int>(std::max(P.extent(0), P.extent(1))) - problem.w;
  problem.lda = P.stride(1);
  problem.lower = uplo == Triangle::lower;
  problem.offset = offset;
  kernels::potrf_panel(exec.cuda_device(), exec.cuda_stream(), device_pointer(P.data()),
                       state.info.data(), device_pointer(state.failed_diagonal.data()), problem);
}

}  // namespace detail

template <class DView, class T>
void potf2(const Kokkos::Cuda& exec, Triangle uplo, const DView& D, int offset,
           const impl::CholeskyState<Kokkos::Cuda, T>& state) {
  if (static_cast<int>(D.extent(0)) > potf2_width_limit<T>(exec))
    return portable::potf2(exec, uplo, D, offset, state);
  detail::launch_potrf_panel(exec, uplo, D, offset, state);
}

template <class PView, class T>
void potrf_panel(const Kokkos::Cuda& exec, Triangle uplo, const PView& P, int offset,
                 const impl::CholeskyState<Kokkos::Cuda, T>& state, int recursion_width) {
  if (static_cast<int>(std::min(P.extent(0), P.extent(1))) > potrf_panel_width_limit<T>(exec))
    return portable::potrf_panel(exec, uplo, P, offset, state, recursion_width);
  detail::launch_potrf_panel(exec, uplo, P, offset, state);
}

}  // namespace cuda

template <>
struct Specialization<routine::potf2, Kokkos::Cuda> {
  static constexpr bool available = true;
  template <class... Args>
  static void apply(const Kokkos::Cuda& exec, const Args&... args) {
    cuda::potf2(exec, args...);
  }
};

template <>
struct Specialization<routine::potrf_panel, Kokkos::Cuda> {
  static constexpr bool available = true;
  template <class... Args>
  static void apply(const Kokkos::Cuda& exec, const Args&... args) {
    cuda::potrf_panel(exec, args...);
  }
};

}  // namespace basalt
