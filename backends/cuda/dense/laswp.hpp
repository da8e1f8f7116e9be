#pragma once
// The CUDA specialization of basalt::laswp: takes the Views apart and calls the launchers.
#include <Kokkos_Core.hpp>

#include "basalt/backends/cuda/dense/laswp_launch.hpp"
#include "basalt/backends/cuda/scalar.hpp"
#include "basalt/core/dispatch.hpp"

namespace basalt {

namespace cuda {

// Same contract as basalt::laswp, without its argument checks: callers check first.
template <class AView, class PivView>
void laswp(const Kokkos::Cuda& exec, const AView& A, const PivView& ipiv, int k1, int k2,
           Direction direction) {
  using T = scalar_t<typename AView::value_type>;
  kernels::LaswpProblem problem;
  problem.m = A.extent(0);
  problem.n = A.extent(1);
  problem.row_stride = A.stride(0);
  problem.col_stride = A.stride(1);
  problem.k1 = k1;
  problem.k2 = k2;
  problem.forward = direction == Direction::forward;
  kernels::laswp<T>(exec.cuda_device(), exec.cuda_stream(), device_pointer(A.data()), ipiv.data(),
                    problem);
}

}  // namespace cuda

template <>
struct Specialization<routine::laswp, Kokkos::Cuda> {
  static constexpr bool available = true;
  template <class... Args>
  static void apply(const Kokkos::Cuda& exec, const Args&... args) {
    cuda::laswp(exec, args...);
  }
};

}  // namespace basalt
