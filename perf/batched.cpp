// getrf_batched, potrf_batched, geqrf_batched: --batch m x n matrices (make_batch's layout,
// square for LU and Cholesky) factored in one call, in Gflop/s (LAWN 41 counts times the batch),
// beside cuBLAS getrfBatched / cuSOLVER potrfBatched (lower) / cuBLAS geqrfBatched, or a loop of
// LAPACKE calls on the host. --check reports the largest backward error of the first few
// matrices, in units of eps: ||PA - LU|| / (n ||A||), ||A - LL^H|| / (n ||A||) and
// ||A^H A - R^H R|| / (n ||A||^2).
#include "basalt/algorithms/batched/geqrf_batched.hpp"
#include "basalt/algorithms/batched/getrf_batched.hpp"
#include "basalt/algorithms/batched/potrf_batched.hpp"
#include "basalt/backends/host/lapacke.hpp"
#include "basalt/core/flops.hpp"
#include "measure.hpp"
#if defined(BASALT_ENABLE_CUDA)
#include "basalt/backends/cuda/batched_vendor.hpp"
#endif

#include <Kokkos_Random.hpp>
#include <cmath>
#include <random>

namespace basalt::perf {

namespace {

enum class Factorization { lu, cholesky, qr };

template <class T, Factorization F>
struct BatchedCases {
  static constexpr const char* name = F == Factorization::lu         ? "getrf_batched"
                                      : F == Factorization::cholesky ? "potrf_batched"
                                                                     : "geqrf_batched";
  using Exec = Kokkos::DefaultExecutionSpace;
  using Wide = Kokkos::complex<double>;

  static void run(const Context& ctx, const Emit& emit) {
    require(!ctx.input, "basalt-perf", "--matrix", "the batched routines take random input");
    for (const auto [m, n] : shapes(ctx, 32)) emit(one(ctx, F == Factorization::qr ? m : n, n));
  }

  static double flops_per_matrix(long m, long n) {
    if constexpr (F == Factorization::lu) return flops::getrf<T>(m, n);
    if constexpr (F == Factorization::cholesky) return flops::potrf<T>(n);
    return flops::geqrf<T>(m, n);
  }

  // Uniform random entries in [-1, 1]; for Cholesky made Hermitian with n added to the
  // diagonal, hence positive definite.
  static BatchView<T> input(long count, long m, long n) {
    auto batch = make_batch<T>("original", count, m, n);
    Kokkos::Random_XorShift64_Pool<Exec> pool(std::random_device{}());
    Kokkos::fill_random(batch, pool, T(-1), T(1));
    if constexpr (F == Factorization::cholesky) {
      Kokkos::parallel_for(
          "basalt-perf::hermitian", Kokkos::RangePolicy<Exec>(0, count * n),
          KOKKOS_LAMBDA(const long k) {
            const long b = k / n, i = k % n;
            for (long j = 0; j < i; ++j) batch(b, j, i) = impl::conjugate(batch(b, i, j));
            batch(b, i, i) = T(impl::real_part(batch(b, i, i)) + n);
          });
    }
    return batch;
  }

  static Row one(const Context& ctx, long m, long n) {
    const Exec exec;
    const long count = ctx.options.batch, k = std::min(m, n);
    const BatchView<T> original = input(count, m, n);
    auto A = make_batch<T>("A", count, m, n);
    Kokkos::View<int**, Kokkos::LayoutRight> ipiv("ipiv", count, k);
    Kokkos::View<T**, Kokkos::LayoutRight> tau("tau", count, k);
    Kokkos::View<int*> info("info", count);
    auto restore = [&] { Kokkos::deep_copy(exec, A, original); };
    // --portable: the team kernels even where a backend's kernel would take the batch.
    const auto a = impl::matrices<Exec>(A);
    const auto pivots = impl::vectors<Exec>(ipiv, "basalt-perf", "ipiv");
    const auto launch = impl::batch_launch<Exec>(a);
    const Timing ours = measure(ctx, restore, [&] {
      if constexpr (F == Factorization::lu) {
        if (ctx.options.portable)
          portable::getrf_batched(exec, a, pivots, info, launch);
        else
          getrf_batched(exec, A, ipiv, info);
      }
      if constexpr (F == Factorization::cholesky) potrf_batched(exec, Triangle::lower, A, info);
      if constexpr (F == Factorization::qr) geqrf_batched(exec, A, tau);
    });
    const double work = count * flops_per_matrix(m, n);
    Row row = timed_row(ctx, name, m, n, ours, work);
    row.batch = count;
    if (ctx.options.check) row.residual = backward_error(original, A, ipiv);

    if (ctx.options.vendor) {
#if defined(BASALT_ENABLE_CUDA)
      const auto matrices = cublas::pointers(A);
      Timing vendor;
      if constexpr (F == Factorization::lu) {
        cublas::Handle handle(exec);
        vendor =
            measure(ctx, restore, [&] { cublas::getrf_batched(handle, A, matrices, ipiv, info); });
        row.vendor = "cuBLAS getrfBatched";
      } else if constexpr (F == Factorization::cholesky) {
        cusolver::Handle handle(exec);
        vendor = measure(ctx, restore, [&] { cusolver::potrf_batched(handle, A, matrices, info); });
        row.vendor = "cuSOLVER potrfBatched";
      } else {
        cublas::Handle handle(exec);
        const auto taus = cublas::pointers(tau);
        vendor = measure(ctx, restore, [&] { cublas::geqrf_batched(handle, A, matrices, taus); });
        row.vendor = "cuBLAS geqrfBatched";
      }
#else
      const Timing vendor = measure(ctx, restore, [&] {
        for (long b = 0; b < count; ++b) {
          const auto a = Kokkos::subview(A, b, Kokkos::ALL, Kokkos::ALL);
          if constexpr (F == Factorization::lu)
            lapacke::getrf(a, Kokkos::subview(ipiv, b, Kokkos::ALL));
          if constexpr (F == Factorization::cholesky) lapacke::potrf(Triangle::lower, a);
          if constexpr (F == Factorization::qr)
            lapacke::geqrf(a, Kokkos::subview(tau, b, Kokkos::ALL));
        }
      });
      row.vendor = "LAPACKE loop";
#endif
      row.vendor_time_ms = vendor.ms;
      row.vendor_gflops = work / vendor.ms * 1e-6;
    }
    return row;
  }

