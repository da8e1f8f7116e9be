#pragma once
// What the batched tests share: host copies of batches in both forms, test matrices, and the
// backward errors, computed on the host in complex<double>.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "basalt/algorithms/batched/batch.hpp"
#include "basalt/core/views.hpp"
#include "support.hpp"

namespace basalt::test {

using Wide = Kokkos::complex<double>;
using WideMatrix = Kokkos::View<Wide**, Kokkos::LayoutLeft, Kokkos::HostSpace>;
template <class T>
using HostMatrix = Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::HostSpace>;

template <class T>
double eps() {
  return std::numeric_limits<real_t<T>>::epsilon();
}

template <class View>
WideMatrix widen(const View& a) {
  WideMatrix w("wide", a.extent(0), a.extent(1));
  for (size_t j = 0; j < a.extent(1); ++j)
    for (size_t i = 0; i < a.extent(0); ++i) w(i, j) = Wide(a(i, j));
  return w;
}

inline double frobenius(const WideMatrix& a) {
  double s = 0;
  for (size_t j = 0; j < a.extent(1); ++j)
    for (size_t i = 0; i < a.extent(0); ++i) s += Kokkos::abs(a(i, j)) * Kokkos::abs(a(i, j));
  return std::sqrt(s);
}

// C = op(A) B, with op one of none, conjugate transpose.
inline WideMatrix product(const WideMatrix& a, bool adjoint_a, const WideMatrix& b) {
  const size_t m = adjoint_a ? a.extent(1) : a.extent(0), k = b.extent(0);
  WideMatrix c("C", m, b.extent(1));
  for (size_t j = 0; j < b.extent(1); ++j)
    for (size_t p = 0; p < k; ++p) {
      const Wide bpj = b(p, j);
      if (bpj == Wide(0)) continue;
      for (size_t i = 0; i < m; ++i) c(i, j) += (adjoint_a ? Kokkos::conj(a(p, i)) : a(i, p)) * bpj;
    }
  return c;
}

// ||error||_F / (scale ||reference||_F eps); an exactly-zero reference needs an exactly-zero error.
inline double relative(const WideMatrix& error, const WideMatrix& reference, double scale,
                       double epsilon) {
  const double r = frobenius(reference), e = frobenius(error);
  if (r == 0) return e == 0 ? 0 : INFINITY;
  return e / (scale * r * epsilon);
}

// A random m x n host matrix; singular = true zeroes its column min(5, n - 1).
template <class T>
HostMatrix<T> random_matrix(int m, int n, bool singular = false) {
  HostMatrix<T> a("A", m, n);
  fill_random(a);
  if (singular && n > 0)
    for (int i = 0; i < m; ++i) a(i, std::min(5, n - 1)) = T(0);
  return a;
}

// A random Hermitian positive definite n x n matrix (B B^H + n I); not_spd = true makes its
// diagonal entry min(3, n - 1) negative enough that the factorization fails there or before.
template <class T>
HostMatrix<T> spd_matrix(int n, bool not_spd = false) {
  const auto b = widen(random_matrix<T>(n, n));
  HostMatrix<T> a("A", n, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      Wide s = i == j ? Wide(n) : Wide(0);
      for (int k = 0; k < n; ++k) s += b(i, k) * Kokkos::conj(b(j, k));
      if constexpr (std::is_floating_point_v<T>)
        a(i, j) = static_cast<T>(s.real());
      else
        a(i, j) =
            T(static_cast<real_t<T>>(s.real()), static_cast<real_t<T>>(i == j ? 0.0 : s.imag()));
    }
  if (not_spd && n > 0) {
    const int j = std::min(3, n - 1);
    a(j, j) = T(-1);
  }
  return a;
}

// `batch` (count x m x n, any layout) holding the host matrices.
template <class Batch, class T>
Batch filled_batch(Batch batch, const std::vector<HostMatrix<T>>& host) {
  auto mirror = Kokkos::create_mirror_view(batch);
  for (size_t b = 0; b < host.size(); ++b)
    for (size_t j = 0; j < batch.extent(2); ++j)
      for (size_t i = 0; i < batch.extent(1); ++i) mirror(b, i, j) = host[b](i, j);
  Kokkos::deep_copy(batch, mirror);
  return batch;
}

// A fixed batch of host matrices on the default execution space, in make_batch's layout.
template <class T>
BatchView<T> device_batch(const std::vector<HostMatrix<T>>& host, int m, int n) {
  return filled_batch(make_batch<T>("batch", static_cast<int>(host.size()), m, n), host);
}

// The same in layout Layout (make_batch's for LayoutStride).
template <class Layout, class T>
auto device_batch_in(const std::vector<HostMatrix<T>>& host, int m, int n) {
  if constexpr (std::is_same_v<Layout, Kokkos::LayoutStride>)
    return device_batch(host, m, n);
  else
    return filled_batch(Kokkos::View<T***, Layout>("batch", static_cast<int>(host.size()), m, n),
                        host);
}

// Matrix b of a fixed batch (any layout), copied to the host.
template <class HostBatch>
auto host_matrix(const HostBatch& batch, int b) {
  using T = std::remove_const_t<typename HostBatch::value_type>;
  HostMatrix<T> a("a", batch.extent(1), batch.extent(2));
  for (size_t j = 0; j < a.extent(1); ++j)
    for (size_t i = 0; i < a.extent(0); ++i) a(i, j) = batch(b, i, j);
  return a;
}

// A variable batch holding the given host matrices.
template <class T>
VariableBatch<T> variable_batch(const std::vector<HostMatrix<T>>& host) {
  std::vector<int> rows, cols;
  for (const auto& a : host) {
    rows.push_back(static_cast<int>(a.extent(0)));
    cols.push_back(static_cast<int>(a.extent(1)));
  }
  auto batch = make_variable_batch<T>("batch", rows, cols);
  auto values = Kokkos::create_mirror_view(batch.values);
  for (size_t b = 0; b < host.size(); ++b)
    for (int j = 0; j < cols[b]; ++j)
      for (int i = 0; i < rows[b]; ++i)
        values(batch.host_offset(b) + i + std::int64_t(j) * batch.host_ld(b)) = host[b](i, j);
  Kokkos::deep_copy(batch.values, values);
  return batch;
}

// Every matrix of a variable batch, copied to the host.
template <class T, class M>
std::vector<HostMatrix<T>> host_matrices(const VariableBatch<T, M>& batch) {
  auto values = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.values);
  std::vector<HostMatrix<T>> all;
  for (int b = 0; b < batch.count(); ++b) {
    HostMatrix<T> a("a", batch.host_rows(b), batch.host_cols(b));
    for (int j = 0; j < batch.host_cols(b); ++j)
      for (int i = 0; i < batch.host_rows(b); ++i)
        a(i, j) = values(batch.host_offset(b) + i + std::int64_t(j) * batch.host_ld(b));
    all.push_back(a);
  }
  return all;
}

