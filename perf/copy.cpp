// copy: a device-to-device copy of an m x n matrix, the bandwidth ceiling for laswp (and later
// SpMV). Reported in GB/s, bytes read plus bytes written.
#include "basalt/core/views.hpp"
#include "measure.hpp"

namespace basalt::perf {

namespace {

template <class T>
struct CopyCases {
  static void run(const Context& ctx, const Emit& emit) {
    for (const auto [m, n] : shapes(ctx, 8192)) {
      const Kokkos::DefaultExecutionSpace exec;
      const Matrix<T> from = input_matrix<T>(ctx, m, n);
      Matrix<T> to(Kokkos::view_alloc(Kokkos::WithoutInitializing, "to"), m, n);
      const Timing t = measure(
          ctx, [] {}, [&] { Kokkos::deep_copy(exec, to, from); });
      emit(timed_row(ctx, "copy", m, n, t, 2.0 * m * n * sizeof(T)));
    }
  }
};

}  // namespace

void run_copy(const Context& ctx, char prec, const Emit& emit) {
  with_precision<CopyCases>(prec, ctx, emit);
}

}  // namespace basalt::perf
