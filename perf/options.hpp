#pragma once
// basalt-perf's command line, after MAGMA's testers.
#include <optional>
#include <string>
#include <vector>

namespace basalt::perf {

struct Options {
  std::string routine;
  std::vector<char> precisions;  // s, d, c, z
  std::vector<long> n;           // from --n start:stop:step
  std::vector<long> m;           // --m; empty: m = n
  long nrhs = 1;
  long batch = 1;
  std::string matrix_file;
  int niter = 5;
  bool check = false;
  bool back_to_back = false;  // calls timed back to back, one fence for all (throughput)
  static constexpr int back_to_back_rounds = 5;  // the median of these is reported
  bool vendor = false;
  bool energy = false;
  bool portable = false;
  bool breakdown = false;
  bool queued = false;  // potrf: no call recorded (core/recorded_call.hpp)
  int nb = 0,
      recursion_width = 0;  // getrf, potrf, geqrf: 0 is the library's tuning (core/tuning.hpp)
  int leaf_rows = -1;       // potrf: panels of at most this many rows leaf by leaf; -1: tuning's
  bool variable = false;    // batched routines: sizes drawn from 1..n per matrix
  bool kokkos_kernels = false;  // getrf_batched: KokkosBatched's SerialLU as the comparison

  // spmv, spmm: the format (csr, ell, sellp), SELL-P's slice height and width multiple, and
  // the vectors row-major (row, the default: the layout of the paper and of the CUDA SELL-P
  // kernel) or column-major (col).
  std::string format = "sellp";
  long slice_size = 32, alignment = 4;
  std::string layout = "row";
  std::string generator = "laplacian";  // spmv, spmm, lobpcg: laplacian or power-law rows

  std::string csv, json;
};

// Parses argv; on a bad command line prints one line to stderr and returns nothing.
// exit_code is 0 for --help, 2 for errors.
std::optional<Options> parse(int argc, char** argv, int& exit_code);

// "start:stop:step", "start:stop" (step = start) or a single value; all positive.
std::vector<long> parse_range(const std::string& text);

}  // namespace basalt::perf
