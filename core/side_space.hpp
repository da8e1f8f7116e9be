#pragma once
// A second instance of an execution space, for work that may run beside the work queued on the
// first: a factorization's next panel beside its trailing update (look-ahead). A backend with
// concurrent queues specializes Specialization<routine::side_space, ExecSpace> with
// side(exec), fork(exec, side) and join(exec, side); elsewhere the side is exec itself, so the
// work runs in the order it is queued.
#include "basalt/core/dispatch.hpp"

namespace basalt::impl {

template <class ExecSpace>
class SideSpace {
  using Spec = Specialization<routine::side_space, ExecSpace>;

 public:
  explicit SideSpace(const ExecSpace& exec) : exec_(exec), side_(side_of(exec)) {}

  // The side instance, on which work queued from here on starts after the work queued on exec
  // so far.
  const ExecSpace& fork() const {
    if constexpr (Spec::available) Spec::fork(exec_, side_);
    forked_ = true;
    return side_;
  }

  // Work queued on exec from here on starts after the work queued on the side so far. Nothing to
  // wait for where nothing was forked since the last join; a recorded call (recorded_call.hpp)
  // may not wait for a side that it never forked.
  void join() const {
    if (!forked_) return;
    forked_ = false;
    if constexpr (Spec::available) Spec::join(exec_, side_);
  }

 private:
  static ExecSpace side_of(const ExecSpace& exec) {
    if constexpr (Spec::available)
      return Spec::side(exec);
    else
      return exec;
  }

  ExecSpace exec_, side_;
  mutable bool forked_ = false;
};

}  // namespace basalt::impl
