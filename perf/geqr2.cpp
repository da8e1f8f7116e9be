// geqr2: the QR panel alone, an m x n panel (n = 32 unless --n says otherwise), by the path the
// QR driver takes for such a panel (tuning::qr): on CUDA the fused kernel within its height limit
// (Cholesky QR leaves where the panel allows, each followed by its update of the columns to its
// right when n > 32, as for a whole block of geqrf; else Householder with a grid barrier per
// column); on a CPU one team. With --portable, the portable kernel per step.
// Gflop/s by LAWN 41's geqrf count for m x n.
#include "basalt/algorithms/dense/geqrf.hpp"
#include "basalt/core/flops.hpp"
#include "measure.hpp"

namespace basalt::perf {

namespace {

template <class T>
struct Geqr2Cases {
  static void run(const Context& ctx, const Emit& emit) {
    for (const auto [m, n] : shapes(ctx, 32)) emit(one(ctx, m, n));
  }

  static Row one(const Context& ctx, long m, long n) {
    using Exec = Kokkos::DefaultExecutionSpace;
    const Exec exec;
    const Matrix<T> original = input_matrix<T>(ctx, m, n);
    Matrix<T> P(Kokkos::view_alloc(Kokkos::WithoutInitializing, "panel"), m, n);
    Vector<T> tau("tau", std::min(m, n));
    const impl::QrWork<Exec, T> work(exec, n, 1, 1, 0, 0, m, n);
    auto restore = [&] { Kokkos::deep_copy(exec, P, original); };
    const Timing t = measure(ctx, restore, [&] {
      if (ctx.options.portable)
        impl::geqr2_columns(exec, P, tau, work);
      else
        impl::geqr2(exec, P, tau, work, tuning::qr<Exec>(static_cast<int>(n)));
    });
    return timed_row(ctx, "geqr2", m, n, t, flops::geqrf<T>(m, n));
  }
};

}  // namespace

void run_geqr2(const Context& ctx, char prec, const Emit& emit) {
  with_precision<Geqr2Cases>(prec, ctx, emit);
}

}  // namespace basalt::perf
