#pragma once
// cuSOLVER on Kokkos Views: the CUDA vendor path, kept callable for tests and perf/.
#include <cusolverDn.h>

#include <Kokkos_Core.hpp>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "basalt/backends/cuda/scalar.hpp"
#include "basalt/core/dispatch.hpp"
#include "basalt/core/errors.hpp"

namespace basalt::cusolver {

inline void check(cusolverStatus_t status, const char* call) {
  if (status != CUSOLVER_STATUS_SUCCESS)
    throw std::runtime_error(std::string("basalt: cuSOLVER status ") + std::to_string(status) +
                             " from " + call);
}

// A cuSOLVER handle bound to an execution space instance's stream.
class Handle {
 public:
  explicit Handle(const Kokkos::Cuda& exec) {
    check(cusolverDnCreate(&handle_), "cusolverDnCreate");
    check(cusolverDnSetStream(handle_, exec.cuda_stream()), "cusolverDnSetStream");
  }
  ~Handle() { cusolverDnDestroy(handle_); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  operator cusolverDnHandle_t() const { return handle_; }

 private:
  cusolverDnHandle_t handle_ = nullptr;
};

namespace detail {
inline cusolverStatus_t laswp(cusolverDnHandle_t h, int n, float* a, int lda, int k1, int k2,
                              const int* ipiv, int incx) {
  return cusolverDnSlaswp(h, n, a, lda, k1, k2, ipiv, incx);
}
inline cusolverStatus_t laswp(cusolverDnHandle_t h, int n, double* a, int lda, int k1, int k2,
                              const int* ipiv, int incx) {
  return cusolverDnDlaswp(h, n, a, lda, k1, k2, ipiv, incx);
}
inline cusolverStatus_t laswp(cusolverDnHandle_t h, int n, cuFloatComplex* a, int lda, int k1,
                              int k2, const int* ipiv, int incx) {
  return cusolverDnClaswp(h, n, a, lda, k1, k2, ipiv, incx);
}
inline cusolverStatus_t laswp(cusolverDnHandle_t h, int n, cuDoubleComplex* a, int lda, int k1,
                              int k2, const int* ipiv, int incx) {
  return cusolverDnZlaswp(h, n, a, lda, k1, k2, ipiv, incx);
}
}  // namespace detail

template <class T>
cudaDataType data_type() {
  using S = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<S, float>) return CUDA_R_32F;
  if constexpr (std::is_same_v<S, double>) return CUDA_R_64F;
  if constexpr (std::is_same_v<S, Kokkos::complex<float>>) return CUDA_C_32F;
  if constexpr (std::is_same_v<S, Kokkos::complex<double>>) return CUDA_C_64F;
}

// The parameters and workspaces of one call of a 64-bit cuSOLVER routine (Xgetrf, Xpotrf,
// Xgeqrf) for one shape, held between calls so that only the factorization is timed.
// query(params, &device_bytes, &host_bytes) makes the routine's _bufferSize call.
class XWorkspace {
 public:
  template <class Query>
  explicit XWorkspace(const Query& query) {
    check(cusolverDnCreateParams(&params), "cusolverDnCreateParams");
    std::size_t device_bytes = 0, host_bytes = 0;
    query(params, &device_bytes, &host_bytes);
    device = Kokkos::View<char*, Kokkos::CudaSpace>("cusolver workspace", device_bytes);
    host.resize(host_bytes);
  }
  ~XWorkspace() { cusolverDnDestroyParams(params); }
  XWorkspace(const XWorkspace&) = delete;
  XWorkspace& operator=(const XWorkspace&) = delete;

  cusolverDnParams_t params = nullptr;
  Kokkos::View<char*, Kokkos::CudaSpace> device;
  std::vector<char> host;
};

// cuSOLVER's 64-bit Xgetrf for one m x n column-major shape (an XWorkspace). Pivots are 64-bit,
// as that API returns them.
template <class T>
class Getrf {
 public:
  Getrf(const Handle& handle, std::int64_t m, std::int64_t n, std::int64_t lda)
      : handle_(handle),
        m_(m),
        n_(n),
        lda_(lda),
        work_([&](cusolverDnParams_t params, std::size_t* device_bytes, std::size_t* host_bytes) {
          check(cusolverDnXgetrf_bufferSize(handle, params, m, n, data_type<T>(), nullptr, lda,
                                            data_type<T>(), device_bytes, host_bytes),
                "cusolverDnXgetrf_bufferSize");
        }) {}

