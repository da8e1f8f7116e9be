#include "options.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <stdexcept>

namespace basalt::perf {

namespace {

long parse_positive(const std::string& text) {
  size_t used = 0;
  long value = -1;
  try {
    value = std::stol(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || value < 0)
    throw std::invalid_argument("'" + text + "' is not a non-negative integer");
  return value;
}

}  // namespace

std::vector<long> parse_range(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t colon; (colon = text.find(':', start)) != std::string::npos; start = colon + 1)
    parts.push_back(text.substr(start, colon - start));
  parts.push_back(text.substr(start));
  if (parts.size() > 3)
    throw std::invalid_argument("range '" + text + "' has more than start:stop:step");
  const long first = parse_positive(parts[0]);
  const long last = parts.size() > 1 ? parse_positive(parts[1]) : first;
  const long step = parts.size() > 2 ? parse_positive(parts[2]) : std::max(first, 1L);
  if (last < first) throw std::invalid_argument("range '" + text + "' ends before it starts");
  if (step <= 0) throw std::invalid_argument("range '" + text + "' needs a positive step");
  std::vector<long> values;
  for (long v = first; v <= last; v += step) values.push_back(v);
  return values;
}

std::optional<Options> parse(int argc, char** argv, int& exit_code) {
  Options o;
  CLI::App app{"basalt-perf: Basalt beside the vendor library, one CSV row per case"};
  std::string precisions = "d", n_range, m_range;
  app.add_option("--routine", o.routine,
                 "routine to time (copy, gemm, getrf, potrf, geqrf, ormqr, laswp, getrf_batched, "
                 "potrf_batched, geqrf_batched, spmv, spmm, lobpcg)")
      ->required();
  app.add_option("--prec", precisions, "precisions, any of s,d,c,z (default d)");
  app.add_option("--n", n_range, "sizes, start:stop:step");
  app.add_option("--m", m_range, "row counts, start:stop:step (default: m = n)");
  app.add_option("--nrhs", o.nrhs, "right-hand sides")->check(CLI::PositiveNumber);
  app.add_option("--batch", o.batch, "matrices per batch (the batched routines)")
      ->check(CLI::PositiveNumber);
  app.add_option("--matrix", o.matrix_file, "Matrix Market input")->check(CLI::ExistingFile);
  app.add_option("--niter", o.niter, "timed runs per case (median reported)")
      ->check(CLI::Range(1, 1000));
  app.add_flag("--check", o.check, "compute the residual of every case");
  app.add_flag("--back-to-back", o.back_to_back,
               "time --niter calls enqueued back to back with one fence for all, less as many "
               "input restores alone (the vendor baseline's method), the median of " +
                   std::to_string(Options::back_to_back_rounds) + " rounds");
  app.add_flag("--vendor", o.vendor, "time the vendor library in the same run");
  app.add_flag("--energy", o.energy, "read the energy counters (NVML, RAPL)");
  app.add_flag("--portable", o.portable, "force the portable implementation");
  app.add_option("--nb", o.nb,
                 "getrf, potrf, geqrf, ormqr: outer block width instead of the library's")
      ->check(CLI::PositiveNumber);
  app.add_option("--recursion-width", o.recursion_width,
                 "getrf, potrf, geqrf: width at which the recursive panel stops halving")
      ->check(CLI::PositiveNumber);
  app.add_option("--leaf-rows", o.leaf_rows,
                 "potrf: panels of at most this many rows go leaf by leaf (0: none) instead of "
                 "the library's tuning")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--queued", o.queued,
               "potrf: queue every call's work, none recorded and replayed as a CUDA graph");
  app.add_flag("--breakdown", o.breakdown,
               "print where one more (fenced) call spends its time, by building block");
  app.add_flag("--kokkos-kernels", o.kokkos_kernels,
               "getrf_batched: compare with KokkosBatched::SerialLU (no pivoting, one matrix per "
               "thread) on diagonally dominant input");
  app.add_flag("--variable", o.variable,
               "batched routines: a variable-size batch, each matrix of a size drawn from 1..n");
  app.add_option("--format", o.format, "spmv, spmm: the sparse format (csr, ell, sellp)")
      ->check(CLI::IsMember({"csr", "ell", "sellp"}));
  app.add_option("--slice-size", o.slice_size, "spmv, spmm: SELL-P slice height (a power of two)")
      ->check(CLI::PositiveNumber);
  app.add_option("--alignment", o.alignment, "spmv, spmm: SELL-P slice widths' multiple")
      ->check(CLI::PositiveNumber);
  app.add_option("--layout", o.layout,
                 "spmm: the vectors row-major (row, default) or column-major (col)")
      ->check(CLI::IsMember({"col", "row"}));
  app.add_option("--generator", o.generator,
                 "spmv, spmm, lobpcg: the --n^3-row matrix, the 3D Laplacian (laplacian) or "
                 "power-law row lengths (power-law)")
      ->check(CLI::IsMember({"laplacian", "power-law"}));
  app.add_option("--csv", o.csv, "write the rows to this CSV file");
  app.add_option("--json", o.json, "write the rows to this JSON file");
  try {
    app.parse(argc, argv);
    for (const char* p = precisions.c_str(); *p; ++p) {
      if (*p == ',') continue;
      if (std::string("sdcz").find(*p) == std::string::npos)
        throw std::invalid_argument(std::string("unknown precision '") + *p + "' (s, d, c or z)");
      o.precisions.push_back(*p);
    }
    if (o.precisions.empty()) throw std::invalid_argument("--prec names no precision");
    if (!n_range.empty()) o.n = parse_range(n_range);
    if (!m_range.empty()) o.m = parse_range(m_range);
    if (!o.m.empty() && !o.n.empty() && o.m.size() != o.n.size() && o.m.size() != 1 &&
        o.n.size() != 1)
      throw std::invalid_argument("--m and --n must give as many values, or one of them one");
  } catch (const CLI::CallForHelp& e) {
    exit_code = app.exit(e);
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    std::cerr << "basalt-perf: " << e.what() << "\n";
    exit_code = 2;
    return std::nullopt;
  } catch (const std::invalid_argument& e) {
    std::cerr << "basalt-perf: " << e.what() << "\n";
    exit_code = 2;
    return std::nullopt;
  }
  return o;
}

}  // namespace basalt::perf
