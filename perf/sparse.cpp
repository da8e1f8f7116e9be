// spmv and spmm: y = A x and Y = A X (alpha = 1, beta = 0) on the --generator matrix of --n^3
// rows (the 3D 7-point Laplacian of an --n^3 grid, or power-law row lengths) or on a --matrix
// file, in the --format given (csr, ell, sellp). Gflop/s count 2 nnz k (stored padding
// excluded); the vendor is cuSPARSE's generic CSR SpMV or SpMM on CUDA. For spmv a comment line
// also gives the bandwidth bound: the bytes the format must move (stored values and indices,
// the row or slice pointers, x read, y written) over the device copy rate measured in the same
// run.
//
// lobpcg: time and energy per iteration of basalt::lobpcg (the --nrhs smallest eigenpairs with
// the default guard vectors, no preconditioner, 20 iterations from the same random block) on the
// same matrices, for the host and GPU builds of the same code side by side.
#include <Kokkos_Random.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "basalt/algorithms/sparse/convert.hpp"
#include "basalt/algorithms/sparse/lobpcg.hpp"
#include "basalt/algorithms/sparse/matrix_market.hpp"
#include "basalt/algorithms/sparse/spmv.hpp"
#include "measure.hpp"
#if defined(BASALT_ENABLE_CUDA)
#include "basalt/backends/cuda/cusparse.hpp"
#endif

namespace basalt::perf {

namespace {

using Exec = Kokkos::DefaultExecutionSpace;

// The 7-point Laplacian of an edge^3 grid (Dirichlet boundary), rows in lexicographic order.
template <class T>
Csr<T> laplacian_3d(long edge) {
  const long n = edge * edge * edge;
  if (n >= std::numeric_limits<int>::max() / 7)
    throw std::invalid_argument("--n " + std::to_string(edge) + " gives too many entries for int");
  Csr<T, int, Kokkos::HostSpace> host;
  host.num_rows = host.num_cols = static_cast<int>(n);
  Kokkos::View<int*, Kokkos::HostSpace> row_map("row_map", n + 1);
  std::vector<int> entries;
  std::vector<T> values;
  entries.reserve(7 * n);
  values.reserve(7 * n);
  for (long z = 0; z < edge; ++z)
    for (long y = 0; y < edge; ++y)
      for (long x = 0; x < edge; ++x) {
        const long row = x + edge * (y + edge * z);
        auto add = [&](long column, double value) {
          entries.push_back(static_cast<int>(column));
          values.push_back(T(value));
        };
        if (z > 0) add(row - edge * edge, -1);
        if (y > 0) add(row - edge, -1);
        if (x > 0) add(row - 1, -1);
        add(row, 6);
        if (x + 1 < edge) add(row + 1, -1);
        if (y + 1 < edge) add(row + edge, -1);
        if (z + 1 < edge) add(row + edge * edge, -1);
        row_map(row + 1) = static_cast<int>(entries.size());
      }
  host.row_map = row_map;
  host.entries = Kokkos::View<int*, Kokkos::HostSpace>(entries.data(), entries.size());
  host.values = Kokkos::View<T*, Kokkos::HostSpace>(values.data(), values.size());
  return copy_to<Exec::memory_space>(host);
}

// edge^3 rows whose lengths follow a power law, P(length >= k) = 1 / k (length = floor(1 / u), u
// uniform in (0, 1], at most the column count): most rows of one or two entries, about ln(rows)
// on average, a few rows covering a large share of the columns. Columns uniform (duplicates
// merged), values in [-1, 1], from one fixed seed.
template <class T>
Csr<T> power_law(long edge) {
  const long n = edge * edge * edge;
  std::mt19937_64 engine(20261122);
  std::uniform_real_distribution<double> unit(0.0, 1.0), value(-1.0, 1.0);
  std::uniform_int_distribution<int> column(0, static_cast<int>(n - 1));
  Csr<T, int, Kokkos::HostSpace> host;
  host.num_rows = host.num_cols = static_cast<int>(n);
  Kokkos::View<int*, Kokkos::HostSpace> row_map("row_map", n + 1);
  std::vector<int> entries;
  std::vector<T> values;
  for (long row = 0; row < n; ++row) {
    const double length = std::min<double>(n, std::floor(1 / (1 - unit(engine))));
    const size_t first = entries.size();
    if (length > n / 4) {  // a long row: each column with chance length / n
      for (int c = 0; c < n; ++c)
        if (unit(engine) * n < length) entries.push_back(c);
    } else {
      for (long e = 0; e < length; ++e) entries.push_back(column(engine));
      std::sort(entries.begin() + first, entries.end());
      entries.erase(std::unique(entries.begin() + first, entries.end()), entries.end());
    }
    if (entries.size() >= static_cast<size_t>(std::numeric_limits<int>::max()))
      throw std::invalid_argument("--n " + std::to_string(edge) +
                                  " gives too many entries for int");
    for (size_t e = first; e < entries.size(); ++e) {
      if constexpr (std::is_floating_point_v<T>)
        values.push_back(T(value(engine)));
      else
        values.push_back(T(value(engine), value(engine)));
    }
    row_map(row + 1) = static_cast<int>(entries.size());
  }
  host.row_map = row_map;
  host.entries = Kokkos::View<int*, Kokkos::HostSpace>(entries.data(), entries.size());
  host.values = Kokkos::View<T*, Kokkos::HostSpace>(values.data(), values.size());
  return copy_to<Exec::memory_space>(host);
}

// The --generator's matrix of edge^3 rows.
template <class T>
Csr<T> generated(const Context& ctx, long edge) {
  return ctx.options.generator == "power-law" ? power_law<T>(edge) : laplacian_3d<T>(edge);
}

// The --matrix file, or one generated matrix per --n (100 when none is given).
template <class T, class Case>
void each_matrix(const Context& ctx, const Emit& emit, const Case& one) {
  if (!ctx.options.matrix_file.empty())
    return emit(one(ctx, basalt::read_matrix_market<T>(ctx.options.matrix_file)));
  for (const long edge : ctx.options.n.empty() ? std::vector<long>{100} : ctx.options.n)
    emit(one(ctx, generated<T>(ctx, edge)));
}

// ELL pads every row to the longest: refused where that would store over 16 times the entries
// (the power-law matrix at any size worth timing), before the allocation.
template <class T>
void check_ell_padding(const Csr<T>& A) {
  const auto row_map = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A.row_map);
  long longest = 0;
  for (int i = 0; i < A.num_rows; ++i)
    longest = std::max<long>(longest, row_map(i + 1) - row_map(i));
  if (static_cast<double>(longest) * A.num_rows > 16.0 * std::max<double>(A.nnz(), 1))
    throw std::invalid_argument("--format ell would store " + std::to_string(longest) + " x " +
                                std::to_string(A.num_rows) + " entries for " +
                                std::to_string(A.nnz()) + "; use csr or sellp");
}

// max_i |y_i - (A X)_i| / (eps max_i sum_j |a_ij| |x_j|), the reference on the host in double.
template <class T, class XView, class YView>
double residual(const Csr<T>& A, const XView& X, const YView& Y) {
  const auto a = copy_to<Kokkos::HostSpace>(A);
  auto x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), X);
  auto y = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Y);
  double worst = 0, scale = 0;
  for (size_t j = 0; j < y.extent(1); ++j)
    for (int i = 0; i < a.num_rows; ++i) {
      Kokkos::complex<double> sum = 0;
      double size = 0;
      for (int at = a.row_map(i); at < a.row_map(i + 1); ++at) {
        const Kokkos::complex<double> product =
            Kokkos::complex<double>(a.values(at)) * Kokkos::complex<double>(x(a.entries(at), j));
        sum += product;
        size += Kokkos::abs(product);
      }
      worst = std::max(worst, Kokkos::abs(Kokkos::complex<double>(y(i, j)) - sum));
      scale = std::max(scale, size);
    }
  return scale == 0 ? worst : worst / (scale * std::numeric_limits<real_t<T>>::epsilon());
}

