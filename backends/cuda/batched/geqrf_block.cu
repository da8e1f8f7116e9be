// CUDA batched Householder QR of matrices up to 512 x 512: one thread block per matrix, one row
// per thread, blocked over panels of 32 columns (geqrf_block_launch.hpp).
#include <cuComplex.h>

#include <algorithm>

#include "basalt/backends/cuda/batched/block_batch.cuh"
#include "basalt/backends/cuda/batched/geqrf_block_launch.hpp"
#include "basalt/backends/cuda/batched/warp_batch.cuh"
#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/scalar_ops.cuh"

namespace basalt::cuda::kernels {

namespace {

constexpr int panel_width = 32;
constexpr int max_warps = block::max_warps;
// Blocks of up to block::short_threads threads take shared memory for that many warps' sums, so
// that blocks of shorter matrices still share an SM; taller ones for max_warps.
constexpr int short_warps = block::short_threads / 32;

// Trailing columns per chunk: 8, 4 for double complex, so shared memory stays under 40 kB.
template <class T>
constexpr int chunk_width = sizeof(T) == 16 ? 4 : 8;

template <class T, int Warps>
struct Shared {
  union {
    // Panel reductions, two buffers used in turn so that one barrier per reduction
    // suffices: [buffer][warp][column] partial sums, [buffer][Warps][column] the row of the
    // current diagonal element.
    T rows[2][Warps + 1][panel_width];
    // V^H X: [warp][column of X][column of V] partial sums; [0] the total, [1] T^H W.
    T partial[Warps][chunk_width<T>][panel_width];
  };
  T t[panel_width][panel_width + 1];  // G = V^H V, then T (LAPACK's larft), padded for the banks
  T tau[panel_width];
};

__device__ inline bool finite(float x) { return isfinite(x); }
__device__ inline bool finite(double x) { return isfinite(x); }
__device__ inline bool finite(cuFloatComplex x) { return isfinite(x.x) && isfinite(x.y); }
__device__ inline bool finite(cuDoubleComplex x) { return isfinite(x.x) && isfinite(x.y); }

// The barrier of the block's first `threads` threads (a multiple of 32): the warps a matrix has
// no rows for leave at the start, so a small matrix of a variable batch costs only its own warps.
__device__ inline void sync(int threads) {
  asm volatile("bar.sync 1, %0;" ::"r"(threads) : "memory");
}

// first ? a : b through the bits: a plain select between two elements of a register array
// becomes a select between their addresses, which moves the array to local memory.
__device__ inline float pick(bool first, float a, float b) {
  const unsigned mask = 0u - static_cast<unsigned>(first);
  return __uint_as_float((__float_as_uint(a) & mask) | (__float_as_uint(b) & ~mask));
}
__device__ inline double pick(bool first, double a, double b) {
  const unsigned long long mask = 0ull - static_cast<unsigned long long>(first);
  return __longlong_as_double(
      static_cast<long long>((static_cast<unsigned long long>(__double_as_longlong(a)) & mask) |
                             (static_cast<unsigned long long>(__double_as_longlong(b)) & ~mask)));
}
__device__ inline cuFloatComplex pick(bool first, cuFloatComplex a, cuFloatComplex b) {
  return make_cuFloatComplex(pick(first, a.x, b.x), pick(first, a.y, b.y));
}
__device__ inline cuDoubleComplex pick(bool first, cuDoubleComplex a, cuDoubleComplex b) {
  return make_cuDoubleComplex(pick(first, a.x, b.x), pick(first, a.y, b.y));
}

// On lane l, the sum over the warp's lanes of v[l] (v is overwritten): each round halves the
// values a lane keeps, 31 shuffles in all instead of 32 x 5. A template per round, so that every
// index is a constant.
template <int Half, class T>
__device__ T warp_transpose_sum(T (&v)[32]) {
  const bool upper = threadIdx.x & Half;
#pragma unroll
  for (int k = 0; k < Half; ++k) {
    const T send = pick(upper, v[k], v[k + Half]);
    const T keep = pick(upper, v[k + Half], v[k]);
    v[k] = ops::add(keep, warp::shuffle_xor<32>(send, Half));
  }
  if constexpr (Half > 1)
    return warp_transpose_sum<Half / 2>(v);
  else
    return v[0];
}

template <class T>
struct ColumnSums {
  T total;       // on lane c of every warp: the block's sum of column c
  const T* row;  // the owner's row, in shared memory until the reduction after next
};

// Block-wide sums of v[c] over all threads, and the owner's `row` made visible to every thread.
// Every thread of the block calls it.
template <class T, int Warps>
__device__ ColumnSums<T> block_column_sums(T (&v)[32], bool owner, const T (&row)[32],
                                           Shared<T, Warps>& sh, int& buffer, int threads) {
  const int lane = threadIdx.x % 32, warp_index = threadIdx.x / 32, warps = threads / 32;
  sh.rows[buffer][warp_index][lane] = warp_transpose_sum<16>(v);
  if (owner)
#pragma unroll
    for (int c = 0; c < 32; ++c) sh.rows[buffer][Warps][c] = row[c];
  sync(threads);
  T total = sh.rows[buffer][0][lane];
  for (int w = 1; w < warps; ++w) total = ops::add(total, sh.rows[buffer][w][lane]);
  const ColumnSums<T> sums{total, sh.rows[buffer][Warps]};
  buffer ^= 1;
  return sums;
}

// The block-wide sum (largest = false) or largest (NaN passed over) of a real value per thread.
template <class T, class Real, int Warps>
__device__ Real block_reduce(Real v, bool largest, Shared<T, Warps>& sh, int& buffer, int threads) {
  const int warp_index = threadIdx.x / 32, warps = threads / 32;
  v = largest ? warp::segment_max<32>(v) : warp::segment_sum<32>(v);
  if (threadIdx.x % 32 == 0) sh.rows[buffer][warp_index][0] = ops::make_scalar<T>(v);
  sync(threads);
  Real result = ops::real_part(sh.rows[buffer][0][0]);
  for (int w = 1; w < warps; ++w) {
    const Real r = ops::real_part(sh.rows[buffer][w][0]);
    result = largest ? fmax(result, r) : result + r;
  }
  buffer ^= 1;
  return result;
}

// The block's V^H X for X of chunk_width columns (v: the thread's row of V, x: its row of X),
// left in sh.partial[0][column of X][column of V]. Every thread of the block calls it.
template <class T, int Warps>
__device__ void block_vh_x(const T (&v)[32], const T (&x)[chunk_width<T>], Shared<T, Warps>& sh,
                           int threads) {
  constexpr int width = chunk_width<T>;
  const int lane = threadIdx.x % 32, warp_index = threadIdx.x / 32, warps = threads / 32;
  sync(threads);  // the last readers of sh.partial (or of sh.rows, the same memory) are done
  // One column at a time (not unrolled: the scheduler would interleave the columns' 32
  // products each and spill), x[c] picked with constant indices.
#pragma unroll 1
  for (int c = 0; c < width; ++c) {
    T xc = x[0];
#pragma unroll
    for (int q = 1; q < width; ++q) xc = pick(q == c, x[q], xc);
    T products[32];
#pragma unroll
    for (int k = 0; k < 32; ++k) products[k] = ops::multiply(ops::conjugate(v[k]), xc);
    sh.partial[warp_index][c][lane] = warp_transpose_sum<16>(products);
  }
  sync(threads);
  T* total = &sh.partial[0][0][0];
  for (int e = threadIdx.x; e < width * 32; e += threads) {
    T s = total[e];
    for (int w = 1; w < warps; ++w) s = ops::add(s, (&sh.partial[w][0][0])[e]);
    total[e] = s;  // only this thread reads or writes element e here
  }
  sync(threads);
}

// panel[0] moved to the back, the rest forward.
template <class T>
__device__ void rotate(T (&panel)[32]) {
  const T first = panel[0];
#pragma unroll
  for (int c = 0; c < 31; ++c) panel[c] = panel[c + 1];
  panel[31] = first;
}

// LAPACK's geqr2 on the panel A(j0:m, j0:j0+width) held in registers (`panel`: this thread's
// row, zero outside the panel), the portable kernel's larfg: beta = -sign(re alpha)
// ||(alpha, x)||, tau = (beta - alpha) / beta, v = x / (alpha - beta), H(j)^H applied to the
// panel's later columns. tau goes to global memory and sh.tau. One block-wide reduction per
// column gives ||x||^2 and x^H A(j+1:m, c) together; where the unscaled sum of squares could
// have overflowed or underflowed (or a product overflowed, or NaN came in) the column is done
// again with the scaled norm and v^H A from the divided v.
template <class T, int Warps>
__device__ void factor_panel(T (&panel)[32], const warp::Located<T>& tau, int j0, int width, int m,
                             Shared<T, Warps>& sh, int& buffer, int threads) {
  using Real = ops::real_of_t<T>;
  const int i = threadIdx.x, lane = threadIdx.x % 32;
  // A runtime loop over the columns, the panel rotated by one after each so that the current
  // column is always panel[0]: indices known at compile time keep it in registers, and the
  // loop body is not repeated 32 times.
#pragma unroll 1
  for (int jj = 0; jj < width; ++jj) {
    const int j = j0 + jj, remaining = width - jj;  // columns j.. are panel[0..remaining)
    const bool below = i > j && i < m;              // the reflector's stored part
    const T x = below ? panel[0] : T{};
    T products[32];
#pragma unroll
    for (int c = 0; c < 32; ++c) products[c] = ops::multiply(ops::conjugate(x), panel[c]);
    ColumnSums<T> sums = block_column_sums(products, i == j, panel, sh, buffer, threads);
    const T alpha = sums.row[0];
    const Real squares = ops::real_part(warp::shuffle<32>(sums.total, 0));
    const bool products_finite =
        __all_sync(warp::full_mask, lane == 0 || lane >= remaining || finite(sums.total));
    const bool unscaled = squares >= ops::smallest_trusted_square<Real>() && isfinite(squares) &&
                          products_finite;  // the same on every thread
    Real xnorm;
    if (unscaled) {
      xnorm = sqrt(squares);
    } else {
      const Real magnitude = ops::magnitude(x);
      const Real largest = block_reduce<T>(magnitude, true, sh, buffer, threads);
      const Real scale = largest > Real(0) ? largest : Real(1);
      xnorm = scale * sqrt(block_reduce<T>(magnitude / scale * (magnitude / scale), false, sh,
                                           buffer, threads));
    }
    const Real alpha_re = ops::real_part(alpha), alpha_im = ops::imag_part(alpha);
    const bool identity = xnorm == Real(0) && alpha_im == Real(0);  // H(j) = I, tau = 0
    const Real norm = ops::norm3(alpha_re, alpha_im, xnorm);
    const Real beta = alpha_re >= Real(0) ? -norm : norm;
    const T t = identity ? T{} : ops::make_scalar<T>((beta - alpha_re) / beta, -alpha_im / beta);
    if (i == 0) {
      tau.base[j * tau.row_stride] = t;
      sh.tau[jj] = t;
    }
    if (!identity) {  // the same on every thread
      // Each entry divided, not multiplied by a reciprocal that could overflow.
      const T denominator = ops::make_scalar<T>(alpha_re - beta, alpha_im);
      const T v = below ? ops::divide(x, denominator) : T{};
      if (below) panel[0] = v;
      if (i == j) panel[0] = ops::make_scalar<T>(beta);
      // w(c) = v^H A(j:m, c) = x^H A(j+1:m, c) / conj(alpha - beta) + A(j, c).
      if (unscaled) {
        sums.total = ops::divide(sums.total, ops::conjugate(denominator));
      } else {
#pragma unroll
        for (int c = 0; c < 32; ++c) products[c] = ops::multiply(ops::conjugate(v), panel[c]);
        sums = block_column_sums(products, i == j, panel, sh, buffer, threads);
      }
      const T applied = ops::conjugate(t);
      // Every lane takes part in every shuffle; only the panel's later columns change.
#pragma unroll
      for (int c = 1; c < 32; ++c) {
        const T w = ops::add(warp::shuffle<32>(sums.total, c), sums.row[c]);
        const T scaled_w = ops::multiply(applied, w);
        if (c < remaining) {
          if (below) panel[c] = ops::minus_product(panel[c], v, scaled_w);
          if (i == j) panel[c] = ops::minus_product(panel[c], ops::make_scalar<T>(1), scaled_w);
        }
      }
    }
    rotate(panel);
  }
#pragma unroll 1
  for (int r = width; r < 32; ++r) rotate(panel);  // back to column order
}

// T of H(j0) ... H(j0 + width - 1) = I - V T V^H (LAPACK's larft, forward, columnwise) in sh.t,
// from v (this thread's row of V, unit diagonal and zeros above it included) and sh.tau.
template <class T, int Warps>
__device__ void form_t(const T (&v)[32], int width, Shared<T, Warps>& sh, int threads) {
  constexpr int chunk = chunk_width<T>;
  // Unrolled: v indexed at run time would put it in local memory.
#pragma unroll
  for (int c0 = 0; c0 < 32; c0 += chunk) {
    T columns[chunk];
#pragma unroll
    for (int c = 0; c < chunk; ++c) columns[c] = v[c0 + c];
    block_vh_x(v, columns, sh, threads);
    for (int e = threadIdx.x; e < chunk * 32; e += threads)
      sh.t[e % 32][c0 + e / 32] = sh.partial[0][e / 32][e % 32];  // G(k, c0 + c) = v_k^H v_c
  }
  sync(threads);
  if (threadIdx.x < 32) {
    // Lane r builds row r: T(r, j) = -tau(j) sum_{k=r}^{j-1} T(r, k) G(k, j), T(j, j) = tau(j).
    // Column j of G is read by every lane before any lane overwrites it.
    const int r = threadIdx.x;
    for (int j = 0; j < 32; ++j) {
      const T tj = sh.tau[j];
      T value{};
      if (j < width && !ops::is_zero(tj)) {
        if (r == j) value = tj;
        if (r < j) {
          T s{};
          for (int k = r; k < j; ++k) s = ops::add(s, ops::multiply(sh.t[r][k], sh.t[k][j]));
          value = ops::minus_product(T{}, tj, s);
        }
      }
      __syncwarp();
      sh.t[r][j] = value;
      __syncwarp();
    }
  }
  sync(threads);
}

// A = H^H A for A(j0:m, c0:c0+chunk_width), H = I - V T V^H: W = V^H C, W = T^H W, C -= V W.
template <class T, int Warps>
__device__ void apply_block_reflector(const T (&v)[32], const warp::Located<T>& a, int j0, int c0,
                                      int m, int n, Shared<T, Warps>& sh, int threads) {
  constexpr int chunk = chunk_width<T>;
  const int i = threadIdx.x;
  const bool mine = i >= j0 && i < m;
  T c[chunk];
#pragma unroll
  for (int q = 0; q < chunk; ++q)
    c[q] = mine && c0 + q < n ? a.base[i * a.row_stride + (c0 + q) * a.col_stride] : T{};
  block_vh_x(v, c, sh, threads);
  for (int e = threadIdx.x; e < chunk * 32; e += threads) {
    const int q = e / 32, k = e % 32;
    T s{};
    for (int l = 0; l <= k; ++l)
      s = ops::add(s, ops::multiply(ops::conjugate(sh.t[l][k]), sh.partial[0][q][l]));
    sh.partial[1][q][k] = s;
  }
  sync(threads);
#pragma unroll
  for (int q = 0; q < chunk; ++q) {
#pragma unroll
    for (int k = 0; k < 32; ++k) c[q] = ops::minus_product(c[q], v[k], sh.partial[1][q][k]);
    if (mine && c0 + q < n) a.base[i * a.row_stride + (c0 + q) * a.col_stride] = c[q];
  }
}

// MaxThreads, MinBlocks: the launch bounds. Blocks of up to 192 threads are held to 168
// registers a thread so that two of them share an SM (in double the kernel takes 195, which
// leaves a 192-thread block alone on its SM); blocks of up to 256 keep every register, and so
// does complex double, which spills 3.5 KB at 168 (0.9 KB with every register) and ran at half
// the speed at 128 x 128. Blocks of 257 to 512 threads get the 128 registers a thread that lets
// one fit an SM (double spills 352 bytes, single none).
template <class T, int MaxThreads, int MinBlocks>
__global__ void __launch_bounds__(MaxThreads, MinBlocks)
    geqrf_block(DeviceBatch<T> batch, DeviceBatch<T> taus, int count) {
  __shared__ Shared<T, (MaxThreads > short_warps * 32 ? MaxThreads / 32 : short_warps)> sh;
  const int b = warp::member(batch, blockIdx.x, count);
  const warp::Located<T> a = warp::locate(batch, b);
  const warp::Located<T> tau = warp::locate(taus, b);
  const int m = a.rows, n = a.cols, steps = min(m, n);
  const int i = threadIdx.x;
  if (steps == 0) return;
  // Row i on thread i: the warps past the matrix's rows have nothing to do.
  const int threads = min(static_cast<int>(blockDim.x), (m + 31) / 32 * 32);
  if (i >= threads) return;
  int buffer = 0;
  for (int j0 = 0; j0 < steps; j0 += panel_width) {
    const int width = min(panel_width, steps - j0);
    const bool mine = i >= j0 && i < m;
    T panel[32];
#pragma unroll
    for (int c = 0; c < 32; ++c)
      panel[c] = mine && c < width ? a.base[i * a.row_stride + (j0 + c) * a.col_stride] : T{};
    sync(threads);  // the last chunk's readers of sh (the same memory as sh.rows) are done
    factor_panel(panel, tau, j0, width, m, sh, buffer, threads);
#pragma unroll
    for (int c = 0; c < 32; ++c) {
      if (mine && c < width) a.base[i * a.row_stride + (j0 + c) * a.col_stride] = panel[c];
      // This thread's row of V: unit diagonal, zeros above it and right of the panel.
      const bool stored = c < width && i > j0 + c;
      panel[c] = stored ? panel[c] : c < width && i == j0 + c ? ops::make_scalar<T>(1) : T{};
    }
    if (j0 + width >= n) continue;  // no trailing columns; the same on every thread
    form_t(panel, width, sh, threads);
    for (int c0 = j0 + width; c0 < n; c0 += chunk_width<T>)
      apply_block_reflector(panel, a, j0, c0, m, n, sh, threads);
  }
}

}  // namespace

template <class T>
void geqrf_batched_block(cudaStream_t stream, const DeviceBatch<T>& A, const DeviceBatch<T>& tau,
                         int count, int max_rows) {
  if (count == 0) return;
  const int warps = std::clamp((max_rows + 31) / 32, 1, max_warps);
  constexpr int shared_warps = 6;
  if (warps <= shared_warps && sizeof(T) <= 8)
    geqrf_block<T, shared_warps * 32, 2><<<count, warps * 32, 0, stream>>>(A, tau, count);
  else if (warps <= short_warps)
    geqrf_block<T, short_warps * 32, 1><<<count, warps * 32, 0, stream>>>(A, tau, count);
  else if constexpr (geqrf_batched_block_max_size<T> > short_warps * 32)
    geqrf_block<T, max_warps * 32, 1><<<count, warps * 32, 0, stream>>>(A, tau, count);
  BASALT_CUDA_CHECK_LAUNCH();
}

#define BASALT_INSTANTIATE_GEQRF_BATCHED_BLOCK(T)                                                  \
  template void geqrf_batched_block<T>(cudaStream_t, const DeviceBatch<T>&, const DeviceBatch<T>&, \
                                       int, int);

BASALT_INSTANTIATE_GEQRF_BATCHED_BLOCK(float)
BASALT_INSTANTIATE_GEQRF_BATCHED_BLOCK(double)
BASALT_INSTANTIATE_GEQRF_BATCHED_BLOCK(cuFloatComplex)
BASALT_INSTANTIATE_GEQRF_BATCHED_BLOCK(cuDoubleComplex)

}  // namespace basalt::cuda::kernels
