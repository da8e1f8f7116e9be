// CUDA Cholesky panel: the diagonal block factored and the rows below it solved in one kernel.
// Every thread block holds the diagonal block's lower triangle in shared memory as 32 x 32 tiles,
// and a chunk of the rows below; it factors the diagonal block itself (the blocks repeat that
// work rather than wait for one another) and solves its chunk as the columns become final, then
// solves any further chunks against the finished block. Per 32 columns, warp 0 factors the
// diagonal tile in registers (a row per lane, each column broadcast through shared memory; in
// complex types 8 columns at a time, then their update of the tile's later columns), every
// thread solves one row below it (complex double: the block 8 columns at a time, their
// update of the later columns by tensor cores), and the warps apply the rank-32 update to the
// trailing tiles (each lane a 4 x 8 register tile; in double and complex double, tensor-core
// products), the next diagonal tile's by warp 0 ahead of its factorization while the other warps
// update the rest: two barriers per 32 columns (complex double: the update after the solves, and
// two barriers between the solves' steps). An upper panel is loaded as its conjugate transpose, so
// one lower kernel serves both triangles.
#include <cuComplex.h>

#include <algorithm>
#include <stdexcept>
#include <type_traits>

#include "basalt/backends/cuda/batched/warp_batch.cuh"
#include "basalt/backends/cuda/block_signals.cuh"
#include "basalt/backends/cuda/dense/potf2_launch.hpp"
#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/mma.cuh"
#include "basalt/backends/cuda/scalar_ops.cuh"
#include "basalt/backends/cuda/side_streams.hpp"
#include "basalt/backends/cuda/workspace.hpp"

