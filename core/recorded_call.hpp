#pragma once
// A call whose device work a backend may record once and replay: on CUDA a graph, which runs a
// chain of dependent kernels with less time between them than the same kernels launched one by
// one (potrf d at 1024 to 4096, H100: 27-100 us a call, perf/NOTES.md, "potrf as a recorded
// call"). A backend that records specializes Specialization<routine::recorded_call, ExecSpace>
// with run<State>(exec, key, queue, finish); elsewhere each call queues its work.
#include <array>
#include <optional>

#include "basalt/core/call_key.hpp"
#include "basalt/core/dispatch.hpp"

namespace basalt::impl {

// &call_site<Queue>: one address per driver and scalar type, Queue being the driver's lambda.
template <class Queue>
inline constexpr char call_site = 0;

// The key of a call whose work depends on the matrix A's place and shape and on `options`.
template <class Queue, class AView>
CallKey call_key(const Queue&, const AView& A, std::array<int, 5> options) {
  return {&call_site<Queue>,
          A.data(),
          {long(A.extent(0)), long(A.extent(1)), long(A.stride(0)), long(A.stride(1))},
          options};
}

// The call as queued, with a state of its own: run_call's work where nothing is replayed.
template <class State, class ExecSpace, class Queue, class Finish>
auto run_queued(const ExecSpace& exec, const Queue& queue, const Finish& finish) {
  const State state(exec);
  queue(exec, state);
  return finish(state);
}

// Queues a call's device work on exec, queue(space, state), and returns finish(state). State(space)
// makes the device state that the work starts from (its memory and first values),
// state.restart(space) makes it so again. key is empty where recording does not pay; otherwise a
// recording backend may replay, in place of queue, the work that an earlier call with an equal key
// queued, from the state it kept for it, so queue must not wait for the device nor decide anything
// from its data.
template <class State, class ExecSpace, class Queue, class Finish>
auto run_call(const ExecSpace& exec, const std::optional<CallKey>& key, const Queue& queue,
              const Finish& finish) {
  using Spec = Specialization<routine::recorded_call, ExecSpace>;
  if constexpr (Spec::available)
    if (key) return Spec::template run<State>(exec, *key, queue, finish);
  return run_queued<State>(exec, queue, finish);
}

}  // namespace basalt::impl
