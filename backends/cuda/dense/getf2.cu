// CUDA LU panel (design D2): one cooperative kernel, the panel in shared memory, one grid
// barrier per column.
#include <cooperative_groups.h>
#include <cuComplex.h>

#include <algorithm>
#include <stdexcept>

#include "basalt/backends/cuda/dense/getf2_launch.hpp"
#include "basalt/backends/cuda/dense/panel_grid.hpp"
#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/first_largest.cuh"
#include "basalt/backends/cuda/scalar_ops.cuh"
#include "basalt/backends/cuda/workspace.hpp"

namespace basalt::cuda::kernels {

namespace {

namespace cg = cooperative_groups;

using panel_grid::min_rows_per_block;
using panel_grid::panel_threads;
using panel_grid::panel_warps;

template <class Real>
struct Candidate {
  Real val;
  int row;  // -1: the block has no row at or below the diagonal
};

// The static shared memory of a block: per_warp, the two reductions' candidates.
constexpr int static_shared_bytes = 2 * int(sizeof(Candidate<double>)) * panel_warps;

// The larger magnitude wins; among equal ones the smaller row (LAPACK's first maximum).
template <class Real>
__device__ Candidate<Real> better(Candidate<Real> a, Candidate<Real> b) {
  if (b.row < 0) return a;
  if (a.row < 0 || b.val > a.val || (b.val == a.val && b.row < a.row)) return b;
  return a;
}

// The warp's best candidate, on every lane (a lane without one, or with a zero magnitude, is
// never taken as a pivot).
template <class Real>
__device__ Candidate<Real> warp_reduce(Candidate<Real> mine) {
  warp_first_largest(mine.val, mine.row);
  return mine;
}

// The block's best candidate, on every thread. One barrier: the caller passes per_warp back to
// this reduction only after another barrier (each of the two reductions of a column has its own).
template <class Real>
__device__ Candidate<Real> block_reduce(Candidate<Real> mine, Candidate<Real>* per_warp) {
  mine = warp_reduce(mine);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) per_warp[warp] = mine;
  __syncthreads();
  return warp_reduce(lane < panel_warps ? per_warp[lane] : Candidate<Real>{Real(-1), -1});
}

// The best of the blocks' published candidates, on every thread. Up to 32 blocks every warp
// reads them all, a candidate a lane, and needs no block barrier after the grid's; with more,
// all the warps of every block reading all of them took longer than a block reduction (H100:
// 128 blocks, 3400 cycles against 2200).
template <class Real>
__device__ Candidate<Real> best_published(const Candidate<Real>* candidates, int blocks,
                                          Candidate<Real>* per_warp) {
  const auto load = [&](int b) {
    return Candidate<Real>{ops::load_coherent(&candidates[b].val),
                           ops::load_coherent(&candidates[b].row)};
  };
  Candidate<Real> best{Real(-1), -1};
  if (blocks <= 32) {
    const int lane = threadIdx.x % 32;
    if (lane < blocks) best = load(lane);
    return warp_reduce(best);
  }
  for (int b = threadIdx.x; b < blocks; b += blockDim.x) best = better(best, load(b));
  return block_reduce(best, per_warp);
}

// The exchange area between blocks, two generations (by column parity) so that a block that
// runs ahead into column jj + 1 never overwrites what a slower one still reads for column jj.
template <class T, class Real>
struct Published {
  Candidate<Real>* candidates;  // [2][blocks]
  T* rows;                      // [2][blocks + 1][w]: each block's candidate row, then row jj
};

template <class T, class Real>
__global__ void __launch_bounds__(panel_threads)
    factor_panel(T* a, int m, int w, std::int64_t lda, int offset, int* ipiv, int* info,
                 int rows_per_block, Published<T, Real> published) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* tile = reinterpret_cast<T*>(shared_bytes);  // rows_per_block x w, column-major
  T* pivot_row = tile + std::size_t(rows_per_block) * w;
  __shared__ Candidate<Real> per_warp[2][panel_warps];
  cg::grid_group grid = cg::this_grid();

