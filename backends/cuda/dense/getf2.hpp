#pragma once
// The CUDA specialization of the LU panel (basalt::portable::getf2's contract): seed 000's fused
// kernel (D2) for panels within its height limit, the portable kernels (D1) above it.
#include "basalt/algorithms/dense/impl/getf2_portable.hpp"
#include "basalt/backends/cuda/call_scratch.hpp"
#include "basalt/backends/cuda/dense/getf2_launch.hpp"
#include "basalt/backends/cuda/scalar.hpp"
#include "basalt/core/dispatch.hpp"
#include "basalt/core/lu_state.hpp"

#include <Kokkos_Core.hpp>

namespace basalt {

namespace cuda {

// The tallest panel of w columns of T the fused kernel takes on exec's device.
template <class T>
int getf2_height_limit(const Kokkos::Cuda& exec, int w) {
  return kernels::getf2_height_limit(exec.cuda_device(), w, sizeof(T));
}

template <class PView, class PivView, class Real>
void getf2(const Kokkos::Cuda& exec, const PView& P, const PivView& ipiv, int offset,
           const impl::LuState<Kokkos::Cuda, Real>& state) {
  using T = typename PView::non_const_value_type;
  kernels::Getf2Problem problem;
  problem.m = static_cast<int>(P.extent(0));
  problem.w = static_cast<int>(P.extent(1));
  problem.lda = P.stride(1);
  problem.offset = offset;
  if (problem.m > getf2_height_limit<T>(exec, problem.w))
    return portable::getf2(exec, P, ipiv, offset, state);
  kernels::getf2(exec.cuda_device(), exec.cuda_stream(), device_pointer(P.data()), ipiv.data(),
                 state.info.data(), problem);
}

}  // namespace cuda

template <>
struct Specialization<routine::getf2, Kokkos::Cuda> {
  static constexpr bool available = true;
  template <class... Args>
  static void apply(const Kokkos::Cuda& exec, const Args&... args) {
    cuda::getf2(exec, args...);
  }
};

}  // namespace basalt