// The device copy rate in GB/s (read plus written) on a buffer of about `bytes`.
double copy_rate(const Context& ctx, double bytes) {
  const size_t count = std::max<size_t>(1, static_cast<size_t>(bytes / 2 / sizeof(double)));
  Kokkos::View<double*, Exec::memory_space> from("from", count), to("to", count);
  const Exec exec;
  const Timing t = measure(
      ctx, [] {}, [&] { Kokkos::deep_copy(exec, to, from); });
  return 2.0 * count * sizeof(double) / t.ms * 1e-6;
}

template <class T>
struct SparseCases {
  static void run(const Context& ctx, const Emit& emit) { each_matrix<T>(ctx, emit, one); }

  static Row one(const Context& ctx, const Csr<T>& A) {
    if (ctx.options.layout == "row") return with_layout<Kokkos::LayoutRight>(ctx, A);
    return with_layout<Kokkos::LayoutLeft>(ctx, A);
  }

  template <class Layout>
  static Row with_layout(const Context& ctx, const Csr<T>& A) {
    const Exec exec;
    const bool multiple = ctx.options.routine == "spmm";
    const long k = multiple ? ctx.options.nrhs : 1;
    Kokkos::View<T**, Layout, Exec::memory_space> X("X", A.num_cols, k), Y("Y", A.num_rows, k);
    Kokkos::Random_XorShift64_Pool<Exec> pool(12345);
    Kokkos::fill_random(X, pool, T(-1), T(1));
    const auto x = Kokkos::subview(X, Kokkos::ALL, 0);
    const auto y = Kokkos::subview(Y, Kokkos::ALL, 0);

    const std::string& format = ctx.options.format;
    Row row;
    double moved = 0;  // bytes the format must move for one SpMV
    auto time_format = [&](const auto& M, double index_bytes, double stored) {
      const Timing t = measure(
          ctx, [] {},
          [&] {
            if (multiple)
              spmm(exec, T(1), M, X, T(0), Y);
            else
              spmv(exec, T(1), M, x, T(0), y);
          });
      row =
          timed_row(ctx, ctx.options.routine.c_str(), A.num_rows, A.num_cols, t, 2.0 * A.nnz() * k);
      moved = stored * (sizeof(T) + sizeof(int)) + index_bytes +
              (static_cast<double>(A.num_cols) + A.num_rows) * sizeof(T);
    };
    if (format == "csr") {
      time_format(A, (A.num_rows + 1.0) * sizeof(int), A.nnz());
    } else if (format == "ell") {
      check_ell_padding(A);
      const auto ell = to_ell(exec, A);
      time_format(ell, 0, ell.stored());
    } else {
      const auto sellp = to_sellp(exec, A, static_cast<int>(ctx.options.slice_size),
                                  static_cast<int>(ctx.options.alignment));
      time_format(sellp, (sellp.num_slices() + 1.0) * sizeof(int), sellp.stored());
    }
    row.nrhs = k;
    if (ctx.options.check) row.residual = residual(A, X, Y);
    if (!multiple) {
      const double rate = copy_rate(ctx, moved);
      const double bound_ms = moved / rate * 1e-6;
      std::printf(
          "# spmv %s %s: %.3g MB to move, bound %.4g ms at the copy rate %.0f GB/s; %.0f%% "
          "of the bound\n",
          format.c_str(), ctx.backend.c_str(), moved * 1e-6, bound_ms, rate,
          100 * bound_ms / row.time_ms);
    }

    if (ctx.options.vendor) {
#if defined(BASALT_ENABLE_CUDA)
      cusparse::Handle handle(exec);
      const cusparse::CsrDescriptor descriptor(A.num_rows, A.num_cols, A.row_map, A.entries,
                                               A.values);
      Timing vendor;
      if (multiple) {
        const cusparse::Spmm<T> product(handle, descriptor, X, Y, T(1), T(0));
        vendor = measure(
            ctx, [] {}, [&] { product(); });
      } else {
        const cusparse::Spmv<T> product(handle, descriptor, x, y, T(1), T(0));
        vendor = measure(
            ctx, [] {}, [&] { product(); });
      }
      row.vendor = "cuSPARSE-csr";
      set_vendor_timing(row, vendor, 2.0 * A.nnz() * k);
#else
      row.vendor = "n/a";
#endif
    }
    return row;
  }
};

