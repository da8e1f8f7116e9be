// CUDA batched Cholesky of matrices of order 33 to 512: one thread block per matrix, right-looking
// by 32-column panels (16 in complex arithmetic); the trailing update as a register-tiled product
// from shared memory, by pairs of panels where their two L21 leave an SM as many blocks (at each
// panel's own stride where two at the block's do not fit).
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
__host__ __device__ constexpr int l21_pitch(int threads, int width) {
  return (width == tile ? threads - tile : threads) + 4;
}

// Shared memory of such a block: the diagonal tile L11 (width x width), L21 (the panel's rows
// below it; two panels' when the update goes by pairs of panels) and the reciprocals of L11's
// diagonal.
template <class T>
constexpr std::size_t shared_bytes_for(int threads, int width, int l21_panels) {
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
// (column stride pitch); first the same with `earlier` (stride earlier_pitch), the panel
// before's L21 from A22's first row, where the update goes by pairs of panels (else null). Only
// A22's stored triangle is read or written, and with Narrow only its first `columns` columns (a
// narrow panel's, when the update goes by pairs: the 32 columns of tiles (ti, 0) are then two
// panels'). By multiply-adds: lane (tr, tc) holds rows tr + 8i and columns tc + 4j of the tile, so
// that each value read from shared memory feeds 8 or 4 of them; the lanes side by side along the
// stored triangle's contiguous dimension (for column-major storage), so that the tile's loads and
// stores use whole 32-byte sectors. In `Passes` passes over the tile's columns (tile_passes).
template <int Width, int Passes, bool Narrow, class T>
__device__ void subtract_tile_product(const warp::Located<T>& a, bool lower, int start, int m,
                                      int columns, int ti, int tj, const T* l21, int pitch,
                                      const T* earlier, int earlier_pitch) {
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
      const int stride = panel == 0 ? earlier_pitch : pitch;
#pragma unroll
      for (int k = 0; k < Width; ++k) {
        T left[tile_rows], right[pass_cols];
#pragma unroll
        for (int i = 0; i < tile_rows; ++i) left[i] = l[k * stride + r0 + row_step * i];
#pragma unroll
        for (int j = 0; j < pass_cols; ++j)
          right[j] = ops::conjugate(l[k * stride + c0 + col_step * j]);
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
                                      int, int ti, int tj, const double* l21, int pitch,
                                      const double* earlier, int earlier_pitch) {
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
  // m8n8k4: with m16n8k8 the kernels spilled 168-184 bytes within their register bound, and
  // potrf_batched d of 2000 matrices ran slower (H200, 64 / 256: 0.096 / 2.02 ms against 0.077 /
  // 1.63; perf/NOTES.md, potrf).
  constexpr auto shape = mma::Shape::m8n8k4;
  if (earlier)
    mma::subtract_product_32x32<32, shape>(sum, earlier + p_tile, earlier + q_tile, earlier_pitch);
  mma::subtract_product_32x32<32, shape>(sum, l21 + p_tile, l21 + q_tile, pitch);
  each_stored([](const double& value, double& element) { element = value; });
}
#endif

// How the trailing update goes: panel by panel; by pairs of panels, both panels' L21 at the
// block's stride; or by pairs at each panel's own stride (its rows below, in whole tiles), from
// the panel on where two fit, for blocks whose two L21 at the block's stride exceed what a block
// may have.
enum class Update { by_panel, by_pairs, by_pairs_at_panel_strides };

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
// as the earlier panels left them (by pairs, after a pair's second panel fails, without the
// first's update past its columns). Only the stored triangle is read or written; control flow
// depends only on the matrix's order and on values shared by the whole warp or block. MinBlocks:
// the blocks an SM that ptxas must fit in registers (0: none asked). Scheme: by pairs of panels the
// update's traffic to the matrix halves: after a pair's first panel only the next panel's columns,
// after its second the rest by both panels' L21 at once, kept in two buffers.
template <class T, int MaxThreads, int MinBlocks, Update Scheme>
__global__ void __launch_bounds__(MaxThreads, MinBlocks)
    potrf_tiled(bool lower, DeviceBatch<T> batch, int* info, std::int64_t info_stride, int count) {
  using Real = ops::real_of_t<T>;
  constexpr int NB = panel_columns<T>;
  constexpr int update_passes = tile_passes<T, MaxThreads>;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  constexpr bool paired = Scheme != Update::by_panel;
  constexpr bool panel_strides = Scheme == Update::by_pairs_at_panel_strides;
  const int pitch = l21_pitch(blockDim.x, NB);
  T* const l11 = reinterpret_cast<T*>(shared_bytes);  // L11(r, c) at l11[c * NB + r]
  // 1 / L11(j, j): after the L21 buffers, but before them at panel strides, where the buffers
  // take the rest of the shared memory.
  constexpr int l21_panels = paired ? 2 : 1;
  Real* const reciprocal =
      reinterpret_cast<Real*>(l11 + NB * NB + (panel_strides ? 0 : l21_panels * NB * pitch));
  // L21(r, c) at l21[c * pitch + r] (at panel strides, the panel's own)
  T* const l21_buffers = panel_strides ? reinterpret_cast<T*>(reciprocal + NB) : l11 + NB * NB;
  __shared__ int panel_done;  // columns of the panel factored: jb, or the failing one's index
  // At panel strides: the entries the L21 buffers hold.
  int capacity = 0;
  if constexpr (panel_strides) {
    unsigned bytes;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
    capacity = int((bytes - sizeof(T) * NB * NB - sizeof(Real) * NB) / sizeof(T));
  }

  const int b = warp::member(batch, blockIdx.x, count), t = threadIdx.x;
  const warp::Located<T> a = warp::locate(batch, b);
  const int n = a.rows;
  const auto load = [&](int r, int c) { return load_lower(a, lower, r, c); };
  const auto store = [&](int r, int c, T v) { store_lower(a, lower, r, c, v); };

  // At panel strides: the rows of panel k0's L21 that the updates read (whole tiles; in complex
  // arithmetic 16 more, read by the pair's second panel from row 16 on).
  const auto rows_of = [&](int k0) {
    const int m = n - k0 - NB;
    return m <= 0 ? 0 : (m + (NB < tile ? NB : 0) + tile - 1) / tile * tile;
  };
  // At panel strides: whether the last panel's update past this panel's columns is owed, and
  // that panel's L21 stride.
  bool owed = false;
  int owed_pitch = 0;
  int failed = 0;
  for (int k0 = 0; k0 < n; k0 += NB) {
    const int rows = panel_strides ? rows_of(k0) : pitch - 4;
    const int panel_pitch = panel_strides ? rows + 4 : pitch;
    // By pairs, the pair's second panel, and the first's L21 stride.
    const bool second = panel_strides ? owed : paired && k0 / NB % 2 == 1;
    const int earlier_pitch = panel_strides ? owed_pitch : pitch;
    T* const l21 = l21_buffers + (second ? NB * earlier_pitch : 0);
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
        l21[c * panel_pitch + t - NB] = row[c];
      }
    } else if (t >= NB && (!panel_strides || t - NB < rows)) {
      // Rows past the matrix, which the tiles on its edge read but never store (zeros), and
      // with 16-column panels the rows below the tile that warp 0 solved.
#pragma unroll
      for (int c = 0; c < NB; ++c) l21[c * panel_pitch + t - NB] = NB < 32 && mine ? row[c] : T{};
    }
    if (done < jb) {
      failed = k0 + done + 1;
      break;
    }
    const int m = n - k0 - NB;  // order of the trailing matrix
    if (m <= 0) break;
    __syncthreads();  // L21

    const int start = k0 + NB, across = (m + tile - 1) / tile;
    // By pairs of panels (at panel strides, where both L21 fit): after the first only the next
    // panel's columns (in tiles (ti, 0)), after the second all tiles, by the first's L21 too
    // (from its row NB on).
    const bool next_columns_only =
        paired && !second &&
        (!panel_strides || NB * (panel_pitch + rows_of(k0 + NB) + 4) <= capacity);
    constexpr bool narrow = paired && NB < tile;
    const int columns = next_columns_only ? NB : m;
    const T* const earlier = second ? l21_buffers + NB : nullptr;
    const int tiles = next_columns_only ? across : across * (across + 1) / 2;
    for (int tile_index = t / 32; tile_index < tiles; tile_index += blockDim.x / 32) {
      int ti = tile_index, tj = 0;  // tile (ti, tj), ti >= tj, of the trailing lower triangle
      if (!next_columns_only) {
        ti = 0;
        while ((ti + 1) * (ti + 2) / 2 <= tile_index) ++ti;
        tj = tile_index - ti * (ti + 1) / 2;
      }
      subtract_tile_product<NB, update_passes, narrow>(a, lower, start, m, columns, ti, tj, l21,
                                                       panel_pitch, earlier, earlier_pitch);
    }
    if constexpr (panel_strides) {
      owed = next_columns_only;
      owed_pitch = panel_pitch;
    }
    // The trailing matrix stored for the next panel; shared memory free again (but for the L21
    // whose update is owed).
    __syncthreads();
  }
  if (t == 0) info[b * info_stride] = failed;
}

