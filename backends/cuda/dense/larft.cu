// CUDA larft factor: T of a block reflector from G = V^H V and tau, in one thread block.
#include <cuComplex.h>

#include <algorithm>
#include <stdexcept>

#include "basalt/backends/cuda/dense/larft_launch.hpp"
#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/scalar_ops.cuh"

namespace basalt::cuda::kernels {

namespace {

constexpr int factor_threads = 256;
constexpr int factor_warps = factor_threads / 32;
constexpr int leaf = 16;  // reflectors of a diagonal block built column by column
// The most reflectors: at 128 (geqrf's nb above k = 2048) the one block ran geqrf 3072 and 4096
// 4-5% slower than the portable leaves and joins, at 64 1024 and 2048 5-7% faster (H200, d).
constexpr int max_reflectors = 64;

// Entries of the joins' buffer: at each level, half x half for every pair of blocks.
int join_entries(int k) {
  int most = 0;
  for (int half = leaf; half < k; half *= 2) {
    const int pairs = (k + 2 * half - 1) / (2 * half);
    most = std::max(most, pairs * half * half);
  }
  return most;
}

// G and then T (k x (k + 1)), the joins' buffer, tau, a column of G per warp.
std::size_t shared_bytes(int k, int entry_bytes) {
  return (std::size_t(k) * (k + 1) + join_entries(k) + k + factor_warps * leaf) * entry_bytes;
}

// T from G, both in s (stride k + 1, so that a warp reading down a column or along a row meets
// no bank conflict): within a diagonal block starting at `first`, column c = first + j is
// T(first + i, c) = -tau(c) sum_{l = i}^{j - 1} T(first + i, first + l) G(first + l, c), T(c, c)
// = tau(c); then blocks [a, a + half) and [r, r + half), r = a + half, are joined by T12 =
// -T11 (G12 T22), G12 being G's block above T22. The portable leaves and joins' sums in their
// order (their joins read G12 as the adjoint of G's block below the diagonal).
template <class T>
__global__ void __launch_bounds__(factor_threads)
    build_factor(T* t, std::int64_t ldt, const T* tau, std::int64_t tau_stride, int k,
                 int join_entries) {
  extern __shared__ __align__(16) unsigned char shared_memory[];
  const int ld = k + 1;
  T* s = reinterpret_cast<T*>(shared_memory);
  T* x = s + k * ld;
  T* taus = x + join_entries;
  T* columns = taus + k;
  const T zero = ops::make_scalar<T>(0);
  for (int e = threadIdx.x; e < k * k; e += factor_threads) {
    const int i = e % k, j = e / k;
    if (i < j) s[i + j * ld] = t[i + j * ldt];
  }
  for (int j = threadIdx.x; j < k; j += factor_threads) taus[j] = tau[j * tau_stride];
  __syncthreads();

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  T* column = columns + warp * leaf;  // G(first:c, c) while T(first:c, c) replaces it
  for (int first = warp * leaf; first < k; first += factor_warps * leaf) {
    const int width = min(leaf, k - first);
    for (int j = 0; j < width; ++j) {
      const int c = first + j;
      if (lane < j) column[lane] = s[first + lane + c * ld];
      __syncwarp();
      if (lane < j) {
        T sum = zero;
        for (int l = lane; l < j; ++l)
          sum = ops::add(sum, ops::multiply(s[first + lane + (first + l) * ld], column[l]));
        s[first + lane + c * ld] = ops::minus_product(zero, taus[c], sum);
      }
      if (lane == j) s[c + c * ld] = taus[c];
      __syncwarp();
    }
  }

  for (int half = leaf; half < k; half *= 2) {
    const int entries = (k + 2 * half - 1) / (2 * half) * half * half;
    __syncthreads();  // the level's T11 and T22 are final
    for (int e = threadIdx.x; e < entries; e += factor_threads) {
      const int a = e / (half * half) * 2 * half, r = a + half, i = e % half, j = e / half % half;
      if (r + j >= k) continue;
      T sum = zero;
      for (int l = 0; l <= j; ++l)
        sum = ops::add(sum, ops::multiply(s[a + i + (r + l) * ld], s[r + l + (r + j) * ld]));
      x[e] = sum;
    }
    __syncthreads();
    for (int e = threadIdx.x; e < entries; e += factor_threads) {
      const int a = e / (half * half) * 2 * half, r = a + half, i = e % half, j = e / half % half;
      if (r + j >= k) continue;
      const T* x_column = x + e - i;  // the pair's X(:, j)
      T sum = zero;
      for (int l = i; l < half; ++l)
        sum = ops::add(sum, ops::multiply(s[a + i + (a + l) * ld], x_column[l]));
      s[a + i + (r + j) * ld] = ops::minus_product(zero, ops::make_scalar<T>(1), sum);
    }
  }
  __syncthreads();
  for (int e = threadIdx.x; e < k * k; e += factor_threads) {
    const int i = e % k, j = e / k;
    if (i <= j) t[i + j * ldt] = s[i + j * ld];
  }
}

}  // namespace

int larft_factor_limit(int device, int entry_bytes) {
  int bytes = 0;
  BASALT_CUDA_CHECK(
      cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  int k = max_reflectors;
  while (k > 0 && shared_bytes(k, entry_bytes) > std::size_t(bytes)) --k;
  return k;
}

template <class T>
void larft_factor(int device, cudaStream_t stream, T* t, std::int64_t ldt, const T* tau,
                  std::int64_t tau_stride, int k) {
  if (k == 0) return;
  if (k > larft_factor_limit(device, sizeof(T)))
    throw std::invalid_argument("basalt: cuda larft_factor: k exceeds the kernel's limit");
  const std::size_t bytes = shared_bytes(k, sizeof(T));
  BASALT_CUDA_CHECK(cudaFuncSetAttribute(build_factor<T>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  build_factor<T>
      <<<1, factor_threads, bytes, stream>>>(t, ldt, tau, tau_stride, k, join_entries(k));
  BASALT_CUDA_CHECK_LAUNCH();
}

#define BASALT_INSTANTIATE(T) \
  template void larft_factor<T>(int, cudaStream_t, T*, std::int64_t, const T*, std::int64_t, int);
BASALT_INSTANTIATE(float)
BASALT_INSTANTIATE(double)
BASALT_INSTANTIATE(cuFloatComplex)
BASALT_INSTANTIATE(cuDoubleComplex)
#undef BASALT_INSTANTIATE

}  // namespace basalt::cuda::kernels
