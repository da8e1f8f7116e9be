// CUDA LU panel for panels of up to 4096 rows (2048 in complex double), or eight times that on
// GPUs with thread block clusters (design D3): one thread block, the leader, factors the panel
// a slab of B columns at a time, holding all the panel's rows below the slab's top in its
// registers, with one block barrier per column; above 2048 rows a cluster of leader blocks
// shares the rows, and per column each pushes its warps' candidates into every leader's shared
// memory and waits for theirs, in place of the barrier. The other
// blocks, the updaters, apply each slab's interchanges and rank-B update to the panel's other
// columns. Where getf2.cu's fused kernel exchanges through L2 behind a grid barrier at every
// column (about 3 us a column on the H100, whatever the height), here blocks exchange twice per
// slab, each a one-way signal:
//   leader:   factor slab s; write it back with its rows in their final places, and where its
//             rows moved; wait until the updaters have finished slab s - 1; signal `done`; then
//             solve for U's rows of slab s in slab s + 1's columns and bring its rows of those
//             columns up to date itself, in registers.
//   updater:  wait for `done`; apply slab s's interchanges to its share of the columns left of
//             the slab and, beyond slab s + 1, to its share of the columns there, solving for
//             their rows of U and updating them whole; signal `finished`.
// A leading cluster shares each slab's L11 and moves among its blocks behind one cluster
// barrier, and each of its blocks signals `done` for its own stores.
// So the updaters finish slab s while the leader factors slab s + 1, and the leader's chain per
// slab holds no pass over the panel's other columns. Every block is resident (cooperative
// launch), so no wait is on a block that is not running. Multipliers are scaled by the pivot's
// reciprocal where it is at least the smallest normal number, as LAPACK's getf2 does, and each
// update accumulates in the order of the unblocked algorithm.
#include <cuComplex.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cfloat>
#include <cstdint>
#include <stdexcept>
#include <utility>

#include "basalt/backends/cuda/batched/warp_batch.cuh"
#include "basalt/backends/cuda/block_signals.cuh"
#include "basalt/backends/cuda/cluster_exchange.cuh"
#include "basalt/backends/cuda/dense/getf2_launch.hpp"
#include "basalt/backends/cuda/dense/panel_grid.hpp"
#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/first_largest.cuh"
#include "basalt/backends/cuda/scalar_ops.cuh"
#include "basalt/backends/cuda/workspace.hpp"