  // The largest backward error of the first few matrices, computed on the host in double.
  template <class PivView>
  static double backward_error(const BatchView<T>& original, const BatchView<T>& factored,
                               const PivView& pivots) {
    const auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), original);
    const auto f = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), factored);
    const auto ipiv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pivots);
    const long m = a.extent(1), n = a.extent(2), k = std::min(m, n);
    double worst = 0;
    for (long b = 0; b < std::min<long>(a.extent(0), 4); ++b) {
      std::vector<Wide> error(m * n), ref(m * n);
      auto at = [&](std::vector<Wide>& v, long i, long j) -> Wide& { return v[i + j * m]; };
      auto factor = [&](long i, long j) { return Wide(f(b, i, j)); };
      for (long j = 0; j < n; ++j)
        for (long i = 0; i < m; ++i) at(ref, i, j) = Wide(a(b, i, j));
      if constexpr (F == Factorization::lu) {
        for (long s = 0; s < k; ++s)  // P A
          for (long j = 0; j < n; ++j) std::swap(at(ref, s, j), at(ref, ipiv(b, s) - 1, j));
        for (long j = 0; j < n; ++j)
          for (long i = 0; i < m; ++i) {
            Wide s = 0;
            for (long p = 0; p <= std::min({i, j, k - 1}); ++p)
              s += (p == i ? Wide(1) : factor(i, p)) * factor(p, j);
            at(error, i, j) = at(ref, i, j) - s;
          }
      } else if constexpr (F == Factorization::cholesky) {
        for (long j = 0; j < n; ++j)
          for (long i = j; i < n; ++i) {
            Wide s = 0;
            for (long p = 0; p <= j; ++p) s += factor(i, p) * Kokkos::conj(factor(j, p));
            at(error, i, j) = at(ref, i, j) - s;
          }
      } else {  // A^H A - R^H R, n x n
        error.assign(n * n, Wide(0));
        for (long j = 0; j < n; ++j)
          for (long i = 0; i < n; ++i) {
            Wide s = 0;
            for (long p = 0; p < m; ++p) s += Kokkos::conj(at(ref, p, i)) * at(ref, p, j);
            for (long p = 0; p <= std::min({i, j, m - 1}); ++p)
              s -= Kokkos::conj(factor(p, i)) * factor(p, j);
            error[i + j * n] = s;
          }
      }
      double e2 = 0, a2 = 0;
      for (const Wide& x : error) e2 += Kokkos::abs(x) * Kokkos::abs(x);
      for (const Wide& x : ref) a2 += Kokkos::abs(x) * Kokkos::abs(x);
      const double scale = F == Factorization::qr ? a2 : std::sqrt(a2);
      const double eps = std::numeric_limits<real_t<T>>::epsilon();
      worst = std::max(worst, std::sqrt(e2) / (std::max(m, n) * scale * eps));
    }
    return worst;
  }
};

template <class T>
using LuCases = BatchedCases<T, Factorization::lu>;
template <class T>
using CholeskyCases = BatchedCases<T, Factorization::cholesky>;
template <class T>
using QrCases = BatchedCases<T, Factorization::qr>;

}  // namespace

void run_getrf_batched(const Context& ctx, char prec, const Emit& emit) {
  with_precision<LuCases>(prec, ctx, emit);
}
void run_potrf_batched(const Context& ctx, char prec, const Emit& emit) {
  with_precision<CholeskyCases>(prec, ctx, emit);
}
void run_geqrf_batched(const Context& ctx, char prec, const Emit& emit) {
  with_precision<QrCases>(prec, ctx, emit);
}

}  // namespace basalt::perf
