#pragma once
// The CUDA recorded call (core/recorded_call.hpp): a call's work captured as a CUDA graph on the
// recording streams at its key's second call, with a state of its own, and replayed from then on
// (call_graphs.hpp).
#include <Kokkos_Core.hpp>
#include <memory>
#include <mutex>

#include "basalt/backends/cuda/call_graphs.hpp"
#include "basalt/backends/cuda/cublas.hpp"
#include "basalt/backends/cuda/side_space.hpp"
#include "basalt/core/dispatch.hpp"
#include "basalt/core/recorded_call.hpp"

namespace basalt {

namespace cuda {

// The recordings hold Kokkos instances (their states'): they go before Kokkos does.
inline void forget_recorded_calls_at_finalize() {
  static std::once_flag once;
  std::call_once(once, [] { Kokkos::push_finalize_hook(forget_recorded_calls); });
}

}  // namespace cuda

template <>
struct Specialization<routine::recorded_call, Kokkos::Cuda> {
  static constexpr bool available = true;

  template <class State, class Queue, class Finish>
  static auto run(const Kokkos::Cuda& exec, const impl::CallKey& key, const Queue& queue,
                  const Finish& finish) {
    const int device = cuda::device_slot(exec.cuda_device());
    // A profiling tool's callbacks may wait for the device (basalt-perf --breakdown does), which
    // a capture may not, and would miss a replay's regions.
    cuda::CallPlan plan;
    if (!Kokkos::Tools::profileLibraryLoaded()) plan = cuda::plan_call(device, key);
    if (plan.record) {
      // What allocates, which a capture may not: the instances on the recording streams and this
      // thread's cuBLAS handles for them.
      const Kokkos::Cuda recording = cuda::own_instance(device, cuda::OwnInstance::recording);
      cublas::handle(recording);
      for (const auto side :
           {cuda::OwnInstance::recording_look_ahead, cuda::OwnInstance::recording_look_ahead_side})
        cublas::handle(cuda::own_instance(device, side));
      cuda::forget_recorded_calls_at_finalize();
      const auto state = std::make_shared<State>(recording);
      plan.replay = cuda::record_call(device, key, state, [&] {
        state->restart(recording);
        queue(recording, *state);
      });
    }
    if (!plan.replay) return impl::run_queued<State>(exec, queue, finish);
    cuda::replay_call(device, *plan.replay, exec.cuda_stream());
    return finish(*static_cast<const State*>(plan.replay->state.get()));
  }
};

}  // namespace basalt
