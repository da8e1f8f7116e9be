#pragma once
// What every routine's cases share: the options, where they run, and how they are timed.
#include <Kokkos_Core.hpp>
#include <Kokkos_Random.hpp>
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "basalt/core/views.hpp"
#include "energy.hpp"
#include "matrix_market.hpp"
#include "options.hpp"
#include "report.hpp"

namespace basalt::perf {

struct Context {
  Options options;
  std::string backend;  // host or cuda, with -portable when --portable forces the portable path
  std::string device;
  EnergyCounter* energy = nullptr;
  bool on_gpu = false;
  std::optional<DenseInput> input;  // from --matrix
};

struct Timing {
  double ms = 0;                 // median over --niter runs after a warm-up
  std::optional<double> joules;  // per run, restore excluded
};

// Times run() with prepare() (restoring the input) outside the timed region: each call fenced
// alone, or with --back-to-back in rounds of calls queued together. Energy is read over
// at least a second of runs, less the energy of as many prepare() calls alone.
inline Timing measure(const Context& ctx, const std::function<void()>& prepare,
                      const std::function<void()>& run) {
  prepare();
  run();
  Kokkos::fence();
  std::vector<double> seconds;
  Kokkos::Timer timer;
  if (ctx.options.back_to_back) {
    // A call's time in a stream of calls: no fence between them, so the host's launch and the
    // fence's latency overlap the device's work, as in an application that queues its calls.
    const auto enqueued = [&](bool with_run) {
      Kokkos::fence();
      timer.reset();
      for (int i = 0; i < ctx.options.niter; ++i) {
        prepare();
        if (with_run) run();
      }
      Kokkos::fence();
      return timer.seconds();
    };
    for (int round = 0; round < Options::back_to_back_rounds; ++round) {
      const double calls = enqueued(true), restores = enqueued(false);
      seconds.push_back((calls - restores) / ctx.options.niter);
    }
  } else {
    for (int i = 0; i < ctx.options.niter; ++i) {
      prepare();
      Kokkos::fence();
      timer.reset();
      run();
      Kokkos::fence();
      seconds.push_back(timer.seconds());
    }
  }
  std::nth_element(seconds.begin(), seconds.begin() + seconds.size() / 2, seconds.end());
  Timing timing;
  timing.ms = seconds[seconds.size() / 2] * 1e3;
  if (!ctx.energy) return timing;

  const int reps =
      static_cast<int>(std::clamp(std::ceil(1e3 / timing.ms), 1.0 * ctx.options.niter, 1e5));
  auto energy_of = [&](bool with_run) -> std::optional<double> {
    const auto before = ctx.energy->joules();
    for (int i = 0; i < reps; ++i) {
      prepare();
      if (with_run) run();
    }
    Kokkos::fence();
    const auto after = ctx.energy->joules();
    if (!before || !after) return std::nullopt;
    return *after - *before;
  };
  const auto total = energy_of(true), restores = energy_of(false);
  if (total && restores && *total > *restores) timing.joules = (*total - *restores) / reps;
  return timing;
}

// A row for one case: `work` is the flop count (or, for data movement, the bytes moved).
inline Row timed_row(const Context& ctx, const char* routine, long m, long n, const Timing& t,
                     double work) {
  Row row;
  row.routine = routine;
  row.backend = ctx.backend;
  row.device = ctx.device;
  row.m = m;
  row.n = n;
  row.time_ms = t.ms;
  row.gflops = work / t.ms * 1e-6;
  row.energy_j = t.joules;
  return row;
}

// The vendor's columns of row from its timing of the same work (its name is the caller's).
inline void set_vendor_timing(Row& row, const Timing& t, double work) {
  row.vendor_time_ms = t.ms;
  row.vendor_gflops = work / t.ms * 1e-6;
  row.vendor_energy_j = t.joules;
}

// The cases of a routine: one per (m, n) the options give.
struct Shape {
  long m, n;
};
// The --matrix file's shape if one was given, else the --m/--n sweep.
std::vector<Shape> shapes(const Context& ctx, long default_n);

// An m x n input on the default execution space: the --matrix file's entries (real parts for
// real precisions), or uniform random entries in [-1, 1] (both parts for complex ones).
template <class T>
Matrix<T> input_matrix(const Context& ctx, long m, long n) {
  Matrix<T> a(Kokkos::view_alloc(Kokkos::WithoutInitializing, "input"), m, n);
  if (!ctx.input) {
    Kokkos::Random_XorShift64_Pool<Kokkos::DefaultExecutionSpace> pool(std::random_device{}());
    Kokkos::fill_random(a, pool, T(-1), T(1));
    return a;
  }
  auto host = Kokkos::create_mirror_view(a);
  for (long j = 0; j < n; ++j)
    for (long i = 0; i < m; ++i) {
      const auto v = (*ctx.input)(i, j);
      if constexpr (std::is_floating_point_v<T>)
        host(i, j) = static_cast<T>(v.real());
      else
        host(i, j) = T(v.real(), v.imag());
    }
  Kokkos::deep_copy(a, host);
  return a;
}

// ||b - A x||_2 / (n ||A||_F ||x||_2 eps) for the n x n A and a random b, x = b after solve(x),
// computed on the host in double: the solve residual that --check reports.
template <class T, class Solve>
double solve_residual(const Matrix<T>& A, const Solve& solve) {
  const long n = A.extent(0);
  Matrix<T> b("b", n, 1), x("x", n, 1);
  Kokkos::Random_XorShift64_Pool<Kokkos::DefaultExecutionSpace> pool(std::random_device{}());
  Kokkos::fill_random(b, pool, T(-1), T(1));
  Kokkos::deep_copy(x, b);
  solve(x);
  const auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A);
  const auto xh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
  const auto bh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
  double r2 = 0, x2 = 0, a2 = 0;
  for (long i = 0; i < n; ++i) {
    Kokkos::complex<double> r = Kokkos::complex<double>(bh(i, 0));
    for (long k = 0; k < n; ++k) {
      r -= Kokkos::complex<double>(a(i, k)) * Kokkos::complex<double>(xh(k, 0));
      a2 += magnitude(a(i, k)) * magnitude(a(i, k));
    }
    r2 += Kokkos::abs(r) * Kokkos::abs(r);
    x2 += magnitude(xh(i, 0)) * magnitude(xh(i, 0));
  }
  return std::sqrt(r2) /
         (n * std::sqrt(a2) * std::sqrt(x2) * std::numeric_limits<real_t<T>>::epsilon());
}

