#pragma once
// cuBLAS on Kokkos Views, on the execution space instance's stream: the drivers' gemm, trsm and
// herk on CUDA, with no fence around them (Kokkos Kernels 3.4 can only call cuBLAS on the default
// instance, so its calls have to be fenced on both sides).
#include <cublas_v2.h>

#include <Kokkos_Core.hpp>
#include <stdexcept>
#include <string>

#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/scalar.hpp"
#include "basalt/backends/cuda/side_streams.hpp"
#include "basalt/core/dispatch.hpp"

namespace basalt::cublas {

inline void check(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("basalt: cuBLAS status ") + std::to_string(status) +
                             " from " + call);
}

// One handle per host thread and device, created on first use: cublasCreate costs far more than
// a factorization of a small matrix. The handle follows the stream of each call; each lane of
// streams (side_streams.hpp: the look-ahead's, its side's, the rest) has a handle of its own,
// since a handle's default workspace must not serve two streams at once.
inline cublasHandle_t handle(const Kokkos::Cuda& exec) {
  struct Handles {
    cublasHandle_t by_device[cuda::max_devices][cuda::lanes] = {};
    ~Handles() {
      for (auto& by_lane : by_device)
        for (auto h : by_lane)
          if (h) cublasDestroy(h);
    }
  };
  thread_local Handles handles;
  const int device = cuda::device_slot(exec.cuda_device());
  const int lane = static_cast<int>(cuda::lane_of(device, exec.cuda_stream()));
  cublasHandle_t& h = handles.by_device[device][lane];
  if (!h) {
    int current = 0;
    BASALT_CUDA_CHECK(cudaGetDevice(&current));
    BASALT_CUDA_CHECK(cudaSetDevice(device));
    check(cublasCreate(&h), "cublasCreate");
    BASALT_CUDA_CHECK(cudaSetDevice(current));
  }
  check(cublasSetStream(h, exec.cuda_stream()), "cublasSetStream");
  return h;
}

inline cublasOperation_t operation(Op op) {
  return op == Op::none ? CUBLAS_OP_N : op == Op::transpose ? CUBLAS_OP_T : CUBLAS_OP_C;
}

namespace detail {
// The typed entry points, one overload per precision.
#define BASALT_CUBLAS_GEMM_TRSM(T, letter)                                                        \
  inline cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, \
                             int n, int k, const T* alpha, const T* a, int lda, const T* b,       \
                             int ldb, const T* beta, T* c, int ldc) {                             \
    return cublas##letter##gemm(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);         \
  }                                                                                               \
  inline cublasStatus_t trsm(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo,      \
                             cublasOperation_t op, cublasDiagType_t diag, int m, int n,           \
                             const T* alpha, const T* a, int lda, T* b, int ldb) {                \
    return cublas##letter##trsm(h, side, uplo, op, diag, m, n, alpha, a, lda, b, ldb);            \
  }
BASALT_CUBLAS_GEMM_TRSM(float, S)
BASALT_CUBLAS_GEMM_TRSM(double, D)
BASALT_CUBLAS_GEMM_TRSM(cuFloatComplex, C)
BASALT_CUBLAS_GEMM_TRSM(cuDoubleComplex, Z)
#undef BASALT_CUBLAS_GEMM_TRSM

#define BASALT_CUBLAS_TRMM(T, letter)                                                          \
  inline cublasStatus_t trmm(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo,   \
                             cublasOperation_t op, cublasDiagType_t diag, int m, int n,        \
                             const T* alpha, const T* a, int lda, const T* b, int ldb, T* c,   \
                             int ldc) {                                                        \
    return cublas##letter##trmm(h, side, uplo, op, diag, m, n, alpha, a, lda, b, ldb, c, ldc); \
  }
BASALT_CUBLAS_TRMM(float, S)
BASALT_CUBLAS_TRMM(double, D)
BASALT_CUBLAS_TRMM(cuFloatComplex, C)
BASALT_CUBLAS_TRMM(cuDoubleComplex, Z)
#undef BASALT_CUBLAS_TRMM

// The column stride cuBLAS wants: at least the row count, and at least 1.
template <class View>
int leading_dimension(const View& v) {
  return static_cast<int>(
      std::max<std::size_t>({std::size_t(1), v.extent(0), std::size_t(v.stride(1))}));
}
}  // namespace detail

// Views whose rows are contiguous (column-major, any column stride): what cuBLAS takes.
template <class... Views>
bool column_major(const Views&... views) {
  return ((views.extent(0) <= 1 || views.stride(0) == 1) && ...);
}

