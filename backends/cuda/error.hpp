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

// Basalt's tables by device (streams, pools, instances, cached queries) hold this many devices.
constexpr int max_devices = 64;

// `device` as an index into such a table: cudaErrorInvalidDevice past it.
inline int device_slot(int device) {
  if (device < 0 || device >= max_devices)
    check(cudaErrorInvalidDevice, "device_slot", __FILE__, __LINE__);
  return device;
}

}  // namespace basalt::cuda

#define BASALT_CUDA_CHECK(call) ::basalt::cuda::check((call), #call, __FILE__, __LINE__)
// After a kernel launch: launch-configuration errors surface here, asynchronous ones at the
// next checked call on the stream.
#define BASALT_CUDA_CHECK_LAUNCH() BASALT_CUDA_CHECK(cudaGetLastError())
