#pragma once
// The grid of the fused panel kernels (getf2.cu, geqr2.cu): the panel's rows split among
// blocks, at most one per multiprocessor and every one resident, each holding its rows and one
// more row of the panel's width in dynamic shared memory beside `static_bytes` of static shared
// memory. No Kokkos: the .cu files include this.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/side_streams.hpp"

namespace basalt::cuda::kernels::panel_grid {

constexpr int panel_threads = 256;
constexpr int panel_warps = panel_threads / 32;
// Fewer rows than this per block and the barrier costs more than the rows' work saves.
constexpr int min_rows_per_block = 64;

inline int multiprocessors(int device) {
  int sms = 0;
  BASALT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

// The most rows of w entries of entry_bytes one block holds.
inline int rows_that_fit(int device, int w, int entry_bytes, int static_bytes) {
  int bytes = 0;
  BASALT_CUDA_CHECK(
      cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return int(std::size_t(bytes - static_bytes) / (std::size_t(w) * entry_bytes)) - 1;
}

// The tallest panel of w columns the grid holds on the device; 0 where the device has no
// cooperative launch.
inline int height_limit(int device, int w, int entry_bytes, int static_bytes) {
  int cooperative = 0;
  BASALT_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
  if (!cooperative || w <= 0) return 0;
  const int rows = rows_that_fit(device, w, entry_bytes, static_bytes);
  return rows < 1 ? 0 : rows * multiprocessors(device);
}

struct Grid {
  int blocks = 0, rows_per_block = 0;
  std::size_t shared_bytes = 0;  // dynamic, per block
};

// Blocks of min_rows rows or more (fewer, and the barrier costs more than the rows' work
// saves), at most one per multiprocessor. On the look-ahead stream, where the panel runs beside
// the trailing update, at most a quarter of the multiprocessors, and at most 32, where the rows
// fit in that many blocks: on the H100 (132 SMs, d, getrf 8192 / 16384) bounds of 16 / 24 / 32 /
// 48 blocks gave 55.9 / 53.1 / 51.3 / 53.6 and 149.1 / 145.6 / 144.4 / 157.3 ms, no bound 51.9
// and 152.1 ms; with 32 rather than 33 (a quarter of 132) the LU panel's warps read every
// block's candidate without a block barrier (getrf 6144 / 10240 / 14336: 36.7 / 75.2 / 122.9 ->
// 34.9 / 71.2 / 117.6 ms). rows must be within height_limit.
inline Grid plan(int device, cudaStream_t stream, int rows, int w, int entry_bytes,
                 int static_bytes, int min_rows) {
  const int sms = multiprocessors(device);
  const int most = is_look_ahead(device, stream) ? std::clamp(sms / 4, 1, 32) : sms;
  const int wanted = std::min(most, (rows + min_rows - 1) / min_rows);
  Grid grid;
  grid.rows_per_block =
      std::min((rows + wanted - 1) / wanted, rows_that_fit(device, w, entry_bytes, static_bytes));
  grid.blocks = (rows + grid.rows_per_block - 1) / grid.rows_per_block;
  grid.shared_bytes = (std::size_t(grid.rows_per_block) + 1) * w * entry_bytes;
  return grid;
}

// Gives kernel the grid's shared memory and checks that all its blocks can be resident at once,
// as the grid barrier needs.
template <class Kernel>
void make_resident(Kernel kernel, int threads, const Grid& grid, int device) {
  BASALT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         int(grid.shared_bytes)));
  int per_sm = 0;
  BASALT_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, grid.shared_bytes));
  if (per_sm * multiprocessors(device) < grid.blocks)
    BASALT_CUDA_CHECK(cudaErrorCooperativeLaunchTooLarge);
}

}  // namespace basalt::cuda::kernels::panel_grid
