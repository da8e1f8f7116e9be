#pragma once
// The CUDA specialization of the QR panel (LAPACK's geqr2 on a tall, narrow block): the fused
// kernel (geqr2_launch.hpp) for column-major panels within its height limit. apply says whether
// it took the panel; the QR driver factors the others with its portable paths.
#include <Kokkos_Core.hpp>

#include "basalt/backends/cuda/dense/geqr2_launch.hpp"
#include "basalt/backends/cuda/scalar.hpp"
#include "basalt/core/dispatch.hpp"

namespace basalt {

namespace cuda {

// The tallest panel of w columns of T the fused kernel takes on exec's device.
template <class T>
int geqr2_height_limit(const Kokkos::Cuda& exec, int w) {
  return kernels::geqr2_height_limit(exec.cuda_device(), w, sizeof(T));
}

// P (p x w) overwritten by R and the reflectors, tau(0..min(p, w)-1) by their factors; false,
// with nothing done, where the panel is not column-major or is taller than the kernel takes.
template <class PView, class TauView>
bool geqr2(const Kokkos::Cuda& exec, const PView& P, const TauView& tau) {
  using T = typename PView::non_const_value_type;
  kernels::Geqr2Problem problem;
  problem.p = static_cast<int>(P.extent(0));
  problem.w = static_cast<int>(P.extent(1));
  problem.lda = P.stride(1);
  problem.tau_stride = tau.stride(0);
  if (P.stride(0) != 1 || problem.p > geqr2_height_limit<T>(exec, problem.w)) return false;
  kernels::geqr2(exec.cuda_device(), exec.cuda_stream(), device_pointer(P.data()),
                 device_pointer(tau.data()), problem);
  return true;
}

}  // namespace cuda

template <>
struct Specialization<routine::geqr2, Kokkos::Cuda> {
  static constexpr bool available = true;
  template <class PView, class TauView>
  static bool apply(const Kokkos::Cuda& exec, const PView& P, const TauView& tau) {
    return cuda::geqr2(exec, P, tau);
  }
};

}  // namespace basalt