  const int blocks = gridDim.x, block = blockIdx.x;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int first_row = block * rows_per_block;
  const int rows = max(0, min(m, first_row + rows_per_block) - first_row);
  auto at = [&](int local_row, int c) -> T& { return tile[local_row + c * rows_per_block]; };
  auto owns = [&](int row) { return row >= first_row && row < first_row + rows; };

  for (int e = threadIdx.x; e < rows * w; e += blockDim.x)
    at(e % rows, e / rows) = a[first_row + e % rows + (e / rows) * lda];
  __syncthreads();

  const int steps = min(m, w);
  // Publishes this block's candidate for the pivot of column jj (NaN never compares larger),
  // with its row and, from the block holding it, row jj, then arrives at the grid barrier.
  // Column jj is up to date; with update_pending, the columns after it still lack column
  // jj - 1's rank-1 update (multipliers in column jj - 1, pivot row in pivot_row), which the
  // published copies get here and the tile after the arrival.
  const auto publish = [&](int jj, bool update_pending) {
    Candidate<Real>* candidates = published.candidates + (jj & 1) * blocks;
    T* exchange = published.rows + std::size_t(jj & 1) * (blocks + 1) * w;
    T* diagonal_row = exchange + std::size_t(blocks) * w;
    Candidate<Real> mine{Real(-1), -1};
    for (int i = max(0, jj - first_row) + threadIdx.x; i < rows; i += blockDim.x) {
      const Real v = ops::abs1(at(i, jj));
      if (v > mine.val) mine = {v, first_row + i};
    }
    mine = block_reduce(mine, per_warp[0]);  // its barrier also orders the column's writes
    const auto copy = [&](int local_row, T* to) {
      for (int c = threadIdx.x; c < w; c += blockDim.x) {
        const T v = at(local_row, c);
        to[c] = update_pending && c > jj
                    ? ops::minus_product(v, at(local_row, jj - 1), pivot_row[c])
                    : v;
      }
    };
    if (threadIdx.x == 0) candidates[block] = mine;
    if (mine.row >= 0) copy(mine.row - first_row, exchange + std::size_t(block) * w);
    if (owns(jj)) copy(jj - first_row, diagonal_row);
    return grid.barrier_arrive();
  };

  auto arrival = publish(0, false);
  for (int jj = 0; jj < steps; ++jj) {
    grid.barrier_wait(std::move(arrival));
    Candidate<Real>* candidates = published.candidates + (jj & 1) * blocks;
    T* exchange = published.rows + std::size_t(jj & 1) * (blocks + 1) * w;
    T* diagonal_row = exchange + std::size_t(blocks) * w;

    // Every block reduces the same candidates in the same order: all agree on p. A column with
    // no positive magnitude (zero, or NaN throughout) keeps its diagonal, as LAPACK does.
    const Candidate<Real> best = best_published(candidates, blocks, per_warp[1]);
    const bool found = best.row >= 0 && best.val > Real(0);
    const int p = found ? best.row : jj;
    const T* source = found ? exchange + std::size_t(p / rows_per_block) * w : diagonal_row;
    for (int c = threadIdx.x; c < w; c += blockDim.x) {
      const T moving_up = ops::load_coherent(source + c);
      pivot_row[c] = moving_up;
      if (owns(jj)) at(jj - first_row, c) = moving_up;
      if (p != jj && owns(p)) at(p - first_row, c) = ops::load_coherent(diagonal_row + c);
    }
    if (block == 0 && threadIdx.x == 0) ipiv[jj] = p + 1;
    __syncthreads();

    // LAPACK leaves a zero pivot's column unscaled (the column below it is zero: no update).
    const T pivot = pivot_row[jj];
    const bool update = !ops::is_zero(pivot);
    if (!update && block == 0 && threadIdx.x == 0 && *info == 0) *info = offset + jj + 1;
    const int first = max(0, jj + 1 - first_row);
    if (update) {
      // The multipliers and column jj + 1, which the next pivot search reads, first (each
      // thread on the rows it then searches).
      for (int i = first + threadIdx.x; i < rows; i += blockDim.x) {
        const T l = ops::divide(at(i, jj), pivot);
        at(i, jj) = l;
        if (jj + 1 < w) at(i, jj + 1) = ops::minus_product(at(i, jj + 1), l, pivot_row[jj + 1]);
      }
    }
    if (jj + 1 < steps) arrival = publish(jj + 1, update);
    // The rest of the update while the other blocks arrive. Lanes take rows and warps
    // columns: consecutive lanes on consecutive words, and no index arithmetic in the loop.
    if (update) {
      for (int i = first + lane; i < rows; i += 32) {
        const T l = at(i, jj);
        for (int c = jj + 2 + warp; c < w; c += panel_warps)
          at(i, c) = ops::minus_product(at(i, c), l, pivot_row[c]);
      }
    }
    __syncthreads();
  }

