#pragma once
// --breakdown: where one call's time goes, by Basalt's profiling regions (core/profiling.hpp).
#include <functional>
#include <map>
#include <string>

namespace basalt::perf {

// Exclusive milliseconds per Basalt region over one call of run(), plus "other" for time outside
// every region. Each region is fenced where it starts and ends, so that asynchronous work is
// charged to the region that launched it; the fences make the call itself somewhat slower.
std::map<std::string, double> breakdown(const std::function<void()>& run);

// "getf2 12.1 ms (9%), gemm ..." in decreasing order of time.
std::string describe(const std::map<std::string, double>& ms);

}  // namespace basalt::perf
