// CUDA Cholesky diagonal block: one thread block, the lower triangle in shared memory as 32 x 32
// tiles, right-looking by 32 columns. Per block of 32 columns, one warp factors the diagonal
// tile in registers (a row per lane, columns broadcast by shuffles: no barrier per column), every
// thread solves rows below it against that tile, and the warps apply the rank-32 update to the
// trailing triangle; three barriers per 32 columns instead of three per column. An upper block is
// loaded as its conjugate transpose, so one lower kernel factors both triangles.
#include <cuComplex.h>

#include <stdexcept>

#include "basalt/backends/cuda/batched/warp_batch.cuh"
#include "basalt/backends/cuda/dense/potf2_launch.hpp"
#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/scalar_ops.cuh"

namespace basalt::cuda::kernels {

namespace {

constexpr int potf2_threads = 256;
constexpr int potf2_warps = potf2_threads / 32;
constexpr int tile = 32;
// Column stride of a tile: odd, so that a warp reading along a tile row hits distinct banks as
// a warp reading down a column does (the loads and stores of an upper block run along rows).
constexpr int tile_ld = tile + 1;
constexpr int tile_entries = tile * tile_ld;

// Shared memory for tiles x tiles tiles (the lower ones kept), the reciprocal diagonal of a
// tile and the count of its factored columns.
std::size_t shared_bytes_for(int tiles, int entry_bytes) {
  return (std::size_t(tiles) * (tiles + 1) / 2 * tile_entries + tile) * entry_bytes + sizeof(int);
}

// The lower tiles of the block, row-tile by row-tile: tile (I, J), I >= J, column-major.
template <class T>
struct Tiles {
  T* base;
  __device__ T* at(int I, int J) const { return base + (I * (I + 1) / 2 + J) * tile_entries; }
  __device__ T& operator()(int i, int c) const {
    return at(i / tile, c / tile)[i % tile + (c % tile) * tile_ld];
  }
};

// Cholesky of the diagonal tile K (rows and columns k0 .. k0 + kb - 1) by warp 0, lane i holding
// row i of the tile, as the batched warp kernel (batched/potrf_batched.cu). Returns on every lane
// the number of columns factored: kb, or the first column whose diagonal is not positive (or
// NaN), which keeps its updated value. The reciprocals of the new diagonal go to `reciprocal`.
template <class T>
__device__ int factor_diagonal_tile(T* d, int kb, ops::real_of_t<T>* reciprocal) {
  using Real = ops::real_of_t<T>;
  const int i = threadIdx.x % 32;
  T row[tile];
#pragma unroll
  for (int c = 0; c < tile; ++c) row[c] = d[i + c * tile_ld];  // zero above the diagonal
  int factored = kb;
  bool active = true;
#pragma unroll
  for (int j = 0; j < tile; ++j) {
    const Real diagonal = ops::real_part(warp::shuffle<32>(row[j], j));
    if (active && j < kb && !(diagonal > Real(0))) {  // the same answer on every lane
      active = false;
      factored = j;
    }
    const bool step = active && j < kb;
    const Real root = step ? sqrt(diagonal) : Real(1), inverse = Real(1) / root;
    if (step && i == j) {
      row[j] = ops::make_scalar<T>(root);
      reciprocal[j] = inverse;
    }
    if (step && i > j) row[j] = ops::times_real(row[j], inverse);
#pragma unroll
    for (int c = j + 1; c < tile; ++c) {
      const T l = ops::conjugate(warp::shuffle<32>(row[j], c));
      if (step && c <= i) row[c] = ops::minus_product(row[c], row[j], l);
    }
  }
  if (i < kb) {
#pragma unroll
    for (int c = 0; c < tile; ++c)
      if (c <= i) d[i + c * tile_ld] = row[c];
  }
  return factored;
}

// Row i below the diagonal tile: its first `factored` columns x solve x L11^H = a (forward
// substitution, right-looking: each x_c, once final, updates the columns after it).
template <class T>
__device__ void solve_row(T* a, const T* d, int factored, const ops::real_of_t<T>* reciprocal) {
  T x[tile];
#pragma unroll
  for (int c = 0; c < tile; ++c) x[c] = a[c * tile_ld];
#pragma unroll
  for (int c = 0; c < tile; ++c) {
    x[c] = ops::times_real(x[c], reciprocal[c]);
#pragma unroll
    for (int c2 = c + 1; c2 < tile; ++c2)
      x[c2] = ops::minus_product(x[c2], x[c], ops::conjugate(d[c2 + c * tile_ld]));
  }
  // Columns from `factored` on hold values of no use (the diagonal tile failed there).
#pragma unroll
  for (int c = 0; c < tile; ++c)
    if (c < factored) a[c * tile_ld] = x[c];
}

// The trailing triangle (tiles K+1 ..) minus L21 L21^H, L21 the tile column K: per row tile, each
// lane a row whose 32 entries of L21 it keeps in registers, the warps taking turns over columns.
template <class T>
__device__ void update_trailing(const Tiles<T>& s, int K, int n) {
  const int lane = threadIdx.x % 32, warp_id = threadIdx.x / 32;
  const int tiles = (n + tile - 1) / tile, first = (K + 1) * tile;
  for (int R = K + 1; R < tiles; ++R) {
    const int i = R * tile + lane, last = min(R * tile + tile, n);  // columns first .. last - 1
    if (first + warp_id >= last) continue;
    const T* panel = s.at(R, K) + lane;
    T x[tile];
#pragma unroll
    for (int l = 0; l < tile; ++l) x[l] = panel[l * tile_ld];
    for (int c = first + warp_id; c < last; c += potf2_warps) {
      const T* y = s.at(c / tile, K) + c % tile;  // row c of L21: the same on every lane
      T* target = s.at(R, c / tile) + lane + (c % tile) * tile_ld;
      T even = *target, odd = ops::make_scalar<T>(0);  // two chains for the FMA latency
#pragma unroll
      for (int l = 0; l < tile; l += 2) {
        even = ops::minus_product(even, x[l], ops::conjugate(y[l * tile_ld]));
        odd = ops::minus_product(odd, x[l + 1], ops::conjugate(y[(l + 1) * tile_ld]));
      }
      if (i >= c && i < n) *target = ops::add(even, odd);
    }
  }
}

template <class T>
__global__ void __launch_bounds__(potf2_threads)
    factor_block(T* a, int n, std::int64_t lda, bool lower, int offset, int* info,
                 T* failed_diagonal) {
  using Real = ops::real_of_t<T>;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  const int tiles = (n + tile - 1) / tile;
  const Tiles<T> s{reinterpret_cast<T*>(shared_bytes)};
  auto* reciprocal = reinterpret_cast<Real*>(s.at(tiles, 0));  // after the last tile
  int& factored_in_tile = *reinterpret_cast<int*>(s.at(tiles, 0) + tile);
  const int tid = threadIdx.x;
  // Every thread reads info before the one write below, which follows a barrier.
  int first_unfactored = 0;
  if (*info == 0) {
    // Whole tiles, zero outside the block and above the diagonal; a lower block read down its
    // columns, an upper one along its rows, so that global reads coalesce.
    for (int I = 0; I < tiles; ++I)
      for (int J = 0; J <= I; ++J)
        for (int e = tid; e < tile * tile; e += potf2_threads) {
          const int r = lower ? e % tile : e / tile, c = lower ? e / tile : e % tile;
          const int i = I * tile + r, j = J * tile + c;
          T v = ops::make_scalar<T>(0);
          if (i < n && i >= j) v = lower ? a[i + j * lda] : ops::conjugate(a[j + i * lda]);
          s.at(I, J)[r + c * tile_ld] = v;
        }
    first_unfactored = n;
    for (int K = 0; K < tiles; ++K) {
      const int k0 = K * tile, kb = min(tile, n - k0);
      __syncthreads();  // tile K is up to date, and factored_in_tile has been read
      if (tid < 32) {
        const int factored = factor_diagonal_tile(s.at(K, K), kb, reciprocal);
        if (tid == 0) factored_in_tile = factored;
      }
      __syncthreads();
      const int factored = factored_in_tile;
      for (int i = k0 + kb + tid; i < n; i += potf2_threads)
        solve_row(s.at(i / tile, K) + i % tile, s.at(K, K), factored, reciprocal);
      if (factored < kb) {  // the same on every thread
        first_unfactored = k0 + factored;
        break;
      }
      __syncthreads();  // the tile column K is final
      update_trailing(s, K, n);
    }
    __syncthreads();
    if (first_unfactored < n && tid == 0) {
      const int k = first_unfactored;
      *info = offset + k + 1;
      *failed_diagonal = lower ? s(k, k) : ops::conjugate(s(k, k));
    }
  }
  // The lower triangle goes back as it was loaded, with the unfactored part the identity (the
  // whole block when an earlier one failed).
  for (int e = tid; e < n * n; e += potf2_threads) {
    const int i = lower ? e % n : e / n, j = lower ? e / n : e % n;
    if (i < j) continue;
    const T v = j >= first_unfactored ? ops::make_scalar<T>(i == j ? Real(1) : Real(0)) : s(i, j);
    if (lower)
      a[i + j * lda] = v;
    else
      a[j + i * lda] = ops::conjugate(v);
  }
}

}  // namespace

int potf2_width_limit(int device, int entry_bytes) {
  int bytes = 0;
  BASALT_CUDA_CHECK(
      cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  int tiles = 0;
  while (shared_bytes_for(tiles + 1, entry_bytes) <= std::size_t(bytes)) ++tiles;
  return tiles * tile;
}

template <class T>
void potf2(int device, cudaStream_t stream, T* block, int* info, T* failed_diagonal,
           const Potf2Problem& p) {
  if (p.n == 0) return;
  if (p.n > potf2_width_limit(device, sizeof(T)))
    throw std::invalid_argument("basalt: cuda potf2: the block exceeds the kernel's width");
  const std::size_t shared = shared_bytes_for((p.n + tile - 1) / tile, sizeof(T));
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
