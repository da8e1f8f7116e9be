// CUDA batched Cholesky of matrices of order 33 to 256: one thread block per matrix, one row of
// the factor per thread, blocked by 32-column panels.
#include <cuComplex.h>

#include "basalt/backends/cuda/batched/block_batch.cuh"
#include "basalt/backends/cuda/batched/potrf_batched_launch.hpp"
#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/scalar_ops.cuh"

namespace basalt::cuda::kernels {

namespace {

// Right-looking Cholesky by panels of 32 columns. Thread i owns row i of the lower factor (for
// an upper triangle, column i, conjugated) and holds its part in the panel in registers. At panel
// step j the rows of the panel's diagonal block share their (unscaled) element of column j;
// every thread takes the diagonal's square root from it, the threads below scale their own
// element (times the root's reciprocal: one division per step) and subtract
// L(i, j) conj(L(c, j)) from their elements c in the panel, as the warp kernel does. Then the
// trailing columns, chunk by chunk: the rows of the chunk's columns share their part in the
// panel P, and every row i subtracts L(i, P) L(c, P)^H from its elements c <= i of the chunk.
// A non-positive (or NaN) diagonal stops the matrix there, the panel stored with A(j, j) as it
// was updated (the columns before it are final; later ones hold partial updates). Thread i
// reads and writes only row i of the factor; control flow depends only on the matrix's order
// and on shared values, the same on every thread of the block.
template <class T>
__global__ void __launch_bounds__(block::max_threads)
    potrf_block(bool lower, DeviceBatch<T> batch, int* info, std::int64_t info_stride, int count) {
  using Real = ops::real_of_t<T>;
  constexpr int NB = block::panel_width, W = block::chunk_width<T>;
  __shared__ T column[2][NB];  // by step parity: a step's readers may lag the next step's writers
  // conj(L(c, panel)) for the chunk's columns c; padded so that the threads storing their rows
  // at once hit different banks.
  __shared__ T chunk_rows[W][NB + 1];

  const int b = blockIdx.x, i = threadIdx.x;
  const warp::Located<T> a = warp::locate(batch, b, count);
  const int n = a.rows;
  // Element (i, c) of the lower triangle: A(i, c), or conj(A(c, i)) when the upper one is stored.
  const auto load = [&](int c) {
    return lower ? block::at(a, i, c) : ops::conjugate(block::at(a, c, i));
  };
  const auto store = [&](int c, T v) {
    if (lower)
      block::at(a, i, c) = v;
    else
      block::at(a, c, i) = ops::conjugate(v);
  };

  int failed = 0;
  for (int k0 = 0; k0 < n && failed == 0; k0 += NB) {
    const int jb = min(NB, n - k0);
    const bool mine = k0 <= i && i < n;
    T row[NB];
#pragma unroll
    for (int c = 0; c < NB; ++c) row[c] = mine && c < jb && k0 + c <= i ? load(k0 + c) : T{};

#pragma unroll
    for (int j = 0; j < NB; ++j) {
      if (j >= jb || failed != 0) continue;
      const int c = k0 + j;
      if (c <= i && i < k0 + jb) column[j % 2][i - k0] = row[j];
      __syncthreads();
      const Real diagonal = ops::real_part(column[j % 2][j]);
      if (!(diagonal > Real(0))) {
        failed = c + 1;
        continue;
      }
      const Real root = sqrt(diagonal), inverse = Real(1) / root;
      if (i == c) row[j] = ops::make_scalar<T>(root);
      if (mine && i > c) {
        // Every thread scales column j's elements the same way, so all use the values stored.
        row[j] = ops::times_real(row[j], inverse);
#pragma unroll
        for (int cc = j + 1; cc < NB; ++cc)
          if (cc < jb && k0 + cc <= i) {
            const T l = ops::conjugate(ops::times_real(column[j % 2][cc], inverse));
            row[cc] = ops::minus_product(row[cc], row[j], l);
          }
      }
    }
    if (mine) {
#pragma unroll
      for (int c = 0; c < NB; ++c)
        if (c < jb && k0 + c <= i) store(k0 + c, row[c]);
    }
    if (failed != 0) break;

    for (int c0 = k0 + jb; c0 < n; c0 += W) {
      __syncthreads();  // chunk_rows free again (the last chunk's reads done)
      if (c0 <= i && i < min(c0 + W, n)) {
#pragma unroll
        for (int k = 0; k < NB; ++k) chunk_rows[i - c0][k] = ops::conjugate(row[k]);
      }
      __syncthreads();
      if (c0 <= i && i < n) {
        T seg[W];
#pragma unroll
        for (int w = 0; w < W; ++w) seg[w] = c0 + w <= i ? load(c0 + w) : T{};
#pragma unroll
        for (int k = 0; k < NB; ++k) {
          if (k >= jb) continue;
#pragma unroll
          for (int w = 0; w < W; ++w) seg[w] = ops::minus_product(seg[w], row[k], chunk_rows[w][k]);
        }
#pragma unroll
        for (int w = 0; w < W; ++w)
          if (c0 + w <= i) store(c0 + w, seg[w]);
      }
    }
    __syncthreads();  // column free again for the next panel
  }
  if (i == 0) info[b * info_stride] = failed;
}

}  // namespace

template <class T>
void potrf_batched_block(cudaStream_t stream, bool lower, const DeviceBatch<T>& A, int* info,
                         std::int64_t info_stride, int count, int largest) {
  if (count == 0) return;
  potrf_block<T>
      <<<count, block::threads_for(largest), 0, stream>>>(lower, A, info, info_stride, count);
  BASALT_CUDA_CHECK_LAUNCH();
}

#define BASALT_INSTANTIATE_POTRF_BATCHED_BLOCK(T)                                       \
  template void potrf_batched_block<T>(cudaStream_t, bool, const DeviceBatch<T>&, int*, \
                                       std::int64_t, int, int);

BASALT_INSTANTIATE_POTRF_BATCHED_BLOCK(float)
BASALT_INSTANTIATE_POTRF_BATCHED_BLOCK(double)
BASALT_INSTANTIATE_POTRF_BATCHED_BLOCK(cuFloatComplex)
BASALT_INSTANTIATE_POTRF_BATCHED_BLOCK(cuDoubleComplex)

}  // namespace basalt::cuda::kernels
