#pragma once
// The CUDA specialization of the batched LU (basalt::portable::getrf_batched's contract) for
// batches whose matrices are all at most 256 x 256: takes the batch apart and launches the
// warp-per-matrix kernel (all at most 32 x 32) or the block-per-matrix one. Larger matrices stay
// on the portable path (Specialization::handles).
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <type_traits>

#include "basalt/backends/cuda/batched/getrf_batched_launch.hpp"
#include "basalt/backends/cuda/scalar.hpp"
#include "basalt/core/dispatch.hpp"

namespace basalt {

namespace cuda {

// A batch as the portable layer describes it (data, fixed sizes and strides, or per-matrix
// sizes, leading dimensions and offsets), as the kernels take it.
template <class Access>
auto device_batch(const Access& A) {
  using T = std::remove_const_t<typename Access::value_type>;
  kernels::DeviceBatch<scalar_t<T>> d;
  d.data = device_pointer(const_cast<T*>(A.data));
  d.variable = A.variable;
  d.rows = A.fixed_rows;
  d.cols = A.fixed_cols;
  d.row_stride = A.row_stride;
  d.col_stride = A.col_stride;
  d.batch_stride = A.batch_stride;
  d.var_rows = A.var_rows.data();
  d.var_cols = A.var_cols.data();
  d.var_ld = A.var_ld.data();
  d.var_offset = A.var_offset.data();
  return d;
}

// Whether every matrix of A fits the warp-segment kernel.
template <class Access>
bool getrf_batched_fits_small(const Access& A) {
  return A.max_rows <= kernels::getrf_batched_max_rows &&
         A.max_cols <= kernels::getrf_batched_max_columns;
}

// Whether every matrix of A fits one of the CUDA kernels.
template <class Access>
bool getrf_batched_fits(const Access& A) {
  return std::max(A.max_rows, A.max_cols) <= kernels::getrf_batched_block_max_size;
}

template <class Access, class PivAccess, class InfoView>
void getrf_batched(const Kokkos::Cuda& exec, const Access& A, const PivAccess& ipiv,
                   const InfoView& info) {
  if (getrf_batched_fits_small(A))
    kernels::getrf_batched_small(exec.cuda_stream(), device_batch(A), device_batch(ipiv),
                                 info.data(), info.stride(0), A.count,
                                 std::max(A.max_rows, A.max_cols));
  else
    kernels::getrf_batched_block(exec.cuda_stream(), device_batch(A), device_batch(ipiv),
                                 info.data(), info.stride(0), A.count, A.max_rows);
}

}  // namespace cuda

template <>
struct Specialization<routine::getrf_batched, Kokkos::Cuda> {
  static constexpr bool available = true;
  template <class Access>
  static bool handles(const Access& A) {
    return cuda::getrf_batched_fits(A);
  }
  template <class... Args>
  static void apply(const Kokkos::Cuda& exec, const Args&... args) {
    cuda::getrf_batched(exec, args...);
  }
};

}  // namespace basalt
