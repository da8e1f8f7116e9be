// gemm: C = A B for n x n matrices through Kokkos Kernels (cuBLAS or OpenBLAS underneath), in
// Gflop/s: the ceiling the portability summary holds factorizations against.
#include "basalt/algorithms/dense/impl/blas.hpp"
#include "basalt/core/flops.hpp"
#include "measure.hpp"

namespace basalt::perf {

namespace {

template <class T>
struct GemmCases {
  static void run(const Context& ctx, const Emit& emit) {
    for (const auto [m, n] : shapes(ctx, 4096)) {
      const Kokkos::DefaultExecutionSpace exec;
      const Matrix<T> A = input_matrix<T>(ctx, m, n), B = input_matrix<T>(ctx, n, n);
      Matrix<T> C("C", m, n);
      const Timing t = measure(
          ctx, [] {}, [&] { impl::gemm(exec, Op::none, Op::none, T(1), A, B, T(0), C); });
      emit(timed_row(ctx, "gemm", m, n, t, flops::gemm<T>(m, n, n)));
    }
  }
};

}  // namespace

void run_gemm(const Context& ctx, char prec, const Emit& emit) {
  with_precision<GemmCases>(prec, ctx, emit);
}

}  // namespace basalt::perf
