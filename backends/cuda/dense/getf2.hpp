#pragma once
// The CUDA specialization of the LU panel (basalt::portable::getf2's contract): takes the
// Views apart and launches the cooperative panel kernel.
#include "basalt/backends/cuda/dense/getf2_launch.hpp"
#include "basalt/backends/cuda/scalar.hpp"
#include "basalt/core/dispatch.hpp"
#include "basalt/core/lu_state.hpp"

#include <Kokkos_Core.hpp>

namespace basalt {

namespace cuda {

template <class PView, class PivView, class Real>
void getf2(const Kokkos::Cuda& exec, const PView& P, const PivView& ipiv, int offset,
           const impl::LuState<Kokkos::Cuda, Real>& state) {
  static_assert(sizeof(kernels::ValueIndex<Real>) ==
                    sizeof(typename impl::LuState<Kokkos::Cuda, Real>::Best),
                "LuState::block_best must have ValueIndex' layout");
  kernels::Getf2Problem problem;
  problem.m = static_cast<int>(P.extent(0));
  problem.w = static_cast<int>(P.extent(1));
  problem.lda = P.stride(1);
  problem.offset = offset;
  kernels::getf2(exec.cuda_device(), exec.cuda_stream(), device_pointer(P.data()), ipiv.data(),
                 state.info.data(),
                 reinterpret_cast<kernels::ValueIndex<Real>*>(state.block_best.data()),
                 static_cast<int>(state.block_best.extent(0)), problem);
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
