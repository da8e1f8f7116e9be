#pragma once
// basalt::spmv and basalt::spmm: y = alpha A x + beta y, Y = alpha A X + beta Y.
//
//   basalt::spmv(exec, alpha, A, x, beta, y)   // x: num_cols, y: num_rows, rank-1 Views
//   basalt::spmm(exec, alpha, A, X, beta, Y)   // X: num_cols x k, Y: num_rows x k
//
// A is a Csr, Ell or SellP (formats.hpp) in float, double or their complex types; X and Y are
// LayoutLeft, LayoutRight or strided Views of the same scalar, reachable from exec, and must
// not overlap. With beta = 0, Y is written without being read (BLAS: NaN in Y does not
// survive); with alpha = 0, A and X are not read. Asynchronous on exec.
#include <Kokkos_Core.hpp>
#include <type_traits>

#include "basalt/algorithms/sparse/formats.hpp"
#include "basalt/algorithms/sparse/impl/spmm_portable.hpp"
#include "basalt/core/dispatch.hpp"
#include "basalt/core/errors.hpp"
#include "basalt/core/profiling.hpp"
#if defined(BASALT_ENABLE_CUDA)
#include "basalt/backends/cuda/sparse/spmm.hpp"
#endif

namespace basalt {

namespace impl {

template <int Rank, class ExecSpace, class Matrix, class XView, class YView>
void check_spmm_argument_types() {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "basalt::spmv/spmm: the first argument must be a Kokkos execution space instance");
  static_assert(is_sparse_format_v<Matrix>, "basalt::spmv/spmm: A must be a Csr, Ell or SellP");
  static_assert(Kokkos::is_view<XView>::value && Kokkos::is_view<YView>::value,
                "basalt::spmv/spmm: x and y must be Kokkos Views");
  static_assert(XView::rank == Rank && YView::rank == Rank,
                "basalt::spmv takes rank-1 x and y, basalt::spmm rank-2 X and Y");
  using Scalar = typename Matrix::scalar_type;
  static_assert(std::is_same_v<std::remove_cv_t<typename XView::value_type>, Scalar> &&
                    std::is_same_v<typename YView::value_type, Scalar>,
                "basalt::spmv/spmm: x and y must hold A's scalar type, y not const");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename Matrix::memory_space>::accessible &&
                    is_accessible_from_v<ExecSpace, XView> &&
                    is_accessible_from_v<ExecSpace, YView>,
                "basalt::spmv/spmm: A, x and y must be accessible from the execution space");
}

// The backend's specialization where it takes these operands, else the portable kernel.
template <class ExecSpace, class Matrix, class XView, class YView>
void apply_spmm(const ExecSpace& exec, typename Matrix::scalar_type alpha, const Matrix& A,
                const XView& X, typename Matrix::scalar_type beta, const YView& Y) {
  using Spec = Specialization<routine::spmm, ExecSpace>;
  if constexpr (Spec::available) {
    if constexpr (Spec::template takes<Matrix>) {
      if (Spec::applies(X, Y)) return Spec::apply(exec, alpha, A, X, beta, Y);
    }
  }
  portable::spmm(exec, alpha, A, X, beta, Y);
}

}  // namespace impl

template <class ExecSpace, class Matrix, class XView, class YView>
void spmv(const ExecSpace& exec, typename Matrix::scalar_type alpha, const Matrix& A,
          const XView& x, typename Matrix::scalar_type beta, const YView& y) {
  impl::check_spmm_argument_types<1, ExecSpace, Matrix, XView, YView>();
  require(x.extent(0) == static_cast<size_t>(A.num_cols), "spmv", "x", "x has ", x.extent(0),
          " entries, A has ", A.num_cols, " columns");
  require(y.extent(0) == static_cast<size_t>(A.num_rows), "spmv", "y", "y has ", y.extent(0),
          " entries, A has ", A.num_rows, " rows");
  ProfilingRegion region("basalt::spmv");
  impl::apply_spmm(exec, alpha, A, x, beta, y);
}

template <class ExecSpace, class Matrix, class XView, class YView>
void spmm(const ExecSpace& exec, typename Matrix::scalar_type alpha, const Matrix& A,
          const XView& X, typename Matrix::scalar_type beta, const YView& Y) {
  impl::check_spmm_argument_types<2, ExecSpace, Matrix, XView, YView>();
  require(X.extent(0) == static_cast<size_t>(A.num_cols), "spmm", "X", "X has ", X.extent(0),
          " rows, A has ", A.num_cols, " columns");
  require(Y.extent(0) == static_cast<size_t>(A.num_rows), "spmm", "Y", "Y has ", Y.extent(0),
          " rows, A has ", A.num_rows, " rows");
  require(X.extent(1) == Y.extent(1), "spmm", "Y", "Y has ", Y.extent(1), " columns, X has ",
          X.extent(1));
  ProfilingRegion region("basalt::spmm");
  impl::apply_spmm(exec, alpha, A, X, beta, Y);
}

}  // namespace basalt
