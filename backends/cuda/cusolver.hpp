#pragma once
// cuSOLVER on Kokkos Views: the CUDA vendor path, kept callable for tests and perf/.
#include <cusolverDn.h>

#include <Kokkos_Core.hpp>
#include <stdexcept>
#include <string>

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
