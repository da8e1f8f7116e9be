#pragma once
// herk on the host through the BLAS that Kokkos Kernels was built on (its TPL), which has no herk
// of its own in 3.4: one xSYRK / xHERK call for a whole trailing matrix, where the portable herk
// splits it into gemms down to narrow leaves (2 cores, potrf's updates at n = 2000: 52 ms through
// the split, 39 ms as one dsyrk per block). Declared through the Fortran interface, which every
// BLAS has; the character arguments' hidden lengths are passed, as gfortran expects them.
#include <KokkosKernels_config.h>

#if defined(KOKKOSKERNELS_ENABLE_TPL_BLAS)
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "basalt/core/dispatch.hpp"
#include "basalt/core/errors.hpp"
#include "basalt/core/views.hpp"

extern "C" {
void F77_BLAS_MANGLE(ssyrk, SSYRK)(const char*, const char*, const int*, const int*, const float*,
                                   const float*, const int*, const float*, float*, const int*,
                                   std::size_t, std::size_t);
void F77_BLAS_MANGLE(dsyrk, DSYRK)(const char*, const char*, const int*, const int*,
                                   const double*, const double*, const int*, const double*,
                                   double*, const int*, std::size_t, std::size_t);
void F77_BLAS_MANGLE(cherk, CHERK)(const char*, const char*, const int*, const int*, const float*,
                                   const void*, const int*, const float*, void*, const int*,
                                   std::size_t, std::size_t);
void F77_BLAS_MANGLE(zherk, ZHERK)(const char*, const char*, const int*, const int*,
                                   const double*, const void*, const int*, const double*, void*,
                                   const int*, std::size_t, std::size_t);
}

namespace basalt::host_blas {

// The leading dimension BLAS takes for a column-major View.
template <class View>
int leading_dimension(const View& X) {
  return static_cast<int>(std::max<std::size_t>({1, X.extent(0), std::size_t(X.stride(1))}));
}

template <class View>
bool column_major(const View& X) {
  return X.extent(0) <= 1 || X.stride(0) == 1;
}

// C = alpha op(A) op(A)^H + beta C on C's `lower` or upper triangle, as impl::herk.
template <class AView, class CView, class Real>
void herk(bool lower, Op op, Real alpha, const AView& A, Real beta, const CView& C) {
  using T = typename CView::non_const_value_type;
  const char uplo = lower ? 'L' : 'U';
  const char trans = op == Op::none ? 'N' : std::is_floating_point_v<T> ? 'T' : 'C';
  const int n = static_cast<int>(C.extent(0));
  const int k = static_cast<int>(op == Op::none ? A.extent(1) : A.extent(0));
  const int lda = leading_dimension(A), ldc = leading_dimension(C);
  const auto* a = A.data();
  auto* c = C.data();
  if constexpr (std::is_same_v<T, float>)
    F77_BLAS_MANGLE(ssyrk, SSYRK)(&uplo, &trans, &n, &k, &alpha, a, &lda, &beta, c, &ldc, 1, 1);
  else if constexpr (std::is_same_v<T, double>)
    F77_BLAS_MANGLE(dsyrk, DSYRK)(&uplo, &trans, &n, &k, &alpha, a, &lda, &beta, c, &ldc, 1, 1);
  else if constexpr (std::is_same_v<T, Kokkos::complex<float>>)
    F77_BLAS_MANGLE(cherk, CHERK)(&uplo, &trans, &n, &k, &alpha, a, &lda, &beta, c, &ldc, 1, 1);
  else
    F77_BLAS_MANGLE(zherk, ZHERK)(&uplo, &trans, &n, &k, &alpha, a, &lda, &beta, c, &ldc, 1, 1);
}

// The specialization for one host execution space: BLAS runs on the calling thread's OpenMP
// pool, so exec's earlier work is fenced first.
template <class ExecSpace>
struct Herk {
  static constexpr bool available = true;
  template <class AView, class CView, class Real>
  static void apply(const ExecSpace& exec, bool lower, Op op, Real alpha, const AView& A,
                    Real beta, const CView& C) {
    require(column_major(A) && column_major(C), "herk", "A",
            "the host BLAS takes column-major matrices");
    exec.fence();
    herk(lower, op, alpha, A, beta, C);
  }
};

}  // namespace basalt::host_blas

namespace basalt {

#if defined(KOKKOS_ENABLE_SERIAL)
template <>
struct Specialization<routine::herk, Kokkos::Serial> : host_blas::Herk<Kokkos::Serial> {};
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
template <>
struct Specialization<routine::herk, Kokkos::OpenMP> : host_blas::Herk<Kokkos::OpenMP> {};
#endif

}  // namespace basalt

#endif
