// geqrf and ormqr in Gflop/s (LAWN 41 / LAPACK's dopla counts), beside cuSOLVER's Xgeqrf and
// <t>ormqr / <t>unmqr or LAPACKE's. Any m x n through --m and --n (tall-skinny: --m 100000 --n 64).
// geqrf: --check reports ||A - QR||_F / (max(m, n) ||A||_F eps), Q from basalt::orgqr; --nb and
// --recursion-width replace the library's tuning; --breakdown prints where the time goes.
// ormqr: C = Q^H C (side left, the least-squares step of gels) with the min(m, n) reflectors of
// an m x n QR and C m x nrhs (--nrhs); --check applies Q back and reports
// ||C - Q Q^H C||_F / (m ||C||_F eps); --nb replaces the library's block width.
#include "basalt/algorithms/dense/geqrf.hpp"
#include "basalt/algorithms/dense/orgqr.hpp"
#include "basalt/algorithms/dense/ormqr.hpp"
#include "basalt/backends/host/lapacke.hpp"
#include "basalt/core/flops.hpp"
#include "breakdown.hpp"
#include "measure.hpp"
#if defined(BASALT_ENABLE_CUDA)
#include "basalt/backends/cuda/cusolver.hpp"
#endif

#include <cmath>
#include <limits>

namespace basalt::perf {

namespace {

using Exec = Kokkos::DefaultExecutionSpace;

// ||A||_F on the device, accumulated in double.
template <class View>
double frobenius(const View& A) {
  double sum = 0;
  Kokkos::parallel_reduce(
      "basalt-perf::frobenius",
      Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2>>(
          {0, 0}, {static_cast<std::int64_t>(A.extent(0)), static_cast<std::int64_t>(A.extent(1))}),
      KOKKOS_LAMBDA(const int i, const int j, double& s) {
        const double v = magnitude(A(i, j));
        s += v * v;
      },
      sum);
  return std::sqrt(sum);
}

template <class T>
double eps() {
  return std::numeric_limits<real_t<T>>::epsilon();
}

template <class T>
struct GeqrfCases {
  static void run(const Context& ctx, const Emit& emit) {
    for (const auto [m, n] : shapes(ctx, 4096)) emit(one(ctx, m, n));
  }

  static Row one(const Context& ctx, long m, long n) {
    const Exec exec;
    const long k = std::min(m, n);
    const Matrix<T> original = input_matrix<T>(ctx, m, n);
    Matrix<T> A(Kokkos::view_alloc(Kokkos::WithoutInitializing, "A"), m, n);
    Vector<T> tau("tau", k);
    auto restore = [&] { Kokkos::deep_copy(exec, A, original); };
    const Timing ours = measure(ctx, restore, [&] { factor(ctx, exec, A, tau); });
    Row row = timed_row(ctx, "geqrf", m, n, ours, flops::geqrf<T>(m, n));
    if (ctx.options.breakdown) {
      restore();
      std::printf("# breakdown geqrf %ld x %ld: %s\n", m, n,
                  describe(breakdown([&] { factor(ctx, exec, A, tau); })).c_str());
    }
    if (ctx.options.check) {
      restore();
      factor(ctx, exec, A, tau);
      row.residual = residual(original, A, tau);
    }
    if (ctx.options.vendor) {
#if defined(BASALT_ENABLE_CUDA)
      cusolver::Handle handle(exec);
      cusolver::Geqrf<T> vendor_geqrf(handle, m, n, std::max<long>(1, A.stride(1)));
      Kokkos::View<int, Kokkos::CudaSpace> info("info");
      const Timing vendor = measure(ctx, restore, [&] { vendor_geqrf(A, tau, info); });
      row.vendor = "cuSOLVER";
#else
      const Timing vendor = measure(ctx, restore, [&] { lapacke::geqrf(A, tau); });
      row.vendor = "LAPACKE";
#endif
      set_vendor_timing(row, vendor, flops::geqrf<T>(m, n));
    }
    return row;
  }

  // basalt::geqrf, or its driver with the tuning that --nb and --recursion-width give.
  static void factor(const Context& ctx, const Exec& exec, const Matrix<T>& A,
                     const Vector<T>& tau) {
    const Options& o = ctx.options;
    if (!o.nb && !o.recursion_width) return geqrf(exec, A, tau);
    tuning::Qr tune = tuning::qr<Exec>(static_cast<int>(std::min(A.extent(0), A.extent(1))));
    if (o.nb) tune.factor_block = o.nb;
    if (o.recursion_width) tune.recursion_width = o.recursion_width;
    impl::geqrf(exec, A, tau, tune);
  }

