#pragma once
// One row per case, in the columns the performance-suite issue fixes.
#include <optional>
#include <string>
#include <vector>

namespace basalt::perf {

struct Row {
  std::string routine;
  char prec = 'd';
  std::string backend, device;
  long m = 0, n = 0, nrhs = 0, batch = 1;
  double time_ms = 0;
  double gflops = 0;  // for laswp and copy: GB/s moved (read + written)
  std::string vendor;
  std::optional<double> vendor_time_ms, vendor_gflops;
  std::optional<double> residual;  // in units of machine epsilon
  std::optional<double> energy_j;  // per run
  std::optional<double> speedup() const {
    if (!vendor_time_ms) return std::nullopt;
    return *vendor_time_ms / time_ms;
  }
  std::optional<double> gflops_per_watt() const {  // Gflop per joule
    if (!energy_j || *energy_j <= 0) return std::nullopt;
    return gflops * time_ms * 1e-3 / *energy_j;
  }
};

void print_header();
void print_row(const Row& row);
void write_csv(const std::string& path, const std::vector<Row>& rows);
void write_json(const std::string& path, const std::vector<Row>& rows);

}  // namespace basalt::perf
