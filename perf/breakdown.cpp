#include "breakdown.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdio>
#include <vector>

namespace basalt::perf {

namespace {

struct Open {
  std::string name;
  double since;  // when the region last resumed: opened, or a child region closed
};

// The callbacks are plain function pointers, hence the file-scope state: one breakdown at a time.
std::vector<Open> open_regions;
std::map<std::string, double> exclusive_seconds;
Kokkos::Timer* clock_ = nullptr;

double fenced_now() {
  Kokkos::fence();
  return clock_->seconds();
}

void charge_innermost(double now) {
  if (open_regions.empty()) return;
  exclusive_seconds[open_regions.back().name] += now - open_regions.back().since;
}

// Regions that are not Basalt's (Kokkos Kernels opens its own) count as their enclosing one.
void push(const char* name) {
  const double now = fenced_now();
  charge_innermost(now);
  const bool ours = std::string(name).rfind("basalt::", 0) == 0;
  open_regions.push_back({ours || open_regions.empty() ? name : open_regions.back().name, now});
}

void pop() {
  const double now = fenced_now();
  charge_innermost(now);
  if (!open_regions.empty()) open_regions.pop_back();
  if (!open_regions.empty()) open_regions.back().since = now;
}

}  // namespace

std::map<std::string, double> breakdown(const std::function<void()>& run) {
  Kokkos::Timer clock;
  clock_ = &clock;
  open_regions.clear();
  exclusive_seconds.clear();
  Kokkos::Tools::Experimental::set_push_region_callback(push);
  Kokkos::Tools::Experimental::set_pop_region_callback(pop);
  Kokkos::fence();
  clock.reset();
  run();
  const double total = fenced_now();
  Kokkos::Tools::Experimental::set_push_region_callback(nullptr);
  Kokkos::Tools::Experimental::set_pop_region_callback(nullptr);
  clock_ = nullptr;

  std::map<std::string, double> ms;
  double inside = 0;
  for (const auto& [name, seconds] : exclusive_seconds) {
    ms[name] = seconds * 1e3;
    inside += seconds;
  }
  ms["other"] = std::max(0.0, total - inside) * 1e3;
  return ms;
}

std::string describe(const std::map<std::string, double>& ms) {
  std::vector<std::pair<std::string, double>> sorted(ms.begin(), ms.end());
  std::sort(sorted.begin(), sorted.end(), [](auto& a, auto& b) { return a.second > b.second; });
  double total = 0;
  for (const auto& entry : sorted) total += entry.second;
  std::string text;
  for (const auto& [name, t] : sorted) {
    char part[96];
    std::snprintf(part, sizeof part, "%s%s %.2f ms (%.0f%%)", text.empty() ? "" : ", ",
                  name.c_str(), t, total > 0 ? 100 * t / total : 0.0);
    text += part;
  }
  return text;
}

}  // namespace basalt::perf
