#pragma once
// The CUDA specialization of larft's T from G = V^H V and tau (larft_launch.hpp): one launch for
// a column-major T of up to the kernel's limit of reflectors. apply says whether it built T; the
// QR driver builds the others with its portable leaves and joins.
#include <Kokkos_Core.hpp>

#include "basalt/backends/cuda/dense/larft_launch.hpp"
#include "basalt/backends/cuda/scalar.hpp"
#include "basalt/core/dispatch.hpp"

namespace basalt {

namespace cuda {

// T (k x k) holds G on entry and T's upper triangle on exit, as portable::larft_factor leaves
// it; false, with nothing done, where T is not column-major or k exceeds the kernel's limit.
template <class TauView, class TView>
bool larft_factor(const Kokkos::Cuda& exec, const TauView& tau, const TView& T) {
  using S = typename TView::non_const_value_type;
  const int k = static_cast<int>(T.extent(0));
  if (T.stride(0) != 1 || k > kernels::larft_factor_limit(exec.cuda_device(), sizeof(S)))
    return false;
  kernels::larft_factor(exec.cuda_device(), exec.cuda_stream(), device_pointer(T.data()),
                        T.stride(1), device_pointer(tau.data()), tau.stride(0), k);
  return true;
}

}  // namespace cuda

template <>
struct Specialization<routine::larft_factor, Kokkos::Cuda> {
  static constexpr bool available = true;
  template <class TauView, class TView>
  static bool apply(const Kokkos::Cuda& exec, const TauView& tau, const TView& T) {
    return cuda::larft_factor(exec, tau, T);
  }
};

}  // namespace basalt