  for (int e = threadIdx.x; e < rows * w; e += blockDim.x)
    a[first_row + e % rows + (e / rows) * lda] = at(e % rows, e / rows);
}

}  // namespace

int getf2_height_limit(int device, int w, int entry_bytes) {
  return panel_grid::height_limit(device, w, entry_bytes, static_shared_bytes);
}

template <class T>
void getf2(int device, cudaStream_t stream, T* panel, int* ipiv, int* info, const Getf2Problem& p) {
  if (p.m == 0 || p.w == 0) return;
  if (getf2_by_slabs_fits(device, p.m, p.w, sizeof(T)))
    return getf2_by_slabs(device, stream, panel, ipiv, info, p);
  using Real = ops::real_of_t<T>;
  if (p.m > getf2_height_limit(device, p.w, sizeof(T)))
    throw std::invalid_argument("basalt: cuda getf2: the panel exceeds the fused kernel's height");
  const auto grid = panel_grid::plan(device, stream, p.m, p.w, sizeof(T), static_shared_bytes,
                                     min_rows_per_block);
  const int blocks = grid.blocks, rows_per_block = grid.rows_per_block;
  const auto kernel = factor_panel<T, Real>;
  panel_grid::make_resident(kernel, panel_threads, grid, device);

  const std::size_t candidate_bytes = (2 * sizeof(Candidate<Real>) * blocks + 255) / 256 * 256;
  const std::size_t row_bytes = 2 * (std::size_t(blocks) + 1) * p.w * sizeof(T);
  auto* exchange =
      static_cast<unsigned char*>(acquire_workspace(device, stream, candidate_bytes + row_bytes));
  Published<T, Real> published{reinterpret_cast<Candidate<Real>*>(exchange),
                               reinterpret_cast<T*>(exchange + candidate_bytes)};
  int m = p.m, w = p.w, offset = p.offset, rows = rows_per_block;
  std::int64_t lda = p.lda;
  void* args[] = {&panel, &m, &w, &lda, &offset, &ipiv, &info, &rows, &published};
  BASALT_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(kernel), blocks,
                                                panel_threads, args, grid.shared_bytes, stream));
  release_workspace(exchange, stream);
}

template void getf2<float>(int, cudaStream_t, float*, int*, int*, const Getf2Problem&);
template void getf2<double>(int, cudaStream_t, double*, int*, int*, const Getf2Problem&);
template void getf2<cuFloatComplex>(int, cudaStream_t, cuFloatComplex*, int*, int*,
                                    const Getf2Problem&);
template void getf2<cuDoubleComplex>(int, cudaStream_t, cuDoubleComplex*, int*, int*,
                                     const Getf2Problem&);

}  // namespace basalt::cuda::kernels
