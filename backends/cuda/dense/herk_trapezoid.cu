// C -= L L1^H on a lower trapezoid in real types and complex double, in one kernel: Cholesky's
// panels update the columns right of each factored block by a herk on the top block and a gemm
// below it, two cuBLAS launches whose fixed costs lie on the factorization's critical path. Here
// every thread block takes a 32 x 32 tile of C on or below the diagonal, the operands staged in
// shared memory 32 columns of L at a time, a few steps ahead by cp.async (16 bytes a copy where
// L's columns are 16-byte aligned). In real types each of its four warps takes the whole tile over
// a quarter of every step's columns of L, the partial products summed at the end (in double by
// tensor cores, mma.cuh, in single by multiply-adds); in complex double, whose whole tile would
// hold 64 sums a lane, each warp takes a quarter of the tile's columns over every column of L
// (by tensor cores, four real products). Small tiles and short chains suit the narrow updates the
// kernel is for: they spread over the whole GPU and each block finishes after one round trip to L2
// or two.
#include <cstdint>

#include "basalt/backends/cuda/dense/herk_trapezoid_launch.hpp"
#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/mma.cuh"
#include "basalt/backends/cuda/scalar_ops.cuh"

namespace basalt::cuda::kernels {

namespace {

constexpr int k_step = 32;

constexpr int tile = 32;
constexpr int warps = 4;
constexpr int threads = warps * 32;
constexpr int part = k_step / warps;  // the columns of L a warp takes of each step
// Column stride of a staged operand, 4 (mod 16): the 16 lanes of a wavefront reading rows g + 8i
// of columns k + s (mma.cuh's layout) hit distinct banks.
constexpr int staged_ld = tile + 4;
constexpr int staged_entries = staged_ld * k_step;
// Steps staged ahead: 128 columns of L, a panel's narrowest update, in one round trip; complex
// double takes two, in the same 72 KiB as double's four.
template <class T>
constexpr int stages = sizeof(T) > 8 ? 2 : 4;
// The entries staged at once: both operands, every stage.
template <class T>
constexpr int staged_total = 2 * stages<T>* staged_entries;
template <class T>
constexpr std::size_t shared_bytes = staged_total<T> * sizeof(T);
// Entries of each operand a thread stages a step, and of C it reads and writes.
constexpr int copies = tile * k_step / threads;
constexpr int c_entries = tile * tile / threads;
static_assert(warps * tile * tile <= staged_total<float>, "partial sums fit the stages");

// A warp's share of a tile's product, sum -= X Y^T over `depth` staged columns, by multiply-adds:
// lane (g, h) = (lane % 8, lane / 8) holds rows g + 8q and columns h + 4p, so that per column it
// loads 4 + 8 values for 32 multiply-adds, and lanes that load the same value share the load.
template <class T>
struct WarpProduct {
  static constexpr int partials = warps;  // products per tile, summed at the end
  T sum[4][8];

  __device__ WarpProduct() {
#pragma unroll
    for (int q = 0; q < 4; ++q)
#pragma unroll
      for (int p = 0; p < 8; ++p) sum[q][p] = 0;
  }

  template <int depth>
  __device__ void subtract(const T* x, const T* y, int ld) {
    const int lane = threadIdx.x % 32, g = lane % 8, h = lane / 8;
#pragma unroll
    for (int l = 0; l < depth; ++l) {
      T left[4], right[8];
#pragma unroll
      for (int q = 0; q < 4; ++q) left[q] = x[g + 8 * q + l * ld];
#pragma unroll
      for (int p = 0; p < 8; ++p) right[p] = y[h + 4 * p + l * ld];
#pragma unroll
      for (int q = 0; q < 4; ++q)
#pragma unroll
        for (int p = 0; p < 8; ++p) sum[q][p] -= left[q] * right[p];
    }
  }

  // f(value, row, column) for each of the lane's entries.
  template <class F>
  __device__ void for_each_entry(F&& f) {
    const int lane = threadIdx.x % 32, g = lane % 8, h = lane / 8;
#pragma unroll
    for (int q = 0; q < 4; ++q)
#pragma unroll
      for (int p = 0; p < 8; ++p) f(sum[q][p], g + 8 * q, h + 4 * p);
  }
};

#ifdef BASALT_CUDA_DOUBLE_MMA
// Double by tensor cores.
template <>
struct WarpProduct<double> {
  static constexpr int partials = warps;
  double sum[4][4][2] = {};

  template <int depth>
  __device__ void subtract(const double* x, const double* y, int ld) {
    mma::subtract_product_32x32<depth>(sum, x, y, ld);
  }

  template <class F>
  __device__ void for_each_entry(F&& f) {
    mma::for_each_entry(sum, f);
  }
};

// Complex double by tensor cores: the warp's quarter of the tile's columns.
template <>
struct WarpProduct<cuDoubleComplex> {
  static constexpr int partials = 1;
  static constexpr int columns = tile / warps;
  double real[4][2] = {}, imag[4][2] = {};