// The most shared memory an sm_90 block may have (opt-in): the builds whose two L21 at the
// block's stride may exceed it have the kernel at panel strides too.
constexpr std::size_t sm90_block_shared = 227 * 1024;

template <class T, int MaxThreads, bool MayPair>
constexpr bool has_panel_strides() {
  return MayPair && shared_bytes_for<T>(MaxThreads, panel_columns<T>, 2) > sm90_block_shared;
}

// The build <T, MaxThreads, MinBlocks>'s kernel for `update`. MayPair: whether the build has
// the kernels by pairs of panels.
template <class T, int MaxThreads, int MinBlocks, bool MayPair>
auto kernel_for(Update update) {
  if constexpr (has_panel_strides<T, MaxThreads, MayPair>())
    if (update == Update::by_pairs_at_panel_strides)
      return potrf_tiled<T, MaxThreads, MinBlocks, Update::by_pairs_at_panel_strides>;
  if constexpr (MayPair)
    if (update == Update::by_pairs) return potrf_tiled<T, MaxThreads, MinBlocks, Update::by_pairs>;
  return potrf_tiled<T, MaxThreads, MinBlocks, Update::by_panel>;
}

// A launch's update and dynamic shared memory.
struct Plan {
  Update update = Update::by_panel;
  std::size_t shared_bytes = 0;
};