template <class T>
struct LobpcgCases {
  static void run(const Context& ctx, const Emit& emit) { each_matrix<T>(ctx, emit, one); }

  static Row one(const Context& ctx, const Csr<T>& A) {
    const Exec exec;
    const long n = A.num_rows, k = ctx.options.nrhs;
    Matrix<T> start("X0", n, k), X("X", n, k);
    Kokkos::Random_XorShift64_Pool<Exec> pool(12345);
    Kokkos::fill_random(start, pool, T(-1), T(1));
    LobpcgOptions options;
    options.tolerance = std::numeric_limits<double>::min();  // never met: a fixed iteration count
    options.max_iterations = 20;
    int iterations = 1;
    const Timing t = measure(
        ctx, [&] { Kokkos::deep_copy(X, start); },
        [&] { iterations = std::max(1, lobpcg(exec, A, X, options).iterations); });
    Timing per_iteration{t.ms / iterations, std::nullopt};
    if (t.joules) per_iteration.joules = *t.joules / iterations;
    // The dominant terms, for the block of k pairs and its guard columns (b in all): A W, the
    // two 3b x 3b Gram products, the X and P updates (of the block and of A times it), the W and
    // P orthonormalization; complex counted 4x.
    const double b = k + std::min<long>(options.guard_vectors, n / 3 - k), q = 3 * b;
    const double work = (2.0 * A.nnz() * b + 4 * n * q * q + 4 * n * q * b + 4 * n * (q - b) * b +
                         10.0 * n * b * b) *
                        (std::is_floating_point_v<T> ? 1 : 4);
    Row row = timed_row(ctx, "lobpcg", n, n, per_iteration, work);
    row.nrhs = k;
    if (ctx.options.vendor) row.vendor = "n/a";
    return row;
  }
};

}  // namespace

void run_lobpcg(const Context& ctx, char prec, const Emit& emit) {
  with_precision<LobpcgCases>(prec, ctx, emit);
}

void run_spmv(const Context& ctx, char prec, const Emit& emit) {
  with_precision<SparseCases>(prec, ctx, emit);
}

void run_spmm(const Context& ctx, char prec, const Emit& emit) {
  with_precision<SparseCases>(prec, ctx, emit);
}

}  // namespace basalt::perf
