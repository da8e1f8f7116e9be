#pragma once
// Matrix Market input for basalt-perf's --matrix: dense "array" files and sparse "coordinate"
// files (general, symmetric, skew-symmetric or Hermitian), read into a dense column-major
// matrix for the dense routines.
#include <complex>
#include <string>
#include <vector>

namespace basalt::perf {

struct DenseInput {
  long m = 0, n = 0;
  std::vector<std::complex<double>> values;  // column-major, m * n
  std::complex<double> operator()(long i, long j) const { return values[i + j * m]; }
};

// Throws std::runtime_error with a one-line reason for an unreadable or malformed file.
DenseInput read_matrix_market(const std::string& path);

}  // namespace basalt::perf
