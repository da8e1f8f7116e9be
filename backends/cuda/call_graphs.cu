#include <algorithm>
#include <list>
#include <mutex>

#include "basalt/backends/cuda/call_graphs.hpp"
#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/side_streams.hpp"
#include "basalt/backends/cuda/workspace.hpp"

namespace basalt::cuda {

namespace {

struct Recorded {
  impl::CallKey key;
  std::shared_ptr<RecordedCall> call;
};

struct DeviceCalls {
  std::mutex mutex;              // the lists and the last replay
  std::mutex recording;          // one recording at a time: they share the recording streams
  std::list<Recorded> recorded;  // most recently used first
  std::list<impl::CallKey> seen_once, refused;  // most recent first
  cudaEvent_t last_replay = nullptr;
  cudaStream_t last_replay_stream = nullptr;
  long replays = 0;
};

// Never destroyed: a recording outliving Kokkos would have no device left to give its graph back
// to (forget_recorded_calls empties them at Kokkos' finalization).
DeviceCalls& calls_of(int device) {
  static DeviceCalls* calls = new DeviceCalls[max_devices];
  return calls[device_slot(device)];
}

void remember(std::list<impl::CallKey>& keys, const impl::CallKey& key) {
  keys.push_front(key);
  if (keys.size() > std::size_t(kept_recordings)) keys.pop_back();
}

// Drops the recordings past `kept`, once the replays queued so far are done with their state:
// a state goes back to the pool on the recording stream.
void drop_recordings(int device, DeviceCalls& calls, std::size_t kept) {
  if (calls.recorded.size() <= kept) return;
  if (calls.last_replay) (void)cudaStreamWaitEvent(recording_stream(device), calls.last_replay, 0);
  calls.recorded.resize(kept);
}

}  // namespace

RecordedCall::~RecordedCall() { (void)cudaGraphExecDestroy(graph); }

CallPlan plan_call(int device, const impl::CallKey& key) {
  DeviceCalls& calls = calls_of(device);
  std::lock_guard<std::mutex> lock(calls.mutex);
  const auto found = std::find_if(calls.recorded.begin(), calls.recorded.end(),
                                  [&](const Recorded& r) { return r.key == key; });
  if (found != calls.recorded.end()) {
    calls.recorded.splice(calls.recorded.begin(), calls.recorded, found);
    return {found->call, false};
  }
  if (std::find(calls.refused.begin(), calls.refused.end(), key) != calls.refused.end()) return {};
  const auto once = std::find(calls.seen_once.begin(), calls.seen_once.end(), key);
  if (once != calls.seen_once.end()) {
    calls.seen_once.erase(once);
    return {nullptr, true};
  }
  remember(calls.seen_once, key);
  return {};
}

std::shared_ptr<RecordedCall> record_call(int device, const impl::CallKey& key,
                                          std::shared_ptr<void> state,
                                          const std::function<void()>& queue) {
  DeviceCalls& calls = calls_of(device);
  std::lock_guard<std::mutex> recording(calls.recording);
  const cudaStream_t stream = recording_stream(device);
  const cudaStream_t look_ahead = recording_look_ahead_stream(device);
  // The recording streams' block counters, and the state, are made on those streams; replays run
  // on the caller's.
  stream_counters(device, stream);
  stream_counters(device, look_ahead);
  BASALT_CUDA_CHECK(cudaStreamSynchronize(stream));
  BASALT_CUDA_CHECK(cudaStreamSynchronize(look_ahead));

  // Work that cannot be captured (a wait for the device, say) fails the capture, not the call:
  // the key then runs as queued.
  BASALT_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  bool queued = true;
  try {
    queue();
  } catch (...) {
    queued = false;
  }
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  cudaGraphExec_t exec = nullptr;
  // The look-ahead's kernels keep their stream's priority.
  if (queued && ended == cudaSuccess &&
      cudaGraphInstantiateWithFlags(&exec, graph, cudaGraphInstantiateFlagUseNodePriority) !=
          cudaSuccess)
    exec = nullptr;
  if (graph) (void)cudaGraphDestroy(graph);
  std::lock_guard<std::mutex> lock(calls.mutex);
  if (!exec) {
    (void)cudaGetLastError();
    remember(calls.refused, key);
    return nullptr;
  }
  calls.recorded.push_front({key, std::make_shared<RecordedCall>(exec, std::move(state))});
  drop_recordings(device, calls, kept_recordings);
  return calls.recorded.front().call;
}

void replay_call(int device, const RecordedCall& call, cudaStream_t stream) {
  DeviceCalls& calls = calls_of(device);
  std::lock_guard<std::mutex> lock(calls.mutex);
  if (!calls.last_replay) {
    int current = 0;
    BASALT_CUDA_CHECK(cudaGetDevice(&current));
    BASALT_CUDA_CHECK(cudaSetDevice(device));
    BASALT_CUDA_CHECK(cudaEventCreateWithFlags(&calls.last_replay, cudaEventDisableTiming));
    BASALT_CUDA_CHECK(cudaSetDevice(current));
  } else if (calls.last_replay_stream != stream)
    BASALT_CUDA_CHECK(cudaStreamWaitEvent(stream, calls.last_replay, 0));
  BASALT_CUDA_CHECK(cudaGraphLaunch(call.graph, stream));
  BASALT_CUDA_CHECK(cudaEventRecord(calls.last_replay, stream));
  calls.last_replay_stream = stream;
  ++calls.replays;
}

long replays_launched(int device) {
  DeviceCalls& calls = calls_of(device);
  std::lock_guard<std::mutex> lock(calls.mutex);
  return calls.replays;
}

void forget_recorded_calls() {
  for (int device = 0; device < max_devices; ++device) {
    DeviceCalls& calls = calls_of(device);
    std::lock_guard<std::mutex> lock(calls.mutex);
    drop_recordings(device, calls, 0);
    calls.seen_once.clear();
    calls.refused.clear();
    if (calls.last_replay) (void)cudaEventDestroy(calls.last_replay);
    calls.last_replay = nullptr;
    calls.last_replay_stream = nullptr;
  }
}

}  // namespace basalt::cuda
