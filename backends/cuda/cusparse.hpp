#pragma once
// cuSPARSE's generic CSR SpMV and SpMM on Kokkos Views: the vendor comparison for perf/ and
// tests. Each product object creates its descriptors and workspace once, so a timed call is the
// product alone.
#include <cusparse.h>

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "basalt/backends/cuda/cusolver.hpp"

namespace basalt::cusparse {

inline void check(cusparseStatus_t status, const char* call) {
  if (status != CUSPARSE_STATUS_SUCCESS)
    throw std::runtime_error(std::string("basalt: cuSPARSE error '") +
                             cusparseGetErrorString(status) + "' from " + call);
}

// A cuSPARSE handle bound to an execution space instance's stream.
class Handle {
 public:
  explicit Handle(const Kokkos::Cuda& exec) {
    check(cusparseCreate(&handle_), "cusparseCreate");
    check(cusparseSetStream(handle_, exec.cuda_stream()), "cusparseSetStream");
  }
  ~Handle() { cusparseDestroy(handle_); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  operator cusparseHandle_t() const { return handle_; }

 private:
  cusparseHandle_t handle_ = nullptr;
};

template <class Index>
cusparseIndexType_t index_type() {
  static_assert(std::is_same_v<Index, int> || std::is_same_v<Index, std::int64_t>,
                "cuSPARSE takes 32- or 64-bit signed indices");
  return std::is_same_v<Index, int> ? CUSPARSE_INDEX_32I : CUSPARSE_INDEX_64I;
}

// The CSR descriptor over a matrix's row_map, entries and values Views.
class CsrDescriptor {
 public:
  template <class RowMap, class Entries, class Values>
  CsrDescriptor(std::int64_t rows, std::int64_t cols, const RowMap& row_map, const Entries& entries,
                const Values& values) {
    using Offset = std::remove_cv_t<typename RowMap::value_type>;
    using Ordinal = std::remove_cv_t<typename Entries::value_type>;
    check(cusparseCreateCsr(&descriptor_, rows, cols, values.extent(0),
                            const_cast<Offset*>(row_map.data()), entries.data(), values.data(),
                            index_type<Offset>(), index_type<Ordinal>(), CUSPARSE_INDEX_BASE_ZERO,
                            cusolver::data_type<typename Values::value_type>()),
          "cusparseCreateCsr");
  }
  ~CsrDescriptor() { cusparseDestroySpMat(descriptor_); }
  CsrDescriptor(const CsrDescriptor&) = delete;
  CsrDescriptor& operator=(const CsrDescriptor&) = delete;
  operator cusparseSpMatDescr_t() const { return descriptor_; }

 private:
  cusparseSpMatDescr_t descriptor_ = nullptr;
};

// y = alpha A x + beta y with contiguous x and y.
template <class T>
class Spmv {
 public:
  template <class XView, class YView>
  Spmv(const Handle& handle, const CsrDescriptor& A, const XView& x, const YView& y, T alpha,
       T beta)
      : handle_(handle), A_(A), alpha_(alpha), beta_(beta) {
    check(cusparseCreateDnVec(&x_, x.extent(0), const_cast<T*>(x.data()), cusolver::data_type<T>()),
          "cusparseCreateDnVec");
    check(cusparseCreateDnVec(&y_, y.extent(0), y.data(), cusolver::data_type<T>()),
          "cusparseCreateDnVec");
    std::size_t bytes = 0;
    check(
        cusparseSpMV_bufferSize(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha_, A_, x_, &beta_,
                                y_, cusolver::data_type<T>(), CUSPARSE_SPMV_ALG_DEFAULT, &bytes),
        "cusparseSpMV_bufferSize");
    workspace_ = Kokkos::View<char*, Kokkos::CudaSpace>("cusparse workspace", bytes);
  }
  ~Spmv() {
    cusparseDestroyDnVec(x_);
    cusparseDestroyDnVec(y_);
  }
  Spmv(const Spmv&) = delete;
  Spmv& operator=(const Spmv&) = delete;

  void operator()() const {
    check(cusparseSpMV(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha_, A_, x_, &beta_, y_,
                       cusolver::data_type<T>(), CUSPARSE_SPMV_ALG_DEFAULT, workspace_.data()),
          "cusparseSpMV");
  }

 private:
  const Handle& handle_;
  const CsrDescriptor& A_;
  T alpha_, beta_;
  cusparseDnVecDescr_t x_ = nullptr, y_ = nullptr;
  Kokkos::View<char*, Kokkos::CudaSpace> workspace_;
};

// Y = alpha A X + beta Y with X and Y both LayoutLeft or both LayoutRight, unstrided.
template <class T>
class Spmm {
 public:
  template <class XView, class YView>
  Spmm(const Handle& handle, const CsrDescriptor& A, const XView& X, const YView& Y, T alpha,
       T beta)
      : handle_(handle), A_(A), alpha_(alpha), beta_(beta) {
    constexpr bool row_major = std::is_same_v<typename XView::array_layout, Kokkos::LayoutRight>;
    static_assert(std::is_same_v<typename XView::array_layout, typename YView::array_layout>,
                  "cusparse::Spmm: X and Y must share their layout");
    const auto order = row_major ? CUSPARSE_ORDER_ROW : CUSPARSE_ORDER_COL;
    auto leading = [&](const auto& V) -> std::int64_t {
      return row_major ? V.extent(1) : V.extent(0);
    };
    check(cusparseCreateDnMat(&X_, X.extent(0), X.extent(1), leading(X), const_cast<T*>(X.data()),
                              cusolver::data_type<T>(), order),
          "cusparseCreateDnMat");
    check(cusparseCreateDnMat(&Y_, Y.extent(0), Y.extent(1), leading(Y), Y.data(),
                              cusolver::data_type<T>(), order),
          "cusparseCreateDnMat");
    std::size_t bytes = 0;
    check(cusparseSpMM_bufferSize(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                  CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha_, A_, X_, &beta_, Y_,
                                  cusolver::data_type<T>(), CUSPARSE_SPMM_ALG_DEFAULT, &bytes),
          "cusparseSpMM_bufferSize");
    workspace_ = Kokkos::View<char*, Kokkos::CudaSpace>("cusparse workspace", bytes);
  }
  ~Spmm() {
    cusparseDestroyDnMat(X_);
    cusparseDestroyDnMat(Y_);
  }
  Spmm(const Spmm&) = delete;
  Spmm& operator=(const Spmm&) = delete;

  void operator()() const {
    check(cusparseSpMM(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                       &alpha_, A_, X_, &beta_, Y_, cusolver::data_type<T>(),
                       CUSPARSE_SPMM_ALG_DEFAULT, workspace_.data()),
          "cusparseSpMM");
  }

 private:
  const Handle& handle_;
  const CsrDescriptor& A_;
  T alpha_, beta_;
  cusparseDnMatDescr_t X_ = nullptr, Y_ = nullptr;
  Kokkos::View<char*, Kokkos::CudaSpace> workspace_;
};

}  // namespace basalt::cusparse
