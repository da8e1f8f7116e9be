#pragma once
// Energy counters: NVML's total-energy counter on an NVIDIA GPU (loaded at run time, so the
// build needs no NVML), RAPL through /sys/class/powercap on the CPU. A counter that cannot be
// read gives no reading, never an invented one.
#include <memory>
#include <optional>
#include <string>

namespace basalt::perf {

class EnergyCounter {
 public:
  virtual ~EnergyCounter() = default;
  virtual std::optional<double> joules() = 0;  // a monotone total
  virtual std::string source() const = 0;
};

// The counter for the GPU (device index) when gpu is true, else for the CPU package; null if
// none can be read.
std::unique_ptr<EnergyCounter> open_energy_counter(bool gpu, int device);

}  // namespace basalt::perf
