#pragma once
// The CUDA specialization of herk on a trapezoid (basalt::portable::herk_trapezoid's contract):
// in real types and complex double, Basalt's one-kernel update for the small trapezoids inside a
// Cholesky panel; otherwise cuBLAS' herk and gemm through the portable code.
#include <Kokkos_Core.hpp>
#include <type_traits>

#include "basalt/algorithms/dense/impl/potrf_portable.hpp"
#include "basalt/backends/cuda/cublas.hpp"
#include "basalt/backends/cuda/dense/herk_trapezoid_launch.hpp"
#include "basalt/backends/cuda/scalar.hpp"
#include "basalt/core/dispatch.hpp"

namespace basalt {

namespace cuda {

template <class LView, class CView>
void herk_trapezoid(const Kokkos::Cuda& exec, Triangle uplo, const LView& L, const CView& C) {
  using T = scalar_t<typename CView::non_const_value_type>;
  // Where the kernel wins (potrf, perf/NOTES.md): in real types inside the panels, whose updates
  // have k of 128 or 256, up to 4096 rows. In double it lost to cuBLAS with more rows (6144,
  // 8192) and with k of 512 (the look-ahead's next panel), where cuBLAS' larger tiles read L fewer
  // times; in single it beats cuBLAS' syrk there too (potrf s 2048 on an H100: 0.70 against 0.78
  // ms). Complex types by multiply-adds were no faster than cuBLAS (c) or slower (z, whose tile's
  // sums spill); complex double by tensor cores, a warp to a quarter of the tile's columns, ran
  // potrf z 1-4% faster than cuBLAS' calls up to 4096 (H100).
  constexpr int max_k = std::is_same_v<T, float> ? 512 : 256, max_rows = 4096;
  if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, cuDoubleComplex>) {
    const bool lower = uplo == Triangle::lower;
    kernels::TrapezoidProblem<T> p;
    p.m = static_cast<int>(lower ? C.extent(0) : C.extent(1));
    p.n = static_cast<int>(lower ? C.extent(1) : C.extent(0));
    p.k = static_cast<int>(lower ? L.extent(1) : L.extent(0));
    if (p.k <= max_k && p.m <= max_rows && cublas::column_major(L, C) &&
        kernels::herk_trapezoid_available(exec.cuda_device())) {
      p.l = device_pointer(L.data());
      p.c = device_pointer(C.data());
      p.l_row_stride = lower ? 1 : L.stride(1);
      p.l_k_stride = lower ? L.stride(1) : 1;
      p.c_row_stride = lower ? 1 : C.stride(1);
      p.c_column_stride = lower ? C.stride(1) : 1;
      return kernels::herk_trapezoid(exec.cuda_stream(), p);
    }
  }
  portable::herk_trapezoid(exec, uplo, L, C);
}

}  // namespace cuda

template <>
struct Specialization<routine::herk_trapezoid, Kokkos::Cuda> {
  static constexpr bool available = true;
  template <class... Args>
  static void apply(const Kokkos::Cuda& exec, const Args&... args) {
    cuda::herk_trapezoid(exec, args...);
  }
};

}  // namespace basalt
