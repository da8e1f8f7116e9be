#pragma once
// Every CUDA runtime call and kernel launch in Basalt goes through these checks. No Kokkos
// here: the .cu files include this.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace basalt::cuda {

inline void check(cudaError_t status, const char* call, const char* file, int line) {
  if (status == cudaSuccess) return;
  throw std::runtime_error(std::string("basalt: CUDA error '") + cudaGetErrorString(status) +
                           "' from " + call + " at " + file + ":" + std::to_string(line));
}

}  // namespace basalt::cuda

#define BASALT_CUDA_CHECK(call) ::basalt::cuda::check((call), #call, __FILE__, __LINE__)
// After a kernel launch: launch-configuration errors surface here, asynchronous ones at the
// next checked call on the stream.
#define BASALT_CUDA_CHECK_LAUNCH() BASALT_CUDA_CHECK(cudaGetLastError())
