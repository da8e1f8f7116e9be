// CUDA batched Cholesky of matrices of order 33 to 512: one thread block per matrix, right-looking
// by 32-column panels (16 in complex arithmetic); the trailing update as a register-tiled product
// from shared memory, by pairs of panels where their two L21 leave an SM as many blocks.
#include <cuComplex.h>

#include <cstddef>
#include <type_traits>

#include "basalt/backends/cuda/batched/block_batch.cuh"
#include "basalt/backends/cuda/batched/potrf_batched_launch.hpp"
#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/mma.cuh"
#include "basalt/backends/cuda/scalar_ops.cuh"

namespace basalt::cuda::kernels {

namespace {

// The trailing update goes by 32 x 32 tiles, a warp each, whatever the panel's width. A lane's
// part of a tile: rows 8 apart, columns 4 apart, so that each value read from shared memory feeds
// 8 or 4 multiply-adds.
constexpr int tile = 32;
constexpr int tile_rows = 4, tile_cols = 8;
constexpr int row_step = tile / tile_rows, col_step = tile / tile_cols;

// Columns of a panel: 32, but 16 in complex arithmetic. Complex double's L21 of 32 columns would
// take 264 KB of shared memory at 512 rows (more than an SM has) and 133 KB at 256 (one block an
// SM); in both complex precisions 16-column rows leave the registers that let two or three blocks
// share an SM (perf/NOTES.md).
template <class T>
constexpr int panel_columns = ops::is_complex<T> ? 16 : tile;

// Blocks of 257 to 384 threads: in complex arithmetic a build of their own, held to two blocks an
// SM; in single the most that its unheld 512-thread build holds two of.
constexpr int middle_threads = 384;

// Passes over the update's tiles (subtract_tile_product): in complex arithmetic 4, so that a
// lane's sums fit the registers of two or three blocks an SM, but 2 in complex double's build for
// more than 384 threads (one block an SM at 128 registers, measured in two passes).
template <class T, int MaxThreads>
constexpr int tile_passes = !ops::is_complex<T>                            ? 1
                            : sizeof(T) > 8 && MaxThreads > middle_threads ? 2
                                                                           : 4;

// L21's column stride for a block of `threads` threads (one per row of the largest matrix,
// rounded up to whole warps) and panels of `width` columns (32 or 16): its threads - width rows
// rounded up to whole 32-row tiles (the tiles on the edge read that far), and 4 more, so that the
// 4 columns an 8 x 8 x 4 tensor-core operand reads (8 rows each) fall in different banks.
__host__ __device__ inline int l21_pitch(int threads, int width) {
  return (width == tile ? threads - tile : threads) + 4;
}

// Shared memory of such a block: the diagonal tile L11 (width x width), L21 (the panel's rows
// below it; two panels' when the update goes by pairs of panels) and the reciprocals of L11's
// diagonal.
template <class T>
std::size_t shared_bytes_for(int threads, int width, int l21_panels) {
  return sizeof(T) * width * (width + l21_panels * l21_pitch(threads, width)) +
         sizeof(ops::real_of_t<T>) * width;
}

// Element (r, c), r >= c, of the lower triangle: A(r, c), or conj(A(c, r)) when the upper one
// is stored.
template <class T>
__device__ inline T load_lower(const warp::Located<T>& a, bool lower, int r, int c) {
  return lower ? block::at(a, r, c) : ops::conjugate(block::at(a, c, r));
}
template <class T>
__device__ inline void store_lower(const warp::Located<T>& a, bool lower, int r, int c, T v) {
  if (lower)
    block::at(a, r, c) = v;
  else
    block::at(a, c, r) = ops::conjugate(v);
}

// Tile (ti, tj), ti >= tj, of the trailing matrix A22 (order m, at (start, start)) -= L21(tile
// ti's rows, :) L21(tile tj's rows, :)^H, on one warp, L21 (Width columns) in shared memory
// (column stride pitch); first the same with `earlier`, the panel before's L21 from A22's first
// row, where the update goes by pairs of panels (else null). Only A22's stored triangle is read
// or written, and with Narrow only its first `columns` columns (a narrow panel's, when the update
// goes by pairs: the 32 columns of tiles (ti, 0) are then two panels'). By multiply-adds: lane (tr,
// tc) holds rows tr + 8i and columns tc + 4j of the tile, so that each value read from shared
// memory feeds 8 or 4 of them; the lanes side by side along the stored triangle's contiguous
// dimension (for column-major storage), so that the tile's loads and stores use whole 32-byte
// sectors. In `Passes` passes over the tile's columns (tile_passes).
template <int Width, int Passes, bool Narrow, class T>
__device__ void subtract_tile_product(const warp::Located<T>& a, bool lower, int start, int m,
                                      int columns, int ti, int tj, const T* l21, const T* earlier,
                                      int pitch) {
  constexpr int pass_cols = tile_cols / Passes;
  const int lane = threadIdx.x % 32;
  const int tr = lower ? lane % row_step : lane / col_step;
  const int tc = lower ? lane / row_step : lane % col_step;
  const int r0 = ti * tile + tr;
#pragma unroll 1
  for (int pass = 0; pass < Passes; ++pass) {
    const int c0 = tj * tile + tc + col_step * pass_cols * pass;
    T sum[tile_rows][pass_cols];
#pragma unroll
    for (int i = 0; i < tile_rows; ++i)
#pragma unroll
      for (int j = 0; j < pass_cols; ++j) {
        const int r = r0 + row_step * i, c = c0 + col_step * j;
        const bool stored = r < m && c <= r && (!Narrow || c < columns);
        sum[i][j] = stored ? load_lower(a, lower, start + r, start + c) : T{};
      }
#pragma unroll 1
    for (int panel = earlier ? 0 : 1; panel < 2; ++panel) {
      const T* const l = panel == 0 ? earlier : l21;
#pragma unroll
      for (int k = 0; k < Width; ++k) {
        T left[tile_rows], right[pass_cols];
#pragma unroll
        for (int i = 0; i < tile_rows; ++i) left[i] = l[k * pitch + r0 + row_step * i];
#pragma unroll
        for (int j = 0; j < pass_cols; ++j)
          right[j] = ops::conjugate(l[k * pitch + c0 + col_step * j]);
#pragma unroll
        for (int i = 0; i < tile_rows; ++i)
#pragma unroll
          for (int j = 0; j < pass_cols; ++j)
            sum[i][j] = ops::minus_product(sum[i][j], left[i], right[j]);
      }
    }
#pragma unroll
    for (int i = 0; i < tile_rows; ++i)
#pragma unroll
      for (int j = 0; j < pass_cols; ++j) {
        const int r = r0 + row_step * i, c = c0 + col_step * j;
        if (r < m && c <= r && (!Narrow || c < columns))
          store_lower(a, lower, start + r, start + c, sum[i][j]);
      }
  }
}

#ifdef BASALT_CUDA_DOUBLE_MMA
// The same in real double by tensor cores (mma.cuh; without them, the template above). The tile's
// element (p, q) is taken in the stored triangle's own order, p along its contiguous dimension
// (lower: p the row; upper: p the column), so that the 8 lanes of a fragment's column load and
// store 64 contiguous bytes; L21 L21^T is symmetric, so the (p, q) product is the same either way.
// The lanes of one column of an operand read 4 columns of L21 at 8 rows each: l21_pitch keeps them
// apart in the banks.
template <int Width, int Passes, bool Narrow>
__device__ void subtract_tile_product(const warp::Located<double>& a, bool lower, int start, int m,
                                      int, int ti, int tj, const double* l21, const double* earlier,
                                      int pitch) {
  static_assert(Width == tile && Passes == 1 && !Narrow,
                "the tensor cores' product takes L21 of 32 columns");
  const int lane = threadIdx.x % 32, g = lane / 4, s = lane % 4;
  const int p_tile = (lower ? ti : tj) * tile, q_tile = (lower ? tj : ti) * tile;
  const auto stored = [&](int p, int q) {
    const int r = lower ? p : q, c = lower ? q : p;
    return r < m && c <= r;
  };
  double* const origin = &block::at(a, start + p_tile + g, start + q_tile + 2 * s);
  double sum[4][4][2] = {};  // sum[i][j][e]: p = p_tile + 8i + g, q = q_tile + 8j + 2s + e
  // f(sum element, matrix element) on the tile's elements in the stored triangle.
  const auto each_stored = [&](auto&& f) {
    mma::for_each_entry(sum, [&](double& value, int p, int q) {
      if (stored(p_tile + p, q_tile + q))
        f(value, origin[(p - g) * a.row_stride + (q - 2 * s) * a.col_stride]);
    });
  };
  each_stored([](double& value, const double& element) { value = element; });
  if (earlier) mma::subtract_product_32x32(sum, earlier + p_tile, earlier + q_tile, pitch);
  mma::subtract_product_32x32(sum, l21 + p_tile, l21 + q_tile, pitch);
  each_stored([](const double& value, double& element) { element = value; });
}
#endif

// Right-looking Cholesky by panels of NB columns (panel_columns), with three block barriers per
// panel. Thread t loads row k0 + t of panel k0 (of the lower factor; for an upper triangle,
// column k0 + t, conjugated) into registers. Warp 0 factors the diagonal tile, a row per lane,
// each column of L11 going through shared memory to every lane as it becomes final (with 16-column
// panels its other 16 lanes solve their rows below the tile in the same steps); then every thread
// below solves its row of L21 = A21 L11^-H by forward substitution, L11 read by broadcasts, and
// puts it in shared memory too. Then A22 -= L21 L21^H, its lower triangle only, tile by tile: each
// warp loads a 32 x 32 tile of A22 into registers, subtracts the product of L21's rows and
// columns read from shared memory (subtract_tile_product) and stores it back. A non-positive
// (or NaN) diagonal stops the matrix there: the columns before it final, the diagonal tile
// stored as updated so far (A(j, j) as it was updated), the rows below and the trailing matrix
// as the earlier panels left them (by pairs, after an odd panel's failure, without the even
// panel's update). Only the stored triangle is read or written; control flow depends only on
// the matrix's order and on values shared by the whole warp or block.
// MinBlocks: the blocks an SM that ptxas must fit in registers (0: none asked). Paired: the
// trailing update by pairs of panels, which halves its traffic to the matrix: after an even
// panel only the next panel's columns, after an odd one the rest by both panels' L21 at once,
// kept in two buffers.
template <class T, int MaxThreads, int MinBlocks, bool Paired>
__global__ void __launch_bounds__(MaxThreads, MinBlocks)
    potrf_tiled(bool lower, DeviceBatch<T> batch, int* info, std::int64_t info_stride, int count) {
  using Real = ops::real_of_t<T>;
  constexpr int NB = panel_columns<T>;
  constexpr int update_passes = tile_passes<T, MaxThreads>;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  const int pitch = l21_pitch(blockDim.x, NB);
  T* const l11 = reinterpret_cast<T*>(shared_bytes);  // L11(r, c) at l11[c * NB + r]
  T* const l21_buffers = l11 + NB * NB;               // L21(r, c) at l21[c * pitch + r]
  constexpr int l21_panels = Paired ? 2 : 1;
  Real* const reciprocal =
      reinterpret_cast<Real*>(l21_buffers + l21_panels * NB * pitch);  // 1 / L11(j, j)
  __shared__ int panel_done;  // columns of the panel factored: jb, or the failing one's index

  const int b = warp::member(batch, blockIdx.x, count), t = threadIdx.x;
  const warp::Located<T> a = warp::locate(batch, b);
  const int n = a.rows;
  const auto load = [&](int r, int c) { return load_lower(a, lower, r, c); };
  const auto store = [&](int r, int c, T v) { store_lower(a, lower, r, c, v); };

  int failed = 0;
  for (int k0 = 0; k0 < n; k0 += NB) {
    const bool odd = Paired && k0 / NB % 2 == 1;
    T* const l21 = l21_buffers + (odd ? NB * pitch : 0);
    const int jb = min(NB, n - k0);
    const bool mine = t < n - k0;
    T row[NB];
#pragma unroll
    for (int c = 0; c < NB; ++c)
      row[c] = mine && c < jb && (t >= NB || c <= t) ? load(k0 + t, k0 + c) : T{};

    if (t < 32) {
      // With 16-column panels, lanes 16 to 31 hold rows below the diagonal tile.
      const bool below_tile = NB < 32 && t >= NB;
      int done = jb;
#pragma unroll
      for (int j = 0; j < NB; ++j) {
        if (j >= done) continue;
        const Real diagonal = ops::real_part(warp::shuffle<32>(row[j], j));
        if (!(diagonal > Real(0))) {
          done = j;
          continue;
        }
        const Real inverse = rsqrt(diagonal);
        if (t == j) {
          row[j] = ops::make_scalar<T>(ops::root_from_reciprocal(diagonal, inverse));
          reciprocal[j] = inverse;
        }
        if (t > j) row[j] = ops::times_real(row[j], inverse);
        // Column j of L11 goes through shared memory: each lane then reads it two entries at a
        // time, where shuffles took two instructions an entry and register moves to pair them
        // (its entries above the diagonal are never read).
        if (!below_tile) l11[j * NB + t] = row[j];
        __syncwarp();
        // Above the diagonal (c > t) too, without a select: what goes there is never read.
#pragma unroll
        for (int c = j + 1; c < NB; ++c)
          row[c] = ops::minus_product(row[c], row[j], ops::conjugate(l11[j * NB + c]));
      }
#pragma unroll
      for (int c = 0; c < NB; ++c)
        if (mine && c < jb && c <= t && (!below_tile || c < done)) store(k0 + t, k0 + c, row[c]);
      if (t == 0) panel_done = done;
    }
    __syncthreads();  // L11, its reciprocals and panel_done
    const int done = panel_done;

    if (t >= 32 && mine) {
#pragma unroll
      for (int j = 0; j < NB; ++j) {
        if (j >= done) continue;
        row[j] = ops::times_real(row[j], reciprocal[j]);
#pragma unroll
        for (int c = j + 1; c < NB; ++c)
          row[c] = ops::minus_product(row[c], row[j], ops::conjugate(l11[j * NB + c]));
      }
#pragma unroll
      for (int c = 0; c < NB; ++c) {
        if (c < done) store(k0 + t, k0 + c, row[c]);
        l21[c * pitch + t - NB] = row[c];
      }
    } else if (t >= NB) {
      // Rows past the matrix, which the tiles on its edge read but never store (zeros), and
      // with 16-column panels the rows below the tile that warp 0 solved.
#pragma unroll
      for (int c = 0; c < NB; ++c) l21[c * pitch + t - NB] = NB < 32 && mine ? row[c] : T{};
    }
    if (done < jb) {
      failed = k0 + done + 1;
      break;
    }
    const int m = n - k0 - NB;  // order of the trailing matrix
    if (m <= 0) break;
    __syncthreads();  // L21

    const int start = k0 + NB, across = (m + tile - 1) / tile;
    // By pairs of panels: after an even one only the next panel's columns (in tiles (ti, 0)),
    // after an odd one all tiles, by the even one's L21 too (from its row NB on).
    const bool next_columns_only = Paired && !odd;
    constexpr bool narrow = Paired && NB < tile;
    const int columns = next_columns_only ? NB : m;
    const T* const earlier = odd ? l21_buffers + NB : nullptr;
    const int tiles = next_columns_only ? across : across * (across + 1) / 2;
    for (int tile_index = t / 32; tile_index < tiles; tile_index += blockDim.x / 32) {
      int ti = tile_index, tj = 0;  // tile (ti, tj), ti >= tj, of the trailing lower triangle
      if (!next_columns_only) {
        ti = 0;
        while ((ti + 1) * (ti + 2) / 2 <= tile_index) ++ti;
        tj = tile_index - ti * (ti + 1) / 2;
      }
      subtract_tile_product<NB, update_passes, narrow>(a, lower, start, m, columns, ti, tj, l21,
                                                       earlier, pitch);
    }
    // The trailing matrix stored for the next panel; shared memory free again (by pairs, but for
    // an even panel's L21).
    __syncthreads();
  }
  if (t == 0) info[b * info_stride] = failed;
}

// Whether blocks of `threads` threads (a multiple of 32) of the build <T, MaxThreads, MinBlocks>
// update by pairs of panels on `device`: where the matrices have more than three panels and the
// two L21 leave an SM as many blocks as one does. The pairs halve the update's traffic to the
// matrices, which bounds the kernel, but a block less an SM costs more than that saves, and
// with one pair at most they saved nothing (single's 64 and 96 rows ran 3-15% slower).
template <class T, int MaxThreads, int MinBlocks>
bool by_pairs_on(int device, int threads) {
  if (threads <= 3 * panel_columns<T>) return false;
  int most_shared = 0;
  BASALT_CUDA_CHECK(
      cudaDeviceGetAttribute(&most_shared, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const std::size_t paired_bytes = shared_bytes_for<T>(threads, panel_columns<T>, 2);
  if (paired_bytes > std::size_t(most_shared)) return false;
  const auto blocks = [&](auto kernel, std::size_t bytes) {
    BASALT_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
    int count = 0;
    BASALT_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&count, kernel, threads, bytes));
    return count;
  };
  return blocks(potrf_tiled<T, MaxThreads, MinBlocks, true>, paired_bytes) >=
         blocks(potrf_tiled<T, MaxThreads, MinBlocks, false>,
                shared_bytes_for<T>(threads, panel_columns<T>, 1));
}

// by_pairs_on for the current device, the answers kept for the first device asked.
template <class T, int MaxThreads, int MinBlocks>
bool by_pairs(int threads) {
  struct Answers {
    int device = 0;
    bool by_pairs[block::max_warps + 1] = {};
  };
  int device = 0;
  BASALT_CUDA_CHECK(cudaGetDevice(&device));
  static const Answers first = [device] {
    Answers answers;
    answers.device = device;
    for (int warps = 1; warps * 32 <= MaxThreads; ++warps)
      answers.by_pairs[warps] = by_pairs_on<T, MaxThreads, MinBlocks>(device, warps * 32);
    return answers;
  }();
  return device == first.device ? first.by_pairs[threads / 32]
                                : by_pairs_on<T, MaxThreads, MinBlocks>(device, threads);
}

// MayPair: whether the build may update by pairs of panels (by_pairs).
template <class T, int MaxThreads, int MinBlocks, bool MayPair = true>
void launch_tiled(cudaStream_t stream, bool lower, const DeviceBatch<T>& A, int* info,
                  std::int64_t info_stride, int count, int threads) {
  bool paired = false;
  if constexpr (MayPair) paired = by_pairs<T, MaxThreads, MinBlocks>(threads);
  const auto kernel = [paired] {
    if constexpr (MayPair)
      if (paired) return potrf_tiled<T, MaxThreads, MinBlocks, true>;
    return potrf_tiled<T, MaxThreads, MinBlocks, false>;
  }();
  const std::size_t shared = shared_bytes_for<T>(threads, panel_columns<T>, paired ? 2 : 1);
  BASALT_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)));
  kernel<<<count, threads, shared, stream>>>(lower, A, info, info_stride, count);
  BASALT_CUDA_CHECK_LAUNCH();
}

}  // namespace

