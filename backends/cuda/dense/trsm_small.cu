// B := alpha L^-1 B for a unit lower L of at most 128 rows, in one kernel where cuBLAS takes three
// (two half-width solves and a gemm; ncu on getrf 4096's look-ahead solve, 128 x 128, at ncu's
// base clocks: 14 us against 16 + 18 + 16 us).
// Every warp takes one column of B, lane l holding rows l, l + 32, l + 64 and l + 96 in
// registers; step k passes x_k by a shuffle and updates the rows below it. The block first stages
// L's 32 x 32 tiles on and below the diagonal in shared memory, where the lanes read a tile column
// at a time.
#include <cuComplex.h>

#include "basalt/backends/cuda/batched/warp_batch.cuh"
#include "basalt/backends/cuda/dense/trsm_small_launch.hpp"
#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/scalar_ops.cuh"

namespace basalt::cuda::kernels {

namespace {

constexpr int tile = 32;
constexpr int tiles = small_trsm_max_rows / tile;
constexpr int solve_warps = 8;

// Tile (I, J), J <= I, of the staged triangle, column-major.
__device__ constexpr int tile_offset(int I, int J) { return (I * (I + 1) / 2 + J) * tile * tile; }

std::size_t staged_bytes(int m, std::size_t entry_bytes) {
  const std::size_t used = (m + tile - 1) / tile;
  return used * (used + 1) / 2 * tile * tile * entry_bytes;
}

template <class T>
__global__ void __launch_bounds__(solve_warps * 32)
    solve_unit_lower_kernel(const T* l, std::int64_t ldl, T* b, std::int64_t ldb, int m,
                            std::int64_t n, T alpha) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* staged = reinterpret_cast<T*>(shared_bytes);
  const int used = (m + tile - 1) / tile;
  const T zero = ops::make_scalar<T>(0);
  // A row of tiles at a time, all its loads in flight before any store. Zeros on and above the
  // diagonal and past m, so the steps need no bounds.
  constexpr int per_thread = tile * tile / (solve_warps * 32);
#pragma unroll
  for (int I = 0; I < tiles; ++I) {
    if (I >= used) break;
    T entries[tiles][per_thread];
#pragma unroll
    for (int J = 0; J <= I; ++J)
#pragma unroll
      for (int p = 0; p < per_thread; ++p) {
        const int e = threadIdx.x + p * solve_warps * 32;
        const int r = I * tile + e % tile, c = J * tile + e / tile;
        entries[J][p] = r < m && r > c ? l[r + c * ldl] : zero;
      }
#pragma unroll
    for (int J = 0; J <= I; ++J)
#pragma unroll
      for (int p = 0; p < per_thread; ++p)
        staged[tile_offset(I, J) + threadIdx.x + p * solve_warps * 32] = entries[J][p];
  }
  __syncthreads();
  const std::int64_t column = std::int64_t(blockIdx.x) * solve_warps + threadIdx.x / 32;
  if (column >= n) return;
  const int lane = threadIdx.x % 32;
  T* x = b + column * ldb;
  T rows[tiles];
#pragma unroll
  for (int I = 0; I < tiles; ++I) {
    const int r = I * tile + lane;
    rows[I] = r < m ? ops::multiply(alpha, x[r]) : zero;
  }
#pragma unroll
  for (int J = 0; J < tiles; ++J) {
    if (J >= used) break;
#pragma unroll
    for (int k = 0; k < tile; ++k) {
      const T xk = warp::shuffle<32>(rows[J], k);
      // Lanes at or above k hold final values (x_k itself on lane k): never touched, so an Inf
      // in x_k cannot turn them into NaN through a zero of the staged triangle.
      if (lane > k)
        rows[J] = ops::minus_product(rows[J], staged[tile_offset(J, J) + k * tile + lane], xk);
#pragma unroll
      for (int I = J + 1; I < tiles; ++I) {
        if (I >= used) break;  // rows past m, and tiles never staged
        rows[I] = ops::minus_product(rows[I], staged[tile_offset(I, J) + k * tile + lane], xk);
      }
    }
  }
#pragma unroll
  for (int I = 0; I < tiles; ++I) {
    const int r = I * tile + lane;
    if (r < m) x[r] = rows[I];
  }
}

}  // namespace

template <class T>
void solve_unit_lower(cudaStream_t stream, const T* l, std::int64_t ldl, T* b, std::int64_t ldb,
                      int m, std::int64_t n, T alpha) {
  if (m == 0 || n == 0) return;
  const std::size_t shared = staged_bytes(m, sizeof(T));
  const auto kernel = solve_unit_lower_kernel<T>;
  BASALT_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)));
  const std::int64_t blocks = (n + solve_warps - 1) / solve_warps;
  kernel<<<static_cast<unsigned>(blocks), solve_warps * 32, shared, stream>>>(l, ldl, b, ldb, m, n,
                                                                              alpha);
  BASALT_CUDA_CHECK_LAUNCH();
}

#define BASALT_INSTANTIATE_SOLVE_UNIT_LOWER(T)                                                   \
  template void solve_unit_lower<T>(cudaStream_t, const T*, std::int64_t, T*, std::int64_t, int, \
                                    std::int64_t, T);

BASALT_INSTANTIATE_SOLVE_UNIT_LOWER(float)
BASALT_INSTANTIATE_SOLVE_UNIT_LOWER(double)
BASALT_INSTANTIATE_SOLVE_UNIT_LOWER(cuFloatComplex)
BASALT_INSTANTIATE_SOLVE_UNIT_LOWER(cuDoubleComplex)

}  // namespace basalt::cuda::kernels