// Each finished case is handed on at once, so long sweeps show their progress.
using Emit = std::function<void(Row)>;

// Runs Cases<Scalar>::run(ctx, emit) for the scalar a precision letter names.
template <template <class> class Cases>
void with_precision(char prec, const Context& ctx, const Emit& emit) {
  switch (prec) {
    case 's':
      return Cases<float>::run(ctx, emit);
    case 'd':
      return Cases<double>::run(ctx, emit);
    case 'c':
      return Cases<Kokkos::complex<float>>::run(ctx, emit);
    default:
      return Cases<Kokkos::complex<double>>::run(ctx, emit);
  }
}

void run_laswp(const Context& ctx, char prec, const Emit& emit);
void run_copy(const Context& ctx, char prec, const Emit& emit);
void run_getrf(const Context& ctx, char prec, const Emit& emit);
void run_getf2(const Context& ctx, char prec, const Emit& emit);
void run_geqr2(const Context& ctx, char prec, const Emit& emit);
void run_potrf(const Context& ctx, char prec, const Emit& emit);
void run_gemm(const Context& ctx, char prec, const Emit& emit);
void run_getrf_batched(const Context& ctx, char prec, const Emit& emit);
void run_potrf_batched(const Context& ctx, char prec, const Emit& emit);
void run_geqrf_batched(const Context& ctx, char prec, const Emit& emit);
void run_spmv(const Context& ctx, char prec, const Emit& emit);  // --matrix read as sparse
void run_spmm(const Context& ctx, char prec, const Emit& emit);
void run_geqrf(const Context& ctx, char prec, const Emit& emit);
void run_ormqr(const Context& ctx, char prec, const Emit& emit);
void run_lobpcg(const Context& ctx, char prec, const Emit& emit);  // sparse --matrix, too

}  // namespace basalt::perf
