#pragma once
// Tuning tables, read by the drivers rather than literals inside them (after MAGMA's get_nb).
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <limits>
#include <type_traits>

namespace basalt::tuning {

// An execution space whose memory the host cannot reach is taken for a GPU.
template <class ExecSpace>
inline constexpr bool is_gpu_v =
    !Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible;

struct Lu {
  int block;            // nb: columns of the outer blocked loop
  int recursion_width;  // the recursive panel stops halving at this width
  int team_panel_rows;  // getf2 runs as one team up to this height, a kernel per step above
  // Each block's interchanges reach the columns left of it at the end, a block column at a time,
  // instead of right after its panel: a column then takes all its later swaps while it is in
  // cache, rather than being fetched again for each block.
  bool defer_left_interchanges;
};

// Outer blocks wide enough for gemm to run near its peak (seed 000, section 6.2: nb >= 256 in
// double on a GPU); on a CPU, OpenBLAS' gemm peaks with narrower blocks. A GPU factors its
// leaves with the backend's fused kernel (or three kernels per column); a CPU with one team,
// whose per-column steps cost no parallel launches. On the H100 (d, basalt-perf --routine getrf
// --nb --recursion-width, 2026-11-23):
// - 128-column leaves beat 64 at every n from 2048 to 16384 (fewer interchange, trsm and gemm
//   calls inside the panel; 8192: 51.3 -> 50.2 ms at nb = 512);
// - nb = 128 (the panel one leaf) beat 256 up to 8192 (2048 / 4096 / 8192: 7.43 / 17.1 / 42.8
//   against 7.74 / 17.5 / 43.5 ms), 256 beat 128 and 512 at 10240 (59.6 against 62.6 and
//   61.2 ms), and 512 won above (16384: 131.2 against 138.0 ms; complex double 12288: 154.4
//   against 175.0 ms at 256).
// With the panel led by a cluster (2026-11-26, tenth session; two rounds), nb = 256 beat 128
// from 7168 to 10240 (d 7168 / 8192 / 9216: 22.0-22.2 / 27.2 / 33.8-33.9 against 22.7-22.9 /
// 28.9-29.1 / 37.4-37.6 ms; z at 8192 58.0 against 62.4); at 6144 they were within 1% in
// double, and 128 was 6% ahead in single.
// On a CPU the interchanges left of each block wait for the end (2 cores, d, getrf 3000: laswp
// 29 -> 18 ms of about 280); a GPU applies them on its stream while the next panel is factored.
// Leaf rows stay within 1 KB (complex double: 64 columns), and leaves at 64 columns above 16384
// rows, where the fused kernel's height (on the H100 about 220 rows of 1 KB per block) would
// otherwise send the first panels to the kernels per column.
// Complex types below 4096 take nb = 64 with 64-column leaves (H100, 2026-11-27, two rounds,
// ms at 1024 / 2048 / 3072 against the 128 x 128 and 128 x 64 tuning above): c 2.68-2.69 /
// 5.33-5.37 / 8.51-8.55 against 3.19-3.25 / 5.83-5.85 / 8.97-9.04, z 3.14-3.15 / 6.93-6.94 /
// 11.21 against 3.33-3.36 / 7.29 / 11.75-11.80; at 4096 the tuning above wins (c 12.94-13.00
// against 13.16-13.22). Real types with them were slower from 2048 (d 3072: 7.00-7.07 against
// 6.59-6.63).
template <class ExecSpace, class T>
Lu lu(int n) {
  if constexpr (is_gpu_v<ExecSpace>) {
    if (!std::is_floating_point_v<T> && n < 4096) return {64, 64, 0, false};
    const int leaf = n <= 16384 ? std::min<int>(128, 1024 / sizeof(T)) : 64;
    return {n <= 6144 ? 128 : n <= 10240 ? 256 : 512, leaf, 0, false};
  } else {
    return {128, 16, std::numeric_limits<int>::max(), true};
  }
}

// Columns one thread of the portable laswp interchanges together. A CPU thread that takes
// several columns at once has that many independent cache misses in flight for each random pivot
// row (2 cores, d, getrf-like blocks of 128 interchanges on a cold 3000 x 3000 matrix: 51 ms one
// column at a time, 28-34 ms for 4 to 64); a GPU wants a thread per column.
template <class ExecSpace>
int laswp_columns_per_thread() {
  if constexpr (is_gpu_v<ExecSpace>)
    return 1;
  else
    return 16;
}

struct Cholesky {
  int block;            // nb: columns of the outer blocked loop
  int panel_width;      // a panel (diagonal block and rows below) stops halving at this width
  int recursion_width;  // a leaf panel's diagonal block stops halving at this width
  // A panel of at most this many rows, from its diagonal down, goes leaf by leaf instead of
  // halving: each leaf's update of the next leaf's columns, then the next leaf, while its update
  // of the panel's later columns runs beside them.
  int leaf_look_ahead_rows;
};

// As lu(), for the same reason (herk and trsm near gemm's peak need wide blocks on a GPU). The
// GPU leaf is today's MAGMA's 128 columns. On the H100 (d, basalt-perf --routine potrf --nb
// --recursion-width) nb = 512 with 128-column leaves ran 1-6% above 64- and 32-column leaves at
// n = 2048 to 16384; nb = 256 lost 20-30% from 6144 up, nb = 1024 a few percent. With herk's
// leaves at 8192 (H200, d, two rounds), nb = 1024 against 512: 8192 7.10-7.16 against 7.21 ms,
// 12288 17.3-17.6 / 17.7-17.9, 16384 35.7-36.4 / 37.5-37.9, 20480 66.8 / 70.9-71.3, 30000
// 201.5-202.7 / 216.3-217.2; z 16384 126.8 / 146.0, s 40.2 / 41.3. On a GPU the panel halves
// down to the leaf, which the CUDA kernel factors with its rows below in one launch; on a CPU the
// panel is one leaf, whose wide trsm OpenBLAS runs well. In complex double that kernel holds a
// 128-column leaf with rows below in 234 KB of shared memory, more than a block may have, so such
// a leaf fell back to potf2 and cuBLAS' trsm; 64-column leaves (H100, z, two rounds) took potrf
// at 1024 / 2048 / 4096 / 8192 from 1.29 / 2.67-2.73 / 6.77-6.78 / 23.3-23.5 ms to 1.04-1.05 /
// 2.24-2.27 / 5.89-5.90 / 21.9 (8192: 1.04x -> 1.11x of cuSOLVER). The leaf kernel's whole-tile
// loads are built for these two widths only (backends/cuda/dense/potf2.cu, with_whole_width):
// another leaf width falls back to its tile-by-tile loop.
//
// Single precision's updates cost half of double's, so its nb stays narrower longer (H100,
// 2026-11-27, `--nb 256|512|1024`, two rounds, ms): s 8192 / 12288 at 7.15 / 18.4 with 512
// against 7.45-7.50 / 19.2-19.4 with 1024, 16384 39.1-39.3 against 38.8; complex single 1024 ...
// 4096 at 0.74 / 1.66-1.69 / 2.86-2.92 / 4.66-4.68 with 256 against 0.78-0.79 / 1.77-1.84 /
// 3.05-3.09 / 4.89-4.92 with 512 (its trapezoid updates inside a panel are cuBLAS' herk and
// gemm, so fewer of them pay), 8192 19.7 with 256 or 512 against 20.4-20.5 with 1024, 12288
// 55.0-55.2 with 512 or 1024, 16384 120.5-120.6 with 1024 against 121.6-121.8.
// With the call recorded and replayed (recorded_call.hpp; H100, two rounds, ms, 512 against
// 1024), d 5120 2.706-2.710 / 2.697-2.710, 6144 3.710-3.736 / 3.656-3.714, 7168 5.041-5.057 /
// 4.879-4.882; z 5120 6.84-6.87 / 6.80-6.85, 6144 10.04-10.10 / 9.82-9.88, 7168 14.49-14.51 /
// 13.99-14.05.
//
// Leaf by leaf below n = 6144 and up to 4096 rows, the rows to which the CUDA trapezoid kernel
// takes the leaves' updates (taller ones go to cuBLAS, whose long-lived blocks hold SMs that the
// next leaf waits for). Against halving in the same calls (H100, ms): d 3072 / 4096 1.164-1.187 /
// 1.786-1.803 against 1.177-1.202 / 1.822-1.848 (six rounds), s 4096 1.731-1.742 against
// 1.760-1.772, z 2048 / 3072 1.443-1.466 / 2.623-2.636 against 1.475-1.493 / 2.661-2.687; H200, d
// 3072 / 4096 1.150 / 1.741-1.766 against 1.173-1.180 / 1.797-1.801; c the same (its panels are two
// leaves). From 6144 (nb = 1024, eight leaves a panel) it lost: H200, d 8192 6.96 against 6.72, z
// 6144 / 8192 9.85 / 19.24 against 9.78 / 18.98 (perf/NOTES.md, "potrf leaf by leaf").
template <class ExecSpace, class T>
Cholesky cholesky(int n) {
  if constexpr (is_gpu_v<ExecSpace>) {
    const int leaf = sizeof(T) > 8 ? 64 : 128, leaf_look_ahead_rows = n < 6144 ? 4096 : 0;
    int block = n < 6144 ? 512 : 1024;
    if constexpr (std::is_same_v<T, float>)
      block = n < 16384 ? 512 : 1024;
    else if constexpr (std::is_same_v<T, Kokkos::complex<float>>)
      block = n < 8192 ? 256 : n < 16384 ? 512 : 1024;
    return {block, leaf, leaf, leaf_look_ahead_rows};
  } else
    return {128, 128, 16, 0};
}

// potrf is recorded and replayed where the backend can (core/recorded_call.hpp) below this order.
// A replay of the call's chain of kernels (H100, d, against the same call queued, two rounds)
// took 1024 / 2048 / 3072 / 4096 from 0.346 / 0.753-0.757 / 1.240-1.251 / 1.893-1.904 ms to
// 0.319-0.320 / 0.714-0.715 / 1.172-1.187 / 1.813-1.847, 6144 / 7168 (nb = 1024) from 3.84 /
// 5.01-5.09 to 3.67 / 4.84-4.87; 8192 ran at 6.71 either way (perf/NOTES.md, "potrf as a
// recorded call").
inline constexpr int cholesky_recorded_below = 8192;

// The widest triangle a trsm hands to the vendor (cuBLAS, OpenBLAS); a wider one is split into
// half-width solves and a gemm. On the H100 cuBLAS' trsm on a 512-wide triangle ran several times
// below its gemm; OpenBLAS' trsm blocks well by itself.
template <class ExecSpace>
int trsm_leaf_width() {
  if constexpr (is_gpu_v<ExecSpace>)
    return 128;
  else
    return std::numeric_limits<int>::max();
}

// The widest diagonal block herk hands to a backend's herk; wider ones split into gemms. On the
// H100 cuBLAS' herk on potrf's whole trailing matrix ran at about 36 Tflop/s in double, its gemm
// far above. Too narrow a leaf costs too: many small gemms and herks at the split's deepest levels.
// H200, d, potrf 16384 with leaves of 512 / 1024 / 2048 / 4096 / no split: 59.6 / 40.3-40.5 /
// 39.1 / 38.0-38.2 / 40.7-40.8 ms; with the capped leaf panel (potf2.cu), 4096 / 8192 at 18432:
// 52.2-52.4 / 52.6-52.7 ms, at 30000: 223 / 214 ms. 1024 -> 8192 (with the cap): d 16384
// 40.7-41.1 -> 37.6-37.7 ms, s 58.3 -> 41.3, z 136.0 -> 137.6 (z 8192: 24.6 -> 25.9). A host
// BLAS's herk blocks well by itself (2 cores, potrf's updates at n = 2000: 39 ms as one dsyrk per
// block, 52 ms split into gemms).
template <class ExecSpace>
int herk_leaf_width() {
  if constexpr (is_gpu_v<ExecSpace>)
    return 8192;
  else
    return std::numeric_limits<int>::max();
}

// The portable herk's leaf, which computes its whole block by gemm into a workspace (twice the
// flops of its triangle), so it stays narrow.
inline constexpr int portable_herk_leaf_width = 128;

// For a factorization of k reflectors (min(m, n)); only geqrf's nb depends on k.
struct Qr {
  int factor_block;       // nb of geqrf's outer loop
  int block;              // reflectors per block of ormqr and orgqr
  int recursion_width;    // the recursive panel (and T) stops halving at this width
  int team_panel_rows;    // geqr2 runs as one team up to this height, other paths above
  int tall_skinny_ratio;  // m >= ratio n (n <= block) tries Cholesky QR first; 0: never
};

// Householder QR: the trailing update and ormqr are gemms and trmms of width nb, so the GPU
// wants nb near getrf's; inside the panel, each halving turns rank-1 updates into gemms, which
// a GPU prefers from 32 columns up. On the H100 (d, n = 4096 to 16384) one team for panels up
// to 8192 rows ran at 0.04x to 0.11x of cuSOLVER, a kernel per step above 256 rows at 0.14x to
// 0.32x (0 and 1024 rows within 10% of that): the step kernels' launches now bound it. Since
// then, on CUDA, panels above team_panel_rows go to one fused kernel (a grid barrier per
// column, backends/cuda/dense/geqr2.hpp) within its height limit, the kernel per step only
// above it. On a CPU one team of the OpenMP threads beat a kernel per step at every height
// measured (2 cores, 4000 to 100000 rows x 64: 1.9x to 3.1x), so it always takes the team. With
// the fused kernel, 16-column leaves beat 32 by 4% at n = 4096 and 8192 on the H100 (nb 128 and
// 512 within 5% of 256; 64-column leaves 12-17% slower); once the kernel factored its panels by
// Cholesky QR (two grid barriers a panel), 16 and 32 came within 4% of each other at n = 4096 to
// 8192 and 16 was 9% ahead at 2048, so 16 stays. Since the kernel takes a whole nb-wide panel
// (its 16-column leaves and their updates in one launch), geqrf's nb of 128 beats 256 by 5-9%
// from 2048 to 12288 and trails it by 4% at 16384 (H200, d; 96 and 192 ahead of 128 by up to 4%
// at some sizes, behind at others), while ormqr keeps 256 (128 ran 15-18% slower from 4096 to
// 16384). With the whole block in the kernel, its panels of 256 rows and fewer beat one team
// (all geqrf's panels there: 1024 / 2048 / 4096 at 3.92 / 7.42 / 16.03 ms against 5.22 / 8.71
// / 17.38 with the team up to 256 rows, up to 64 or 128 rows in between; H200, d), and nb 64
// beats 128 up to k = 2048 (1024 / 1536 / 2048 at 3.34-3.35 / 4.92-4.99 / 7.21 ms against
// 3.46-3.49 / 5.13-5.14 / 7.32-7.42; 48 and 96 no better than 64), 128 beats 64 above (3072 / 4096:
// 11.34 / 16.03 against 11.47 / 16.73). A matrix at least 16 times taller than wide, and no wider
// than ormqr's block, goes to Cholesky QR (qr_tall_skinny.hpp), whose passes over the rows are all
// gemms.
template <class ExecSpace>
Qr qr(int k) {
  if constexpr (is_gpu_v<ExecSpace>)
    return {k <= 2048 ? 64 : 128, 256, 16, 0, 16};
  else
    return {64, 64, 8, std::numeric_limits<int>::max(), 16};
}

// qr's tuning for k reflectors applied to a C of `columns` columns (rows, applied from the right):
// building a block's T costs about m ib^2, applying the block 4 m ib a column of C, so on a CPU
// few columns want narrow blocks (2 cores, z, 500 x 500, ms at ib = 16 / 32 / 64: one column
// 0.94-1.00 / 1.05-1.10 / 1.72-1.75, LAPACKE 1.09-1.14; 32 columns 2.41 / 2.01 / 2.48; 128 columns
// 5.13 / 4.03 / 4.19, d 2.44 / 1.79 / 1.65). A GPU keeps qr's block: there each block's calls
// cost some 10 us whatever their size.
template <class ExecSpace>
Qr qr_applied(int k, long columns) {
  Qr tune = qr<ExecSpace>(k);
  if constexpr (!is_gpu_v<ExecSpace>)
    tune.block = columns < 32 ? 16 : columns < 128 ? 32 : tune.block;
  return tune;
}

// The portable batched kernels: one team per matrix. On a GPU a team is team_size threads of
// vector_length lanes, lanes along a column (coalesced) and threads across columns, no wider
// than the largest matrix needs; on a CPU one thread per matrix, the batch giving the
// parallelism. A matrix of at most scratch_bytes is copied into team scratch (level 0) and
// factored there.
struct BatchedTeam {
  int team_size;
  int vector_length;
  int scratch_bytes;
};

template <class ExecSpace>
BatchedTeam batched_team(int max_rows, int max_cols) {
  const int scratch = Kokkos::TeamPolicy<ExecSpace>::scratch_size_max(0);
  if constexpr (is_gpu_v<ExecSpace>) {
    int lanes = 1;
    while (lanes < 32 && lanes < max_rows) lanes *= 2;
    const int threads = std::clamp(max_cols, 1, 256 / lanes);
    return {threads, lanes, scratch};
  } else {
    return {1, 1, scratch};
  }
}

// One team for one panel (the LU and QR leaves on a CPU): a GPU's team as batched_team's; on a
// CPU every thread, since the panel is all the work there is (2 cores, d, getrf 3000: getf2
// 45 ms with one thread, 29 ms with two), but one thread for panels of at most
// single_thread_panel entries, where the team's barriers (one or more a column) cost more than
// the other threads save (2 cores: geqrf d 500 4.4-4.7 ms against 5.7-6.1, getrf d 500 3.2-3.4
// against 4.0-4.8; getrf 3000's leaves of 48000 entries 5% slower on one thread).
inline constexpr long single_thread_panel = 32768;
template <class ExecSpace>
BatchedTeam panel_team(const ExecSpace& exec, int rows, int cols) {
  BatchedTeam team = batched_team<ExecSpace>(rows, cols);
  if constexpr (!is_gpu_v<ExecSpace>)
    team.team_size = static_cast<long>(rows) * cols <= single_thread_panel ? 1 : exec.concurrency();
  return team;
}

}  // namespace basalt::tuning
