// CUDA SELL-P SpMM: one thread per (row, group of vectors), the group's sums in registers; the
// threads of one row sit side by side in a block, so a row of X is read in whole cache lines.
#include <cuComplex.h>

#include <algorithm>
#include <cstdint>

#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/scalar_ops.cuh"
#include "basalt/backends/cuda/sparse/sellp_spmm_launch.hpp"

namespace basalt::cuda::kernels {

namespace {

constexpr int block_threads = 128;
// Vectors per thread: 32 bytes of them (8 float, 4 double or complex<float>, 2 complex<double>),
// the best of 16 to 64 bytes measured on the H100 for k = 8 to 32. The threads of a row cover up
// to max_lanes groups in one pass (32 double vectors, a 256-byte row of X); more vectors take
// more passes (gridDim.y).
template <class T>
constexpr int group_size = sizeof(T) >= 32 ? 1 : 32 / sizeof(T);
constexpr int max_lanes = 8;

__device__ inline float multiply_add(float a, float x, float sum) { return fmaf(a, x, sum); }
__device__ inline double multiply_add(double a, double x, double sum) { return fma(a, x, sum); }
__device__ inline cuFloatComplex multiply_add(cuFloatComplex a, cuFloatComplex x,
                                              cuFloatComplex sum) {
  return cuCfmaf(a, x, sum);
}
__device__ inline cuDoubleComplex multiply_add(cuDoubleComplex a, cuDoubleComplex x,
                                               cuDoubleComplex sum) {
  return cuCfma(a, x, sum);
}

template <class T>
__device__ inline T zero() {
  return T{};
}

// alpha sum + beta y, without reading y when beta = 0 (BLAS).
template <class T>
__device__ inline T scaled(T alpha, T sum, T beta, const T* y) {
  const T product = multiply_add(alpha, sum, zero<T>());
  return ops::is_zero(beta) ? product : multiply_add(beta, *y, product);
}

// Loads of 16 bytes where the group's vectors allow them: Width elements at a time.
template <class T>
struct alignas(16) Chunk {
  static constexpr int width = sizeof(T) < 16 ? 16 / sizeof(T) : 1;
  T element[width];
};

template <class T, int Group, int Lanes, bool Aligned>
__global__ void __launch_bounds__(block_threads)
    sellp_spmm_kernel(SellpSpmmProblem p, const T* __restrict__ values, T alpha,
                      const T* __restrict__ X, T beta, T* __restrict__ Y) {
  constexpr int rows_per_block = block_threads / Lanes;
  constexpr int width = Chunk<T>::width;
  const std::int64_t row =
      static_cast<std::int64_t>(blockIdx.x) * rows_per_block + threadIdx.x / Lanes;
  // The threads of a row take turns by chunk: a row's threads read one contiguous stretch of X
  // per load instruction.
  const std::int64_t pass_first = static_cast<std::int64_t>(blockIdx.y) * Group * Lanes;
  const int vector_lane = threadIdx.x % Lanes;
  const auto vector_of = [&](int v) {
    return pass_first + ((v / width) * Lanes + vector_lane) * width + v % width;
  };
  if (row >= p.num_rows || vector_of(0) >= p.num_vectors) return;
  const bool whole_pass = pass_first + Group * Lanes <= p.num_vectors;
  T sum[Group];
#pragma unroll
  for (int v = 0; v < Group; ++v) sum[v] = zero<T>();
  if (!ops::is_zero(alpha)) {
    const int slice = static_cast<int>(row / p.slice_size);
    const int lane = static_cast<int>(row % p.slice_size);
    const int end = p.slice_ptr[slice + 1];
    // The next entry's column and value load while this one's vectors do: a row's X loads
    // depend on its column, and a row has few entries.
    // In int64: at steps past the slice's end, past INT_MAX where the stored size nears it.
    std::int64_t at = static_cast<std::int64_t>(p.slice_ptr[slice]) + lane;
    int column = at < end ? p.columns[at] : -1;
    T a = at < end ? values[at] : zero<T>();
    while (column >= 0) {  // padding (column -1) ends the row
      at += p.slice_size;
      const int next_column = at < end ? p.columns[at] : -1;
      const T next_a = at < end ? values[at] : zero<T>();
      const T* x = X + column * p.x_row_stride;
      if (Aligned && whole_pass) {
        using C = Chunk<T>;
#pragma unroll
        for (int v = 0; v < Group; v += width) {
          const C chunk = *reinterpret_cast<const C*>(x + vector_of(v));
#pragma unroll
          for (int w = 0; w < width; ++w)
            sum[v + w] = multiply_add(a, chunk.element[w], sum[v + w]);
        }
      } else {
#pragma unroll
        for (int v = 0; v < Group; ++v)
          if (vector_of(v) < p.num_vectors) sum[v] = multiply_add(a, x[vector_of(v)], sum[v]);
      }
      column = next_column;
      a = next_a;
    }
  }
  T* y = Y + row * p.y_row_stride;
#pragma unroll
  for (int v = 0; v < Group; ++v)
    if (vector_of(v) < p.num_vectors)
      y[vector_of(v)] = scaled(alpha, sum[v], beta, y + vector_of(v));
}

// gridDim.y is at most 65535: more passes than that (over a million vectors of complex<double>)
// take one launch per 65535 passes, each on its own columns of X and Y.
constexpr std::int64_t max_passes = 65535;

template <class T, int Group, int Lanes>
void launch(cudaStream_t stream, const SellpSpmmProblem& p, const T* values, T alpha, const T* X,
            T beta, T* Y) {
  constexpr int rows_per_block = block_threads / Lanes;
  constexpr int vectors_per_pass = Group * Lanes;
  constexpr int width = Chunk<T>::width;
  for (std::int64_t first = 0; first < p.num_vectors; first += max_passes * vectors_per_pass) {
    SellpSpmmProblem part = p;
    part.num_vectors = std::min(p.num_vectors - first, max_passes * vectors_per_pass);
    const T* part_X = X + first;
    T* part_Y = Y + first;
    const dim3 grid(
        static_cast<unsigned>((p.num_rows + rows_per_block - 1) / rows_per_block),
        static_cast<unsigned>((part.num_vectors + vectors_per_pass - 1) / vectors_per_pass));
    const bool aligned = Group % width == 0 && reinterpret_cast<std::uintptr_t>(part_X) % 16 == 0 &&
                         p.x_row_stride % width == 0;
    if (aligned)
      sellp_spmm_kernel<T, Group, Lanes, true>
          <<<grid, block_threads, 0, stream>>>(part, values, alpha, part_X, beta, part_Y);
    else
      sellp_spmm_kernel<T, Group, Lanes, false>
          <<<grid, block_threads, 0, stream>>>(part, values, alpha, part_X, beta, part_Y);
    BASALT_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

template <class T>
void sellp_spmm(cudaStream_t stream, const SellpSpmmProblem& p, const T* values, T alpha,
                const T* X, T beta, T* Y) {
  if (p.num_rows == 0 || p.num_vectors == 0) return;
  // The smallest group that holds every vector (no idle registers for small k), then as many
  // threads per row as the vectors fill.
  constexpr int group = group_size<T>;
  const std::int64_t k = p.num_vectors;
  if (k == 1) return launch<T, 1, 1>(stream, p, values, alpha, X, beta, Y);
  if constexpr (group > 2)
    if (k == 2) return launch<T, 2, 1>(stream, p, values, alpha, X, beta, Y);
  if constexpr (group > 4)
    if (k <= 4) return launch<T, 4, 1>(stream, p, values, alpha, X, beta, Y);
  if (k <= group) return launch<T, group, 1>(stream, p, values, alpha, X, beta, Y);
  if (k <= 2 * group) return launch<T, group, 2>(stream, p, values, alpha, X, beta, Y);
  if (k <= 4 * group) return launch<T, group, 4>(stream, p, values, alpha, X, beta, Y);
  launch<T, group, max_lanes>(stream, p, values, alpha, X, beta, Y);
}

#define BASALT_INSTANTIATE_SELLP_SPMM(T) \
  template void sellp_spmm<T>(cudaStream_t, const SellpSpmmProblem&, const T*, T, const T*, T, T*);

BASALT_INSTANTIATE_SELLP_SPMM(float)
BASALT_INSTANTIATE_SELLP_SPMM(double)
BASALT_INSTANTIATE_SELLP_SPMM(cuFloatComplex)
BASALT_INSTANTIATE_SELLP_SPMM(cuDoubleComplex)

}  // namespace basalt::cuda::kernels