namespace basalt::cuda::kernels {

namespace {

using signals::signal;
using signals::wait_for;

constexpr int slab_threads = 512;
constexpr int slab_warps = slab_threads / 32;
// Rows a leader's thread holds, at most: 8, with slabs narrow enough that its slab entries stay
// within 32 8-byte words; 4 in complex double, whose slabs would then be 2 columns wide.
constexpr int max_rows_per_thread(int entry_bytes) { return entry_bytes == 16 ? 4 : 8; }
// A panel of more rows than `cluster_from_rows` is led, on GPUs with thread block clusters, by a
// cluster of up to max_leaders blocks (the cluster size every such GPU takes), its rows spread
// over them at as few a thread as fit (2, 4 or 8); the leaders exchange each column's candidates
// through each other's shared memory. On an H100 (getf2 d x 128, getrf d; perf/NOTES.md) 2 rows
// a thread in 3 or 4 blocks took 2560- to 4096-row panels in 0.27-0.29 ms where one block at 8
// rows a thread took 0.32-0.38; from 1024 rows a cluster of 2 was no faster than one block at 4
// rows a thread, and getrf 2048 slower.
constexpr int max_leaders = 8;
constexpr int cluster_from_rows = 4 * slab_threads;
constexpr int leaders_for(int m, int rows_per_thread) {
  return (m + rows_per_thread * slab_threads - 1) / (rows_per_thread * slab_threads);
}
// The staged U rows take B x w entries of an updater's shared memory.
constexpr int slab_width_limit = 512;
// Rows per updater, at the least: fewer, and the signals cost more than the work.
constexpr int min_rows_per_updater = 64;

// Slab width for R rows a thread: 8 columns in real types, 4 in complex ones (in complex double
// the leader's slab entries then stay within 32 8-byte words a thread; in complex single 4 ran
// the 1024- to 2048-row panels 12-23% faster than 8 on an H100, perf/NOTES.md); at 8 rows a
// thread, 4 unless entries are 4 bytes, for the same 32 words.
template <class T, int R>
constexpr int slab_width = R == 8 ? (sizeof(T) == 4 ? 8 : 4) : (ops::is_complex<T> ? 4 : 8);

// Counters in global memory, zero at launch; each only grows.
struct Signals {
  unsigned done;      // leader blocks' arrivals, each block once a slab
  unsigned finished;  // updater arrivals: the whole update of a slab applied
};

// Where slab s's interchanges moved its rows, for the updaters: top_source[r], the panel row
// whose entries land in slab row r (r < B), and down_target[i], where slab row i moved below
// the slab's top, or -1.
template <int B>
struct SlabMoves {
  int top_source[B];
  int down_target[B];
};

// The leader blocks: this one's rank among them, and their count (1 but for a leading cluster).
struct Leaders {
  int rank = 0, count = 1;
  unsigned peer = 0;  // in a leading cluster, lane r's: the shared area's address in block r
};

// What the leader's threads exchange: per column the warps' candidates (magnitude, position,
// row), and the diagonal row where no candidate is found, two generations by column parity so
// that a warp at column j + 1 never overwrites what a slower one still reads for column j; per
// slab the unit lower triangle L11, where the rows moved, and U's rows in the next slab's
// columns. A leading cluster's blocks each hold every leader warp's candidate (Slots of them),
// pushed there with the bytes counted against `round`, one barrier per column parity.
template <class T, int B, int Slots>
struct LeaderShared {
  using Real = ops::real_of_t<T>;
  std::uint64_t round[2];
  Real candidate_value[2][Slots];
  int candidate_position[2][Slots];
  alignas(16) T candidate_row[2][Slots][B];
  alignas(16) T diagonal_row[2][B];
  // What the leaders share of a slab, two generations by slab parity, so that a leading
  // cluster's block never writes where a slower one still reads the slab before.
  T l11[2][B][B];
  int top_source[2][B];        // as SlabMoves
  int down_target[2][B];       // as SlabMoves
  T top_rows[B][B];            // the new top rows' entries in the next slab's columns
  alignas(16) T u_next[B][B];  // U's rows of the slab, in the next slab's columns
};

// Column j of factor_slab: the pivot, the interchange (of positions) and the rank-1 update. j is
// a template parameter: with it a run-time value, ptxas kept v in local memory.
template <class T, int R, int B, int Slots, int j>
__device__ __forceinline__ void step(T (&v)[R][B], int (&pos)[R], const bool (&live)[R], int c0,
                                     int offset, int* ipiv, int* info,
                                     LeaderShared<T, B, Slots>& sh, Leaders leaders,
                                     unsigned& zero_pivots) {
  constexpr bool clustered = Slots > slab_warps;
  using Real = ops::real_of_t<T>;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  constexpr int parity = j & 1;
  // The thread's candidate: the first largest magnitude (a NaN never is one).
  Real best = Real(-1);
  int best_position = -1, best_k = -1;
#pragma unroll
  for (int k = 0; k < R; ++k) {
    if (live[k] && pos[k] >= j) {
      const Real magnitude = ops::abs1(v[k][j]);
      if (magnitude > best || (magnitude == best && pos[k] < best_position)) {
        best = magnitude;
        best_position = pos[k];
        best_k = k;
      }
    }
  }
  Real warp_best = best;
  int warp_position = best_position;
  warp_first_largest(warp_best, warp_position);
  const bool holds = warp_position >= 0 && warp_position == best_position;
  if constexpr (clustered) {
    // The candidate's row to every lane (from the lane holding it, else lane 0's first row, so
    // that every round has its bytes); lane r pushes the candidate into leader block r's slot
    // for this warp. Then wait for every leader warp's.
    const unsigned holders = __ballot_sync(0xffffffff, holds);
    const int sender = holders ? __ffs(holders) - 1 : 0, sent = max(best_k, 0);
    T row[B];
#pragma unroll
    for (int c = j; c < B; ++c) {
      T mine = v[0][c];
#pragma unroll
      for (int k = 1; k < R; ++k)
        if (k == sent) mine = v[k][c];
      row[c] = warp::shuffle<32>(mine, sender);
    }
    if (lane < leaders.count) {
      const unsigned here = cluster::shared_address(&sh);
      const auto peer = [&](const void* local) {
        return leaders.peer + (cluster::shared_address(local) - here);
      };
      const int slot = leaders.rank * slab_warps + warp;
      const unsigned round = peer(&sh.round[parity]);
      cluster::push(peer(&sh.candidate_value[parity][slot]), warp_best, round);
      cluster::push(peer(&sh.candidate_position[parity][slot]), warp_position, round);
#pragma unroll
      for (int c = j; c < B; ++c)
        cluster::push(peer(&sh.candidate_row[parity][slot][c]), row[c], round);
    }
    if (tid == 0)
      cluster::expect_bytes(
          &sh.round[parity],
          leaders.count * slab_warps * unsigned(sizeof(Real) + sizeof(int) + (B - j) * sizeof(T)));
    // The barrier of this parity completes once every second column.
    cluster::wait_round(&sh.round[parity], unsigned(c0 + j) >> 1 & 1u);
  } else {
    if (holds) {
#pragma unroll
      for (int k = 0; k < R; ++k)
        if (k == best_k)
#pragma unroll
          for (int c = j; c < B; ++c) sh.candidate_row[parity][warp][c] = v[k][c];
    }
    if (lane == 0) {
      sh.candidate_value[parity][warp] = warp_best;
      sh.candidate_position[parity][warp] = warp_position;
    }
    __syncthreads();
  }

  // Every warp reduces the same candidates: all agree on p. A column with no positive
  // magnitude keeps its diagonal, as LAPACK does: then (the same on every warp) the diagonal
  // row is published, behind one more barrier.
  Real value = Real(0);
  int published = -1, slot = lane;
  if constexpr (clustered) {
    for (int s = lane; s < leaders.count * slab_warps; s += 32) {
      const Real x = sh.candidate_value[parity][s];
      const int at_s = sh.candidate_position[parity][s];
      if (at_s >= 0 && (published < 0 || x > value || (x == value && at_s < published))) {
        value = x;
        published = at_s;
        slot = s;
      }
    }
  } else if (lane < slab_warps) {
    value = sh.candidate_value[parity][lane];
    published = sh.candidate_position[parity][lane];
  }
  int at = published;
  warp_first_largest(value, at);
  const bool found = at >= 0;
  const int p = found ? at : j;
  const int winner = __ffs(__ballot_sync(0xffffffff, found && published == at)) - 1;
  if (!found) {
    // A leading cluster's blocks write into each other's row once none reads the row before.
    if constexpr (clustered) cluster::sync();
#pragma unroll
    for (int k = 0; k < R; ++k)
      if (live[k] && pos[k] == j)
#pragma unroll
        for (int c = j; c < B; ++c) {
          if constexpr (clustered)
            cluster::store_everywhere(&sh.diagonal_row[parity][c], v[k][c]);
          else
            sh.diagonal_row[parity][c] = v[k][c];
        }
    if constexpr (clustered)
      cluster::sync();
    else
      __syncthreads();
  }
  const T* source =
      found ? sh.candidate_row[parity][clustered ? __shfl_sync(0xffffffff, slot, winner) : winner]
            : sh.diagonal_row[parity];
  T u[B];
#pragma unroll
  for (int c = j; c < B; ++c) u[c] = source[c];
#pragma unroll
  for (int k = 0; k < R; ++k) {
    if (pos[k] == p)
      pos[k] = j;
    else if (pos[k] == j)
      pos[k] = p;
  }
  if (tid == 0 && leaders.rank == 0) ipiv[c0 + j] = c0 + p + 1;
  // LAPACK leaves a zero pivot's column unscaled, and no update follows it.
  const T pivot = u[j];
  if (ops::is_zero(pivot)) {
    zero_pivots |= 1u << j;
    if (tid == 0 && leaders.rank == 0 && *info == 0) *info = offset + c0 + j + 1;
    return;
  }
  // The multipliers, then the rank-1 update; the choice of multiplier made once for all rows.
  const auto eliminate = [&](auto multiplier_of) {
#pragma unroll
    for (int k = 0; k < R; ++k) {
      if (live[k] && pos[k] > j) {
        v[k][j] = multiplier_of(v[k][j]);
#pragma unroll
        for (int c = j + 1; c < B; ++c) v[k][c] = ops::minus_product(v[k][c], v[k][j], u[c]);
      }
    }
  };
  const Real smallest_normal = sizeof(Real) == 8 ? Real(DBL_MIN) : Real(FLT_MIN);
  if (ops::magnitude(pivot) >= smallest_normal) {
    const T reciprocal = ops::divide(ops::make_scalar<T>(1), pivot);
    eliminate([&](T x) { return ops::multiply(x, reciprocal); });
  } else {
    eliminate([&](T x) { return ops::divide(x, pivot); });
  }
}

// LU of the slab (row positions c0 .. m - 1, columns c0 .. c0 + bw - 1) held in v: thread t's
// live rows, at positions pos[k] from c0. Rows are not moved: pos tracks where each has gone.
// Returns the mask of columns whose pivot was zero.
template <class T, int R, int B, int Slots, int... J>
__device__ unsigned factor_slab(T (&v)[R][B], int (&pos)[R], const bool (&live)[R], int steps,
                                int c0, int offset, int* ipiv, int* info,
                                LeaderShared<T, B, Slots>& sh, Leaders leaders,
                                std::integer_sequence<int, J...>) {
  unsigned zero_pivots = 0;
  ((J < steps
        ? step<T, R, B, Slots, J>(v, pos, live, c0, offset, ipiv, info, sh, leaders, zero_pivots)
        : void()),
   ...);
  return zero_pivots;
}

// The thread's rows of the next slab's columns (from `columns`, lda apart) brought up to date by
// the slab's multipliers, held in v, and U's rows in sh.u_next; the results replace v. In memory
// those columns still hold each row where it was at the slab's start: where it is now, unless it
// is a top row that moved down. Whole: a full slab followed by a full one, no zero pivot; without
// the checks per product, a row's update takes a quarter of the instructions (the leader's
// largest share of them per slab on an H100).
template <bool whole, class T, int R, int B, int Slots>
__device__ __forceinline__ void bring_up_to_date(T (&v)[R][B], int (&pos)[R], bool (&live)[R],
                                                 const T* columns, int c0, std::int64_t lda, int bw,
                                                 int next, unsigned zero_pivots,
                                                 const LeaderShared<T, B, Slots>& sh) {
#pragma unroll
  for (int k = 0; k < R; ++k) {
    live[k] = live[k] && pos[k] >= bw;
    if (!live[k]) continue;
    int from = pos[k];
#pragma unroll
    for (int i = 0; i < B; ++i)
      if (sh.down_target[c0 / B & 1][i] == c0 + pos[k]) from = i;
    const T* row = columns + c0 + from;
    T x[B];
#pragma unroll
    for (int c = 0; c < B; ++c)
      x[c] = whole || c < next ? ops::load_coherent(row + c * lda) : ops::make_scalar<T>(0);
#pragma unroll
    for (int i = 0; i < B; ++i) {
      if (!whole && (i >= bw || (zero_pivots >> i & 1u))) continue;
#pragma unroll
      for (int c = 0; c < B; ++c)
        if (whole || c < next) x[c] = ops::minus_product(x[c], v[k][i], sh.u_next[i][c]);
    }
#pragma unroll
    for (int c = 0; c < B; ++c) v[k][c] = x[c];
    pos[k] -= bw;
  }
}

// Rows of U: the top rows' entries x (r < bw) solved in place by the unit lower triangle l11,
// whose columns with a zero pivot take no part, as in getf2.
template <class T, int B, class L11>
__device__ __forceinline__ void solve_unit_lower(T (&x)[B], const L11& l11, int bw,
                                                 unsigned zero_pivots) {
#pragma unroll
  for (int r = 1; r < B; ++r)
#pragma unroll
    for (int i = 0; i < r; ++i)
      if (r < bw && !(zero_pivots >> i & 1u)) x[r] = ops::minus_product(x[r], l11[r][i], x[i]);
}

template <class T, int R, int B, int Slots>
__device__ void lead(T* a, int m, int w, std::int64_t lda, int offset, int* ipiv, int* info,
                     Signals* signals, unsigned* zero_pivots_by_slab, SlabMoves<B>* moves,
                     unsigned updaters, Leaders leaders, LeaderShared<T, B, Slots>& sh) {
  constexpr bool clustered = Slots > slab_warps;
  const int tid = threadIdx.x;
  const int slabs = (w + B - 1) / B;
  const T zero = ops::make_scalar<T>(0);
  // What every leader block holds of a slab: from a leading cluster's owner, into each block.
  const auto share = [](auto& place, auto x) {
    if constexpr (clustered)
      cluster::store_everywhere(&place, x);
    else
      place = x;
  };
  if constexpr (clustered) {
    if (tid == 0) {
      cluster::init_barrier(&sh.round[0]);
      cluster::init_barrier(&sh.round[1]);
      cluster::publish_barrier_init();
    }
    if (threadIdx.x % 32 < leaders.count)
      leaders.peer = cluster::peer_address(cluster::shared_address(&sh), threadIdx.x % 32);
    cluster::sync();
  }
  // Thread t of leader block b holds the panel's rows b slab_threads + t + k slab_threads
  // leaders.count, from the first slab to the last.
  T v[R][B];
  int pos[R];
  bool live[R];
#pragma unroll
  for (int k = 0; k < R; ++k) {
    const int i = (leaders.rank + k * leaders.count) * slab_threads + tid;
    pos[k] = i;
    live[k] = i < m;
#pragma unroll
    for (int c = 0; c < B; ++c)
      v[k][c] = live[k] && c < w ? ops::load_coherent(a + i + c * lda) : zero;
  }
  for (int s = 0; s < slabs; ++s) {
    const int c0 = s * B, bw = min(B, w - c0), c1 = c0 + bw, next = min(B, w - c1);
    int origin[R];  // positions at the slab's start
#pragma unroll
    for (int k = 0; k < R; ++k) origin[k] = pos[k];
    const unsigned zero_pivots =
        factor_slab<T, R, B, Slots>(v, pos, live, min(bw, m - c0), c0, offset, ipiv, info, sh,
                                    leaders, std::make_integer_sequence<int, B>());

    // The slab back, every row in its final place; L11 and the rows' moves for what follows;
    // and the previous slab's rows of U in this slab's columns (that slab was whole: only the
    // last can be narrower), now that every row below them has been read.
#pragma unroll
    for (int k = 0; k < R; ++k) {
      if (!live[k]) continue;
      const int q = pos[k], i = origin[k];
#pragma unroll
      for (int c = 0; c < B; ++c)
        if (c < bw) a[c0 + q + (c0 + c) * lda] = v[k][c];
      if (q < bw) {  // row q of L11 (the solve reads its entries left of the diagonal)
        moves[s].top_source[q] = c0 + i;
        share(sh.top_source[s & 1][q], c0 + i);
#pragma unroll
        for (int c = 0; c < B; ++c) share(sh.l11[s & 1][q][c], v[k][c]);
      }
      // Only rows of the slab's top move down: any other row moves only as a pivot, up.
      if (i < bw) {
        const int target = q >= bw ? c0 + q : -1;
        moves[s].down_target[i] = target;
        share(sh.down_target[s & 1][i], target);
      }
    }
    // Every leader block solved for the same rows of U; one writes them.
    if (s > 0 && tid < B * B && leaders.rank == 0) {
      const int r = tid % B, c = tid / B;
      if (c < bw) a[c0 - B + r + (c0 + c) * lda] = sh.u_next[r][c];
    }
    if (tid == 0 && leaders.rank == 0) zero_pivots_by_slab[s] = zero_pivots;
    if constexpr (clustered) cluster::sync();  // the shared slab in every leader block
    if (s > 0)
      wait_for(&signals->finished, updaters * s);
    else
      __syncthreads();
    signals::arrive(&signals->done);  // after the barrier above, which follows every store
    if (next == 0) break;

    // U's rows in the next slab's columns, from the top rows' entries where they were before
    // this slab's interchanges (no interchange of this slab reaches those columns in memory).
    if (tid < B * B) {
      const int r = tid % B, c = tid / B;
      if (r < bw && c < next)
        sh.top_rows[r][c] = ops::load_coherent(a + sh.top_source[s & 1][r] + (c1 + c) * lda);
    }
    __syncthreads();
    if (tid < next) {
      T u[B];
#pragma unroll
      for (int r = 0; r < B; ++r) u[r] = r < bw ? sh.top_rows[r][tid] : zero;
      solve_unit_lower(u, sh.l11[s & 1], bw, zero_pivots);
#pragma unroll
      for (int r = 0; r < B; ++r) sh.u_next[r][tid] = u[r];
    }
    __syncthreads();

    // The next slab's columns of the rows below the top, brought up to date here: rows keep
    // their threads, and their positions count from the next slab's top.
    if (bw == B && next == B && zero_pivots == 0)
      bring_up_to_date<true>(v, pos, live, a + c1 * lda, c0, lda, bw, next, zero_pivots, sh);
    else
      bring_up_to_date<false>(v, pos, live, a + c1 * lda, c0, lda, bw, next, zero_pivots, sh);
  }
}

// An updater's share of slab s: `left` columns from `left0` (left of the slab: interchanges
// only) and `far` columns from `far0` (beyond the next slab: interchanges, U's rows by L11, and
// the rank-bw update of the rows below the slab). Staged in shared memory: L11, and per column
// the new top rows' entries (solved in place into U's rows) and the old ones, which move down.
struct UpdaterShare {
  int left0, left, far0, far;
  __device__ int columns() const { return left + far; }
  __device__ int column(int j) const { return j < far ? far0 + j : left0 + j - far; }
};

template <class T, int B>
__device__ void update(T* a, int m, int w, std::int64_t lda, Signals* signals,
                       const unsigned* zero_pivots_by_slab, const SlabMoves<B>* moves,
                       unsigned updaters, unsigned leaders, T* staged) {
  const int g = blockIdx.x - leaders, slabs = (w + B - 1) / B, tid = threadIdx.x;
  for (int s = 0; s < slabs; ++s) {
    const int c0 = s * B, bw = min(B, w - c0), c1 = c0 + bw, first = c1 + min(B, w - c1);
    const int left_per = (c0 + updaters - 1) / updaters;
    const int far_per = (w - first + updaters - 1) / updaters;
    UpdaterShare share;
    share.left0 = g * left_per;
    share.left = max(0, min(c0, share.left0 + left_per) - share.left0);
    share.far0 = first + g * far_per;
    share.far = max(0, min(w, share.far0 + far_per) - share.far0);
    const int columns = share.columns();
    wait_for(&signals->done, leaders * (s + 1));
    if (columns > 0) {
      const unsigned zero_pivots = __ldcg(zero_pivots_by_slab + s);
      T* l11 = staged;                     // B x B, row-major
      T* fresh = l11 + B * B;              // B x columns
      T* displaced = fresh + B * columns;  // B x columns
      for (int e = tid; e < B * B; e += slab_threads) {
        const int r = e / B, i = e % B;
        l11[e] = r < bw && i < bw ? ops::load_coherent(a + c0 + r + (c0 + i) * lda)
                                  : ops::make_scalar<T>(0);
      }
      // Every entry read before any is written: a top row's source may be another top row.
      for (int e = tid; e < bw * columns; e += slab_threads) {
        const int r = e % bw, j = e / bw, c = share.column(j);
        fresh[r + j * B] = ops::load_coherent(a + __ldcg(&moves[s].top_source[r]) + c * lda);
        displaced[r + j * B] = ops::load_coherent(a + c0 + r + c * lda);
      }
      __syncthreads();
      for (int j = tid; j < columns; j += slab_threads) {
        const int c = share.column(j);
        T x[B];
#pragma unroll
        for (int r = 0; r < B; ++r) x[r] = r < bw ? fresh[r + j * B] : ops::make_scalar<T>(0);
        if (j < share.far) {
          const T(&l)[B][B] = *reinterpret_cast<const T(*)[B][B]>(l11);
          solve_unit_lower(x, l, bw, zero_pivots);
        }
#pragma unroll
        for (int r = 0; r < B; ++r) {
          if (r >= bw) continue;
          fresh[r + j * B] = x[r];
          a[c0 + r + c * lda] = x[r];
          const int target = __ldcg(&moves[s].down_target[r]);
          if (target >= 0) a[target + c * lda] = displaced[r + j * B];
        }
      }
      __syncthreads();
      // The rows below the slab in the far columns: a -= L21 U12, in the order of the slab's
      // columns; each thread's rows of L21 loaded once for all its columns, and its rows taken
      // `rows_in_flight` at a time, so that their loads wait together.
      constexpr int rows_in_flight = 4;
      for (int q0 = c1 + tid; q0 < m; q0 += rows_in_flight * slab_threads) {
        T l[rows_in_flight][B];
#pragma unroll
        for (int u = 0; u < rows_in_flight; ++u) {
          const int q = q0 + u * slab_threads;
#pragma unroll
          for (int i = 0; i < B; ++i)
            l[u][i] = q < m && i < bw ? ops::load_coherent(a + q + (c0 + i) * lda)
                                      : ops::make_scalar<T>(0);
        }
        for (int j = 0; j < share.far; ++j) {
          T* column = a + (share.far0 + j) * lda;
          T x[rows_in_flight];
#pragma unroll
          for (int u = 0; u < rows_in_flight; ++u) {
            const int q = q0 + u * slab_threads;
            x[u] = q < m ? ops::load_coherent(column + q) : ops::make_scalar<T>(0);
          }
#pragma unroll
          for (int u = 0; u < rows_in_flight; ++u) {
#pragma unroll
            for (int i = 0; i < B; ++i)
              if (i < bw && !(zero_pivots >> i & 1u))
                x[u] = ops::minus_product(x[u], l[u][i], fresh[i + j * B]);
            if (q0 + u * slab_threads < m) column[q0 + u * slab_threads] = x[u];
          }
        }
      }
    }
    // Its barrier also keeps the staged entries until every thread has read them.
    signal(&signals->finished);
  }
}

// Clustered: the leaders are the grid's first cluster, whose size the launch sets; the other
// clusters' blocks are updaters, each on its own.
template <class T, int R, int B, bool Clustered>
__global__ void __launch_bounds__(slab_threads, 1)
    factor_panel_by_slabs(T* a, int m, int w, std::int64_t lda, int offset, int* ipiv, int* info,
                          Signals* signals, unsigned* zero_pivots_by_slab, SlabMoves<B>* moves) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  constexpr int slots = Clustered ? max_leaders * slab_warps : slab_warps;
  Leaders leaders;
  if constexpr (Clustered) leaders = {int(cluster::rank()), int(cluster::size())};
  const unsigned updaters = gridDim.x - leaders.count;
  if (blockIdx.x < leaders.count)
    lead<T, R, B>(a, m, w, lda, offset, ipiv, info, signals, zero_pivots_by_slab, moves, updaters,
                  leaders, *reinterpret_cast<LeaderShared<T, B, slots>*>(shared_bytes));
  else
    update<T, B>(a, m, w, lda, signals, zero_pivots_by_slab, moves, updaters, leaders.count,
                 reinterpret_cast<T*>(shared_bytes));
}

// The launch attribute for clusters of `leaders` blocks.
cudaLaunchAttribute cluster_dimension(int leaders) {
  cudaLaunchAttribute attribute;
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = leaders;
  attribute.val.clusterDim.y = attribute.val.clusterDim.z = 1;
  return attribute;
}

// Clusters of `leaders` blocks of the kernel that can be resident at once on the device, each
// block with shared_bytes (the same at every call for a kernel).
template <auto kernel>
int resident_clusters(int device, int leaders, std::size_t shared_bytes) {
  static std::array<std::array<std::atomic<int>, max_leaders + 1>, 64> known{};
  std::atomic<int>& slot = known.at(device).at(leaders);
  int clusters = slot.load();
  if (clusters > 0) return clusters;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(leaders);
  config.blockDim = dim3(slab_threads);
  config.dynamicSmemBytes = shared_bytes;
  cudaLaunchAttribute attribute = cluster_dimension(leaders);
  config.attrs = &attribute;
  config.numAttrs = 1;
  BASALT_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &config));
  slot.store(clusters);
  return clusters;
}

