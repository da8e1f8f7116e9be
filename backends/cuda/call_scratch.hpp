#pragma once
// The CUDA call scratch (core/call_scratch.hpp): from Basalt's stream-ordered pool
// (workspace.hpp), so that taking and giving back a call's state costs neither a cudaMalloc nor a
// wait for the device.
#include <Kokkos_Core.hpp>
#include <cstddef>

#include "basalt/backends/cuda/workspace.hpp"
#include "basalt/core/dispatch.hpp"

namespace basalt {

template <>
struct Specialization<routine::call_scratch, Kokkos::Cuda> {
  static constexpr bool available = true;
  static void* acquire(const Kokkos::Cuda& exec, std::size_t bytes) {
    return cuda::acquire_workspace(exec.cuda_device(), exec.cuda_stream(), bytes);
  }
  // From a destructor: an error here (a device already failed) is left to the next checked call.
  static void release(const Kokkos::Cuda& exec, void* data) noexcept {
    (void)cudaFreeAsync(data, exec.cuda_stream());
  }
};

}  // namespace basalt
