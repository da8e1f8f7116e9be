#pragma once
// One row per case, in the columns the performance-suite issue fixes.
#include <optional>
#include <string>
#include <vector>

namespace basalt::perf {

// The work of a run (its rate times its time) over its energy.
inline std::optional<double> gflop_per_joule(double gflops, double ms,
                                             const std::optional<double>& joules) {
  if (!joules || *joules <= 0) return std::nullopt;
  return gflops * ms * 1e-3 / *joules;
}

struct Row {
  std::string routine;
  char prec = 'd';
  std::string backend, device;
  long m = 0, n = 0, nrhs = 0, batch = 1;
  double time_ms = 0;
  double gflops = 0;  // for laswp and copy: GB/s moved (read + written)
  std::string vendor;
  std::optional<double> vendor_time_ms, vendor_gflops;
  std::optional<double> residual;                   // in units of machine epsilon
  std::optional<double> energy_j, vendor_energy_j;  // per run
  std::optional<double> speedup() const {
    if (!vendor_time_ms) return std::nullopt;
    return *vendor_time_ms / time_ms;
  }
  // Gflop per joule, ours and the vendor's.
  std::optional<double> gflops_per_watt() const {
    return gflop_per_joule(gflops, time_ms, energy_j);
  }
  std::optional<double> vendor_gflops_per_watt() const {
    if (!vendor_gflops || !vendor_time_ms) return std::nullopt;
    return gflop_per_joule(*vendor_gflops, *vendor_time_ms, vendor_energy_j);
  }
};

void print_header();
void print_row(const Row& row);
void write_csv(const std::string& path, const std::vector<Row>& rows);
void write_json(const std::string& path, const std::vector<Row>& rows);

}  // namespace basalt::perf
