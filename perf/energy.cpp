#include "energy.hpp"

#include <dlfcn.h>

#include <fstream>

namespace basalt::perf {

namespace {

class NvmlCounter : public EnergyCounter {
 public:
  static std::unique_ptr<NvmlCounter> open(int device) {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return nullptr;
    auto counter = std::unique_ptr<NvmlCounter>(new NvmlCounter);
    auto init = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlInit_v2"));
    auto handle =
        reinterpret_cast<int (*)(unsigned, void**)>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
    counter->read_ = reinterpret_cast<int (*)(void*, unsigned long long*)>(
        dlsym(lib, "nvmlDeviceGetTotalEnergyConsumption"));
    if (!init || !handle || !counter->read_ || init() != 0 ||
        handle(static_cast<unsigned>(device), &counter->device_) != 0 || !counter->joules())
      return nullptr;
    return counter;
  }
  std::optional<double> joules() override {
    unsigned long long millijoules = 0;
    if (read_(device_, &millijoules) != 0) return std::nullopt;
    return millijoules * 1e-3;
  }
  std::string source() const override { return "NVML"; }

 private:
  int (*read_)(void*, unsigned long long*) = nullptr;
  void* device_ = nullptr;
};

class RaplCounter : public EnergyCounter {
 public:
  static std::unique_ptr<RaplCounter> open() {
    auto counter = std::unique_ptr<RaplCounter>(new RaplCounter);
    if (!counter->joules()) return nullptr;
    return counter;
  }
  std::optional<double> joules() override {
    std::ifstream in("/sys/class/powercap/intel-rapl:0/energy_uj");
    double microjoules = 0;
    if (!(in >> microjoules)) return std::nullopt;
    return microjoules * 1e-6;
  }
  std::string source() const override { return "RAPL"; }
};

}  // namespace

std::unique_ptr<EnergyCounter> open_energy_counter(bool gpu, int device) {
  if (gpu) return NvmlCounter::open(device);
  return RaplCounter::open();
}

}  // namespace basalt::perf
