#pragma once
// Matrix Market coordinate files <-> Csr.
//
//   auto A = basalt::read_matrix_market<double>(path);     // Csr<double> in device memory
//   basalt::write_matrix_market(path, A);
//
// Reading takes fields real, integer, complex and pattern (entries of 1) and symmetries
// general, symmetric, skew-symmetric and hermitian, whose files must hold the lower triangle
// only (the format's rule; skew-symmetric without a diagonal): the upper triangle is mirrored.
// Each row's columns come out sorted; duplicate entries are summed. A complex file into a real
// scalar is refused. A malformed file throws basalt::InvalidArgument (a std::invalid_argument)
// naming the file and the line. Kokkos Kernels 3.4's reader aborts on malformed input instead
// of throwing, hence our own.
//
// Writing gives a general coordinate file, real or complex after the scalar, with every digit
// needed to read the same values back.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <complex>
#include <cstdint>
#include <fstream>
#include <iomanip>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "basalt/algorithms/sparse/formats.hpp"
#include "basalt/core/errors.hpp"

namespace basalt {

namespace impl {

class MatrixMarketLines {
 public:
  MatrixMarketLines(std::istream& in, std::string name) : in_(in), name_(std::move(name)) {}

  // The next line that is not blank (nor a comment, when comments are allowed there).
  bool next(std::string& line, bool skip_comments) {
    while (std::getline(in_, line)) {
      ++number_;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.find_first_not_of(" \t") == std::string::npos) continue;
      if (skip_comments && line[0] == '%') continue;
      return true;
    }
    return false;
  }

  [[noreturn]] void fail(const std::string& why) const {
    throw InvalidArgument("read_matrix_market", "file",
                          name_ + ":" + std::to_string(number_) + ": " + why);
  }

 private:
  std::istream& in_;
  std::string name_;
  long number_ = 0;
};

inline std::string to_lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

template <class Scalar>
Scalar from_complex(const std::complex<double>& v) {
  if constexpr (std::is_floating_point_v<Scalar>)
    return static_cast<Scalar>(v.real());
  else
    return Scalar(v.real(), v.imag());
}

}  // namespace impl

template <class Scalar, class Ordinal = int,
          class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space, class Offset = Ordinal>
