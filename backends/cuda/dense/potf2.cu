// CUDA Cholesky diagonal block: one thread block, the block in shared memory, right-looking
// column by column. An upper block is loaded as its conjugate transpose, so one lower kernel
// factors both triangles.
#include <cuComplex.h>

#include <cmath>
#include <stdexcept>

#include "basalt/backends/cuda/dense/potf2_launch.hpp"
#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/scalar_ops.cuh"

namespace basalt::cuda::kernels {

namespace {

constexpr int potf2_threads = 256;

__device__ inline float scaled(float x, float s) { return x * s; }
__device__ inline double scaled(double x, double s) { return x * s; }
__device__ inline cuFloatComplex scaled(cuFloatComplex x, float s) {
  return make_cuFloatComplex(x.x * s, x.y * s);
}
__device__ inline cuDoubleComplex scaled(cuDoubleComplex x, double s) {
  return make_cuDoubleComplex(x.x * s, x.y * s);
}

template <class T>
__global__ void __launch_bounds__(potf2_threads)
    factor_block(T* a, int n, std::int64_t lda, bool lower, int offset, int* info,
                 T* failed_diagonal) {
  using Real = ops::real_of_t<T>;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* s = reinterpret_cast<T*>(shared_bytes);  // n x n, column-major: L, lower triangle
  const int tid = threadIdx.x;
  const int cells = n * n;
  // Every thread reads info before the one write below, which follows a barrier.
  int first_unfactored = 0;
  if (*info == 0) {
    for (int idx = tid; idx < cells; idx += blockDim.x) {
      const int i = idx % n, j = idx / n;
      if (i >= j) s[idx] = lower ? a[i + j * lda] : ops::conjugate(a[j + i * lda]);
    }
    first_unfactored = n;
    for (int j = 0; j < n; ++j) {
      __syncthreads();  // column j is up to date
      const Real d = ops::real_part(s[j + j * n]);
      if (!(d > Real(0))) {  // not positive, or NaN: the same answer on every thread
        first_unfactored = j;
        break;
      }
      const Real root = sqrt(d), inverse = Real(1) / root;
      __syncthreads();  // every thread has read the diagonal
      for (int i = j + 1 + tid; i < n; i += blockDim.x)
        s[i + j * n] = scaled(s[i + j * n], inverse);
      if (tid == 0) s[j + j * n] = ops::make_scalar<T>(root);
      __syncthreads();
      // s(i, c) -= l(i, j) conj(l(c, j)) on the trailing lower triangle: a warp per column,
      // its lanes down the rows (no index division in the inner loop).
      const int warp = tid / 32, lane = tid % 32, warps = blockDim.x / 32;
      for (int c = j + 1 + warp; c < n; c += warps) {
        const T l = ops::conjugate(s[c + j * n]);
        for (int i = c + lane; i < n; i += 32)
          s[i + c * n] = ops::minus_product(s[i + c * n], s[i + j * n], l);
      }
    }
    __syncthreads();
    if (first_unfactored < n && tid == 0) {
      const int k = first_unfactored;
      *info = offset + k + 1;
      *failed_diagonal = lower ? s[k + k * n] : ops::conjugate(s[k + k * n]);
    }
    __syncthreads();  // the failing entry is read before the identity overwrites it
  }
  // The unfactored part becomes the identity (the whole block when an earlier one failed), then
  // the lower triangle goes back as it was loaded.
  for (int idx = tid; idx < cells; idx += blockDim.x) {
    const int i = idx % n, j = idx / n;
    if (i < j) continue;
    if (j >= first_unfactored) s[idx] = ops::make_scalar<T>(i == j ? Real(1) : Real(0));
    if (lower)
      a[i + j * lda] = s[idx];
    else
      a[j + i * lda] = ops::conjugate(s[idx]);
  }
}

}  // namespace

int potf2_width_limit(int device, int entry_bytes) {
  int bytes = 0;
  BASALT_CUDA_CHECK(
      cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return static_cast<int>(std::sqrt(double(bytes) / entry_bytes));
}

template <class T>
void potf2(int device, cudaStream_t stream, T* block, int* info, T* failed_diagonal,
           const Potf2Problem& p) {
  if (p.n == 0) return;
  if (p.n > potf2_width_limit(device, sizeof(T)))
    throw std::invalid_argument("basalt: cuda potf2: the block exceeds the kernel's width");
  const std::size_t shared = std::size_t(p.n) * p.n * sizeof(T);
  const auto kernel = factor_block<T>;
  BASALT_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)));
  kernel<<<1, potf2_threads, shared, stream>>>(block, p.n, p.lda, p.lower, p.offset, info,
                                               failed_diagonal);
  BASALT_CUDA_CHECK_LAUNCH();
}

template void potf2<float>(int, cudaStream_t, float*, int*, float*, const Potf2Problem&);
template void potf2<double>(int, cudaStream_t, double*, int*, double*, const Potf2Problem&);
template void potf2<cuFloatComplex>(int, cudaStream_t, cuFloatComplex*, int*, cuFloatComplex*,
                                    const Potf2Problem&);
template void potf2<cuDoubleComplex>(int, cudaStream_t, cuDoubleComplex*, int*, cuDoubleComplex*,
                                     const Potf2Problem&);

}  // namespace basalt::cuda::kernels
