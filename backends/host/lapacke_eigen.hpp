#pragma once
// LAPACKE's Hermitian eigensolvers and triangular inverse on small host Views: the
// Rayleigh-Ritz step and block orthonormalization of LOBPCG (algorithms/sparse/impl/lobpcg.hpp),
// and the tests' reference. Column-major (LayoutLeft) Views; each returns LAPACK's info.
#include "basalt/backends/host/lapacke.hpp"

namespace basalt::lapacke {

namespace detail {

inline lapack_int heevd(int l, lapack_int n, float* a, lapack_int lda, float* w) {
  return LAPACKE_ssyevd(l, 'V', 'U', n, a, lda, w);
}
inline lapack_int heevd(int l, lapack_int n, double* a, lapack_int lda, double* w) {
  return LAPACKE_dsyevd(l, 'V', 'U', n, a, lda, w);
}
inline lapack_int heevd(int l, lapack_int n, std::complex<float>* a, lapack_int lda, float* w) {
  return LAPACKE_cheevd(l, 'V', 'U', n, a, lda, w);
}
inline lapack_int heevd(int l, lapack_int n, std::complex<double>* a, lapack_int lda, double* w) {
  return LAPACKE_zheevd(l, 'V', 'U', n, a, lda, w);
}

inline lapack_int hegvd(int l, lapack_int n, float* a, lapack_int lda, float* b, lapack_int ldb,
                        float* w) {
  return LAPACKE_ssygvd(l, 1, 'V', 'U', n, a, lda, b, ldb, w);
}
inline lapack_int hegvd(int l, lapack_int n, double* a, lapack_int lda, double* b, lapack_int ldb,
                        double* w) {
  return LAPACKE_dsygvd(l, 1, 'V', 'U', n, a, lda, b, ldb, w);
}
inline lapack_int hegvd(int l, lapack_int n, std::complex<float>* a, lapack_int lda,
                        std::complex<float>* b, lapack_int ldb, float* w) {
  return LAPACKE_chegvd(l, 1, 'V', 'U', n, a, lda, b, ldb, w);
}
inline lapack_int hegvd(int l, lapack_int n, std::complex<double>* a, lapack_int lda,
                        std::complex<double>* b, lapack_int ldb, double* w) {
  return LAPACKE_zhegvd(l, 1, 'V', 'U', n, a, lda, b, ldb, w);
}

inline lapack_int trtri(int l, lapack_int n, float* a, lapack_int lda) {
  return LAPACKE_strtri(l, 'U', 'N', n, a, lda);
}
inline lapack_int trtri(int l, lapack_int n, double* a, lapack_int lda) {
  return LAPACKE_dtrtri(l, 'U', 'N', n, a, lda);
}
inline lapack_int trtri(int l, lapack_int n, std::complex<float>* a, lapack_int lda) {
  return LAPACKE_ctrtri(l, 'U', 'N', n, a, lda);
}
inline lapack_int trtri(int l, lapack_int n, std::complex<double>* a, lapack_int lda) {
  return LAPACKE_ztrtri(l, 'U', 'N', n, a, lda);
}

template <class View>
lapack_int leading_dimension(const View& A) {
  return std::max<lapack_int>(1, std::max<lapack_int>(A.stride(1), A.extent(0)));
}

}  // namespace detail

// xSYEVD/xHEEVD: the eigenvalues of the Hermitian A (upper triangle read) in w, ascending, and
// its orthonormal eigenvectors in A's columns.
template <class AView>
int heevd(const AView& A, real_t<typename AView::value_type>* w) {
  static_assert(std::is_same_v<typename AView::array_layout, Kokkos::LayoutLeft>);
  if (A.extent(0) == 0) return 0;
  return detail::heevd(LAPACK_COL_MAJOR, A.extent(0), detail::data(A), detail::leading_dimension(A),
                       w);
}

// xSYGVD/xHEGVD, A x = lambda B x with B Hermitian positive definite (upper triangles read):
// ascending eigenvalues in w, B-orthonormal eigenvectors in A's columns, B's Cholesky factor in
// B. info > n: B is not positive definite.
template <class AView, class BView>
int hegvd(const AView& A, const BView& B, real_t<typename AView::value_type>* w) {
  static_assert(std::is_same_v<typename AView::array_layout, Kokkos::LayoutLeft> &&
                std::is_same_v<typename BView::array_layout, Kokkos::LayoutLeft>);
  if (A.extent(0) == 0) return 0;
  return detail::hegvd(LAPACK_COL_MAJOR, A.extent(0), detail::data(A), detail::leading_dimension(A),
                       detail::data(B), detail::leading_dimension(B), w);
}

// xTRTRI on the upper triangle of A, non-unit diagonal: A := A^-1 there.
template <class AView>
int trtri_upper(const AView& A) {
  static_assert(std::is_same_v<typename AView::array_layout, Kokkos::LayoutLeft>);
  if (A.extent(0) == 0) return 0;
  return detail::trtri(LAPACK_COL_MAJOR, A.extent(0), detail::data(A),
                       detail::leading_dimension(A));
}

}  // namespace basalt::lapacke