// C = alpha op(A) op(B) + beta C
template <class AView, class BView, class CView, class Scalar>
void gemm(const Kokkos::Cuda& exec, Op op_a, Op op_b, Scalar alpha, const AView& A, const BView& B,
          Scalar beta, const CView& C) {
  using T = typename CView::non_const_value_type;
  const T a = alpha, b = beta;
  const int k = static_cast<int>(op_a == Op::none ? A.extent(1) : A.extent(0));
  check(detail::gemm(handle(exec), operation(op_a), operation(op_b), C.extent(0), C.extent(1), k,
                     cuda::device_pointer(&a), cuda::device_pointer(A.data()),
                     detail::leading_dimension(A), cuda::device_pointer(B.data()),
                     detail::leading_dimension(B), cuda::device_pointer(&b),
                     cuda::device_pointer(C.data()), detail::leading_dimension(C)),
        "cublas<t>gemm");
}

// B = alpha op(A)^-1 B (side left) or alpha B op(A)^-1 (side right), A triangular
template <class AView, class BView, class Scalar>
void trsm(const Kokkos::Cuda& exec, ApplySide side, bool lower, Op op, bool unit_diagonal,
          Scalar alpha, const AView& A, const BView& B) {
  using T = typename BView::non_const_value_type;
  const T a = alpha;
  check(detail::trsm(handle(exec), side == ApplySide::left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT,
                     lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER, operation(op),
                     unit_diagonal ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT, B.extent(0),
                     B.extent(1), cuda::device_pointer(&a), cuda::device_pointer(A.data()),
                     detail::leading_dimension(A), cuda::device_pointer(B.data()),
                     detail::leading_dimension(B)),
        "cublas<t>trsm");
}

namespace detail {
// herk for complex scalars, syrk for real ones (whose op is transpose, not conj_transpose).
#define BASALT_CUBLAS_HERK(T, Real, name)                                                          \
  inline cublasStatus_t herk(cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t op, int n, \
                             int k, const Real* alpha, const T* a, int lda, const Real* beta,      \
                             T* c, int ldc) {                                                      \
    if (op == CUBLAS_OP_C && sizeof(T) == sizeof(Real)) op = CUBLAS_OP_T;                          \
    return name(h, uplo, op, n, k, alpha, a, lda, beta, c, ldc);                                   \
  }
BASALT_CUBLAS_HERK(float, float, cublasSsyrk)
BASALT_CUBLAS_HERK(double, double, cublasDsyrk)
BASALT_CUBLAS_HERK(cuFloatComplex, float, cublasCherk)
BASALT_CUBLAS_HERK(cuDoubleComplex, double, cublasZherk)
#undef BASALT_CUBLAS_HERK
}  // namespace detail

// C = alpha op(A) op(A)^H + beta C on one triangle of C, alpha and beta real
template <class AView, class CView, class Real>
void herk(const Kokkos::Cuda& exec, bool lower, Op op, Real alpha, const AView& A, Real beta,
          const CView& C) {
  const int k = static_cast<int>(op == Op::none ? A.extent(1) : A.extent(0));
  check(detail::herk(handle(exec), lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER,
                     operation(op), C.extent(0), k, &alpha, cuda::device_pointer(A.data()),
                     detail::leading_dimension(A), &beta, cuda::device_pointer(C.data()),
                     detail::leading_dimension(C)),
        "cublas<t>herk");
}

// B = alpha op(A) B (left) or alpha B op(A) (right), A triangular. cuBLAS' trmm writes a
// separate C; passing B as C is its documented in-place form.
template <class AView, class BView, class Scalar>
void trmm(const Kokkos::Cuda& exec, ApplySide side, bool lower, Op op, bool unit_diagonal,
          Scalar alpha, const AView& A, const BView& B) {
  using T = typename BView::non_const_value_type;
  const T a = alpha;
  check(detail::trmm(handle(exec), side == ApplySide::left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT,
                     lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER, operation(op),
                     unit_diagonal ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT, B.extent(0),
                     B.extent(1), cuda::device_pointer(&a), cuda::device_pointer(A.data()),
                     detail::leading_dimension(A), cuda::device_pointer(B.data()),
                     detail::leading_dimension(B), cuda::device_pointer(B.data()),
                     detail::leading_dimension(B)),
        "cublas<t>trmm");
}

}  // namespace basalt::cublas