  __device__ void subtract(const cuDoubleComplex* x, const cuDoubleComplex* y, int ld) {
    mma::subtract_conjugate_product_32x8(real, imag, x, y + columns * (threadIdx.x / 32), ld);
  }

  template <class F>
  __device__ void for_each_entry(F&& f) {
    const int lane = threadIdx.x % 32, g = lane / 4, s = lane % 4;
    const int first_column = columns * (threadIdx.x / 32) + 2 * s;
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int e = 0; e < 2; ++e)
        f(make_cuDoubleComplex(real[i][e], imag[i][e]), 8 * i + g, first_column + e);
  }
};
#endif

// The warp's share of a staged step: a quarter of the step's columns of L where the warps' partial
// products are summed at the end, else all of them (the product then takes its own columns of C).
template <class T>
__device__ void subtract_step(WarpProduct<T>& product, const T* x, const T* y) {
  if constexpr (WarpProduct<T>::partials == warps) {
    const int offset = threadIdx.x / 32 * part * staged_ld;
    product.template subtract<part>(x + offset, y + offset, staged_ld);
  } else {
    product.subtract(x, y, staged_ld);
  }
}

// A copy of one entry to shared memory that bypasses the registers; zeros where valid is false
// (nothing read from src then).
template <class T>
__device__ inline void copy_async(T* dst, const T* src, bool valid) {
  const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(address), "l"(src),
               "n"(sizeof(T)), "r"(valid ? int(sizeof(T)) : 0));
}

// A thread's share of one operand's staging: rows first_row.. of L. Lower (rows contiguous), a
// row and every fourth column of each step; upper, a column and every fourth row.
template <class T>
struct Operand {
  const T* next;                  // the thread's first entry of the next step
  int row, column;                // of that entry, in L
  int row_offset, column_offset;  // between the thread's entries of a step
  std::int64_t entry_offset;
  int staged_first, staged_offset;

  __device__ Operand(const TrapezoidProblem<T>& p, int first_row) {
    const bool rows_contiguous = p.l_row_stride == 1;
    const int t = threadIdx.x;
    const int r = rows_contiguous ? t % tile : t / tile, kk = rows_contiguous ? t / tile : t % tile;
    row = first_row + r;
    column = kk;
    row_offset = rows_contiguous ? 0 : warps;
    column_offset = rows_contiguous ? warps : 0;
    entry_offset = row_offset * p.l_row_stride + column_offset * p.l_k_stride;
    next = p.l + std::int64_t(row) * p.l_row_stride + std::int64_t(kk) * p.l_k_stride;
    staged_first = r + kk * staged_ld;
    staged_offset = row_offset + column_offset * staged_ld;
  }

  // The next k_step columns to staged (zeros past L's end).
  __device__ void stage(T* staged, const TrapezoidProblem<T>& p) {
#pragma unroll
    for (int c = 0; c < copies; ++c) {
      const bool inside = row + c * row_offset < p.m && column + c * column_offset < p.k;
      copy_async(staged + staged_first + c * staged_offset, inside ? next + c * entry_offset : p.l,
                 inside);
    }
    next += k_step * p.l_k_stride;
    column += k_step;
  }
};

// A 16-byte copy to shared memory that bypasses L1: bytes (a multiple of the entry's size, up to
// 16) read from src, zeros for the rest.
template <class T>
__device__ inline void copy_vector_async(T* dst, const T* src, int bytes) {
  const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(address), "l"(src),
               "r"(bytes));
}

// Operand's staging for a lower L whose columns start 16-byte aligned, 16 bytes a copy: a thread
// copies `per_copy` consecutive rows of every few columns of each step.
template <class T>
struct VectorOperand {
  static constexpr int per_copy = 16 / sizeof(T);
  static constexpr int row_groups = tile / per_copy;
  static constexpr int column_offset = threads / row_groups;
  const T* next;    // the thread's first vector of the next step
  int row, column;  // of that vector, in L
  int staged_first;

  __device__ VectorOperand(const TrapezoidProblem<T>& p, int first_row) {
    const int q = threadIdx.x % row_groups, kk = threadIdx.x / row_groups;
    row = first_row + per_copy * q;
    column = kk;
    next = p.l + row + std::int64_t(kk) * p.l_k_stride;
    staged_first = per_copy * q + kk * staged_ld;
  }

  __device__ void stage(T* staged, const TrapezoidProblem<T>& p) {
#pragma unroll
    for (int c = 0; c < k_step / column_offset; ++c) {
      const int rows = column + c * column_offset < p.k ? min(per_copy, max(0, p.m - row)) : 0;
      copy_vector_async(staged + staged_first + c * column_offset * staged_ld,
                        rows > 0 ? next + c * column_offset * p.l_k_stride : p.l,
                        int(sizeof(T)) * rows);
    }
    next += k_step * p.l_k_stride;
    column += k_step;
  }
};

// Entry q of a thread's share of C, in the tile: consecutive threads along C's contiguous side.
__device__ inline void c_entry(bool rows_contiguous, int q, int& r, int& column) {
  const int e = threadIdx.x + q * threads;
  r = rows_contiguous ? e % tile : e / tile;
  column = rows_contiguous ? e / tile : e % tile;
}

