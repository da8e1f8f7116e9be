// potrf: Cholesky factorization (lower) of an n x n Hermitian positive definite matrix, in
// Gflop/s (LAWN 41 counts), beside cuSOLVER's Xpotrf or LAPACKE's potrf. --check solves A x = b
// with the factor and reports ||b - A x|| / (n ||A|| ||x|| eps); --nb and --recursion-width
// replace the library's tuning (core/tuning.hpp); --queued times calls that are not recorded
// (core/recorded_call.hpp: on CUDA the timed calls are replays, the warm-up having been the
// first call on the matrix and the first timed one its recording).
#include "basalt/algorithms/dense/potrf.hpp"

#include "basalt/algorithms/dense/impl/blas.hpp"
#include "basalt/algorithms/dense/potrs.hpp"
#include "basalt/backends/host/lapacke.hpp"
#include "basalt/core/flops.hpp"
#include "breakdown.hpp"
#include "measure.hpp"
#if defined(BASALT_ENABLE_CUDA)
#include "basalt/backends/cuda/cusolver.hpp"
#endif

#include <cstdio>

namespace basalt::perf {

namespace {

template <class T>
struct PotrfCases {
  static void run(const Context& ctx, const Emit& emit) {
    for (const auto [m, n] : shapes(ctx, 4096)) {
      if (m != n) {
        std::fprintf(stderr, "basalt-perf: potrf takes square matrices; %ld x %ld skipped\n", m, n);
        continue;
      }
      emit(one(ctx, n));
    }
  }

  static Row one(const Context& ctx, long n) {
    using Exec = Kokkos::DefaultExecutionSpace;
    const Exec exec;
    const Matrix<T> original = input_matrix(ctx, n);
    Matrix<T> A(Kokkos::view_alloc(Kokkos::WithoutInitializing, "A"), n, n);
    auto restore = [&] { Kokkos::deep_copy(exec, A, original); };
    const Timing ours = measure(ctx, restore, [&] { factor(ctx, exec, A); });
    Row row = timed_row(ctx, "potrf", n, n, ours, flops::potrf<T>(n));
    if (ctx.options.breakdown) {
      restore();
      std::printf("# breakdown potrf %ld: %s\n", n,
                  describe(breakdown([&] { factor(ctx, exec, A); })).c_str());
    }
    if (ctx.options.check) {
      restore();
      factor(ctx, exec, A);
      // A whole (both triangles of the input) in the residual.
      row.residual = solve_residual(original, [&](const Matrix<T>& x) {
        potrs(Kokkos::DefaultExecutionSpace(), Triangle::lower, A, x);
      });
    }

    if (ctx.options.vendor) {
#if defined(BASALT_ENABLE_CUDA)
      cusolver::Handle handle(exec);
      cusolver::Potrf<T> vendor_potrf(handle, Triangle::lower, n, A.stride(1));
      Kokkos::View<int, Kokkos::CudaSpace> info("info");
      const Timing vendor = measure(ctx, restore, [&] { vendor_potrf(A, info); });
      row.vendor = "cuSOLVER";
#else
      const Timing vendor = measure(ctx, restore, [&] { lapacke::potrf(Triangle::lower, A); });
      row.vendor = "LAPACKE";
#endif
      set_vendor_timing(row, vendor, flops::potrf<T>(n));
    }
    return row;
  }

  // The --matrix file as it is (it must be positive definite), or M M^H / n + I for a random M.
  static Matrix<T> input_matrix(const Context& ctx, long n) {
    if (ctx.input) return perf::input_matrix<T>(ctx, n, n);
    const Kokkos::DefaultExecutionSpace exec;
    const Matrix<T> m = perf::input_matrix<T>(ctx, n, n);
    Matrix<T> a("A", n, n);
    impl::gemm(exec, Op::none, Op::conj_transpose, T(1.0 / n), m, m, T(0), a);
    Kokkos::parallel_for(
        "basalt::perf::potrf::shift",
        Kokkos::RangePolicy<Kokkos::DefaultExecutionSpace>(exec, 0, n),
        KOKKOS_LAMBDA(const long i) { a(i, i) += T(1); });
    exec.fence();
    return a;
  }

  // basalt::potrf, or the same under the tuning that --nb, --recursion-width (the leaf panel's
  // width and its diagonal block's) and --leaf-rows give; --queued leaves every call unrecorded.
  template <class Exec>
  static void factor(const Context& ctx, const Exec& exec, const Matrix<T>& A) {
    const Options& o = ctx.options;
    const int n = A.extent_int(0);
    tuning::Cholesky tune = tuning::cholesky<Exec, T>(n);
    if (o.nb) tune.block = o.nb;
    if (o.recursion_width) tune.panel_width = tune.recursion_width = o.recursion_width;
    if (o.leaf_rows >= 0) tune.leaf_look_ahead_rows = o.leaf_rows;
    impl::potrf_call(exec, Triangle::lower, A, tune,
                     !o.queued && n < tuning::cholesky_recorded_below);
  }
};

}  // namespace

void run_potrf(const Context& ctx, char prec, const Emit& emit) {
  with_precision<PotrfCases>(prec, ctx, emit);
}

}  // namespace basalt::perf