// The builds, by the block's threads. Some are held to more blocks an SM than their registers
// alone allow (MinBlocks), where that measured faster than the spills it costs (perf/NOTES.md;
// registers / bytes of spill stores): complex up to 256 threads three blocks (80 / 32 in double,
// 80 / 0 in single) and from 257 to 384 two (the same), complex single above 384 two (64 / 4);
// single above 384 two (64 / 44; alone 77, which holds two blocks of up to 384 threads and is the
// faster there). Complex double above 384 holds one block an SM (128 / 124). Every build but
// complex single's above 384 threads may update by pairs of panels: that one's paired build
// spills 80 bytes (4 alone), and ran 4% slower at 416 rows.
template <class T>
void potrf_batched_block(cudaStream_t stream, bool lower, const DeviceBatch<T>& A, int* info,
                         std::int64_t info_stride, int count, int largest) {
  if (count == 0) return;
  const int threads = block::threads_for(largest);
  constexpr bool complex = ops::is_complex<T>;
  if (threads <= block::short_threads) {
    constexpr int three_in_complex = complex ? 3 : 0;
    return launch_tiled<T, block::short_threads, three_in_complex>(stream, lower, A, info,
                                                                   info_stride, count, threads);
  }
  if constexpr (complex) {
    if (threads <= middle_threads)
      return launch_tiled<T, middle_threads, 2>(stream, lower, A, info, info_stride, count,
                                                threads);
  } else if constexpr (sizeof(T) == 4) {
    if (threads <= middle_threads)
      return launch_tiled<T, block::max_threads, 0>(stream, lower, A, info, info_stride, count,
                                                    threads);
  }
  constexpr bool single = sizeof(ops::real_of_t<T>) == 4;
  constexpr int two_in_single = single ? 2 : 0;
  launch_tiled<T, block::max_threads, two_in_single, !(complex && single)>(
      stream, lower, A, info, info_stride, count, threads);
}

#define BASALT_INSTANTIATE_POTRF_BATCHED_BLOCK(T)                                       \
  template void potrf_batched_block<T>(cudaStream_t, bool, const DeviceBatch<T>&, int*, \
                                       std::int64_t, int, int);

BASALT_INSTANTIATE_POTRF_BATCHED_BLOCK(float)
BASALT_INSTANTIATE_POTRF_BATCHED_BLOCK(double)
BASALT_INSTANTIATE_POTRF_BATCHED_BLOCK(cuFloatComplex)
BASALT_INSTANTIATE_POTRF_BATCHED_BLOCK(cuDoubleComplex)

}  // namespace basalt::cuda::kernels
