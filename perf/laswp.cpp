// laswp: every row of an m x n column-major matrix permuted by getrf-like pivots (row k swapped
// with a random row at or below it), reported in GB/s: each row read once and written once.
#include "basalt/algorithms/dense/laswp.hpp"

#include "basalt/backends/host/lapacke.hpp"
#include "basalt/core/flops.hpp"
#include "measure.hpp"
#if defined(BASALT_ENABLE_CUDA)
#include "basalt/backends/cuda/cusolver.hpp"
#endif

#include <Kokkos_Random.hpp>
#include <cmath>
#include <random>

namespace basalt::perf {

namespace {

template <class T>
struct LaswpCases {
  static void run(const Context& ctx, const Emit& emit) {
    for (const auto [m, n] : shapes(ctx, 8192)) emit(one(ctx, m, n));
  }

  static Row one(const Context& ctx, long m, long n) {
    using Exec = Kokkos::DefaultExecutionSpace;
    const Exec exec;
    const Matrix<T> original = input_matrix<T>(ctx, m, n);
    Matrix<T> A(Kokkos::view_alloc(Kokkos::WithoutInitializing, "A"), m, n);

    const int k2 = static_cast<int>(m);
    auto host_ipiv = Kokkos::View<int*, Kokkos::HostSpace>("ipiv", k2);
    std::mt19937 rng(std::random_device{}());
    for (int k = 0; k < k2; ++k) host_ipiv(k) = std::uniform_int_distribution<int>(k + 1, k2)(rng);
    auto ipiv = Kokkos::create_mirror_view_and_copy(Exec::memory_space(), host_ipiv);

    auto restore = [&] { Kokkos::deep_copy(exec, A, original); };
    const Timing ours = measure(ctx, restore, [&] {
      if (ctx.options.portable)
        portable::laswp(exec, A, ipiv, 1, k2, Direction::forward);
      else
        laswp(exec, A, ipiv, 1, k2);
    });
    const double bytes = flops::laswp_bytes<T>(m, n);

    Row row = timed_row(ctx, "laswp", m, n, ours, bytes);
    if (ctx.options.check) row.residual = residual(A, original, host_ipiv);

    if (ctx.options.vendor) {
#if defined(BASALT_ENABLE_CUDA)
      cusolver::Handle handle(exec);
      const Timing vendor = measure(ctx, restore, [&] { cusolver::laswp(handle, A, ipiv, 1, k2); });
      row.vendor = "cuSOLVER";
#else
      const Timing vendor = measure(ctx, restore, [&] { lapacke::laswp(A, ipiv, 1, k2); });
      row.vendor = "LAPACKE";
#endif
      set_vendor_timing(row, vendor, bytes);
    }
    return row;
  }

  // ||result - P A||_F / (||A||_F eps), with P A from LAPACKE: zero when every row landed.
  static double residual(const Matrix<T>& result, const Matrix<T>& original,
                         const Kokkos::View<int*, Kokkos::HostSpace>& ipiv) {
    auto expected = Kokkos::create_mirror(Kokkos::HostSpace(), original);  // never an alias
    Kokkos::deep_copy(expected, original);
    lapacke::laswp(expected, ipiv, 1, static_cast<int>(ipiv.extent(0)));
    auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), result);
    auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), original);
    double diff = 0, norm = 0;
    for (size_t j = 0; j < got.extent(1); ++j)
      for (size_t i = 0; i < got.extent(0); ++i) {
        const double d = magnitude(got(i, j) - expected(i, j)), x = magnitude(a(i, j));
        diff += d * d;
        norm += x * x;
      }
    return std::sqrt(diff) / (std::sqrt(norm) * std::numeric_limits<real_t<T>>::epsilon());
  }
};

}  // namespace

void run_laswp(const Context& ctx, char prec, const Emit& emit) {
  with_precision<LaswpCases>(prec, ctx, emit);
}

}  // namespace basalt::perf