  // Factors A in place; info lands in the device scalar `info`.
  template <class AView, class PivView, class InfoView>
  void operator()(const AView& A, const PivView& ipiv, const InfoView& info) {
    check(cusolverDnXgetrf(handle_, work_.params, m_, n_, data_type<T>(), A.data(), lda_,
                           ipiv.data(), data_type<T>(), work_.device.data(), work_.device.extent(0),
                           work_.host.data(), work_.host.size(), info.data()),
          "cusolverDnXgetrf");
  }

 private:
  const Handle& handle_;
  std::int64_t m_, n_, lda_;
  XWorkspace work_;
};

// cuSOLVER's 64-bit Xpotrf for one n x n column-major shape (an XWorkspace).
template <class T>
class Potrf {
 public:
  Potrf(const Handle& handle, Triangle uplo, std::int64_t n, std::int64_t lda)
      : handle_(handle),
        uplo_(uplo == Triangle::lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER),
        n_(n),
        lda_(lda),
        work_([&](cusolverDnParams_t params, std::size_t* device_bytes, std::size_t* host_bytes) {
          check(cusolverDnXpotrf_bufferSize(handle, params, uplo_, n, data_type<T>(), nullptr, lda,
                                            data_type<T>(), device_bytes, host_bytes),
                "cusolverDnXpotrf_bufferSize");
        }) {}

  // Factors A in place; info lands in the device scalar `info`.
  template <class AView, class InfoView>
  void operator()(const AView& A, const InfoView& info) {
    check(cusolverDnXpotrf(handle_, work_.params, uplo_, n_, data_type<T>(), A.data(), lda_,
                           data_type<T>(), work_.device.data(), work_.device.extent(0),
                           work_.host.data(), work_.host.size(), info.data()),
          "cusolverDnXpotrf");
  }

 private:
  const Handle& handle_;
  cublasFillMode_t uplo_;
  std::int64_t n_, lda_;
  XWorkspace work_;
};

// cuSOLVER's 64-bit Xgeqrf for one m x n column-major shape (an XWorkspace).
template <class T>
class Geqrf {
 public:
  Geqrf(const Handle& handle, std::int64_t m, std::int64_t n, std::int64_t lda)
      : handle_(handle),
        m_(m),
        n_(n),
        lda_(lda),
        work_([&](cusolverDnParams_t params, std::size_t* device_bytes, std::size_t* host_bytes) {
          check(cusolverDnXgeqrf_bufferSize(handle, params, m, n, data_type<T>(), nullptr, lda,
                                            data_type<T>(), nullptr, data_type<T>(), device_bytes,
                                            host_bytes),
                "cusolverDnXgeqrf_bufferSize");
        }) {}

  // Factors A in place, tau receiving min(m, n) entries; info lands in the device scalar `info`.
  template <class AView, class TauView, class InfoView>
  void operator()(const AView& A, const TauView& tau, const InfoView& info) {
    check(
        cusolverDnXgeqrf(handle_, work_.params, m_, n_, data_type<T>(), A.data(), lda_,
                         data_type<T>(), tau.data(), data_type<T>(), work_.device.data(),
                         work_.device.extent(0), work_.host.data(), work_.host.size(), info.data()),
        "cusolverDnXgeqrf");
  }

