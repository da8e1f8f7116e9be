#include "report.hpp"

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace basalt::perf {

namespace {

const char* const columns[] = {"routine",
                               "prec",
                               "backend",
                               "device",
                               "m",
                               "n",
                               "nrhs",
                               "batch",
                               "time_ms",
                               "gflops",
                               "vendor",
                               "vendor_time_ms",
                               "vendor_gflops",
                               "speedup",
                               "residual",
                               "energy_j",
                               "gflops_per_watt",
                               "vendor_energy_j",
                               "vendor_gflops_per_watt"};

std::string number(const std::optional<double>& value, const char* missing = "") {
  if (!value) return missing;
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", *value);
  return text;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::ofstream open(const std::string& path) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write '" + path + "'");
  return out;
}

}  // namespace

void print_header() {
  std::printf("%-8s %-4s %-14s %7s %7s %10s %10s %-10s %10s %10s %8s %9s %9s %9s %9s\n", "routine",
              "prec", "backend", "m", "n", "time_ms", "gflops", "vendor", "v_time_ms", "v_gflops",
              "speedup", "residual", "energy_j", "gflop/W", "v_gflop/W");
}

void print_row(const Row& r) {
  std::printf("%-8s %-4c %-14s %7ld %7ld %10.4f %10.1f %-10s %10s %10s %8s %9s %9s %9s %9s\n",
              r.routine.c_str(), r.prec, r.backend.c_str(), r.m, r.n, r.time_ms, r.gflops,
              r.vendor.empty() ? "-" : r.vendor.c_str(), number(r.vendor_time_ms, "-").c_str(),
              number(r.vendor_gflops, "-").c_str(), number(r.speedup(), "-").c_str(),
              number(r.residual, "-").c_str(), number(r.energy_j, "n/a").c_str(),
              number(r.gflops_per_watt(), "n/a").c_str(),
              number(r.vendor_gflops_per_watt(), "n/a").c_str());
  std::fflush(stdout);
}

void write_csv(const std::string& path, const std::vector<Row>& rows) {
  auto out = open(path);
  for (size_t i = 0; i < std::size(columns); ++i) out << (i ? "," : "") << columns[i];
  out << "\n";
  for (const auto& r : rows) {
    out << csv_field(r.routine) << ',' << r.prec << ',' << csv_field(r.backend) << ','
        << csv_field(r.device) << ',' << r.m << ',' << r.n << ',' << r.nrhs << ',' << r.batch << ','
        << number(r.time_ms) << ',' << number(r.gflops) << ',' << csv_field(r.vendor) << ','
        << number(r.vendor_time_ms) << ',' << number(r.vendor_gflops) << ',' << number(r.speedup())
        << ',' << number(r.residual) << ',' << number(r.energy_j, "n/a") << ','
        << number(r.gflops_per_watt(), "n/a") << ',' << number(r.vendor_energy_j, "n/a") << ','
        << number(r.vendor_gflops_per_watt(), "n/a") << "\n";
  }
}

void write_json(const std::string& path, const std::vector<Row>& rows) {
  auto value = [](const std::optional<double>& v) -> nlohmann::json {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  nlohmann::json all = nlohmann::json::array();
  for (const auto& r : rows) {
    all.push_back({{"routine", r.routine},
                   {"prec", std::string(1, r.prec)},
                   {"backend", r.backend},
                   {"device", r.device},
                   {"m", r.m},
                   {"n", r.n},
                   {"nrhs", r.nrhs},
                   {"batch", r.batch},
                   {"time_ms", r.time_ms},
                   {"gflops", r.gflops},
                   {"vendor", r.vendor},
                   {"vendor_time_ms", value(r.vendor_time_ms)},
                   {"vendor_gflops", value(r.vendor_gflops)},
                   {"speedup", value(r.speedup())},
                   {"residual", value(r.residual)},
                   {"energy_j", value(r.energy_j)},
                   {"gflops_per_watt", value(r.gflops_per_watt())},
                   {"vendor_energy_j", value(r.vendor_energy_j)},
                   {"vendor_gflops_per_watt", value(r.vendor_gflops_per_watt())}});
  }
  open(path) << all.dump(2) << "\n";
}

}  // namespace basalt::perf
