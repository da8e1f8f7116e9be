#pragma once
// The CUDA specialization of the batched Cholesky (basalt::portable::potrf_batched's contract)
// for batches whose matrices are all at most 512 x 512: takes the batch apart and launches the
// warp-segment kernel (all at most 32 x 32) or the block-per-matrix one. Larger matrices stay on
// the portable path (Specialization::handles).
#include <Kokkos_Core.hpp>

#include "basalt/backends/cuda/batched/getrf_batched.hpp"
#include "basalt/backends/cuda/batched/potrf_batched_launch.hpp"
#include "basalt/core/dispatch.hpp"

namespace basalt {

namespace cuda {

template <class Access>
bool potrf_batched_fits(const Access& A) {
  return A.max_rows <= kernels::potrf_batched_block_max_size;
}

template <class Access, class InfoView>
void potrf_batched(const Kokkos::Cuda& exec, Triangle uplo, const Access& A, const InfoView& info) {
  const bool lower = uplo == Triangle::lower;
  using T = scalar_t<std::remove_const_t<typename Access::value_type>>;
  launch_by_class(
      exec, A,
      [&](cudaStream_t stream, const auto& a, int count, int rows, int) {
        if (rows <= kernels::potrf_batched_max_size)
          kernels::potrf_batched_small(stream, lower, a, info.data(), info.stride(0), count, rows);
        else
          kernels::potrf_batched_block(stream, lower, a, info.data(), info.stride(0), count, rows);
      },
      Grouped{kernels::potrf_batched_small_resident_matrices<T>,
              [&](cudaStream_t stream, const auto& a, const kernels::WarpClasses& classes) {
                kernels::potrf_batched_small_classes(stream, lower, a, info.data(), info.stride(0),
                                                     classes);
              },
              true});
}

}  // namespace cuda

template <>
struct Specialization<routine::potrf_batched, Kokkos::Cuda> {
  static constexpr bool available = true;
  template <class Access>
  static bool handles(const Access& A) {
    return cuda::potrf_batched_fits(A);
  }
  template <class... Args>
  static void apply(const Kokkos::Cuda& exec, const Args&... args) {
    cuda::potrf_batched(exec, args...);
  }
};

}  // namespace basalt
