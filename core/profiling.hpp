#pragma once
// Named regions around the drivers' building blocks (getf2, laswp, trsm, gemm), for Kokkos'
// profiling interface: free without a tool, and what basalt-perf's --breakdown times.
#include <Kokkos_Core.hpp>

namespace basalt {

class ProfilingRegion {
 public:
  explicit ProfilingRegion(const char* name) { Kokkos::Profiling::pushRegion(name); }
  ~ProfilingRegion() { Kokkos::Profiling::popRegion(); }
  ProfilingRegion(const ProfilingRegion&) = delete;
  ProfilingRegion& operator=(const ProfilingRegion&) = delete;
};

}  // namespace basalt
