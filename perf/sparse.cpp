// spmv and spmm: y = A x and Y = A X (alpha = 1, beta = 0) on the 3D 7-point Laplacian of an
// --n^3 grid or on a --matrix file, in the --format given (csr, ell, sellp). Gflop/s count
// 2 nnz k (stored padding excluded); the vendor is cuSPARSE's generic CSR SpMV or SpMM on CUDA.
// For spmv a comment line also gives the bandwidth bound: the bytes the format must move
// (stored values and indices, the row or slice pointers, x read, y written) over the device
// copy rate measured in the same run.
#include <Kokkos_Random.hpp>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "basalt/algorithms/sparse/convert.hpp"
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
  static void run(const Context& ctx, const Emit& emit) {
    if (!ctx.options.matrix_file.empty())
      return emit(one(ctx, basalt::read_matrix_market<T>(ctx.options.matrix_file)));
    for (const long edge : ctx.options.n.empty() ? std::vector<long>{100} : ctx.options.n)
      emit(one(ctx, laplacian_3d<T>(edge)));
  }

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
      row.vendor_time_ms = vendor.ms;
      row.vendor_gflops = 2.0 * A.nnz() * k / vendor.ms * 1e-6;
#else
      row.vendor = "n/a";
#endif
    }
    return row;
  }
};

}  // namespace

void run_spmv(const Context& ctx, char prec, const Emit& emit) {
  with_precision<SparseCases>(prec, ctx, emit);
}

void run_spmm(const Context& ctx, char prec, const Emit& emit) {
  with_precision<SparseCases>(prec, ctx, emit);
}

}  // namespace basalt::perf