namespace basalt::cuda::kernels {

namespace {

constexpr int panel_threads = 256;
constexpr int panel_warps = panel_threads / 32;
constexpr int tile = 32;
// Column stride of a tile: odd, so that a warp reading along a tile row hits distinct banks as
// a warp reading down a column does (the loads and stores of an upper panel run along rows).
constexpr int tile_ld = tile + 1;
constexpr int tile_entries = tile * tile_ld;
// The most row tiles below the diagonal block that a thread block solves at a time.
constexpr int max_chunk_tiles = 4;
// A leaf on the look-ahead stream with this many rows below or more runs beside a trailing update
// that outlasts it, so it takes at most a quarter of the multiprocessors and leaves the rest to
// the update, as the LU panel does (panel_grid.hpp). H200, d, at most 33 / 66 blocks from 0 or
// 6144 rows below (herk leaves of 4096-8192): potrf 12288 18.3-18.7 ms uncapped, 18.0-18.3
// capped from 6144; 18432 53.5-54.0 against 52.2-52.7; 4096 2.15-2.19 uncapped, 2.27-2.28 with
// every leaf capped at 33 blocks, 2.15 from 6144 (perf/NOTES.md, potrf).
constexpr int rows_below_beside_long_update = 6144;

// The stream's counters (stream_counters) for a launch of more than one block: zero at launch,
// and zero again at its end.
struct BlockCounters {
  unsigned loaded;    // blocks that hold their copy of the diagonal block
  unsigned wrote;     // blocks that wrote their share of it back
  unsigned finished;  // blocks done
};
static_assert(sizeof(BlockCounters) <= stream_counter_count * sizeof(unsigned));

// Shared memory for a diagonal block of tiles x tiles tiles (the lower ones kept), a chunk of
// chunk_tiles row tiles below it, two tile columns (factor_full_diagonal_tile's), the
// reciprocals of the diagonal, the count of a tile's factored columns and a flag.
std::size_t shared_bytes_for(int tiles, int chunk_tiles, int entry_bytes) {
  const std::size_t stored =
      std::size_t(tiles) * (tiles + 1) / 2 + std::size_t(chunk_tiles) * tiles;
  return (stored * tile_entries + 2 * tile + std::size_t(tiles) * tile) * entry_bytes +
         2 * sizeof(int);
}

// The diagonal block's lower tiles row-tile by row-tile, then the chunk's: tile (I, J),
// column-major; row tiles I >= tiles are the chunk's.
template <class T>
struct Tiles {
  T* base;
  int tiles;        // of the diagonal block, along each side
  int chunk_tiles;  // row tiles of the chunk
  __device__ T* at(int I, int J) const {
    const int index =
        I < tiles ? I * (I + 1) / 2 + J : tiles * (tiles + 1) / 2 + (I - tiles) * tiles + J;
    return base + index * tile_entries;
  }
  __device__ T* end() const { return at(tiles + chunk_tiles, 0); }
  __device__ int chunk_rows() const { return chunk_tiles * tile; }
};

// The panel in lower terms: entry (i, j) is A(i, j) of a lower panel (rows i from the diagonal
// block's first, down), conj(A(j, i)) of an upper one.
template <class T>
struct PanelRef {
  T* a;
  std::int64_t lda;
  bool lower;
  __device__ T load(int i, int j) const {
    return lower ? a[i + j * lda] : ops::conjugate(a[j + i * lda]);
  }
  __device__ void store(int i, int j, T v) const {
    if (lower)
      a[i + j * lda] = v;
    else
      a[j + i * lda] = ops::conjugate(v);
  }
  // A tile's entry e, so that consecutive threads touch consecutive addresses: down a column of
  // a lower panel, along a row of an upper one.
  __device__ void place(int e, int& r, int& c) const {
    r = lower ? e % tile : e / tile;
    c = lower ? e / tile : e % tile;
  }
};

// Tile t <- the panel's rows row0 .. row0 + rows - 1 and columns col0 .. col0 + cols - 1, zero
// elsewhere (and above the diagonal of a diagonal tile).
template <class T>
__device__ void load_tile(T* t, const PanelRef<T>& panel, int row0, int rows, int col0, int cols,
                          bool diagonal) {
  for (int e = threadIdx.x; e < tile * tile; e += panel_threads) {
    int r, c;
    panel.place(e, r, c);
    T v = ops::make_scalar<T>(0);
    if (r < rows && c < cols && (!diagonal || r >= c)) v = panel.load(row0 + r, col0 + c);
    t[r + c * tile_ld] = v;
  }
}

// The panel's rows row0 .. row0 + rows - 1 and columns col0 .. col0 + cols - 1 <- tile t.
template <class T>
__device__ void store_tile(const T* t, const PanelRef<T>& panel, int row0, int rows, int col0,
                           int cols) {
  for (int e = threadIdx.x; e < tile * tile; e += panel_threads) {
    int r, c;
    panel.place(e, r, c);
    if (r < rows && c < cols) panel.store(row0 + r, col0 + c, t[r + c * tile_ld]);
  }
}

// Where a whole tile goes (dest) and comes from (the panel's rows row0 .., columns col0 ..); zero
// above the diagonal of a diagonal tile.
template <class T>
struct TileSpot {
  T* dest;
  int row0, col0;
  bool diagonal;
};

// f(q, k, at, r, c) for entry k (0 <= k < per_thread) of the caller's share of each of Count
// whole tiles, tile q where spot(q) says (at), r and c the entry's row and column in it.
template <class T, int Count, class Spot, class F>
__device__ void for_my_whole_tile_entries(const PanelRef<T>& panel, const Spot& spot, const F& f) {
#pragma unroll
  for (int q = 0; q < Count; ++q) {
    const TileSpot<T> at = spot(q);
#pragma unroll
    for (int k = 0; k < tile * tile / panel_threads; ++k) {
      int r, c;
      panel.place(threadIdx.x + k * panel_threads, r, c);
      f(q, k, at, r, c);
    }
  }
}

// Count whole tiles between the panel and shared memory (into it, or back to the panel where
// Store), tile q where spot(q) says, with every read of the Count tiles issued before the first
// write: load_tile's loop, a tile at a time, waited for each tile's loads before the next (H200,
// the 14 tiles of a 128-column leaf with a row tile below: 4.1 us against 0.9 in one block, 6.3
// against 1.2 in each of 124; perf/NOTES.md, potrf).
template <class T, int Count, bool Store, class Spot>
__device__ void copy_whole_tiles(const PanelRef<T>& panel, const Spot& spot) {
  T v[Count][tile * tile / panel_threads];
  const auto read = [&](int q, int k, const TileSpot<T>& at, int r, int c) {
    if constexpr (Store)
      v[q][k] = at.dest[r + c * tile_ld];
    else
      v[q][k] =
          at.diagonal && r < c ? ops::make_scalar<T>(0) : panel.load(at.row0 + r, at.col0 + c);
  };
  const auto write = [&](int q, int k, const TileSpot<T>& at, int r, int c) {
    if constexpr (Store)
      panel.store(at.row0 + r, at.col0 + c, v[q][k]);
    else
      at.dest[r + c * tile_ld] = v[q][k];
  };
  for_my_whole_tile_entries<T, Count>(panel, spot, read);
  for_my_whole_tile_entries<T, Count>(panel, spot, write);
}

// The row tile of the diagonal block's t-th stored tile (row-tile by row-tile).
__host__ __device__ constexpr int diagonal_row_tile(int t) {
  int I = 0;
  while ((I + 1) * (I + 2) / 2 <= t) ++I;
  return I;
}

// The diagonal block of Width tiles a side, its lower tiles four at a time from tile First on.
template <class T, int Width, int First = 0>
__device__ void load_whole_diagonal_block(const Tiles<T>& s, const PanelRef<T>& panel) {
  constexpr int stored = Width * (Width + 1) / 2, count = stored - First < 4 ? stored - First : 4;
  copy_whole_tiles<T, count, false>(panel, [&](int q) {
    const int t = First + q, I = diagonal_row_tile(t), J = t - I * (I + 1) / 2;
    return TileSpot<T>{s.at(I, J), I * tile, J * tile, I == J};
  });
  if constexpr (First + count < stored)
    load_whole_diagonal_block<T, Width, First + count>(s, panel);
}

// Cholesky of the diagonal tile d (kb columns) by warp 0, lane i holding row i of the tile.
// Returns on every lane the number of columns factored: kb, or the first column whose diagonal
// is not positive (or NaN), which keeps its updated value. The reciprocals of the new diagonal
// go to `reciprocal`. The chain from column to column is the next diagonal entry and its
// reciprocal square root: lane j + 1 updates its diagonal entry with its own multiplier, and the
// next reciprocal square root is taken before the rest of the column's update, which goes
// through shared memory and so does not hold the chain up.
template <class T>
__device__ int factor_diagonal_tile(T* d, int kb, ops::real_of_t<T>* reciprocal) {
  using Real = ops::real_of_t<T>;
  const int i = threadIdx.x % 32;
  T row[tile];
#pragma unroll
  for (int c = 0; c < tile; ++c) row[c] = d[i + c * tile_ld];  // above the diagonal: unused
  int factored = kb;
  bool active = true;
  Real diagonal = ops::real_part(warp::shuffle<32>(row[0], 0));
  Real inverse = rsqrt(diagonal);
#pragma unroll
  for (int j = 0; j < tile; ++j) {
    if (active && j < kb && !(diagonal > Real(0))) {  // the same answer on every lane
      active = false;
      factored = j;
    }
    const bool step = active && j < kb;
    if (step && i == j) {
      row[j] = ops::make_scalar<T>(ops::root_from_reciprocal(diagonal, inverse));
      reciprocal[j] = inverse;
    }
    if (step && i > j) row[j] = ops::times_real(row[j], inverse);
    if (j + 1 < tile) {
      // The same arithmetic as the update below gives lane j + 1's entry.
      const T next =
          step ? ops::minus_product(row[j + 1], row[j], ops::conjugate(row[j])) : row[j + 1];
      diagonal = ops::real_part(warp::shuffle<32>(next, j + 1));
      inverse = rsqrt(diagonal);
    }
    if (step) {
      // Column j goes to every lane through the tile in shared memory, where shuffles took two
      // instructions an entry and register moves to pair them (what lanes i < j write above
      // the diagonal is never read). Above the diagonal (c > i) too, which spares a comparison
      // an element: never stored.
      d[i + j * tile_ld] = row[j];
      __syncwarp();
#pragma unroll
      for (int c = j + 1; c < tile; ++c)
        row[c] = ops::minus_product(row[c], row[j], ops::conjugate(d[c + j * tile_ld]));
    }
  }
  // The last step's reads of the tile are done before the rows go back (the same values, but
  // racecheck rightly reports the overlap).
  __syncwarp();
  if (i < kb) {
#pragma unroll
    for (int c = 0; c < tile; ++c)
      if (c <= i) d[i + c * tile_ld] = row[c];
  }
  return factored;
}

// Lane i's entry x of column j once the column's diagonal and the reciprocal of its square root
// (inverse) are known: the root on lane j, which also keeps the reciprocal, x scaled on the
// other lanes (lanes i < j scale an entry above the diagonal, never stored).
template <class T>
__device__ T scaled_column_entry(T x, int i, int j, ops::real_of_t<T> diagonal,
                                 ops::real_of_t<T> inverse, ops::real_of_t<T>* reciprocal) {
  const T root = ops::make_scalar<T>(ops::root_from_reciprocal(diagonal, inverse));
  const T scaled = ops::times_real(x, inverse);
  if (i == j) reciprocal[j] = inverse;
  return i == j ? root : scaled;
}

// Column j + 1's diagonal once column j (x, the lane's entry) has updated it: lane j + 1's entry
// `later` less the same product as the update, so that the chain from column to column does not
// wait for the update through shared memory.
template <class T>
__device__ ops::real_of_t<T> next_diagonal(T later, T x, int j) {
  return ops::real_part(warp::shuffle<32>(ops::minus_product(later, x, ops::conjugate(x)), j + 1));
}

// factor_diagonal_tile for a full tile (kb = 32) that is positive definite, with none of its
// checks per step: each column goes to the warp through `columns` (two buffers by step parity),
// so the tile stays as it was until the end. Returns false, the tile untouched, where a diagonal
// entry is not a positive normal number (the reciprocal square root is taken without CUDA's
// branch for the others); the general path then runs on the tile.
template <class T>
__device__ bool factor_full_diagonal_tile(T* d, T* columns, ops::real_of_t<T>* reciprocal) {
  using Real = ops::real_of_t<T>;
  const int i = threadIdx.x % 32;
  T row[tile];
#pragma unroll
  for (int c = 0; c < tile; ++c) row[c] = d[i + c * tile_ld];  // above the diagonal: unused
  Real diagonal = ops::real_part(warp::shuffle<32>(row[0], 0));
  Real inverse = ops::rsqrt_of_normal(diagonal);
  bool positive = ops::is_positive_normal(diagonal);
#pragma unroll
  for (int j = 0; j < tile; ++j) {
    row[j] = scaled_column_entry(row[j], i, j, diagonal, inverse, reciprocal);
    if (j + 1 < tile) {
      diagonal = next_diagonal(row[j + 1], row[j], j);
      inverse = ops::rsqrt_of_normal(diagonal);
      positive = positive && ops::is_positive_normal(diagonal);
    }
    T* column = columns + (j % 2) * tile;
    column[i] = row[j];
    __syncwarp();
#pragma unroll
    for (int c = j + 1; c < tile; ++c)
      row[c] = ops::minus_product(row[c], row[j], ops::conjugate(column[c]));
  }
  if (!positive) return false;  // the same on every lane
#pragma unroll
  for (int c = 0; c < tile; ++c)
    if (c <= i) d[i + c * tile_ld] = row[c];
  return true;
}

// A row below the diagonal tile d: its first `factored` columns x solve x L11^H = a (forward
// substitution, right-looking: each x_c, once final, updates the columns after it). a is the
// row's first entry in its tile, which has stride tile_ld.
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

// Columns c0 .. c0 + B - 1 of a row below the diagonal tile d, solved in registers (x) against
// the tile's B x B triangle there, once the earlier columns' products are subtracted; a is the
// row's entry in column c0, with stride tile_ld.
template <class T, int B>
__device__ void solve_row_block(T (&x)[B], T* a, const T* d, int c0,
                                const ops::real_of_t<T>* reciprocal) {
#pragma unroll
  for (int c = 0; c < B; ++c) x[c] = a[c * tile_ld];
#pragma unroll
  for (int c = 0; c < B; ++c) {
    x[c] = ops::times_real(x[c], reciprocal[c0 + c]);
#pragma unroll
    for (int c2 = c + 1; c2 < B; ++c2)
      x[c2] = ops::minus_product(x[c2], x[c], ops::conjugate(d[c0 + c2 + (c0 + c) * tile_ld]));
  }
#pragma unroll
  for (int c = 0; c < B; ++c) a[c * tile_ld] = x[c];
}

// solve_row for a fully factored diagonal tile, in blocks of 8 columns: each block solved in
// registers, then subtracted from the row's later columns in shared memory, one column a step of
// a rolled loop; the same products in the same order. With it potrf in complex types ran 7-25%
// faster (c and z, 1024 to 8192, on an H100), in real types 7-20% slower (perf/NOTES.md).
template <class T>
__device__ void solve_row_in_blocks(T* a, const T* d, const ops::real_of_t<T>* reciprocal) {
  constexpr int b = 8;
#pragma unroll 1
  for (int c0 = 0; c0 < tile; c0 += b) {
    T x[b];
    solve_row_block(x, a + c0 * tile_ld, d, c0, reciprocal);
#pragma unroll 1
    for (int c2 = c0 + b; c2 < tile; ++c2) {
      T y = a[c2 * tile_ld];
#pragma unroll
      for (int c = 0; c < b; ++c)
        y = ops::minus_product(y, x[c], ops::conjugate(d[c2 + (c0 + c) * tile_ld]));
      a[c2 * tile_ld] = y;
    }
  }
}

// A row below the diagonal tile d, solved as solve_row does: in blocks (solve_row_in_blocks) for
// complex types and a fully factored tile.
template <class T>
__device__ void solve_tile_row(T* a, const T* d, int factored,
                               const ops::real_of_t<T>* reciprocal) {
  if (ops::is_complex<T> && factored == tile)
    solve_row_in_blocks(a, d, reciprocal);
  else
    solve_row(a, d, factored, reciprocal);
}

// out -= left right^H for three 32 x 32 tiles, by one warp: lane (g, h) = (lane % 8, lane / 8)
// owns rows g + 8q and columns h + 4p, so that per step of the inner dimension it loads 4 + 8
// values for 32 multiply-adds and every load is conflict-free. Complex double takes the columns
// in two passes, to stay within the registers.
template <class T>
__device__ void update_tile(T* out, const T* left, const T* right) {
  constexpr int passes = sizeof(T) > 8 ? 2 : 1, columns = 8 / passes;
  const int lane = threadIdx.x % 32, g = lane % 8, h = lane / 8;
  for (int pass = 0; pass < passes; ++pass) {
    T sum[4][columns];
#pragma unroll
    for (int q = 0; q < 4; ++q)
#pragma unroll
      for (int p = 0; p < columns; ++p)
        sum[q][p] = out[g + 8 * q + (h + 4 * (pass * columns + p)) * tile_ld];
#pragma unroll 4
    for (int l = 0; l < tile; ++l) {
      T x[4], y[columns];
#pragma unroll
      for (int q = 0; q < 4; ++q) x[q] = left[g + 8 * q + l * tile_ld];
#pragma unroll
      for (int p = 0; p < columns; ++p)
        y[p] = ops::conjugate(right[h + 4 * (pass * columns + p) + l * tile_ld]);
#pragma unroll
      for (int q = 0; q < 4; ++q)
#pragma unroll
        for (int p = 0; p < columns; ++p) sum[q][p] = ops::minus_product(sum[q][p], x[q], y[p]);
    }
#pragma unroll
    for (int q = 0; q < 4; ++q)
#pragma unroll
      for (int p = 0; p < columns; ++p)
        out[g + 8 * q + (h + 4 * (pass * columns + p)) * tile_ld] = sum[q][p];
  }
}

#ifdef BASALT_CUDA_DOUBLE_MMA
// The same in real double by tensor cores (mma.cuh; without them, the template above), lane l
// holding rows 8q + l / 4 and columns 8p + 2 (l % 4) + e, e = 0, 1, of out.
__device__ void update_tile(double* out, const double* left, const double* right) {
  const int lane = threadIdx.x % 32, g = lane / 4, s = lane % 4;
  double* const origin = out + g + 2 * s * tile_ld;
  double sum[4][4][2];
#pragma unroll
  for (int q = 0; q < 4; ++q)
#pragma unroll
    for (int p = 0; p < 4; ++p)
#pragma unroll
      for (int e = 0; e < 2; ++e) sum[q][p][e] = origin[8 * q + (8 * p + e) * tile_ld];
  mma::subtract_product_32x32(sum, left, right, tile_ld);
#pragma unroll
  for (int q = 0; q < 4; ++q)
#pragma unroll
    for (int p = 0; p < 4; ++p)
#pragma unroll
      for (int e = 0; e < 2; ++e) origin[8 * q + (8 * p + e) * tile_ld] = sum[q][p][e];
}

// Columns 8 part .. 8 part + 7 of the same in complex double over the first Depth columns of left
// and right, by tensor cores: a warp to each quarter of a tile, where a warp to each tile by
// multiply-adds left most warps idle in a leaf's few trailing tiles.
template <int Depth>
__device__ void update_tile_quarter(cuDoubleComplex* out, const cuDoubleComplex* left,
                                    const cuDoubleComplex* right, int part) {
  const int lane = threadIdx.x % 32, g = lane / 4, s = lane % 4;
  cuDoubleComplex* const origin = out + g + (8 * part + 2 * s) * tile_ld;
  double real[4][2], imag[4][2];
#pragma unroll
  for (int q = 0; q < 4; ++q)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const cuDoubleComplex v = origin[8 * q + e * tile_ld];
      real[q][e] = v.x;
      imag[q][e] = v.y;
    }
  mma::subtract_conjugate_product_32x8<Depth>(real, imag, left, right + 8 * part, tile_ld);
#pragma unroll
  for (int q = 0; q < 4; ++q)
#pragma unroll
    for (int e = 0; e < 2; ++e)
      origin[8 * q + e * tile_ld] = make_cuDoubleComplex(real[q][e], imag[q][e]);
}
#endif

// A tile's update in parts, one to a warp at a time: quarters in complex double on tensor cores,
// else whole tiles.
template <class T>
__device__ constexpr int tile_parts() {
#ifdef BASALT_CUDA_DOUBLE_MMA
  if constexpr (std::is_same_v<T, cuDoubleComplex>) return 4;
#endif
  return 1;
}

template <class T>
__device__ void update_tile_part(T* out, const T* left, const T* right, int part) {
#ifdef BASALT_CUDA_DOUBLE_MMA
  if constexpr (tile_parts<T>() > 1)
    update_tile_quarter<tile>(out, left, right, part);
  else
#endif
    update_tile(out, left, right);
}

#ifdef BASALT_CUDA_DOUBLE_MMA
// The diagonal tile d's columns after the 8 from c0 on, less the product of those 8 columns
// (lane i holding their row i in x) with their rows there: complex double by tensor cores,
// complex single by a loop over the later columns, a row a lane. That loop is
// solve_row_in_blocks' unrolled by two: through the solve's rolled copy potrf c ran 1.1-1.5%
// slower at 2048 to 4096 (H100, two rounds; perf/NOTES.md, "potrf as a recorded call").
__device__ void update_after_block(cuDoubleComplex* d, int c0, const cuDoubleComplex (&)[8]) {
#pragma unroll 1
  for (int part = c0 / 8 + 1; part < tile / 8; ++part)
    update_tile_quarter<8>(d, d + c0 * tile_ld, d + c0 * tile_ld, part);
}
#endif

__device__ void update_after_block(cuFloatComplex* d, int c0, const cuFloatComplex (&x)[8]) {
  const int i = threadIdx.x % 32;
#pragma unroll 2
  for (int c2 = c0 + 8; c2 < tile; ++c2) {
    cuFloatComplex y = d[i + c2 * tile_ld];
#pragma unroll
    for (int c = 0; c < 8; ++c)
      y = ops::minus_product(y, x[c], ops::conjugate(d[c2 + (c0 + c) * tile_ld]));
    d[i + c2 * tile_ld] = y;
  }
}

// Complex types factor a full diagonal tile 8 columns at a time. Real types' steps over all 32
// columns are a multiply-add an entry: through the blocks potrf ran slower at 1024 to 4096, in
// double 7-15% (its update of the later columns on tensor cores, H200), in single 10-17% (a
// loop over the later columns, H100).
template <class T>
__device__ constexpr bool factor_in_blocks() {
#ifdef BASALT_CUDA_DOUBLE_MMA
  if constexpr (std::is_same_v<T, cuDoubleComplex>) return true;
#endif
  return std::is_same_v<T, cuFloatComplex>;
}

// factor_diagonal_tile for a full tile in complex types, by warp 0, 8 columns at a time: the 8
// columns in registers (lane i row i, each column to the warp through `columns`, two buffers by
// step parity), then their update of the later columns (update_after_block). The loop over the
// 8-column blocks is not unrolled: a leaf's first tile runs cold code, where
// factor_full_diagonal_tile's steps over all 32 columns (about 5000 PTX instructions) had taken
// complex double's 21-22k cycles against 12k for the second tile (H200, potrf z 1024; unrolled,
// this function took 20k), and complex single's every tile 19-26k (potrf c 2048). Returns the
// columns factored, as factor_diagonal_tile: after a failure in column j, the columns before j are
// factored and A(j, j) keeps its updated value. What lands above the diagonal is never read.
template <class T>
__device__ int factor_full_diagonal_tile_in_blocks(T* d, T* columns,
                                                   ops::real_of_t<T>* reciprocal) {
  using Real = ops::real_of_t<T>;
  constexpr int b = 8;
  const int i = threadIdx.x % 32;
  int factored = tile;
#pragma unroll 1
  for (int c0 = 0; c0 < tile; c0 += b) {
    T x[b];
#pragma unroll
    for (int c = 0; c < b; ++c) x[c] = d[i + (c0 + c) * tile_ld];
    Real diagonal = ops::real_part(warp::shuffle<32>(x[0], c0));
#pragma unroll
    for (int c = 0; c < b; ++c) {
      const int j = c0 + c;
      if (!(diagonal > Real(0))) {  // the same on every lane
        factored = j;
        break;
      }
      const Real inverse =
          ops::is_positive_normal(diagonal) ? ops::rsqrt_of_normal(diagonal) : rsqrt(diagonal);
      x[c] = scaled_column_entry(x[c], i, j, diagonal, inverse, reciprocal);
      if (c + 1 < b) {
        diagonal = next_diagonal(x[c + 1], x[c], j);
        T* const column = columns + (c % 2) * tile;  // c0 is even
        column[i] = x[c];
        __syncwarp();
#pragma unroll
        for (int c2 = c + 1; c2 < b; ++c2)
          x[c2] = ops::minus_product(x[c2], x[c], ops::conjugate(column[c0 + c2]));
      }
    }
#pragma unroll
    for (int c = 0; c < b; ++c) d[i + (c0 + c) * tile_ld] = x[c];
    if (factored < tile || c0 + b == tile) break;
    __syncwarp();  // the 8 columns are in the tile
    update_after_block(d, c0, x);
    __syncwarp();  // the later columns are up to date
  }
  return factored;
}

#ifdef BASALT_CUDA_DOUBLE_MMA
// Row tiles R0 .. R1 - 1 of tile column K solved against the fully factored diagonal tile K in
// complex double, by the whole block, 8 columns at a time: the 8 columns' triangle a row a thread,
// then their product with the rows of the tile's L below them subtracted from the later columns
// by tensor cores, a warp to each 32 x 8 piece. A row a thread over all 32 columns
// (solve_row_in_blocks) held the leaf's two tile columns' solves at 10-12k cycles each with one or
// two warps busy (perf/NOTES.md, potrf in complex double).
__device__ void solve_row_tiles_in_blocks(const Tiles<cuDoubleComplex>& s, int K, int R0, int R1,
                                          const double* reciprocal) {
  constexpr int b = 8, blocks = tile / b;
  const cuDoubleComplex* const d = s.at(K, K);
  const int rows = (R1 - R0) * tile;
  for (int block = 0; block < blocks; ++block) {
    const int c0 = block * b;
    for (int q = threadIdx.x; q < rows; q += panel_threads) {
      cuDoubleComplex x[b];
      solve_row_block(x, s.at(R0 + q / tile, K) + q % tile + c0 * tile_ld, d, c0, reciprocal);
    }
    if (block + 1 == blocks) break;
    __syncthreads();  // the 8 columns are final
    const int later = blocks - 1 - block;
    for (int item = threadIdx.x / 32; item < (R1 - R0) * later; item += panel_warps) {
      cuDoubleComplex* const out = s.at(R0 + item / later, K);
      update_tile_quarter<b>(out, out + c0 * tile_ld, d + c0 * tile_ld, block + 1 + item % later);
    }
    __syncthreads();  // the later columns are up to date
  }
}
#endif

// The trailing tiles minus the rank-32 update of the final tile column K: the diagonal block's
// (when `diagonal`) and the chunk's first chunk_row_tiles row tiles, a tile part per warp at a
// time; the caller's warp takes parts first, first + step, ... of them (the diagonal block's
// first).
template <class T>
__device__ void update_trailing(const Tiles<T>& s, int K, bool diagonal, int chunk_row_tiles,
                                int first = threadIdx.x / 32, int step = panel_warps) {
  const int trailing = s.tiles - 1 - K;
  const int in_diagonal = diagonal ? trailing * (trailing + 1) / 2 : 0;
  constexpr int parts = tile_parts<T>();
  const int count = in_diagonal + chunk_row_tiles * trailing;
  for (int item = first; item < count * parts; item += step) {
    const int t = item / parts;
    int R, C;
    if (t < in_diagonal) {  // t = a (a + 1) / 2 + b, R = K + 1 + a, C = K + 1 + b
      int a = 0;
      while ((a + 1) * (a + 2) / 2 <= t) ++a;
      R = K + 1 + a;
      C = K + 1 + t - a * (a + 1) / 2;
    } else {
      const int u = t - in_diagonal;
      R = s.tiles + u / trailing;
      C = K + 1 + u % trailing;
    }
    update_tile_part(s.at(R, C), s.at(R, K), s.at(C, K), item % parts);
  }
}

// The chunk's rows (rows of them) of the panel, from panel row first_row, into the chunk tiles,
// or back to the panel where Store. Width: the diagonal block's tiles a side, where w is a whole
// number of them (copy_whole_tiles then takes each whole row tile of the chunk at once), else 0.
template <class T, int Width, bool Store>
__device__ void copy_chunk(const Tiles<T>& s, const PanelRef<T>& panel, int first_row, int rows,
                           int w) {
  for (int I = 0; I < s.chunk_tiles; ++I) {
    const int row0 = first_row + I * tile;
    if constexpr (Width > 0) {
      if (rows >= (I + 1) * tile) {
        copy_whole_tiles<T, Width, Store>(panel, [&](int J) {
          return TileSpot<T>{s.at(s.tiles + I, J), row0, J * tile, false};
        });
        continue;
      }
    }
    for (int J = 0; J < s.tiles; ++J) {
      if constexpr (Store)
        store_tile(s.at(s.tiles + I, J), panel, row0, rows - I * tile, J * tile, w - J * tile);
      else
        load_tile(s.at(s.tiles + I, J), panel, row0, rows - I * tile, J * tile, w - J * tile,
                  false);
    }
  }
}

// The diagonal block, and the chunk's rows from first_row (rows of them, maybe none); Width as
// copy_chunk's.
template <class T, int Width>
__device__ void load_block_and_chunk(const Tiles<T>& s, const PanelRef<T>& panel, int w,
                                     int first_row, int rows) {
  if constexpr (Width > 0) {
    load_whole_diagonal_block<T, Width>(s, panel);
  } else {
    for (int I = 0; I < s.tiles; ++I)
      for (int J = 0; J <= I; ++J)
        load_tile(s.at(I, J), panel, I * tile, w - I * tile, J * tile, w - J * tile, I == J);
  }
  if (rows > 0) copy_chunk<T, Width, false>(s, panel, first_row, rows, w);
}

// The diagonal block's tiles a side at the leaf width potrf's tuning makes for T (128 columns,
// 64 in complex double), which the whole-tile loads and stores take.
template <class T>
constexpr int whole_leaf_tiles = sizeof(T) > 8 ? 2 : 4;

// f(std::integral_constant<int, Width>{}): Width whole_leaf_tiles<T> where w is that width
// (always, in the kernel for the common shape), else 0.
template <class T, bool CommonShape, class F>
__device__ void with_whole_width(int w, const F& f) {
  if (CommonShape || w == whole_leaf_tiles<T> * tile)
    f(std::integral_constant<int, whole_leaf_tiles<T>>{});
  else
    f(std::integral_constant<int, 0>{});
}

// Row r of the panel's rows after the diagonal tile K that the block holds: the diagonal
// block's, then the chunk's. Its entry in tile column K.
template <class T>
__device__ T* row_in_tile_column(const Tiles<T>& s, int r, int w, int K) {
  if (r < w) return s.at(r / tile, K) + r % tile;
  r -= w;
  return s.at(s.tiles + r / tile, K) + r % tile;
}

// Rows r0 .. end - 1 (row_in_tile_column's numbering; r0 where a tile starts) solved against the
// first `factored` columns of diagonal tile K, by the whole block. In complex double, whole row
// tiles, the padding of a last partial one included (zeros, never stored).
template <class T>
__device__ void solve_rows(const Tiles<T>& s, int K, int r0, int end, int w, int factored,
                           const ops::real_of_t<T>* reciprocal) {
#ifdef BASALT_CUDA_DOUBLE_MMA
  if constexpr (tile_parts<T>() > 1) {
    if (factored == tile && r0 < end) {
      const auto row_tile = [&](int r) { return r < w ? r / tile : s.tiles + (r - w) / tile; };
      solve_row_tiles_in_blocks(s, K, row_tile(r0), row_tile(end - 1) + 1, reciprocal);
      return;
    }
  }
#endif
  for (int r = r0 + threadIdx.x; r < end; r += panel_threads)
    solve_tile_row(row_in_tile_column(s, r, w, K), s.at(K, K), factored, reciprocal);
}

// CommonShape: the launch is a leaf of whole_leaf_tiles<T> tiles whose rows below take one chunk
// a block at most, and Lower says its triangle. The kernel for it leaves out the tile-by-tile
// loads, the loop over further chunks and the other triangle's loads and stores, which the
// kernel for every other shape holds (its Lower unused): the leaves of potrf d 4096 took 3008 us
// with them, 2597 without the first two, 2390 without all three (H100, Nsight Compute, 64
// leaves; perf/NOTES.md, potrf).
template <class T, bool CommonShape, bool Lower = false>
__global__ void __launch_bounds__(panel_threads)
    factor_panel(T* a, int w, int rows_below, int chunk_tiles, std::int64_t lda, bool lower,
                 int offset, int* info, T* failed_diagonal, BlockCounters* counters) {
  using Real = ops::real_of_t<T>;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  const int tiles = CommonShape ? whole_leaf_tiles<T> : (w + tile - 1) / tile;
  const Tiles<T> s{reinterpret_cast<T*>(shared_bytes), tiles, chunk_tiles};
  T* columns = s.end();
  auto* reciprocal = reinterpret_cast<Real*>(columns + 2 * tile);
  int& factored_in_tile = *reinterpret_cast<int*>(reciprocal + tiles * tile);
  int& block_flag = (&factored_in_tile)[1];
  const PanelRef<T> panel{a, lda, CommonShape ? Lower : lower};
  const int tid = threadIdx.x;
  const int chunk_rows = s.chunk_rows(), chunks = (rows_below + chunk_rows - 1) / chunk_rows;
  const auto rows_of_chunk = [&](int chunk) {
    return min(chunk_rows, rows_below - chunk * chunk_rows);
  };
  // Every block reads info before the one write below, which the last block to arrive makes.
  const bool earlier_failure = *info != 0;
  int first_unfactored = 0;
  if (!earlier_failure) {
    // The block's first chunk is solved column by column as the diagonal block is factored.
    const int rows = blockIdx.x < chunks ? rows_of_chunk(blockIdx.x) : 0;
    with_whole_width<T, CommonShape>(w, [&](auto width) {
      load_block_and_chunk<T, width>(s, panel, w, w + blockIdx.x * chunk_rows, rows);
    });
    if (gridDim.x > 1) signals::signal(&counters->loaded);
    const int row_tiles = (rows + tile - 1) / tile;
    first_unfactored = w;
    // Look-ahead by one tile column: warp 0 brings tile K up to date with tile column K - 1 and
    // factors it while the other warps apply that column's update to the rest of the trailing
    // tiles, where half of every warp's time had been the wait at the barrier for warp 0 (Nsight
    // Compute, d). H100, two rounds: potrf d 2048 / 4096 / 8192 0.97-1.02 / 2.24-2.31 / 7.21-7.45
    // ms -> 0.94-0.96 / 2.15-2.24 / 6.94-7.30, s 1-8% faster. Complex double, whose 64-column
    // leaves have two tiles, lost 3-6% with its tile update by multiply-adds (two passes) and
    // 4-8% by tensor cores (warp 0 taking the tile's four quarters alone), so it keeps the
    // update after each solve.
    constexpr bool look_ahead = sizeof(T) <= 8;
    for (int K = 0; K < tiles; ++K) {
      const int k0 = K * tile, kb = min(tile, w - k0);
      __syncthreads();  // tile column K - 1 is solved, and factored_in_tile has been read
      if constexpr (look_ahead) {
        if (K > 0 && tid < 32) {
          update_tile(s.at(K, K), s.at(K, K - 1), s.at(K, K - 1));
          __syncwarp();  // the tile's rows, written across lanes, go to their own lanes next
        }
        if (K > 0 && tid >= 32)
          update_trailing(s, K - 1, true, row_tiles, tid / 32, panel_warps - 1);
      }
      if (tid < 32) {
        int factored;
        if constexpr (factor_in_blocks<T>())
          factored = kb == tile
                         ? factor_full_diagonal_tile_in_blocks(s.at(K, K), columns, reciprocal + k0)
                         : factor_diagonal_tile(s.at(K, K), kb, reciprocal + k0);
        else {
          const bool full =
              kb == tile && factor_full_diagonal_tile(s.at(K, K), columns, reciprocal + k0);
          factored = full ? kb : factor_diagonal_tile(s.at(K, K), kb, reciprocal + k0);
        }
        if (tid == 0) factored_in_tile = factored;
      }
      __syncthreads();
      const int factored = factored_in_tile;
      solve_rows(s, K, k0 + kb, w + rows, w, factored, reciprocal + k0);
      if (factored < kb) {  // the same on every thread
        first_unfactored = k0 + factored;
        break;
      }
      if constexpr (!look_ahead) {
        __syncthreads();  // the tile column K is final
        update_trailing(s, K, true, row_tiles);
      }
    }
    __syncthreads();
    if (rows > 0)
      with_whole_width<T, CommonShape>(w, [&](auto width) {
        copy_chunk<T, width, true>(s, panel, w + blockIdx.x * chunk_rows, rows, w);
      });
    // Further chunks against the finished diagonal block, up to its first unfactored column.
    for (int chunk = blockIdx.x + gridDim.x; !CommonShape && chunk < chunks; chunk += gridDim.x) {
      const int chunk_rows_here = rows_of_chunk(chunk);
      __syncthreads();  // the chunk tiles have been stored
      // By the loop: whole tiles here as well gave double's kernel 204 registers against 186 (a
      // build before copy_chunk), for chunks only leaves taller than one pass of their blocks have.
      copy_chunk<T, 0, false>(s, panel, w + chunk * chunk_rows, chunk_rows_here, w);
      for (int K = 0; K * tile < first_unfactored; ++K) {
        const int factored = min(tile, first_unfactored - K * tile);
        __syncthreads();
        solve_rows(s, K, w, w + chunk_rows_here, w, factored, reciprocal + K * tile);
        if (factored < tile) break;
        __syncthreads();
        update_trailing(s, K, false, (chunk_rows_here + tile - 1) / tile);
      }
      __syncthreads();
      copy_chunk<T, 0, true>(s, panel, w + chunk * chunk_rows, chunk_rows_here, w);
    }
  }
  // The diagonal block goes back to the panel, its unfactored part the identity (the whole block
  // after an earlier failure), once every block holds its copy: a block the device had no room
  // for until others had finished would otherwise load the factor. No block waits for another
  // (two such kernels on two streams could then each hold SMs the other needs): each block
  // writes its share of the tiles if every block has loaded by its end, and the last block to
  // finish writes the whole block if any share was skipped.
  const auto write_diagonal = [&](int first_tile, int step) {
    for (int t = first_tile; t < tiles * (tiles + 1) / 2; t += step) {
      int I = 0;
      while ((I + 1) * (I + 2) / 2 <= t) ++I;
      const int J = t - I * (I + 1) / 2;
      const T* stored = s.at(I, J);
      for (int e = tid; e < tile * tile; e += panel_threads) {
        int r, c;
        panel.place(e, r, c);
        const int i = I * tile + r, j = J * tile + c;
        if (i >= w || j >= w || i < j) continue;
        const T v = j >= first_unfactored ? ops::make_scalar<T>(i == j ? Real(1) : Real(0))
                                          : stored[r + c * tile_ld];
        panel.store(i, j, v);
      }
    }
  };
  const bool failure = !earlier_failure && first_unfactored < w;
  if (gridDim.x == 1) {
    __syncthreads();
    write_diagonal(0, 1);
    if (failure && tid == 0) *info = offset + first_unfactored + 1;
  } else {
    __syncthreads();  // block_flag's last reader is done
    if (tid == 0)
      block_flag = earlier_failure || signals::load_acquire(&counters->loaded) == gridDim.x;
    __syncthreads();
    const bool share = block_flag;
    if (share) write_diagonal(blockIdx.x, gridDim.x);
    __syncthreads();  // the share is written, block_flag read
    if (tid == 0) {
      __threadfence();
      if (share) atomicAdd(&counters->wrote, 1u);
      // The last block also writes info, once every block has read it.
      // Acquire-release, so that the last block finds every share's count in `wrote` before it
      // reads it and resets it: a count landing after the reset would reach the next launch.
      const bool last = signals::count(&counters->finished) == gridDim.x - 1;
      if (last && failure) *info = offset + first_unfactored + 1;
      block_flag = last && signals::load_acquire(&counters->wrote) < gridDim.x;
      // Every other block is done with the counters, so they go back to zero for the next
      // launch on the stream.
      if (last) *counters = BlockCounters{};
    }
    __syncthreads();
    if (block_flag) write_diagonal(0, 1);
  }
  if (blockIdx.x == 0 && failure && tid == 0) {
    const int k = first_unfactored;
    const T v = s.at(k / tile, k / tile)[k % tile + (k % tile) * tile_ld];
    *failed_diagonal = lower ? v : ops::conjugate(v);
  }
}

int shared_limit(int device) {
  int bytes = 0;
  BASALT_CUDA_CHECK(
      cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return bytes;
}

// The widest block that fits with chunk_tiles row tiles below it.
int width_limit(int device, int chunk_tiles, int entry_bytes) {
  const std::size_t bytes = shared_limit(device);
  int tiles = 0;
  while (shared_bytes_for(tiles + 1, chunk_tiles, entry_bytes) <= bytes) ++tiles;
  return tiles * tile;
}

}  // namespace

int potf2_width_limit(int device, int entry_bytes) { return width_limit(device, 0, entry_bytes); }

int potrf_panel_width_limit(int device, int entry_bytes) {
  return width_limit(device, 1, entry_bytes);
}

template <class T>
void potrf_panel(int device, cudaStream_t stream, T* panel, int* info, T* failed_diagonal,
                 const PanelProblem& p) {
  if (p.w == 0) return;
  const bool below = p.rows_below > 0;
  if (p.w > width_limit(device, below ? 1 : 0, sizeof(T)))
    throw std::invalid_argument("basalt: cuda potrf_panel: the panel exceeds the kernel's width");
  const int tiles = (p.w + tile - 1) / tile, limit = shared_limit(device);
  // The general kernel for the occupancy: the common shape's holds a part of its code, so it
  // fits as many blocks.
  const auto kernel = factor_panel<T, false>;
  BASALT_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, limit));
  // Each block factors the diagonal block once, so the rows below go to at most the blocks
  // resident at once, in chunks as small as lets them do so in one pass (a smaller chunk is a
  // shorter update per column); when no chunk that fits does, the largest chunk.
  int chunk_tiles = 0, blocks = 1;
  if (below) {
    int sms = 0;
    BASALT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    const bool beside_long_update =
        is_look_ahead(device, stream) && p.rows_below >= rows_below_beside_long_update;
    for (int c = 1;
         c <= max_chunk_tiles && shared_bytes_for(tiles, c, sizeof(T)) <= std::size_t(limit); ++c) {
      int per_sm = 0;
      BASALT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          &per_sm, kernel, panel_threads, shared_bytes_for(tiles, c, sizeof(T))));
      const int chunks = (p.rows_below + c * tile - 1) / (c * tile);
      const int most = beside_long_update ? std::max(1, sms / 4) : per_sm * sms;
      chunk_tiles = c;
      blocks = std::max(1, std::min(chunks, most));
      if (chunks <= most) break;
    }
  }
  // The stream's counters rather than a workspace zeroed before each launch: the memset was an
  // operation more on the chain of leaves (potrf d 4096 on an H100 2.10-2.12 -> 2.05-2.06 ms).
  BlockCounters* counters =
      blocks > 1 ? reinterpret_cast<BlockCounters*>(stream_counters(device, stream)) : nullptr;
  const bool common_shape = p.w == whole_leaf_tiles<T> * tile &&
                            std::int64_t(blocks) * chunk_tiles * tile >= p.rows_below;
  const auto launched = !common_shape ? kernel
                        : p.lower     ? factor_panel<T, true, true>
                                      : factor_panel<T, true, false>;
  if (common_shape)
    BASALT_CUDA_CHECK(
        cudaFuncSetAttribute(launched, cudaFuncAttributeMaxDynamicSharedMemorySize, limit));
  launched<<<blocks, panel_threads, shared_bytes_for(tiles, chunk_tiles, sizeof(T)), stream>>>(
      panel, p.w, p.rows_below, chunk_tiles, p.lda, p.lower, p.offset, info, failed_diagonal,
      counters);
  BASALT_CUDA_CHECK_LAUNCH();
}

#define BASALT_INSTANTIATE(T) \
  template void potrf_panel<T>(int, cudaStream_t, T*, int*, T*, const PanelProblem&);
BASALT_INSTANTIATE(float)
BASALT_INSTANTIATE(double)
BASALT_INSTANTIATE(cuFloatComplex)
BASALT_INSTANTIATE(cuDoubleComplex)
#undef BASALT_INSTANTIATE

}  // namespace basalt::cuda::kernels