  // ||A - Q R||_F / (max(m, n) ||A||_F eps), Q (m x k) from orgqr and R (k x n), on the device.
  static double residual(const Matrix<T>& original, const Matrix<T>& factors,
                         const Vector<T>& tau) {
    const Exec exec;
    const long m = factors.extent(0), n = factors.extent(1), k = std::min(m, n);
    Matrix<T> Q("Q", m, k), R("R", k, n), E("E", m, n);
    Kokkos::deep_copy(Q, Kokkos::subview(factors, Kokkos::ALL, std::make_pair(0L, k)));
    orgqr(exec, Q, tau);
    Kokkos::parallel_for(
        "basalt-perf::upper", Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2>>({0, 0}, {k, n}),
        KOKKOS_LAMBDA(const int i, const int j) { R(i, j) = i <= j ? factors(i, j) : T(0); });
    Kokkos::deep_copy(E, original);
    impl::gemm(exec, Op::none, Op::none, T(-1), Q, R, T(1), E);
    exec.fence();
    return frobenius(E) / (std::max(m, n) * frobenius(original) * eps<T>());
  }
};

template <class T>
struct OrmqrCases {
  static void run(const Context& ctx, const Emit& emit) {
    for (const auto [m, n] : shapes(ctx, 4096)) emit(one(ctx, m, n));
  }

  static Row one(const Context& ctx, long m, long n) {
    const Exec exec;
    const long k = std::min(m, n), nrhs = ctx.options.nrhs;
    Matrix<T> A = input_matrix<T>(ctx, m, n);
    Vector<T> tau("tau", k);
    geqrf(exec, A, tau);
    const Matrix<T> original = input_matrix<T>(Context{}, m, nrhs);
    Matrix<T> C(Kokkos::view_alloc(Kokkos::WithoutInitializing, "C"), m, nrhs);
    auto restore = [&] { Kokkos::deep_copy(exec, C, original); };
    const Timing ours = measure(ctx, restore, [&] { apply(ctx, exec, A, tau, C); });
    const double work = flops::ormqr<T>(true, m, nrhs, k);
    Row row = timed_row(ctx, "ormqr", m, n, ours, work);
    row.nrhs = nrhs;
    if (ctx.options.check) {
      ormqr(exec, ApplySide::left, Op::none, A, tau, C);
      Kokkos::parallel_for(
          "basalt-perf::difference",
          Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2>>({0, 0}, {m, nrhs}),
          KOKKOS_LAMBDA(const int i, const int j) { C(i, j) -= original(i, j); });
      exec.fence();
      row.residual = frobenius(C) / (m * frobenius(original) * eps<T>());
    }
    if (ctx.options.vendor) {
#if defined(BASALT_ENABLE_CUDA)
      cusolver::Handle handle(exec);
      cusolver::Ormqr<T> vendor_ormqr(handle, ApplySide::left, Op::conj_transpose, A, tau, C);
      Kokkos::View<int, Kokkos::CudaSpace> info("info");
      const Timing vendor = measure(ctx, restore, [&] { vendor_ormqr(A, tau, C, info); });
      row.vendor = "cuSOLVER";
#else
      const Timing vendor = measure(
          ctx, restore, [&] { lapacke::ormqr(ApplySide::left, Op::conj_transpose, A, tau, C); });
      row.vendor = "LAPACKE";
#endif
      set_vendor_timing(row, vendor, work);
    }
    return row;
  }

  // basalt::ormqr (Q^H C), or its driver with the block width that --nb gives.
  static void apply(const Context& ctx, const Exec& exec, const Matrix<T>& A, const Vector<T>& tau,
                    const Matrix<T>& C) {
    if (!ctx.options.nb) return ormqr(exec, ApplySide::left, Op::conj_transpose, A, tau, C);
    tuning::Qr tune = tuning::qr<Exec>(static_cast<int>(tau.extent(0)));
    tune.block = ctx.options.nb;
    impl::ormqr(exec, ApplySide::left, Op::conj_transpose, A, tau, C, tune);
  }
};

}  // namespace

void run_geqrf(const Context& ctx, char prec, const Emit& emit) {
  with_precision<GeqrfCases>(prec, ctx, emit);
}

void run_ormqr(const Context& ctx, char prec, const Emit& emit) {
  with_precision<OrmqrCases>(prec, ctx, emit);
}

}  // namespace basalt::perf
