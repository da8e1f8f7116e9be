#pragma once
// The CUDA specialization of basalt::spmv and basalt::spmm for SELL-P matrices with int
// ordinals and offsets and row-major vectors (X(c, j + 1) next to X(c, j); a single vector in
// any stride): takes the Views apart and calls the launcher. Other formats and layouts stay on
// the portable kernel (`takes` and `applies` say which).
#include <Kokkos_Core.hpp>
#include <type_traits>

#include "basalt/backends/cuda/scalar.hpp"
#include "basalt/backends/cuda/sparse/sellp_spmm_launch.hpp"
#include "basalt/core/dispatch.hpp"

namespace basalt {

namespace cuda {

template <class Matrix>
inline constexpr bool sellp_spmm_takes_v =
    Matrix::format == SparseFormat::sellp&& std::is_same_v<typename Matrix::ordinal_type, int>&&
                          std::is_same_v<typename Matrix::offset_type, int>;

// Element (c, j + 1) right after (c, j), or a single vector.
template <class View>
bool vectors_contiguous(const View& V) {
  if constexpr (View::rank == 1)
    return true;
  else
    return V.extent(1) <= 1 || V.stride(1) == 1;
}

// Same contract as basalt::spmm on a SELL-P matrix, without its argument checks and for the
// cases sellp_spmm_takes_v and vectors_contiguous accept.
template <class Matrix, class XView, class YView>
void sellp_spmm(const Kokkos::Cuda& exec, typename Matrix::scalar_type alpha, const Matrix& A,
                const XView& X, typename Matrix::scalar_type beta, const YView& Y) {
  static_assert(sellp_spmm_takes_v<Matrix>,
                "cuda::sellp_spmm: a SellP of int ordinals and offsets");
  using T = scalar_t<typename Matrix::scalar_type>;
  kernels::SellpSpmmProblem problem;
  problem.num_rows = A.num_rows;
  problem.num_vectors = YView::rank == 1 ? 1 : Y.extent(YView::rank - 1);
  problem.slice_size = A.slice_size;
  problem.slice_ptr = A.slice_ptr.data();
  problem.columns = A.columns.data();
  problem.x_row_stride = X.stride(0);
  problem.y_row_stride = Y.stride(0);
  const auto scalar = [](typename Matrix::scalar_type s) { return *device_pointer(&s); };
  kernels::sellp_spmm<T>(exec.cuda_stream(), problem, device_pointer(A.values.data()),
                         scalar(alpha), device_pointer(X.data()), scalar(beta),
                         device_pointer(Y.data()));
}

}  // namespace cuda

template <>
struct Specialization<routine::spmm, Kokkos::Cuda> {
  static constexpr bool available = true;
  // Which matrices it takes (compile time), then which vectors (run time).
  template <class Matrix>
  static constexpr bool takes = cuda::sellp_spmm_takes_v<Matrix>;
  template <class XView, class YView>
  static bool applies(const XView& X, const YView& Y) {
    return cuda::vectors_contiguous(X) && cuda::vectors_contiguous(Y);
  }
  template <class... Args>
  static void apply(const Kokkos::Cuda& exec, const Args&... args) {
    cuda::sellp_spmm(exec, args...);
  }
};

}  // namespace basalt
