#pragma once
// The CUDA specialization of the Cholesky diagonal block (basalt::portable::potf2's contract):
// one thread block with the block in shared memory, the portable team kernel for a block wider
// than shared memory holds.
#include <Kokkos_Core.hpp>

#include "basalt/algorithms/dense/impl/potf2_portable.hpp"
#include "basalt/backends/cuda/dense/potf2_launch.hpp"
#include "basalt/backends/cuda/scalar.hpp"
#include "basalt/core/cholesky_state.hpp"
#include "basalt/core/dispatch.hpp"

namespace basalt {

namespace cuda {

// The widest block of T the kernel takes on exec's device.
template <class T>
int potf2_width_limit(const Kokkos::Cuda& exec) {
  return kernels::potf2_width_limit(exec.cuda_device(), sizeof(T));
}

template <class DView, class T>
void potf2(const Kokkos::Cuda& exec, Triangle uplo, const DView& D, int offset,
           const impl::CholeskyState<Kokkos::Cuda, T>& state) {
  kernels::Potf2Problem problem;
  problem.n = static_cast<int>(D.extent(0));
  problem.lda = D.stride(1);
  problem.lower = uplo == Triangle::lower;
  problem.offset = offset;
  if (problem.n > potf2_width_limit<T>(exec)) return portable::potf2(exec, uplo, D, offset, state);
  kernels::potf2(exec.cuda_device(), exec.cuda_stream(), device_pointer(D.data()),
                 state.info.data(), device_pointer(state.failed_diagonal.data()), problem);
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

}  // namespace basalt
