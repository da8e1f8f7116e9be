#pragma once
// Calls recorded as CUDA graphs and replayed (core/recorded_call.hpp), per device: a key's first
// call runs as it is queued, its second is recorded on the recording streams (side_streams.hpp)
// and replayed, and later ones are replayed, the most recently used kept_recordings of them. A
// key whose work could not be recorded runs as queued from then on. No Kokkos: the .cu files
// include this.
#include <cuda_runtime.h>

#include <functional>
#include <memory>

#include "basalt/core/call_key.hpp"

namespace basalt::cuda {

constexpr int kept_recordings = 8;

struct RecordedCall {
  RecordedCall(cudaGraphExec_t graph, std::shared_ptr<void> state)
      : graph(graph), state(std::move(state)) {}
  ~RecordedCall();
  RecordedCall(const RecordedCall&) = delete;
  RecordedCall& operator=(const RecordedCall&) = delete;

  cudaGraphExec_t graph;
  std::shared_ptr<void> state;  // the device state the graph's work starts from and leaves
};

// What a call with this key does: replay (when `replay` is set), record itself (`record`), or
// run as queued (neither).
struct CallPlan {
  std::shared_ptr<RecordedCall> replay;
  bool record = false;
};
CallPlan plan_call(int device, const impl::CallKey& key);

// Records the work that `queue` puts on the recording streams, which starts from and leaves
// `state`, as key's graph; null (and key runs as queued from then on) if it could not be recorded.
std::shared_ptr<RecordedCall> record_call(int device, const impl::CallKey& key,
                                          std::shared_ptr<void> state,
                                          const std::function<void()>& queue);

// Launches the recording on stream, after every earlier replay on the device: recordings share
// the recording streams' block counters (workspace.hpp's stream_counters).
void replay_call(int device, const RecordedCall& call, cudaStream_t stream);

// The replays launched on the device so far (for the tests).
long replays_launched(int device);

// Drops every recording, once the replays queued so far are done with their state (at Kokkos'
// finalization, while the state's execution space instances still exist).
void forget_recorded_calls();

}  // namespace basalt::cuda
