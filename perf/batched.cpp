// getrf_batched, potrf_batched, geqrf_batched: --batch m x n matrices (make_batch's layout,
// square for LU and Cholesky) factored in one call, in Gflop/s (LAWN 41 counts times the batch),
// beside cuBLAS getrfBatched / cuSOLVER potrfBatched (lower) / cuBLAS geqrfBatched, or a loop of
// LAPACKE calls on the host. --check reports the largest backward error of the first two and
// the last two matrices, in units of eps: ||PA - LU|| / (n ||A||), ||A - LL^H|| / (n ||A||) and
// ||A^H A - R^H R|| / (n ||A||^2).
// --variable: every matrix of the batch gets its own size, drawn uniformly from 1..n (rows
// named <routine>_variable, flops summed over the matrices); the vendor columns then hold the
// fixed-size batch of as many matrices with the nearest total flops, so that speedup reads as
// fixed time over variable time (the issue asks for at least 1/1.3).
// --kokkos-kernels (getrf_batched): the comparison is Kokkos Kernels' batched SerialLU, one
// matrix per thread, which does not pivot: both run on diagonally dominant input.
#include "basalt/algorithms/batched/geqrf_batched.hpp"
#include "basalt/algorithms/batched/getrf_batched.hpp"
#include "basalt/algorithms/batched/potrf_batched.hpp"
#include "basalt/backends/host/lapacke.hpp"
#include "basalt/core/flops.hpp"
#include "measure.hpp"
#if defined(BASALT_ENABLE_CUDA)
#include "basalt/backends/cuda/batched_vendor.hpp"
#endif

