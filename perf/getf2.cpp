// getf2: the LU panel alone, an m x n panel (n = 256 unless --n says otherwise) factored column
// by column. On CUDA that is the fused kernel (seed 000's D2) within its height limit; with
// --portable, the portable kernels (D1: pivot search, interchange, fused scaling and update), so
// that two runs give D2 against D1. Gflop/s by LAWN 41's getrf count for m x n.
#include "basalt/algorithms/dense/getrf.hpp"
#include "basalt/core/flops.hpp"
#include "measure.hpp"

namespace basalt::perf {

namespace {

template <class T>
struct Getf2Cases {
  static void run(const Context& ctx, const Emit& emit) {
    for (const auto [m, n] : shapes(ctx, 256)) emit(one(ctx, m, n));
  }

  static Row one(const Context& ctx, long m, long n) {
    using Exec = Kokkos::DefaultExecutionSpace;
    const Exec exec;
    const Matrix<T> original = input_matrix<T>(ctx, m, n);
    Matrix<T> P(Kokkos::view_alloc(Kokkos::WithoutInitializing, "panel"), m, n);
    PivotVector<> ipiv("ipiv", std::min(m, n));
    const impl::LuState<Exec, real_t<T>> state(exec);
    auto restore = [&] { Kokkos::deep_copy(exec, P, original); };
    const Timing t = measure(ctx, restore, [&] {
      if (ctx.options.portable)
        portable::getf2(exec, P, ipiv, 0, state);
      else
        impl::apply_getf2(exec, P, ipiv, 0, state);
    });
    return timed_row(ctx, "getf2", m, n, t, flops::getrf<T>(m, n));
  }
};

}  // namespace

void run_getf2(const Context& ctx, char prec, const Emit& emit) {
  with_precision<Getf2Cases>(prec, ctx, emit);
}

}  // namespace basalt::perf
