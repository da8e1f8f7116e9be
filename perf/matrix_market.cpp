#include "matrix_market.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace basalt::perf {

namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return text;
}

}  // namespace

DenseInput read_matrix_market(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read '" + path + "'");
  auto fail = [&path](const std::string& why) {
    return std::runtime_error("'" + path +
                              "' is not a Matrix Market file basalt-perf reads: " + why);
  };
  std::string line;
  std::getline(in, line);
  std::istringstream header(lower(line));
  std::string banner, object, format, field, symmetry;
  header >> banner >> object >> format >> field >> symmetry;
  if (banner != "%%matrixmarket" || object != "matrix")
    throw fail("no %%MatrixMarket matrix banner");
  if (format != "array" && format != "coordinate") throw fail("format '" + format + "'");
  if (field != "real" && field != "integer" && field != "complex" && field != "pattern")
    throw fail("field '" + field + "'");
  if (symmetry != "general" && symmetry != "symmetric" && symmetry != "skew-symmetric" &&
      symmetry != "hermitian")
    throw fail("symmetry '" + symmetry + "'");
  if (format == "array" && field == "pattern") throw fail("a pattern array");
  while (std::getline(in, line) && (line.empty() || line[0] == '%')) {
  }
  std::istringstream sizes(line);
  DenseInput a;
  long entries = 0;
  if (!(sizes >> a.m >> a.n) || a.m < 0 || a.n < 0) throw fail("no matrix size");
  if (format == "coordinate" && !(sizes >> entries)) throw fail("no entry count");
  if (a.m * a.n > (1L << 31)) throw fail("more than 2^31 entries once dense");
  a.values.assign(a.m * a.n, 0.0);

  auto read_value = [&](std::istream& s) {
    double re = 1, im = 0;
    if (field != "pattern" && !(s >> re)) throw fail("a missing value");
    if (field == "complex" && !(s >> im)) throw fail("a missing imaginary part");
    return std::complex<double>(re, im);
  };
  auto mirror = [&](long i, long j, std::complex<double> v) {
    if (i == j || symmetry == "general") return;
    a.values[j + i * a.m] = symmetry == "symmetric"   ? v
                            : symmetry == "hermitian" ? std::conj(v)
                                                      : -v;
  };
  if (format == "array") {
    const bool stored_lower = symmetry != "general";
    for (long j = 0; j < a.n; ++j)
      for (long i = stored_lower ? j + (symmetry == "skew-symmetric") : 0; i < a.m; ++i) {
        const auto v = read_value(in);
        a.values[i + j * a.m] = v;
        mirror(i, j, v);
      }
  } else {
    for (long e = 0; e < entries; ++e) {
      long i = 0, j = 0;
      if (!(in >> i >> j)) throw fail("entry " + std::to_string(e + 1) + " is missing");
      if (i < 1 || i > a.m || j < 1 || j > a.n)
        throw fail("entry (" + std::to_string(i) + ", " + std::to_string(j) +
                   ") is outside the matrix");
      const auto v = read_value(in);
      a.values[(i - 1) + (j - 1) * a.m] = v;
      mirror(i - 1, j - 1, v);
    }
  }
  return a;
}

}  // namespace basalt::perf