// How blocks of `threads` threads (a multiple of 32) of the build update on `device`: by pairs of
// panels where the matrices have more than three panels and the paired kernel leaves an SM as many
// blocks as the single one. The pairs halve the update's traffic to the matrices, which bounds
// the kernel, but a block less an SM costs more than that saves, and with one pair at most they
// saved nothing (single's 64 and 96 rows ran 3-15% slower). Where two L21 at the block's stride
// exceed what a block may have, by pairs at panel strides in all it may have; but where they fit,
// at the block's stride, which ran 5-10% faster (perf/NOTES.md).
template <class T, int MaxThreads, int MinBlocks, bool MayPair>
Plan plan_on(int device, int threads) {
  constexpr int NB = panel_columns<T>;
  const Plan by_panel{Update::by_panel, shared_bytes_for<T>(threads, NB, 1)};
  if (!MayPair || threads <= 3 * NB) return by_panel;
  int most_shared = 0;
  BASALT_CUDA_CHECK(
      cudaDeviceGetAttribute(&most_shared, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  cudaFuncAttributes attributes;
  BASALT_CUDA_CHECK(cudaFuncGetAttributes(
      &attributes, kernel_for<T, MaxThreads, MinBlocks, MayPair>(Update::by_panel)));
  // The dynamic shared memory a block may have: the opt-in limit less the static (panel_done).
  const std::size_t most_dynamic = std::size_t(most_shared) - attributes.sharedSizeBytes;
  Plan paired{Update::by_pairs, shared_bytes_for<T>(threads, NB, 2)};
  if (paired.shared_bytes > most_dynamic) {
    if (!has_panel_strides<T, MaxThreads, MayPair>()) return by_panel;
    paired = {Update::by_pairs_at_panel_strides, most_dynamic};
  }
  const auto blocks = [&](const Plan& option) {
    const auto kernel = kernel_for<T, MaxThreads, MinBlocks, MayPair>(option.update);
    BASALT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           int(option.shared_bytes)));
    int count = 0;
    BASALT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&count, kernel, threads,
                                                                    option.shared_bytes));
    return count;
  };
  return blocks(paired) >= blocks(by_panel) ? paired : by_panel;
}

// plan_on for the current device, the answers kept for the first device asked.
template <class T, int MaxThreads, int MinBlocks, bool MayPair>
Plan plan(int threads) {
  struct Answers {
    int device = 0;
    Plan plans[block::max_warps + 1] = {};
  };
  int device = 0;
  BASALT_CUDA_CHECK(cudaGetDevice(&device));
  static const Answers first = [device] {
    Answers answers;
    answers.device = device;
    for (int warps = 1; warps * 32 <= MaxThreads; ++warps)
      answers.plans[warps] = plan_on<T, MaxThreads, MinBlocks, MayPair>(device, warps * 32);
    return answers;
  }();
  return device == first.device ? first.plans[threads / 32]
                                : plan_on<T, MaxThreads, MinBlocks, MayPair>(device, threads);
}

template <class T, int MaxThreads, int MinBlocks, bool MayPair = true>
void launch_tiled(cudaStream_t stream, bool lower, const DeviceBatch<T>& A, int* info,
                  std::int64_t info_stride, int count, int threads) {
  const Plan chosen = plan<T, MaxThreads, MinBlocks, MayPair>(threads);
  const auto kernel = kernel_for<T, MaxThreads, MinBlocks, MayPair>(chosen.update);
  const std::size_t shared = chosen.shared_bytes;
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
// spills 80 bytes (4 alone), and ran 4% slower at 416 rows. Double's build above 256 threads and
// complex double's above 384 also pair at panel strides (has_panel_strides; 128 registers, 4 /
// 80 bytes of spill stores), which they take above 448 and 416 threads.
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