#include <KokkosBatched_LU_Decl.hpp>
#include <KokkosBatched_LU_Serial_Impl.hpp>
#include <Kokkos_Random.hpp>
#include <cmath>
#include <random>
#include <set>

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
    for (const auto [m, n] : shapes(ctx, 32))
      emit(ctx.options.variable ? one_variable(ctx, n)
                                : one(ctx, F == Factorization::qr ? m : n, n));
  }

  // The routine on a batch of either form, through the public call.
  template <class ABatch, class PivBatch, class TauBatch>
  static void factor(const Exec& exec, const ABatch& A, const PivBatch& ipiv, const TauBatch& tau,
                     const Kokkos::View<int*>& info) {
    if constexpr (F == Factorization::lu) getrf_batched(exec, A, ipiv, info);
    if constexpr (F == Factorization::cholesky) potrf_batched(exec, Triangle::lower, A, info);
    if constexpr (F == Factorization::qr) geqrf_batched(exec, A, tau);
  }

  static Row one_variable(const Context& ctx, long n) {
    const Exec exec;
    const long count = ctx.options.batch;
    std::mt19937 rng(std::random_device{}());
    std::vector<int> sizes(count);
    double work = 0;
    for (auto& size : sizes) {
      size = std::uniform_int_distribution<int>(1, static_cast<int>(n))(rng);
      work += flops_per_matrix(size, size);
    }
    const auto original = make_variable_batch<T>("original", sizes, sizes);
    Kokkos::Random_XorShift64_Pool<Exec> pool(std::random_device{}());
    Kokkos::fill_random(original.values, pool, T(-1), T(1));
    if constexpr (F == Factorization::cholesky) {
      const auto values = original.values;
      const auto rows = original.rows, ld = original.ld;
      const auto offset = original.offset;
      Kokkos::parallel_for(
          "basalt-perf::hermitian", Kokkos::RangePolicy<Exec>(0, count),
          KOKKOS_LAMBDA(const long b) {
            T* a = values.data() + offset(b);
            for (long i = 0; i < rows(b); ++i) {
              for (long j = 0; j < i; ++j) a[j + i * ld(b)] = impl::conjugate(a[i + j * ld(b)]);
              a[i + i * ld(b)] = T(real_part(a[i + i * ld(b)]) + rows(b));
            }
          });
    }
    auto A = make_variable_batch<T>("A", sizes, sizes);
    const auto ipiv = make_variable_vectors<int>("ipiv", A);
    const auto tau = make_variable_vectors<T>("tau", A);
    Kokkos::View<int*> info("info", count);
    auto restore = [&] { Kokkos::deep_copy(exec, A.values, original.values); };
    const Timing ours = measure(ctx, restore, [&] { factor(exec, A, ipiv, tau, info); });
    Row row = timed_row(ctx, (std::string(name) + "_variable").c_str(), n, n, ours, work);
    row.batch = count;

    // The fixed-size batch of as many matrices whose flops come nearest.
    long equal = 1;
    while (equal < n && count * flops_per_matrix(equal + 1, equal + 1) <= work) ++equal;
    if (equal < n && count * flops_per_matrix(equal + 1, equal + 1) - work <
                         work - count * flops_per_matrix(equal, equal))
      ++equal;
    Context fixed_ctx = ctx;
    fixed_ctx.options.vendor = fixed_ctx.options.check = false;
    const Row fixed = one(fixed_ctx, equal, equal);
    row.vendor = "fixed n=" + std::to_string(equal);
    row.vendor_time_ms = fixed.time_ms;
    row.vendor_gflops = fixed.gflops;
    row.vendor_energy_j = fixed.energy_j;
    return row;
  }

  static double flops_per_matrix(long m, long n) {
    if constexpr (F == Factorization::lu) return flops::getrf<T>(m, n);
    if constexpr (F == Factorization::cholesky) return flops::potrf<T>(n);
    return flops::geqrf<T>(m, n);
  }

  // Uniform random entries in [-1, 1]; for Cholesky made Hermitian with n added to the
  // diagonal, hence positive definite; for LU with dominant = true, n added to the diagonal.
  static BatchView<T> input(long count, long m, long n, bool dominant) {
    auto batch = make_batch<T>("original", count, m, n);
    Kokkos::Random_XorShift64_Pool<Exec> pool(std::random_device{}());
    Kokkos::fill_random(batch, pool, T(-1), T(1));
    const long diagonal = std::min(m, n);
    if (F == Factorization::lu && dominant)
      Kokkos::parallel_for(
          "basalt-perf::dominant", Kokkos::RangePolicy<Exec>(0, count * diagonal),
          KOKKOS_LAMBDA(const long k) {
            const long b = k / diagonal, i = k % diagonal;
            batch(b, i, i) += T(n);
          });
    if constexpr (F == Factorization::cholesky) {
      Kokkos::parallel_for(
          "basalt-perf::hermitian", Kokkos::RangePolicy<Exec>(0, count * n),
          KOKKOS_LAMBDA(const long k) {
            const long b = k / n, i = k % n;
            for (long j = 0; j < i; ++j) batch(b, j, i) = impl::conjugate(batch(b, i, j));
            batch(b, i, i) = T(real_part(batch(b, i, i)) + n);
          });
    }
    return batch;
  }

  static Row one(const Context& ctx, long m, long n) {
    const Exec exec;
    const long count = ctx.options.batch, k = std::min(m, n);
    const BatchView<T> original = input(count, m, n, ctx.options.kokkos_kernels);
    auto A = make_batch<T>("A", count, m, n);
    Kokkos::View<int**, Kokkos::LayoutRight> ipiv("ipiv", count, k);
    Kokkos::View<T**, Kokkos::LayoutRight> tau("tau", count, k);
    Kokkos::View<int*> info("info", count);
    auto restore = [&] { Kokkos::deep_copy(exec, A, original); };
    // --portable: the team kernels even where a backend's kernel would take the batch.
    const auto a = impl::matrices<Exec>(A, "basalt-perf", "A");
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

    if (F == Factorization::lu && ctx.options.kokkos_kernels) {
      const Timing kk = measure(ctx, restore, [&] { kokkos_kernels_lu(exec, A); });
      row.vendor = "KokkosBatched SerialLU";
      set_vendor_timing(row, kk, work);
    } else if (ctx.options.vendor) {
#if defined(BASALT_ENABLE_CUDA)
      const auto matrices = cublas::pointers(A);
      Timing vendor;
      if constexpr (F == Factorization::lu) {
        const cublasHandle_t handle = cublas::handle(exec);
        vendor =
            measure(ctx, restore, [&] { cublas::getrf_batched(handle, A, matrices, ipiv, info); });
        row.vendor = "cuBLAS getrfBatched";
      } else if constexpr (F == Factorization::cholesky) {
        cusolver::Handle handle(exec);
        vendor = measure(ctx, restore, [&] { cusolver::potrf_batched(handle, A, matrices, info); });
        row.vendor = "cuSOLVER potrfBatched";
      } else {
        const cublasHandle_t handle = cublas::handle(exec);
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
      set_vendor_timing(row, vendor, work);
    }
    return row;
  }

  // Kokkos Kernels' batched LU without pivoting, one matrix per thread.
  static void kokkos_kernels_lu(const Exec& exec, const BatchView<T>& A) {
    Kokkos::parallel_for(
        "KokkosBatched::SerialLU", Kokkos::RangePolicy<Exec>(exec, 0, A.extent(0)),
        KOKKOS_LAMBDA(const int b) {
          KokkosBatched::SerialLU<KokkosBatched::Algo::LU::Unblocked>::invoke(
              Kokkos::subview(A, b, Kokkos::ALL, Kokkos::ALL));
        });
  }

  // The largest backward error of the first few matrices, computed on the host in double.
  template <class PivView>
  static double backward_error(const BatchView<T>& original, const BatchView<T>& factored,
                               const PivView& pivots) {
    const auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), original);
    const auto f = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), factored);
    const auto ipiv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pivots);
    const long m = a.extent(1), n = a.extent(2), k = std::min(m, n);
    const long count = a.extent(0);
    double worst = 0;
    // The first two matrices and the last two, where offsets past 2^31 entries would show.
    for (long b : std::set<long>{0, std::min(1L, count - 1), std::max(0L, count - 2), count - 1}) {
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
