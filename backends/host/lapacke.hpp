#pragma once
// LAPACKE (Debian's OpenBLAS) on host Kokkos Views: the host vendor path, and the reference
// the tests check against.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <complex>
#include <type_traits>

#include "basalt/core/dispatch.hpp"
#include "basalt/core/errors.hpp"
#include "basalt/core/views.hpp"
#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <lapacke.h>

namespace basalt::lapacke {

namespace detail {

template <class T>
struct lapack_type {
  using type = T;
};
template <class T>
struct lapack_type<Kokkos::complex<T>> {
  using type = std::complex<T>;
};

template <class View>
auto* data(const View& A) {
  using T = typename lapack_type<typename View::value_type>::type;
  return reinterpret_cast<T*>(A.data());
}

// LAPACKE's layout and leading dimension for a View with one unit stride.
template <class View>
std::pair<int, lapack_int> layout(const View& A) {
  if (A.stride(0) == 1 || A.extent(0) <= 1)
    return {LAPACK_COL_MAJOR, std::max<lapack_int>(1, std::max(A.stride(1), A.extent(0)))};
  require(A.stride(1) == 1 || A.extent(1) <= 1, "lapacke", "A",
          "LAPACKE needs a View with unit stride in one dimension");
  return {LAPACK_ROW_MAJOR, std::max<lapack_int>(1, std::max(A.stride(0), A.extent(1)))};
}

inline lapack_int laswp(int l, lapack_int n, float* a, lapack_int lda, lapack_int k1, lapack_int k2,
                        const lapack_int* ipiv, lapack_int incx) {
  return LAPACKE_slaswp(l, n, a, lda, k1, k2, ipiv, incx);
}
inline lapack_int laswp(int l, lapack_int n, double* a, lapack_int lda, lapack_int k1,
                        lapack_int k2, const lapack_int* ipiv, lapack_int incx) {
  return LAPACKE_dlaswp(l, n, a, lda, k1, k2, ipiv, incx);
}
inline lapack_int laswp(int l, lapack_int n, std::complex<float>* a, lapack_int lda, lapack_int k1,
                        lapack_int k2, const lapack_int* ipiv, lapack_int incx) {
  return LAPACKE_claswp(l, n, a, lda, k1, k2, ipiv, incx);
}
inline lapack_int laswp(int l, lapack_int n, std::complex<double>* a, lapack_int lda, lapack_int k1,
                        lapack_int k2, const lapack_int* ipiv, lapack_int incx) {
  return LAPACKE_zlaswp(l, n, a, lda, k1, k2, ipiv, incx);
}

inline lapack_int getrf(int l, lapack_int m, lapack_int n, float* a, lapack_int lda,
                        lapack_int* ipiv) {
  return LAPACKE_sgetrf(l, m, n, a, lda, ipiv);
}
inline lapack_int getrf(int l, lapack_int m, lapack_int n, double* a, lapack_int lda,
                        lapack_int* ipiv) {
  return LAPACKE_dgetrf(l, m, n, a, lda, ipiv);
}
inline lapack_int getrf(int l, lapack_int m, lapack_int n, std::complex<float>* a, lapack_int lda,
                        lapack_int* ipiv) {
  return LAPACKE_cgetrf(l, m, n, a, lda, ipiv);
}
inline lapack_int getrf(int l, lapack_int m, lapack_int n, std::complex<double>* a, lapack_int lda,
                        lapack_int* ipiv) {
  return LAPACKE_zgetrf(l, m, n, a, lda, ipiv);
}

inline lapack_int potrf(int l, char uplo, lapack_int n, float* a, lapack_int lda) {
  return LAPACKE_spotrf(l, uplo, n, a, lda);
}
inline lapack_int potrf(int l, char uplo, lapack_int n, double* a, lapack_int lda) {
  return LAPACKE_dpotrf(l, uplo, n, a, lda);
}
inline lapack_int potrf(int l, char uplo, lapack_int n, std::complex<float>* a, lapack_int lda) {
  return LAPACKE_cpotrf(l, uplo, n, a, lda);
}
inline lapack_int potrf(int l, char uplo, lapack_int n, std::complex<double>* a, lapack_int lda) {
  return LAPACKE_zpotrf(l, uplo, n, a, lda);
}

inline lapack_int geqrf(int l, lapack_int m, lapack_int n, float* a, lapack_int lda, float* tau) {
  return LAPACKE_sgeqrf(l, m, n, a, lda, tau);
}
inline lapack_int geqrf(int l, lapack_int m, lapack_int n, double* a, lapack_int lda, double* tau) {
  return LAPACKE_dgeqrf(l, m, n, a, lda, tau);
}
inline lapack_int geqrf(int l, lapack_int m, lapack_int n, std::complex<float>* a, lapack_int lda,
                        std::complex<float>* tau) {
  return LAPACKE_cgeqrf(l, m, n, a, lda, tau);
}
inline lapack_int geqrf(int l, lapack_int m, lapack_int n, std::complex<double>* a, lapack_int lda,
                        std::complex<double>* tau) {
  return LAPACKE_zgeqrf(l, m, n, a, lda, tau);
}

// QR's companions: xORGQR / xUNGQR, xORMQR / xUNMQR (trans 'C' for complex), xGELS.
#define BASALT_LAPACKE_QR(T, orgqr_name, ormqr_name, gels_name)                                \
  inline lapack_int orgqr(int l, lapack_int m, lapack_int n, lapack_int k, T* a, lapack_int lda, \
                          const T* tau) {                                                      \
    return LAPACKE_##orgqr_name(l, m, n, k, a, lda, tau);                                      \
  }                                                                                            \
  inline lapack_int ormqr(int l, char side, char trans, lapack_int m, lapack_int n,             \
                          lapack_int k, const T* a, lapack_int lda, const T* tau, T* c,         \
                          lapack_int ldc) {                                                    \
    return LAPACKE_##ormqr_name(l, side, trans, m, n, k, a, lda, tau, c, ldc);                 \
  }                                                                                            \
  inline lapack_int gels(int l, char trans, lapack_int m, lapack_int n, lapack_int nrhs, T* a,  \
                         lapack_int lda, T* b, lapack_int ldb) {                               \
    return LAPACKE_##gels_name(l, trans, m, n, nrhs, a, lda, b, ldb);                          \
  }
BASALT_LAPACKE_QR(float, sorgqr, sormqr, sgels)
BASALT_LAPACKE_QR(double, dorgqr, dormqr, dgels)
BASALT_LAPACKE_QR(std::complex<float>, cungqr, cunmqr, cgels)
BASALT_LAPACKE_QR(std::complex<double>, zungqr, zunmqr, zgels)
#undef BASALT_LAPACKE_QR

}  // namespace detail

// LAPACKE_xpotrf on a host View (column-major, or row-major with the triangle mirrored by
// LAPACKE): returns LAPACK's info.
template <class AView>
int potrf(Triangle triangle, const AView& A) {
  static_assert(is_matrix_view_v<AView>);
  if (A.extent(0) == 0) return 0;
  const auto [l, lda] = detail::layout(A);
  return detail::potrf(l, triangle == Triangle::lower ? 'L' : 'U', A.extent(0), detail::data(A),
                       lda);
}

// LAPACKE_xgeqrf on a host View; tau holds min(m, n) entries.
template <class AView, class TauView>
void geqrf(const AView& A, const TauView& tau) {
  static_assert(is_matrix_view_v<AView>);
  if (A.extent(0) == 0 || A.extent(1) == 0) return;
  const auto [l, lda] = detail::layout(A);
  const lapack_int info =
      detail::geqrf(l, A.extent(0), A.extent(1), detail::data(A), lda, detail::data(tau));
  require(info == 0, "lapacke::geqrf", "info", "LAPACKE_xgeqrf returned ", info);
}

// LAPACKE_xgetrf on a host View: returns LAPACK's info.
template <class AView, class PivView>
int getrf(const AView& A, const PivView& ipiv) {
  static_assert(is_matrix_view_v<AView> && is_pivot_view_v<PivView>);
  if (A.extent(0) == 0 || A.extent(1) == 0) return 0;
  const auto [l, lda] = detail::layout(A);
  return detail::getrf(l, A.extent(0), A.extent(1), detail::data(A), lda, ipiv.data());
}

// LAPACKE_xlaswp on host Views; same arguments as basalt::laswp without the execution space.
template <class AView, class PivView>
void laswp(const AView& A, const PivView& ipiv, int k1, int k2,
           Direction direction = Direction::forward) {
  static_assert(is_matrix_view_v<AView> && is_pivot_view_v<PivView>);
  static_assert(is_accessible_from_v<Kokkos::DefaultHostExecutionSpace, AView> &&
                    is_accessible_from_v<Kokkos::DefaultHostExecutionSpace, PivView>,
                "basalt::lapacke works on host Views");
  static_assert(sizeof(lapack_int) == sizeof(int), "LAPACKE built with 64-bit integers");
  if (A.extent(1) == 0 || k2 < k1) return;
  const auto [l, lda] = detail::layout(A);
  const lapack_int info = detail::laswp(l, A.extent(1), detail::data(A), lda, k1, k2, ipiv.data(),
                                        direction == Direction::forward ? 1 : -1);
  require(info == 0, "lapacke::laswp", "info", "LAPACKE_xlaswp returned ", info);
}

// LAPACKE_xorgqr / xungqr on column-major host Views: Q's first n columns from k = tau's
// length reflectors.
template <class AView, class TauView>
void orgqr(const AView& A, const TauView& tau) {
  static_assert(is_matrix_view_v<AView>);
  if (A.extent(1) == 0) return;
  const auto [l, lda] = detail::layout(A);
  require(l == LAPACK_COL_MAJOR, "lapacke::orgqr", "A", "column-major A only");
  const lapack_int info = detail::orgqr(l, A.extent(0), A.extent(1), tau.extent(0),
                                        detail::data(A), lda, detail::data(tau));
  require(info == 0, "lapacke::orgqr", "info", "LAPACKE_xorgqr returned ", info);
}

// LAPACKE_xormqr / xunmqr on column-major host Views (Op::transpose means 'C' for complex).
template <class AView, class TauView, class CView>
void ormqr(ApplySide side, Op op, const AView& A, const TauView& tau, const CView& C) {
  static_assert(is_matrix_view_v<AView> && is_matrix_view_v<CView>);
  if (C.extent(0) == 0 || C.extent(1) == 0) return;
  const auto [la, lda] = detail::layout(A);
  const auto [lc, ldc] = detail::layout(C);
  require(la == LAPACK_COL_MAJOR && lc == LAPACK_COL_MAJOR, "lapacke::ormqr", "A",
          "column-major A and C only");
  const bool real = std::is_floating_point_v<typename CView::non_const_value_type>;
  const char trans = op == Op::none ? 'N' : real ? 'T' : 'C';
  const lapack_int info = detail::ormqr(
      lc, side == ApplySide::left ? 'L' : 'R', trans, C.extent(0), C.extent(1), tau.extent(0),
      detail::data(A), std::max<lapack_int>(lda, 1), detail::data(tau), detail::data(C), ldc);
  require(info == 0, "lapacke::ormqr", "info", "LAPACKE_xormqr returned ", info);
}

// LAPACKE_xgels on column-major host Views: returns LAPACK's info.
template <class AView, class BView>
int gels(Op op, const AView& A, const BView& B) {
  static_assert(is_matrix_view_v<AView> && is_matrix_view_v<BView>);
  const lapack_int lda = std::max<lapack_int>({1, lapack_int(A.extent(0)), lapack_int(A.stride(1))});
  const lapack_int ldb = std::max<lapack_int>({1, lapack_int(B.extent(0)), lapack_int(B.stride(1))});
  const bool real = std::is_floating_point_v<typename BView::non_const_value_type>;
  const char trans = op == Op::none ? 'N' : real ? 'T' : 'C';
  return detail::gels(LAPACK_COL_MAJOR, trans, A.extent(0), A.extent(1), B.extent(1),
                      detail::data(A), lda, detail::data(B), ldb);
}

}  // namespace basalt::lapacke
