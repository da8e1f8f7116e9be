#pragma once
// Launchers of the CUDA batched LU (seed 001). No Kokkos: the .cu files include this.
//
// Small matrices (getrf_batched.cu, the whole matrix kept on chip): one warp segment per matrix (4,
// 8, 16 or 32 lanes: as many matrices per warp as fit), one row per lane, the row in registers: the
// pivot search is a segment reduction, the broadcast of the pivot row is shuffles, interchanges
// only relabel rows, and scaling and rank-1 update run on registers. No shared memory, so as many
// warps as registers allow share an SM. Matrices up to max_rows x max_columns.
//
// Larger matrices, up to block_max_size rows and columns (getrf_batched_block.cu): one thread
// block per matrix, one row per thread, blocked by 32-column panels held in registers; the
// trailing columns go through registers in chunks, the other factor's chunk in shared memory
// (a few KB, so several blocks share an SM).
#include <cuda_runtime.h>

#include <cstdint>

namespace basalt::cuda::kernels {

inline constexpr int getrf_batched_max_rows = 32;
inline constexpr int getrf_batched_max_columns = 32;
inline constexpr int getrf_batched_block_max_size = 512;

// Where matrix b of a batch lies: fixed (every matrix rows x cols at data + b * batch_stride)
// or variable (sizes, leading dimensions and offsets per matrix, device arrays). Pivot and
// info vectors use the same description, with one column. `order`, where not null (variable
// batches, VariableBatch::most_rows_first), is the order in which a launch takes the matrices: slot
// s of it works on matrix order[s].
template <class T>
struct DeviceBatch {
  T* data = nullptr;
  bool variable = false;
  int rows = 0, cols = 0;
  std::int64_t row_stride = 1, col_stride = 1, batch_stride = 0;
  const int* var_rows = nullptr;
  const int* var_cols = nullptr;
  const int* var_ld = nullptr;
  const std::int64_t* var_offset = nullptr;
  const int* order = nullptr;
};

// A variable batch's launch classes of small matrices in one launch: entry e holds count[e]
// matrices of at most size[e] rows and columns, slots first_slot[e] on of the batch's order. The
// launcher gives each entry its blocks and, as size[e], its own size class where own_codes, else
// the largest size class among the entries of its segment width (which then run one code).
struct WarpClasses {
  static constexpr int most = 8;
  int entries = 0;
  int size[most] = {}, count[most] = {}, first_slot[most] = {};
  int first_block[most + 1] = {};
  bool own_codes = false;
};

// LU with partial pivoting of `count` matrices of at most max_rows x max_columns (largest: the
// most rows or columns of any of them). ipiv: 1-based pivots; info(b) = info[b * info_stride],
// LAPACK's.
// Asynchronous on stream.
template <class T>
void getrf_batched_small(cudaStream_t stream, const DeviceBatch<T>& A, const DeviceBatch<int>& ipiv,
                         int* info, std::int64_t info_stride, int count, int largest);

// The same for the matrices of every entry of `classes` at once (A variable, its order set).
template <class T>
void getrf_batched_small_classes(cudaStream_t stream, const DeviceBatch<T>& A,
                                 const DeviceBatch<int>& ipiv, int* info, std::int64_t info_stride,
                                 WarpClasses classes);

// The matrices of up to `largest` rows and columns that one multiprocessor keeps resident under
// getrf_batched_small's kernel.
template <class T>
int getrf_batched_small_resident_matrices(int largest);

// The same for matrices of at most block_max_size rows and columns (rows: the most rows of any).
template <class T>
void getrf_batched_block(cudaStream_t stream, const DeviceBatch<T>& A, const DeviceBatch<int>& ipiv,
                         int* info, std::int64_t info_stride, int count, int rows);

}  // namespace basalt::cuda::kernels