 private:
  const Handle& handle_;
  std::int64_t m_, n_, lda_;
  XWorkspace work_;
};

namespace detail {
// xORMQR / xUNMQR and their workspace queries, one overload per precision.
#define BASALT_CUSOLVER_ORMQR(T, name)                                                             \
  inline cusolverStatus_t ormqr_buffer(cusolverDnHandle_t h, cublasSideMode_t side,                \
                                       cublasOperation_t trans, int m, int n, int k, const T* a,   \
                                       int lda, const T* tau, const T* c, int ldc, int* lwork) {   \
    return cusolverDn##name##_bufferSize(h, side, trans, m, n, k, a, lda, tau, c, ldc, lwork);     \
  }                                                                                                \
  inline cusolverStatus_t ormqr(cusolverDnHandle_t h, cublasSideMode_t side,                       \
                                cublasOperation_t trans, int m, int n, int k, const T* a, int lda, \
                                const T* tau, T* c, int ldc, T* work, int lwork, int* info) {      \
    return cusolverDn##name(h, side, trans, m, n, k, a, lda, tau, c, ldc, work, lwork, info);      \
  }
BASALT_CUSOLVER_ORMQR(float, Sormqr)
BASALT_CUSOLVER_ORMQR(double, Dormqr)
BASALT_CUSOLVER_ORMQR(cuFloatComplex, Cunmqr)
BASALT_CUSOLVER_ORMQR(cuDoubleComplex, Zunmqr)
#undef BASALT_CUSOLVER_ORMQR
}  // namespace detail

// cuSOLVER's xORMQR / xUNMQR, C = op(Q) C or C op(Q) with the k = tau's length reflectors of A,
// for one shape, its workspace held between calls (Op::transpose means the adjoint for complex).
template <class T>
class Ormqr {
 public:
  template <class AView, class TauView, class CView>
  Ormqr(const Handle& handle, ApplySide side, Op op, const AView& A, const TauView& tau,
        const CView& C)
      : handle_(handle),
        side_(side == ApplySide::left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT),
        trans_(op == Op::none                ? CUBLAS_OP_N
               : std::is_floating_point_v<T> ? CUBLAS_OP_T
                                             : CUBLAS_OP_C) {
    require(A.stride(0) == 1 && C.stride(0) == 1, "cusolver::Ormqr", "A",
            "cuSOLVER takes column-major matrices");
    int lwork = 0;
    check(detail::ormqr_buffer(handle_, side_, trans_, C.extent(0), C.extent(1), tau.extent(0),
                               cuda::device_pointer(A.data()), leading(A),
                               cuda::device_pointer(tau.data()), cuda::device_pointer(C.data()),
                               leading(C), &lwork),
          "cusolverDn<t>ormqr_bufferSize");
    work_ = Kokkos::View<T*, Kokkos::CudaSpace>("cusolver workspace", std::max(lwork, 1));
  }

  // info lands in the device scalar `info`.
  template <class AView, class TauView, class CView, class InfoView>
  void operator()(const AView& A, const TauView& tau, const CView& C, const InfoView& info) {
    check(
        detail::ormqr(handle_, side_, trans_, C.extent(0), C.extent(1), tau.extent(0),
                      cuda::device_pointer(A.data()), leading(A), cuda::device_pointer(tau.data()),
                      cuda::device_pointer(C.data()), leading(C),
                      cuda::device_pointer(work_.data()), work_.extent(0), info.data()),
        "cusolverDn<t>ormqr");
  }

 private:
  template <class View>
  static int leading(const View& v) {
    return std::max<int>(1, std::max<int>(v.stride(1), v.extent(0)));
  }
  const Handle& handle_;
  cublasSideMode_t side_;
  cublasOperation_t trans_;
  Kokkos::View<T*, Kokkos::CudaSpace> work_;
};

// cuSOLVER's xlaswp, forward only, on a column-major device View.
template <class AView, class PivView>
void laswp(const Handle& handle, const AView& A, const PivView& ipiv, int k1, int k2) {
  require(A.stride(0) == 1, "cusolver::laswp", "A", "cuSOLVER's laswp takes column-major A");
  const int lda = std::max<int>(1, std::max<int>(A.stride(1), A.extent(0)));
  check(detail::laswp(handle, A.extent(1), cuda::device_pointer(A.data()), lda, k1, k2, ipiv.data(),
                      1),
        "cusolverDn<t>laswp");
}

}  // namespace basalt::cusolver
