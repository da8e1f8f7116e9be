#pragma once
// The vendor's batched factorizations on a fixed-size batch whose matrices are column-major
// (basalt::make_batch's layout): cuBLAS getrfBatched and geqrfBatched, cuSOLVER potrfBatched
// (lower). For perf/ and tests; all of them take device arrays of matrix pointers.
#include <cublas_v2.h>
#include <cusolverDn.h>

#include <Kokkos_Core.hpp>
#include <stdexcept>
#include <string>

#include "basalt/backends/cuda/cublas.hpp"
#include "basalt/backends/cuda/cusolver.hpp"
#include "basalt/backends/cuda/scalar.hpp"
#include "basalt/core/errors.hpp"

namespace basalt::cublas {

namespace detail {
inline cublasStatus_t getrf_batched(cublasHandle_t h, int n, float* const a[], int lda, int* p,
                                    int* info, int count) {
  return cublasSgetrfBatched(h, n, a, lda, p, info, count);
}
inline cublasStatus_t getrf_batched(cublasHandle_t h, int n, double* const a[], int lda, int* p,
                                    int* info, int count) {
  return cublasDgetrfBatched(h, n, a, lda, p, info, count);
}
inline cublasStatus_t getrf_batched(cublasHandle_t h, int n, cuFloatComplex* const a[], int lda,
                                    int* p, int* info, int count) {
  return cublasCgetrfBatched(h, n, a, lda, p, info, count);
}
inline cublasStatus_t getrf_batched(cublasHandle_t h, int n, cuDoubleComplex* const a[], int lda,
                                    int* p, int* info, int count) {
  return cublasZgetrfBatched(h, n, a, lda, p, info, count);
}
inline cublasStatus_t geqrf_batched(cublasHandle_t h, int m, int n, float* const a[], int lda,
                                    float* const tau[], int* info, int count) {
  return cublasSgeqrfBatched(h, m, n, a, lda, tau, info, count);
}
inline cublasStatus_t geqrf_batched(cublasHandle_t h, int m, int n, double* const a[], int lda,
                                    double* const tau[], int* info, int count) {
  return cublasDgeqrfBatched(h, m, n, a, lda, tau, info, count);
}
inline cublasStatus_t geqrf_batched(cublasHandle_t h, int m, int n, cuFloatComplex* const a[],
                                    int lda, cuFloatComplex* const tau[], int* info, int count) {
  return cublasCgeqrfBatched(h, m, n, a, lda, tau, info, count);
}
inline cublasStatus_t geqrf_batched(cublasHandle_t h, int m, int n, cuDoubleComplex* const a[],
                                    int lda, cuDoubleComplex* const tau[], int* info, int count) {
  return cublasZgeqrfBatched(h, m, n, a, lda, tau, info, count);
}
}  // namespace detail

// A device array holding the address of every matrix of a rank-3 batch View (batch, m, n),
// or of every vector of a rank-2 one (batch, k). Addresses as integers: a View of pointers
// would be a View of rank 2.
template <class BatchView>
Kokkos::View<std::uintptr_t*, Kokkos::CudaSpace> pointers(const BatchView& batch) {
  Kokkos::View<std::uintptr_t*, Kokkos::CudaSpace> all("basalt::cublas::pointers", batch.extent(0));
  const std::uintptr_t base = reinterpret_cast<std::uintptr_t>(batch.data());
  const std::uintptr_t stride = batch.stride(0) * sizeof(typename BatchView::value_type);
  Kokkos::parallel_for(
      "basalt::cublas::pointers", Kokkos::RangePolicy<Kokkos::Cuda>(0, batch.extent(0)),
      KOKKOS_LAMBDA(const int b) { all(b) = base + b * stride; });
  return all;
}

// pointers()'s array as the vendor's array of matrix pointers.
template <class BatchView>
auto pointer_array(const Kokkos::View<std::uintptr_t*, Kokkos::CudaSpace>& all) {
  return reinterpret_cast<cuda::scalar_t<typename BatchView::value_type>**>(all.data());
}

template <class BatchView>
int leading_dimension(const char* routine, const BatchView& A) {
  require(A.stride(1) == 1 || A.extent(1) <= 1, routine, "A",
          "cuBLAS takes column-major matrices (make_batch's layout)");
  return static_cast<int>(
      std::max<std::int64_t>(1, std::max<std::int64_t>(A.stride(2), A.extent(1))));
}

// cuBLAS getrfBatched on every n x n matrix of A (pointers: cublas::pointers(A)).
template <class BatchView, class PointerView, class PivView, class InfoView>
void getrf_batched(cublasHandle_t handle, const BatchView& A, const PointerView& matrices,
                   const PivView& ipiv, const InfoView& info) {
  check(detail::getrf_batched(handle, static_cast<int>(A.extent(1)),
                              pointer_array<BatchView>(matrices),
                              leading_dimension("cublas::getrf_batched", A), ipiv.data(),
                              info.data(), static_cast<int>(A.extent(0))),
        "cublas<t>getrfBatched");
}

// cuBLAS geqrfBatched on every m x n matrix of A; tau_pointers: cublas::pointers(tau).
template <class BatchView, class PointerView, class TauPointerView>
void geqrf_batched(cublasHandle_t handle, const BatchView& A, const PointerView& matrices,
                   const TauPointerView& taus) {
  int info = 0;  // argument errors only, on the host
  check(detail::geqrf_batched(handle, static_cast<int>(A.extent(1)), static_cast<int>(A.extent(2)),
                              pointer_array<BatchView>(matrices),
                              leading_dimension("cublas::geqrf_batched", A),
                              pointer_array<BatchView>(taus), &info, static_cast<int>(A.extent(0))),
        "cublas<t>geqrfBatched");
  require(info == 0, "cublas::geqrf_batched", "info", "cuBLAS reports argument ", -info);
}

}  // namespace basalt::cublas

namespace basalt::cusolver {

namespace detail {
inline cusolverStatus_t potrf_batched(cusolverDnHandle_t h, int n, float* a[], int lda, int* info,
                                      int count) {
  return cusolverDnSpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, a, lda, info, count);
}
inline cusolverStatus_t potrf_batched(cusolverDnHandle_t h, int n, double* a[], int lda, int* info,
                                      int count) {
  return cusolverDnDpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, a, lda, info, count);
}
inline cusolverStatus_t potrf_batched(cusolverDnHandle_t h, int n, cuFloatComplex* a[], int lda,
                                      int* info, int count) {
  return cusolverDnCpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, a, lda, info, count);
}
inline cusolverStatus_t potrf_batched(cusolverDnHandle_t h, int n, cuDoubleComplex* a[], int lda,
                                      int* info, int count) {
  return cusolverDnZpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, a, lda, info, count);
}
}  // namespace detail

// cuSOLVER potrfBatched (lower) on every n x n matrix of A (pointers: cublas::pointers(A)).
template <class BatchView, class PointerView, class InfoView>
void potrf_batched(const Handle& handle, const BatchView& A, const PointerView& matrices,
                   const InfoView& info) {
  check(detail::potrf_batched(handle, static_cast<int>(A.extent(1)),
                              cublas::pointer_array<BatchView>(matrices),
                              cublas::leading_dimension("cusolver::potrf_batched", A), info.data(),
                              static_cast<int>(A.extent(0))),
        "cusolverDn<t>potrfBatched");
}

}  // namespace basalt::cusolver
