#pragma once
// What identifies the device work of a call that a backend records once and replays
// (core/recorded_call.hpp): two calls with equal keys queue the same work. No Kokkos: the .cu
// files include this.
#include <array>

namespace basalt::impl {

struct CallKey {
  const void* site;            // the driver and its scalar type (recorded_call.hpp's call_site)
  const void* data;            // the operand's first entry
  std::array<long, 4> layout;  // its extents and strides
  std::array<int, 5> options;  // what else shapes the work: a triangle, block sizes

  bool operator==(const CallKey& other) const {
    return site == other.site && data == other.data && layout == other.layout &&
           options == other.options;
  }
};

}  // namespace basalt::impl
