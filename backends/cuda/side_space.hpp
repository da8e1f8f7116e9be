#pragma once
// The CUDA side instance (core/side_space.hpp): a Kokkos::Cuda on the device's look-ahead stream,
// made once per device (a Kokkos::Cuda instance allocates its own scratch) and released when
// Kokkos finalizes; fork and join are events between the two streams.
#include <Kokkos_Core.hpp>
#include <memory>
#include <mutex>

#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/side_streams.hpp"
#include "basalt/core/dispatch.hpp"

namespace basalt {

namespace cuda {

inline Kokkos::Cuda look_ahead_instance(const Kokkos::Cuda& exec) {
  static std::mutex mutex;
  static std::unique_ptr<Kokkos::Cuda> instances[max_devices];
  const int device = device_slot(exec.cuda_device());
  std::lock_guard<std::mutex> lock(mutex);
  if (!instances[device]) {
    instances[device] = std::make_unique<Kokkos::Cuda>(look_ahead_stream(device));
    Kokkos::push_finalize_hook([device] {
      std::lock_guard<std::mutex> lock(mutex);
      instances[device].reset();
    });
  }
  return *instances[device];
}

}  // namespace cuda

template <>
struct Specialization<routine::side_space, Kokkos::Cuda> {
  static constexpr bool available = true;
  static Kokkos::Cuda side(const Kokkos::Cuda& exec) { return cuda::look_ahead_instance(exec); }
  static void fork(const Kokkos::Cuda& exec, const Kokkos::Cuda& side) {
    cuda::wait_for(side.cuda_stream(), exec.cuda_stream());
  }
  static void join(const Kokkos::Cuda& exec, const Kokkos::Cuda& side) {
    cuda::wait_for(exec.cuda_stream(), side.cuda_stream());
  }
};

}  // namespace basalt