template <class T, int R, bool Clustered>
void launch(int device, cudaStream_t stream, T* panel, int* ipiv, int* info, const Getf2Problem& p,
            int leaders) {
  constexpr int B = slab_width<T, R>;
  constexpr int slots = Clustered ? max_leaders * slab_warps : slab_warps;
  constexpr auto kernel = factor_panel_by_slabs<T, R, B, Clustered>;
  const int sms = panel_grid::multiprocessors(device);
  const int most = is_look_ahead(device, stream) ? std::clamp(sms / 4, 2, 32) : sms;
  int updaters = std::clamp((p.m + min_rows_per_updater - 1) / min_rows_per_updater, 1,
                            std::max(1, most - leaders));
  // An updater's columns of a slab: its shares of those left of it and of those beyond the next.
  const auto shared_bytes_for = [](int w, int count) {
    const int columns_per_updater = (w + count - 1) / count + 1;
    return std::max(sizeof(LeaderShared<T, B, slots>),
                    std::size_t(B) * (B + 2 * columns_per_updater) * sizeof(T));
  };
  // Allowed the most that any panel and any count of updaters take.
  const std::size_t most_shared_bytes = shared_bytes_for(slab_width_limit, 1);
  BASALT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         int(most_shared_bytes)));
  if constexpr (Clustered) {
    // Whole clusters, all resident.
    const int clusters = std::min({(leaders + updaters + leaders - 1) / leaders, most / leaders,
                                   resident_clusters<kernel>(device, leaders, most_shared_bytes)});
    if (clusters < 2)
      throw std::runtime_error("basalt: cuda getf2_by_slabs: too few clusters resident");
    updaters = (clusters - 1) * leaders;
  }
  const std::size_t shared_bytes = shared_bytes_for(p.w, updaters);
  const int slabs = (p.w + B - 1) / B;
  const std::size_t bytes =
      sizeof(Signals) + slabs * sizeof(unsigned) + slabs * sizeof(SlabMoves<B>);
  auto* workspace = static_cast<unsigned char*>(acquire_workspace(device, stream, bytes));
  BASALT_CUDA_CHECK(cudaMemsetAsync(workspace, 0, sizeof(Signals), stream));
  auto* signals = reinterpret_cast<Signals*>(workspace);
  auto* zero_pivots = reinterpret_cast<unsigned*>(workspace + sizeof(Signals));
  auto* moves = reinterpret_cast<SlabMoves<B>*>(zero_pivots + slabs);
  // Cooperative, so that every block is resident; a leading cluster as the grid's first cluster.
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(leaders + updaters);
  config.blockDim = dim3(slab_threads);
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  cudaLaunchAttribute attributes[2];
  attributes[0].id = cudaLaunchAttributeCooperative;
  attributes[0].val.cooperative = 1;
  if constexpr (Clustered) attributes[1] = cluster_dimension(leaders);
  config.attrs = attributes;
  config.numAttrs = Clustered ? 2 : 1;
  BASALT_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, panel, p.m, p.w, p.lda, p.offset, ipiv,
                                       info, signals, zero_pivots, moves));
  release_workspace(workspace, stream);
}

