#pragma once
// The CUDA side instance (core/side_space.hpp): a Kokkos::Cuda on one of the device's look-ahead
// streams or on theirs; fork and join are events between the two streams.
#include <Kokkos_Core.hpp>
#include <memory>
#include <mutex>

#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/side_streams.hpp"
#include "basalt/core/dispatch.hpp"

namespace basalt {

namespace cuda {

// Basalt's Kokkos::Cuda instances on its own streams (side_streams.hpp), made once per device (a
// Kokkos::Cuda instance allocates its own scratch) and released when Kokkos finalizes.
enum class OwnInstance {
  look_ahead,
  recording,
  recording_look_ahead,
  look_ahead_side,
  recording_look_ahead_side
};

inline Kokkos::Cuda own_instance(int device, OwnInstance which) {
  static std::mutex mutex;
  static std::unique_ptr<Kokkos::Cuda>
      instances[max_devices][static_cast<int>(OwnInstance::recording_look_ahead_side) + 1];
  const int slot = static_cast<int>(which);
  device_slot(device);
  std::lock_guard<std::mutex> lock(mutex);
  if (!instances[device][slot]) {
    const cudaStream_t stream =
        which == OwnInstance::look_ahead             ? look_ahead_stream(device)
        : which == OwnInstance::recording            ? recording_stream(device)
        : which == OwnInstance::recording_look_ahead ? recording_look_ahead_stream(device)
        : which == OwnInstance::look_ahead_side      ? look_ahead_side_stream(device)
                                                     : recording_look_ahead_side_stream(device);
    instances[device][slot] = std::make_unique<Kokkos::Cuda>(stream);
    Kokkos::push_finalize_hook([device, slot] {
      std::lock_guard<std::mutex> lock(mutex);
      instances[device][slot].reset();
    });
  }
  return *instances[device][slot];
}

// The side of exec: the look-ahead instance beside the caller's, and the look-ahead's side
// beside the look-ahead; the recording instances' likewise, so that a recorded call's side work
// is captured with it.
inline Kokkos::Cuda side_instance(const Kokkos::Cuda& exec) {
  const int device = exec.cuda_device();
  const cudaStream_t stream = exec.cuda_stream();
  return own_instance(device, stream == recording_stream(device) ? OwnInstance::recording_look_ahead
                              : stream == recording_look_ahead_stream(device)
                                  ? OwnInstance::recording_look_ahead_side
                              : stream == look_ahead_stream(device) ? OwnInstance::look_ahead_side
                                                                    : OwnInstance::look_ahead);
}

}  // namespace cuda

template <>
struct Specialization<routine::side_space, Kokkos::Cuda> {
  static constexpr bool available = true;
  static Kokkos::Cuda side(const Kokkos::Cuda& exec) { return cuda::side_instance(exec); }
  static void fork(const Kokkos::Cuda& exec, const Kokkos::Cuda& side) {
    cuda::wait_for(side.cuda_stream(), exec.cuda_stream());
  }
  static void join(const Kokkos::Cuda& exec, const Kokkos::Cuda& side) {
    cuda::wait_for(exec.cuda_stream(), side.cuda_stream());
  }
};

}  // namespace basalt
