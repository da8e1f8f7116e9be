#pragma once
// The CUDA specialization of the batched QR (basalt::portable::geqrf_batched's contract) for
// batches whose matrices are all at most 512 x 512 (256 in complex double): takes the batch apart
// and launches the warp-segment kernel (every matrix at most 32 x 32), the column-pair kernel (at
// most 64 x 64) or the block-per-matrix kernel. Larger matrices stay on the portable path
// (Specialization::handles).
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <type_traits>

#include "basalt/backends/cuda/batched/geqrf_batched_launch.hpp"
#include "basalt/backends/cuda/batched/geqrf_block_launch.hpp"
#include "basalt/backends/cuda/batched/getrf_batched.hpp"
#include "basalt/core/dispatch.hpp"

namespace basalt {

namespace cuda {

template <class Access>
bool geqrf_batched_fits(const Access& A) {
  using T = scalar_t<std::remove_const_t<typename Access::value_type>>;
  return std::max(A.max_rows, A.max_cols) <= kernels::geqrf_batched_block_max_size<T>;
}

// Whether matrices of up to `largest` rows and columns (more than the warp kernel's) go to the
// column-pair kernel: up to 64, but in complex double (whose columns would not fit its registers).
template <class T>
bool by_pairs(int largest) {
  return largest <= kernels::geqrf_batched_pairs_max_size && !std::is_same_v<T, cuDoubleComplex>;
}

template <class Access, class TauAccess>
void geqrf_batched(const Kokkos::Cuda& exec, const Access& A, const TauAccess& tau) {
  using T = scalar_t<std::remove_const_t<typename Access::value_type>>;
  launch_by_class(
      exec, A,
      [&](cudaStream_t stream, const auto& a, int count, int rows, int cols) {
        const int largest = std::max(rows, cols);
        if (largest <= kernels::geqrf_batched_max_size)
          kernels::geqrf_batched_small(stream, a, device_batch(tau), count, largest);
        else if (by_pairs<T>(largest))
          kernels::geqrf_batched_pairs(stream, a, device_batch(tau), count, largest);
        else
          kernels::geqrf_batched_block(stream, a, device_batch(tau), count, rows);
      },
      MergedInTwoWaves{kernels::geqrf_batched_small_resident_matrices<T>});
}

}  // namespace cuda

template <>
struct Specialization<routine::geqrf_batched, Kokkos::Cuda> {
  static constexpr bool available = true;
  template <class Access>
  static bool handles(const Access& A) {
    return cuda::geqrf_batched_fits(A);
  }
  template <class... Args>
  static void apply(const Kokkos::Cuda& exec, const Args&... args) {
    cuda::geqrf_batched(exec, args...);
  }
};

}  // namespace basalt