template <class T, class Staging>
__global__ void __launch_bounds__(threads) herk_trapezoid_kernel(TrapezoidProblem<T> p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  __trap();  // no cp.async; never launched there (herk_trapezoid_available)
#else
  const int tile_row = blockIdx.x, tile_column = blockIdx.y;
  if (tile_row < tile_column) return;  // above the diagonal
  extern __shared__ __align__(16) unsigned char shared[];
  // Stage s holds the rows' operand at staged + 2 s staged_entries, the columns' after it.
  T* staged = reinterpret_cast<T*>(shared);
  // The tile's entries of C, read now so that their latency hides behind the products.
  const bool c_rows_contiguous = p.c_row_stride == 1;
  T c[c_entries];
  bool inside[c_entries];
#pragma unroll
  for (int q = 0; q < c_entries; ++q) {
    int r, col;
    c_entry(c_rows_contiguous, q, r, col);
    const int row = tile_row * tile + r, column = tile_column * tile + col;
    inside[q] = row < p.m && column < p.n && row >= column;
    c[q] = inside[q]
               ? p.c[std::int64_t(row) * p.c_row_stride + std::int64_t(column) * p.c_column_stride]
               : ops::make_scalar<T>(0);
  }
  Staging rows(p, tile_row * tile), columns(p, tile_column * tile);
  WarpProduct<T> product;
  const int steps = (p.k + k_step - 1) / k_step;
  // Every group committed, empty ones included, so that wait_group counts steps.
  constexpr int stages = kernels::stages<T>;
#pragma unroll
  for (int step = 0; step < stages - 1; ++step) {
    if (step < steps) {
      rows.stage(staged + 2 * step * staged_entries, p);
      columns.stage(staged + (2 * step + 1) * staged_entries, p);
    }
    asm volatile("cp.async.commit_group;\n" ::);
  }
  for (int step = 0; step < steps; ++step) {
    const int ahead = step + stages - 1;
    if (ahead < steps) {
      rows.stage(staged + 2 * (ahead % stages) * staged_entries, p);
      columns.stage(staged + (2 * (ahead % stages) + 1) * staged_entries, p);
    }
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group %0;\n" ::"n"(stages - 1));
    __syncthreads();
    const T* x = staged + 2 * (step % stages) * staged_entries;
    subtract_step(product, x, x + staged_entries);
    __syncthreads();  // before the stage is overwritten
  }
  // The warps' products (partial sums, in real types) through the staging buffers.
  constexpr int partials = WarpProduct<T>::partials;
  T* partial = staged + (partials > 1 ? threadIdx.x / 32 : 0) * tile * tile;
  product.for_each_entry([&](T value, int r, int c) { partial[r + c * tile] = value; });
  __syncthreads();
#pragma unroll
  for (int q = 0; q < c_entries; ++q) {
    if (!inside[q]) continue;
    int r, col;
    c_entry(c_rows_contiguous, q, r, col);
    T update = c[q];
#pragma unroll
    for (int w = 0; w < partials; ++w)
      update = ops::add(update, staged[w * tile * tile + r + col * tile]);
    const int row = tile_row * tile + r, column = tile_column * tile + col;
    // herk's diagonal is real: its imaginary part set to zero, as BLAS does.
    if (row == column) update = ops::make_scalar<T>(ops::real_part(update));
    p.c[std::int64_t(row) * p.c_row_stride + std::int64_t(column) * p.c_column_stride] = update;
  }
#endif
}

}  // namespace

bool herk_trapezoid_available(int device) {
  int major = 0;
  BASALT_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  return major >= 8;
}

template <class T>
void herk_trapezoid(cudaStream_t stream, const TrapezoidProblem<T>& p) {
  if (p.m == 0 || p.n == 0 || p.k == 0) return;
  // 16-byte copies where L's columns allow them (potrf d on an H200, three rounds: 4096
  // 1.99-2.02 -> 1.92-1.99 ms, 3072 1.31-1.34 -> 1.28-1.30; ptxas 146 -> 128 registers).
  const bool vectors = p.l_row_stride == 1 && p.l_k_stride % VectorOperand<T>::per_copy == 0 &&
                       reinterpret_cast<std::uintptr_t>(p.l) % 16 == 0;
  const auto kernel =
      vectors ? herk_trapezoid_kernel<T, VectorOperand<T>> : herk_trapezoid_kernel<T, Operand<T>>;
  BASALT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         int(shared_bytes<T>)));
  const dim3 grid((p.m + tile - 1) / tile, (p.n + tile - 1) / tile);
  kernel<<<grid, threads, shared_bytes<T>, stream>>>(p);
  BASALT_CUDA_CHECK_LAUNCH();
}

#define BASALT_INSTANTIATE(T) \
  template void herk_trapezoid<T>(cudaStream_t, const TrapezoidProblem<T>&);
BASALT_INSTANTIATE(float)
BASALT_INSTANTIATE(double)
BASALT_INSTANTIATE(cuDoubleComplex)
#undef BASALT_INSTANTIATE

}  // namespace basalt::cuda::kernels