// Whether a panel of m rows is led by a cluster on the device.
bool led_by_cluster(int device, int m) {
  if (m <= cluster_from_rows) return false;
  int clusters = 0;
  BASALT_CUDA_CHECK(cudaDeviceGetAttribute(&clusters, cudaDevAttrClusterLaunch, device));
  return clusters != 0;
}

}  // namespace

bool getf2_by_slabs_fits(int device, int m, int w, int entry_bytes) {
  if (w > slab_width_limit) return false;
  const bool clustered = led_by_cluster(device, m);
  if (m > (clustered ? max_leaders : 1) * slab_threads * max_rows_per_thread(entry_bytes))
    return false;
  int cooperative = 0;
  BASALT_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
  return cooperative && panel_grid::multiprocessors(device) >= 2 * (clustered ? max_leaders : 1);
}

template <class T>
void getf2_by_slabs(int device, cudaStream_t stream, T* panel, int* ipiv, int* info,
                    const Getf2Problem& p) {
  if (p.m == 0 || p.w == 0) return;
  if (!getf2_by_slabs_fits(device, p.m, p.w, sizeof(T)))
    throw std::invalid_argument("basalt: cuda getf2_by_slabs: the panel exceeds the kernel's size");
  if (led_by_cluster(device, p.m)) {
    // The fewest rows a thread that let at most max_leaders blocks hold the panel.
    if (p.m <= max_leaders * 2 * slab_threads)
      return launch<T, 2, true>(device, stream, panel, ipiv, info, p, leaders_for(p.m, 2));
    if (p.m <= max_leaders * 4 * slab_threads)
      return launch<T, 4, true>(device, stream, panel, ipiv, info, p, leaders_for(p.m, 4));
    if constexpr (max_rows_per_thread(sizeof(T)) == 8)
      return launch<T, 8, true>(device, stream, panel, ipiv, info, p, leaders_for(p.m, 8));
  }
  if (p.m <= slab_threads) return launch<T, 1, false>(device, stream, panel, ipiv, info, p, 1);
  if (p.m <= 2 * slab_threads) return launch<T, 2, false>(device, stream, panel, ipiv, info, p, 1);
  if (p.m <= 4 * slab_threads) return launch<T, 4, false>(device, stream, panel, ipiv, info, p, 1);
  if constexpr (max_rows_per_thread(sizeof(T)) == 8)
    launch<T, 8, false>(device, stream, panel, ipiv, info, p, 1);
}

template void getf2_by_slabs<float>(int, cudaStream_t, float*, int*, int*, const Getf2Problem&);
template void getf2_by_slabs<double>(int, cudaStream_t, double*, int*, int*, const Getf2Problem&);
template void getf2_by_slabs<cuFloatComplex>(int, cudaStream_t, cuFloatComplex*, int*, int*,
                                             const Getf2Problem&);
template void getf2_by_slabs<cuDoubleComplex>(int, cudaStream_t, cuDoubleComplex*, int*, int*,
                                              const Getf2Problem&);

}  // namespace basalt::cuda::kernels