Csr<Scalar, Ordinal, MemorySpace, Offset> read_matrix_market(std::istream& in,
                                                             const std::string& name = "input") {
  impl::MatrixMarketLines lines(in, name);
  std::string line;
  if (!lines.next(line, false)) lines.fail("empty file, no %%MatrixMarket banner");
  std::istringstream banner_line(impl::to_lower(line));
  std::string banner, object, format, field, symmetry, extra;
  banner_line >> banner >> object >> format >> field >> symmetry;
  if (banner != "%%matrixmarket" || object != "matrix")
    lines.fail("no '%%MatrixMarket matrix' banner");
  if (format != "coordinate") lines.fail("format '" + format + "' is not 'coordinate'");
  if (field != "real" && field != "integer" && field != "complex" && field != "pattern")
    lines.fail("field '" + field + "' is not real, integer, complex or pattern");
  if (symmetry != "general" && symmetry != "symmetric" && symmetry != "skew-symmetric" &&
      symmetry != "hermitian")
    lines.fail("symmetry '" + symmetry +
               "' is not general, symmetric, skew-symmetric or hermitian");
  if (banner_line >> extra) lines.fail("unexpected '" + extra + "' after the banner");
  if (field == "complex" && std::is_floating_point_v<Scalar>)
    lines.fail("a complex matrix cannot be read into a real scalar type");

  if (!lines.next(line, true)) lines.fail("no size line");
  std::istringstream size_line(line);
  long long rows = -1, cols = -1, count = -1;
  if (!(size_line >> rows >> cols >> count) || (size_line >> extra) || rows < 0 || cols < 0 ||
      count < 0)
    lines.fail("the size line must be three non-negative integers: rows, columns, entries");
  if (rows > std::numeric_limits<Ordinal>::max() - 1 || cols > std::numeric_limits<Ordinal>::max())
    lines.fail("the matrix is too large for the ordinal type");
  if (static_cast<unsigned long long>(count) >
      static_cast<unsigned long long>(std::numeric_limits<Offset>::max()))
    lines.fail("the size line announces " + std::to_string(count) +
               " entries, more than the offset type holds");
  if (symmetry != "general" && rows != cols) lines.fail("a " + symmetry + " matrix must be square");

  struct Entry {
    Ordinal row, col;
    std::complex<double> value;
  };
  std::vector<Entry> triplets;
  // The count is the file's word: one past memory must throw as a bad file, not as bad_alloc
  // or length_error (a symmetric file's twice count < 2^64, no wrap in size_t).
  try {
    triplets.reserve(static_cast<size_t>(count) * (symmetry == "general" ? 1 : 2));
  } catch (const std::exception&) {
    lines.fail("the size line announces " + std::to_string(count) +
               " entries, more than memory holds");
  }
  for (long long e = 0; e < count; ++e) {
    if (!lines.next(line, false))
      lines.fail("the file ends after " + std::to_string(e) + " of " + std::to_string(count) +
                 " entries");
    std::istringstream entry(line);
    long long i = 0, j = 0;
    double re = 1, im = 0;
    if (!(entry >> i >> j)) lines.fail("an entry must start with its row and column");
    bool ok = true;
    if (field == "integer") {
      long long integer = 0;
      ok = static_cast<bool>(entry >> integer);
      re = static_cast<double>(integer);
    } else if (field != "pattern") {
      ok = static_cast<bool>(entry >> re) && (field != "complex" || (entry >> im));
    }
    if (!ok) lines.fail("a " + field + " entry's value is missing or malformed");
    if (entry >> extra) lines.fail("unexpected '" + extra + "' after the entry");
    if (i < 1 || i > rows || j < 1 || j > cols)
      lines.fail("entry (" + std::to_string(i) + ", " + std::to_string(j) + ") is outside the " +
                 std::to_string(rows) + " x " + std::to_string(cols) + " matrix");
    if (symmetry != "general" && j > i)
      lines.fail("a " + symmetry + " file holds the lower triangle only, entry (" +
                 std::to_string(i) + ", " + std::to_string(j) + ") is above the diagonal");
    if (symmetry == "skew-symmetric" && i == j)
      lines.fail("a skew-symmetric file has no diagonal entries");
    const Ordinal r = static_cast<Ordinal>(i - 1), c = static_cast<Ordinal>(j - 1);
    const std::complex<double> value(re, im);
    triplets.push_back({r, c, value});
    if (r == c || symmetry == "general") continue;
    triplets.push_back({c, r,
                        symmetry == "symmetric"   ? value
                        : symmetry == "hermitian" ? std::conj(value)
                                                  : -value});
  }
  if (lines.next(line, false))
    lines.fail("more entries than the " + std::to_string(count) + " the size line announces");

  std::sort(triplets.begin(), triplets.end(), [](const Entry& a, const Entry& b) {
    return a.row != b.row ? a.row < b.row : a.col < b.col;
  });
  std::vector<Entry> merged;
  merged.reserve(triplets.size());
  for (const Entry& t : triplets) {
    if (!merged.empty() && merged.back().row == t.row && merged.back().col == t.col)
      merged.back().value += t.value;
    else
      merged.push_back(t);
  }
  require(merged.size() <= static_cast<size_t>(std::numeric_limits<Offset>::max()),
          "read_matrix_market", "file", name, " has more entries than the offset type holds");

  Csr<Scalar, Ordinal, Kokkos::HostSpace, Offset> host;
  host.num_rows = static_cast<Ordinal>(rows);
  host.num_cols = static_cast<Ordinal>(cols);
  Kokkos::View<Offset*, Kokkos::HostSpace> row_map("basalt::Csr::row_map", rows + 1);
  host.entries = Kokkos::View<Ordinal*, Kokkos::HostSpace>("basalt::Csr::entries", merged.size());
  host.values = Kokkos::View<Scalar*, Kokkos::HostSpace>("basalt::Csr::values", merged.size());
  for (size_t e = 0; e < merged.size(); ++e) {
    ++row_map(merged[e].row + 1);
    host.entries(e) = merged[e].col;
    host.values(e) = impl::from_complex<Scalar>(merged[e].value);
  }
  for (long long r = 0; r < rows; ++r) row_map(r + 1) += row_map(r);
  host.row_map = row_map;
  return copy_to<MemorySpace>(host);
}

template <class Scalar, class Ordinal = int,
          class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space, class Offset = Ordinal>
Csr<Scalar, Ordinal, MemorySpace, Offset> read_matrix_market(const std::string& path) {
  std::ifstream in(path);
  require(static_cast<bool>(in), "read_matrix_market", "path", "cannot open '", path, "'");
  return read_matrix_market<Scalar, Ordinal, MemorySpace, Offset>(in, path);
}

template <class Scalar, class Ordinal, class MemorySpace, class Offset>
void write_matrix_market(std::ostream& out, const Csr<Scalar, Ordinal, MemorySpace, Offset>& A) {
  const auto host = copy_to<Kokkos::HostSpace>(A);
  constexpr bool real = std::is_floating_point_v<Scalar>;
  out << "%%MatrixMarket matrix coordinate " << (real ? "real" : "complex") << " general\n"
      << host.num_rows << " " << host.num_cols << " " << host.nnz() << "\n"
      << std::setprecision(std::numeric_limits<real_t<Scalar>>::max_digits10);
  for (Ordinal r = 0; r < host.num_rows; ++r)
    for (Offset at = host.row_map(r); at < host.row_map(r + 1); ++at) {
      out << r + 1 << " " << host.entries(at) + 1 << " ";
      if constexpr (real)
        out << host.values(at) << "\n";
      else
        out << host.values(at).real() << " " << host.values(at).imag() << "\n";
    }
}

template <class Scalar, class Ordinal, class MemorySpace, class Offset>
void write_matrix_market(const std::string& path,
                         const Csr<Scalar, Ordinal, MemorySpace, Offset>& A) {
  std::ofstream out(path);
  require(static_cast<bool>(out), "write_matrix_market", "path", "cannot open '", path, "'");
  write_matrix_market(out, A);
  require(static_cast<bool>(out), "write_matrix_market", "path", "writing '", path, "' failed");
}

}  // namespace basalt
