// CUDA inverse of a triangle of up to 128 columns (trtri_launch.hpp): a thread block per 32
// columns of the inverse, a warp per 4 of them, each column by forward substitution with its
// entries spread over the lanes (row 32 r + lane in register r), the entry that becomes final at
// a step broadcast by a shuffle, so no barrier after the load. An upper triangle is loaded
// transposed and its inverse written transposed: one lower kernel serves every op(A).
#include <cuComplex.h>

#include <stdexcept>

#include "basalt/backends/cuda/batched/warp_batch.cuh"
#include "basalt/backends/cuda/dense/trtri_launch.hpp"
#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/scalar_ops.cuh"

namespace basalt::cuda::kernels {

namespace {

constexpr int trtri_threads = 256;
constexpr int columns_per_warp = 4;
constexpr int columns_per_block = trtri_threads / 32 * columns_per_warp;
constexpr int row_slots = trtri_width_limit / 32;

// Shared memory of the block whose columns start at `first`: the lower triangle L(first.., first..)
// packed by columns, then the reciprocals of its diagonal.
std::size_t shared_entries(int n, int first) {
  const std::size_t m = n - first;
  return m * (m + 1) / 2 + m;
}

// X = L^-1 for the lower L = conj?(A) (lower) or conj?(A^T) (upper), written as X or, with
// transpose_out, X^T; columns blockIdx.x * 32 .. of X.
template <class T>
__global__ void __launch_bounds__(trtri_threads)
    invert_columns(const T* a, std::int64_t lda, int n, bool lower, bool conjugate,
                   bool transpose_out, bool unit_diagonal, T* inverse) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  const int first = blockIdx.x * columns_per_block, m = n - first;
  T* packed = reinterpret_cast<T*>(shared_bytes);
  T* reciprocal = packed + std::size_t(m) * (m + 1) / 2;
  // Column j of L (j >= first) from its diagonal down: L(i, j) is column(j)[i - j].
  const auto column = [&](int j) {
    const int q = j - first;
    return packed + (q * m - q * (q - 1) / 2);
  };
  const int lane = threadIdx.x % 32, warp_id = threadIdx.x / 32;

  for (int j = first + warp_id; j < n; j += trtri_threads / 32) {
    T* target = column(j);
    for (int i = j + lane; i < n; i += 32) {
      T v = lower ? a[i + j * lda] : a[j + i * lda];
      if (conjugate) v = ops::conjugate(v);
      target[i - j] = v;
      if (i == j)
        reciprocal[j - first] =
            unit_diagonal ? ops::make_scalar<T>(1) : ops::divide(ops::make_scalar<T>(1), v);
    }
  }
  __syncthreads();

  // Column t[c] of X, entry 32 r + lane in x[r][c]; it starts as column t[c] of the identity.
  const int warp_first = first + warp_id * columns_per_warp;
  T x[row_slots][columns_per_warp];
#pragma unroll
  for (int r = 0; r < row_slots; ++r)
#pragma unroll
    for (int c = 0; c < columns_per_warp; ++c)
      x[r][c] = ops::make_scalar<T>(32 * r + lane == warp_first + c ? 1 : 0);

      // Step j: entry j of each column is final once scaled by 1 / L(j, j), and leaves the rows
      // below it; columns t > j have nothing at j yet and wait.
#pragma unroll
  for (int rj = 0; rj < row_slots; ++rj)
    for (int jl = 0; jl < 32; ++jl) {
      const int j = 32 * rj + jl;
      if (j >= n) break;
      if (j < warp_first) continue;
      const T* l = column(j);
      T below[row_slots];  // L(32 r + lane, j) for the rows below j
#pragma unroll
      for (int r = rj; r < row_slots; ++r) {
        const int i = 32 * r + lane;
        if (i > j && i < n) below[r] = l[i - j];
      }
      const T d = reciprocal[j - first];
#pragma unroll
      for (int c = 0; c < columns_per_warp; ++c) {
        if (j < warp_first + c) continue;  // the same on every lane
        if (lane == jl) x[rj][c] = ops::multiply(x[rj][c], d);
        const T xj = warp::shuffle<32>(x[rj][c], jl);
        // Rows at and above j are final: an Inf from a zero diagonal must not reach them.
#pragma unroll
        for (int r = rj; r < row_slots; ++r)
          if (32 * r + lane > j && 32 * r + lane < n)
            x[r][c] = ops::minus_product(x[r][c], below[r], xj);
      }
    }

#pragma unroll
  for (int r = 0; r < row_slots; ++r)
#pragma unroll
    for (int c = 0; c < columns_per_warp; ++c) {
      const int i = 32 * r + lane, t = warp_first + c;
      if (i >= n || t >= n) continue;
      if (transpose_out)
        inverse[t + std::int64_t(i) * n] = x[r][c];
      else
        inverse[i + std::int64_t(t) * n] = x[r][c];
    }
}

}  // namespace

template <class T>
void trtri(cudaStream_t stream, const T* a, T* inverse, const TrtriProblem& p) {
  if (p.n == 0) return;
  if (p.n > trtri_width_limit)
    throw std::invalid_argument("basalt: cuda trtri: the triangle exceeds the kernel's width");
  // op(A) lower: L = op(A), inverse X; op(A) upper: L = op(A)^T, inverse X^T.
  const bool effective_lower = p.lower != p.transpose;
  const std::size_t shared = shared_entries(p.n, 0) * sizeof(T);
  const auto kernel = invert_columns<T>;
  BASALT_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)));
  const int blocks = (p.n + columns_per_block - 1) / columns_per_block;
  kernel<<<blocks, trtri_threads, shared, stream>>>(a, p.lda, p.n, p.lower, p.conjugate,
                                                    !effective_lower, p.unit_diagonal, inverse);
  BASALT_CUDA_CHECK_LAUNCH();
}

template void trtri<float>(cudaStream_t, const float*, float*, const TrtriProblem&);
template void trtri<double>(cudaStream_t, const double*, double*, const TrtriProblem&);
template void trtri<cuFloatComplex>(cudaStream_t, const cuFloatComplex*, cuFloatComplex*,
                                    const TrtriProblem&);
template void trtri<cuDoubleComplex>(cudaStream_t, const cuDoubleComplex*, cuDoubleComplex*,
                                     const TrtriProblem&);

}  // namespace basalt::cuda::kernels
