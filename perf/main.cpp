// basalt-perf: one driver for every routine and backend, the vendor library in the same run.
#include <Kokkos_Core.hpp>

#include "measure.hpp"
#if defined(BASALT_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <thread>

namespace basalt::perf {

namespace {

using Runner = void (*)(const Context&, char, const Emit&);

const std::map<std::string, Runner>& landed() {
  static const std::map<std::string, Runner> runners = {{"copy", run_copy},
                                                        {"gemm", run_gemm},
                                                        {"getf2", run_getf2},
                                                        {"geqr2", run_geqr2},
                                                        {"getrf", run_getrf},
                                                        {"potrf", run_potrf},
                                                        {"laswp", run_laswp},
                                                        {"getrf_batched", run_getrf_batched},
                                                        {"potrf_batched", run_potrf_batched},
                                                        {"geqrf_batched", run_geqrf_batched},
                                                        {"spmv", run_spmv},
                                                        {"spmm", run_spmm},
                                                        {"geqrf", run_geqrf},
                                                        {"ormqr", run_ormqr},
                                                        {"lobpcg", run_lobpcg}};
  return runners;
}

// Routines the suite will time once they land in Basalt.
bool planned(const std::string& routine) {
  for (const char* name : {"getrf", "getrs", "gesv", "potrs", "posv", "gels", "getrf_batched",
                           "potrf_batched", "geqrf_batched", "spmv", "spmm"})
    if (routine == name) return true;
  return false;
}

std::string device_name() {
#if defined(BASALT_ENABLE_CUDA)
  cudaDeviceProp properties{};
  if (cudaGetDeviceProperties(&properties, Kokkos::DefaultExecutionSpace().cuda_device()) ==
      cudaSuccess)
    return properties.name;
  return "CUDA device";
#else
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0)
      return line.substr(line.find(':') + 2) + " x" +
             std::to_string(Kokkos::DefaultExecutionSpace::concurrency());
  return "CPU";
#endif
}

}  // namespace

std::vector<Shape> shapes(const Context& ctx, long default_n) {
  if (ctx.input) return {{ctx.input->m, ctx.input->n}};
  const Options& options = ctx.options;
  const std::vector<long> ns = options.n.empty() ? std::vector<long>{default_n} : options.n;
  const std::vector<long>& ms = options.m.empty() ? ns : options.m;
  // A single value pairs with each of the other list's.
  std::vector<Shape> all;
  for (size_t i = 0; i < std::max(ms.size(), ns.size()); ++i)
    all.push_back({ms[ms.size() == 1 ? 0 : i], ns[ns.size() == 1 ? 0 : i]});
  return all;
}

}  // namespace basalt::perf

int main(int argc, char** argv) {
  using namespace basalt::perf;
  int exit_code = 0;
  const auto options = parse(argc, argv, exit_code);
  if (!options) return exit_code;
  const auto runner = landed().find(options->routine);
  if (runner == landed().end()) {
    std::cerr << "basalt-perf: routine '" << options->routine << "' "
              << (planned(options->routine) ? "has not landed in Basalt yet" : "is unknown")
              << " (available: copy, gemm, getf2, geqr2, getrf, potrf, geqrf, ormqr, laswp, "
                 "getrf_batched, potrf_batched, geqrf_batched, spmv, spmm, lobpcg)\n";
    return 2;
  }
  std::optional<DenseInput> input;
  // The sparse routines read --matrix themselves, as a sparse matrix.
  const bool sparse =
      options->routine == "spmv" || options->routine == "spmm" || options->routine == "lobpcg";
  if (!options->matrix_file.empty() && !sparse) {
    try {
      input = read_matrix_market(options->matrix_file);
    } catch (const std::exception& e) {
      std::cerr << "basalt-perf: " << e.what() << "\n";
      return 2;
    }
  }

  Kokkos::ScopeGuard kokkos;
  try {
    Context ctx;
    ctx.options = *options;
    ctx.input = std::move(input);
#if defined(BASALT_ENABLE_CUDA)
    ctx.backend = "cuda";
    ctx.on_gpu = true;
    const int device = Kokkos::DefaultExecutionSpace().cuda_device();
#else
    ctx.backend = "host";
    const int device = 0;
#endif
    if (options->portable) ctx.backend += "-portable";
    ctx.device = device_name();
    std::unique_ptr<EnergyCounter> energy;
    if (options->energy) {
      energy = open_energy_counter(ctx.on_gpu, device);
      if (!energy)
        std::cerr << "basalt-perf: no energy counter can be read here; energy_j is n/a\n";
      ctx.energy = energy.get();
    }
    const std::string timing = options->back_to_back
                                   ? "median of " + std::to_string(Options::back_to_back_rounds) +
                                         " rounds of " + std::to_string(options->niter) +
                                         " calls back to back"
                                   : "median of " + std::to_string(options->niter) + " runs";
    std::printf("# basalt-perf on %s (%s), %s\n", ctx.device.c_str(), ctx.backend.c_str(),
                timing.c_str());
    print_header();
    std::vector<Row> rows;
    for (size_t p = 0; p < options->precisions.size(); ++p) {
      std::fprintf(stderr, "basalt-perf: %s %c (%zu/%zu)\n", options->routine.c_str(),
                   options->precisions[p], p + 1, options->precisions.size());
      runner->second(ctx, options->precisions[p], [&](Row row) {
        row.prec = options->precisions[p];
        print_row(row);
        rows.push_back(row);
      });
    }
    if (!options->csv.empty()) write_csv(options->csv, rows);
    if (!options->json.empty()) write_json(options->json, rows);
  } catch (const std::exception& e) {
    std::cerr << "basalt-perf: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
