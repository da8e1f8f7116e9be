// getrf: LU with partial pivoting of an m x n matrix, in Gflop/s (LAWN 41 counts), beside
// cuSOLVER's Xgetrf or LAPACKE's getrf. --check solves A x = b with the factors (square A) and
// reports ||b - A x|| / (n ||A|| ||x|| eps).
#include "basalt/algorithms/dense/getrf.hpp"

#include "basalt/algorithms/dense/getrs.hpp"
#include "basalt/backends/host/lapacke.hpp"
#include "basalt/core/flops.hpp"
#include "breakdown.hpp"
#include "measure.hpp"
#if defined(BASALT_ENABLE_CUDA)
#include "basalt/backends/cuda/cusolver.hpp"
#endif

namespace basalt::perf {

namespace {

template <class T>
struct GetrfCases {
  static void run(const Context& ctx, const Emit& emit) {
    for (const auto [m, n] : shapes(ctx, 4096)) emit(one(ctx, m, n));
  }

  static Row one(const Context& ctx, long m, long n) {
    using Exec = Kokkos::DefaultExecutionSpace;
    const Exec exec;
    const Matrix<T> original = input_matrix<T>(ctx, m, n);
    Matrix<T> A(Kokkos::view_alloc(Kokkos::WithoutInitializing, "A"), m, n);
    PivotVector<> ipiv("ipiv", std::min(m, n));
    auto restore = [&] { Kokkos::deep_copy(exec, A, original); };
    const Timing ours = measure(ctx, restore, [&] { factor(ctx, exec, A, ipiv); });
    Row row = timed_row(ctx, "getrf", m, n, ours, flops::getrf<T>(m, n));
    if (ctx.options.breakdown) {
      restore();
      std::printf("# breakdown getrf %ld x %ld: %s\n", m, n,
                  describe(breakdown([&] { factor(ctx, exec, A, ipiv); })).c_str());
    }
    if (ctx.options.check && m == n)
      row.residual = solve_residual(original, [&](const Matrix<T>& x) {
        getrs(Kokkos::DefaultExecutionSpace(), Op::none, A, ipiv, x);
      });

    if (ctx.options.vendor) {
#if defined(BASALT_ENABLE_CUDA)
      cusolver::Handle handle(exec);
      cusolver::Getrf<T> vendor_getrf(handle, m, n, A.stride(1));
      Kokkos::View<std::int64_t*, Kokkos::CudaSpace> ipiv64("ipiv64", std::min(m, n));
      Kokkos::View<int, Kokkos::CudaSpace> info("info");
      const Timing vendor = measure(ctx, restore, [&] { vendor_getrf(A, ipiv64, info); });
      row.vendor = "cuSOLVER";
#else
      const Timing vendor = measure(ctx, restore, [&] { lapacke::getrf(A, ipiv); });
      row.vendor = "LAPACKE";
#endif
      set_vendor_timing(row, vendor, flops::getrf<T>(m, n));
    }
    return row;
  }

  // basalt::getrf, or its driver with the tuning that --nb and --recursion-width give.
  template <class Exec>
  static void factor(const Context& ctx, const Exec& exec, const Matrix<T>& A,
                     const PivotVector<>& ipiv) {
    const Options& o = ctx.options;
    if (!o.nb && !o.recursion_width) {
      getrf(exec, A, ipiv);
      return;
    }
    tuning::Lu tune = tuning::lu<Exec, T>(static_cast<int>(std::min(A.extent(0), A.extent(1))));
    if (o.nb) tune.block = o.nb;
    if (o.recursion_width) tune.recursion_width = o.recursion_width;
    const impl::LuState<Exec, real_t<T>> state(exec);
    impl::getrf(exec, A, ipiv, state, tune);
    exec.fence();
  }
};

}  // namespace

void run_getrf(const Context& ctx, char prec, const Emit& emit) {
  with_precision<GetrfCases>(prec, ctx, emit);
}

}  // namespace basalt::perf