template <class View>
auto to_host(const View& v) {
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
}

// Which CUDA kernel a comparison test's batches must go to: the warp-segment one (matrices up to
// 32 x 32) or the block-per-matrix one.
enum class CudaKernel { warp, block };

// Every matrix of a fixed batch (a rank-3 View), or every vector of a rank-2 View (batch, k) as
// a k x 1 matrix, copied to the host: host_matrices' form for the fixed batches.
template <class View, std::enable_if_t<Kokkos::is_view<View>::value, int> = 0>
auto host_matrices(const View& batch) {
  using T = std::remove_const_t<typename View::value_type>;
  const auto host = to_host(batch);
  std::vector<HostMatrix<T>> all;
  for (size_t b = 0; b < host.extent(0); ++b) {
    if constexpr (View::rank == 3) {
      all.push_back(host_matrix(host, static_cast<int>(b)));
    } else {
      HostMatrix<T> v("v", host.extent(1), 1);
      for (size_t i = 0; i < host.extent(1); ++i) v(i, 0) = host(b, i);
      all.push_back(v);
    }
  }
  return all;
}

// The hidden [huge] cases: a batch of 2^29 + 4096 matrices of 4 x 4, which the warp kernels run
// in 4 lanes each, so more than 2^31 threads (about 45 GB of device memory; scripts/gpu_check.sh
// runs them). Each member must come out as the same matrix factored alone.
inline constexpr long huge_batch = (1L << 29) + 4096;

// A batch of `count` 4 x 4 float matrices, every one a positive definite matrix or, `pivoted`,
// that matrix with its rows reversed, which LU must pivot.
inline BatchView<float> batch_of_one_matrix(long count, bool pivoted) {
  const auto batch = make_batch<float>("A", count, 4, 4);
  Kokkos::parallel_for(
      "fill", Kokkos::RangePolicy<Kokkos::DefaultExecutionSpace>(0, count),
      KOKKOS_LAMBDA(const long b) {
        for (int j = 0; j < 4; ++j)
          for (int i = 0; i < 4; ++i) {
            const int row = pivoted ? 3 - i : i;
            batch(b, i, j) = row == j ? 5.0f + j : 1.0f / (1 + row + j);
          }
      });
  return batch;
}

// Whether x and the same entry of the matrix factored alone differ by more than rounding.
KOKKOS_INLINE_FUNCTION bool unlike(float x, float alone) {
  return !(magnitude(x - alone) <= 1e-5f * (1 + magnitude(alone)));
}

// How many of the first `count` members differ(b) says differ from the matrix factored alone.
template <class Differs>
long members_that_differ(long count, const Differs& differs) {
  long found = 0;
  Kokkos::parallel_reduce(
      "differ", Kokkos::RangePolicy<Kokkos::DefaultExecutionSpace>(0, count),
      KOKKOS_LAMBDA(const long b, long& sum) { sum += differs(b) ? 1 : 0; }, found);
  return found;
}

}  // namespace basalt::test
