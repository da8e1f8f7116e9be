// CUDA QR panel: one cooperative kernel, the panel in shared memory, one grid barrier per
// column (the LU panel's design, getf2.cu).
#include <cooperative_groups.h>
#include <cuComplex.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "basalt/backends/cuda/dense/geqr2_launch.hpp"
#include "basalt/backends/cuda/dense/panel_grid.hpp"
#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/scalar_ops.cuh"
#include "basalt/backends/cuda/workspace.hpp"

namespace basalt::cuda::kernels {

namespace {

namespace cg = cooperative_groups;

using panel_grid::min_rows_per_block;
using panel_grid::panel_threads;
using panel_grid::panel_warps;
// The exponent a block publishes when its rows below the diagonal hold no nonzero magnitude:
// its parts then weigh nothing beside any other block's (or carry the NaN they hold).
constexpr int no_exponent = -(1 << 20);
// Room for the kernel's static shared memory (the reductions' per-warp values, the norm).
constexpr int static_shared_bytes = 256;

// x 2^e, exact unless the result is subnormal.
__device__ float scale2(float x, int e) { return scalbnf(x, e); }
__device__ double scale2(double x, int e) { return scalbn(x, e); }
__device__ cuFloatComplex scale2(cuFloatComplex x, int e) {
  return make_cuFloatComplex(scalbnf(x.x, e), scalbnf(x.y, e));
}
__device__ cuDoubleComplex scale2(cuDoubleComplex x, int e) {
  return make_cuDoubleComplex(scalbn(x.x, e), scalbn(x.y, e));
}

// x f for a real f.
__device__ float times(float x, float f) { return x * f; }
__device__ double times(double x, double f) { return x * f; }
__device__ cuFloatComplex times(cuFloatComplex x, float f) {
  return make_cuFloatComplex(x.x * f, x.y * f);
}
__device__ cuDoubleComplex times(cuDoubleComplex x, double f) {
  return make_cuDoubleComplex(x.x * f, x.y * f);
}

__device__ float squared_magnitude(float x) { return x * x; }
__device__ double squared_magnitude(double x) { return x * x; }
__device__ float squared_magnitude(cuFloatComplex x) { return x.x * x.x + x.y * x.y; }
__device__ double squared_magnitude(cuDoubleComplex x) { return x.x * x.x + x.y * x.y; }

// e with x = f 2^e, 0.5 <= f < 1, for a positive finite x.
__device__ int exponent_of(float x) {
  int e;
  frexpf(x, &e);
  return e;
}
__device__ int exponent_of(double x) {
  int e;
  frexp(x, &e);
  return e;
}

__device__ float square_root(float x) { return sqrtf(x); }
__device__ double square_root(double x) { return sqrt(x); }

// The power of two a block scales its part of the column by: 2^-e brings every magnitude below
// one (largest < 2^e), so no square overflows and the products stay within the columns' size.
// Clamped where 2^-e would overflow (a subnormal largest); 0 for Inf, which the sums carry.
template <class Real>
__device__ int block_exponent(Real largest) {
  if (!(largest > Real(0))) return no_exponent;  // zeros, or NaN only (the sums carry it)
  if (isinf(largest)) return 0;
  return max(exponent_of(largest), 1 - std::numeric_limits<Real>::max_exponent);
}

struct Larger {
  template <class V>
  __device__ V operator()(V a, V b) const {
    return b > a ? b : a;
  }
};
struct Plus {
  template <class V>
  __device__ V operator()(V a, V b) const {
    return ops::add(a, b);
  }
};

__device__ float shuffle_down(float x, int offset) {
  return __shfl_down_sync(0xffffffff, x, offset);
}
__device__ double shuffle_down(double x, int offset) {
  return __shfl_down_sync(0xffffffff, x, offset);
}
__device__ cuFloatComplex shuffle_down(cuFloatComplex x, int offset) {
  return make_cuFloatComplex(shuffle_down(x.x, offset), shuffle_down(x.y, offset));
}
__device__ cuDoubleComplex shuffle_down(cuDoubleComplex x, int offset) {
  return make_cuDoubleComplex(shuffle_down(x.x, offset), shuffle_down(x.y, offset));
}

// The warp's values combined by op, on lane 0, in a fixed order: the same inputs give the same
// bits on every block.
template <class V, class Op>
__device__ V warp_reduce(V mine, Op op) {
  for (int offset = 16; offset > 0; offset /= 2) mine = op(mine, shuffle_down(mine, offset));
  return mine;
}

// The block's values combined by op, on every thread. One barrier: the caller passes per_warp
// back to this reduction only after another barrier (each reduction of a column has its own).
template <class Real, class Op>
__device__ Real block_reduce(Real mine, Real* per_warp, Op op) {
  mine = warp_reduce(mine, op);
  if (threadIdx.x % 32 == 0) per_warp[threadIdx.x / 32] = mine;
  __syncthreads();
  Real all = per_warp[0];
  for (int i = 1; i < panel_warps; ++i) all = op(all, per_warp[i]);
  return all;
}

// The block's largest of `largest` and sum of `sum`, both on every thread, with one barrier:
// per_warp[0] and [1] hold the warps' values until the column's next reduction.
template <class Real>
__device__ void block_reduce_pair(Real& largest, Real& sum, Real (*per_warp)[panel_warps]) {
  largest = warp_reduce(largest, Larger());
  sum = warp_reduce(sum, Plus());
  if (threadIdx.x % 32 == 0) {
    per_warp[0][threadIdx.x / 32] = largest;
    per_warp[1][threadIdx.x / 32] = sum;
  }
  __syncthreads();
  largest = per_warp[0][0];
  sum = per_warp[1][0];
  for (int i = 1; i < panel_warps; ++i) {
    largest = Larger()(largest, per_warp[0][i]);
    sum += per_warp[1][i];
  }
}

// Whether the plain sum of squares of at most 2^16 magnitudes up to `largest` (2^(exponent-1)
// <= largest < 2^exponent) is exact enough to scale by 2^(-2 exponent): no square overflows,
// and each square that underflows weighs under 2^-(digits + 16) of largest^2. Zero, Inf and NaN
// sums are what the scaled pass would give.
template <class Real>
__device__ bool sums_of_squares_safe(Real largest, int exponent) {
  using limits = std::numeric_limits<Real>;
  if (!(largest > Real(0)) || isinf(largest)) return true;
  return exponent <= limits::max_exponent / 2 - 16 &&
         exponent >= (limits::min_exponent + limits::digits) / 2 + 16;
}

// The exchange area between blocks, two generations (by column parity) so that a block that
// runs ahead into column j + 1 never overwrites what a slower one still reads for column j.
template <class T, class Real>
struct Published {
  T* products;     // [2][blocks][w]: each block's x^H a_c, x scaled by 2^-exponent
  T* row;          // [2][w]: row j (from column j on)
  Real* squares;   // [2][blocks]: each block's sum of |x_i 2^-exponent|^2
  int* exponents;  // [2][blocks]
};

template <class T, class Real>
__global__ void __launch_bounds__(panel_threads)
    factor_panel(T* a, int p, int w, std::int64_t lda, T* tau, std::int64_t tau_stride,
                 int rows_per_block, Published<T, Real> published) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* tile = reinterpret_cast<T*>(shared_bytes);        // rows_per_block x w, column-major
  T* update = tile + std::size_t(rows_per_block) * w;  // w_c = conj(tau) v^H a_c of column j
  __shared__ Real per_warp[3][panel_warps];
  __shared__ Real column_norm;
  cg::grid_group grid = cg::this_grid();

  const int blocks = gridDim.x, block = blockIdx.x;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int first_row = block * rows_per_block;
  const int rows = max(0, min(p, first_row + rows_per_block) - first_row);
  auto at = [&](int local_row, int c) -> T& { return tile[local_row + c * rows_per_block]; };
  auto owns = [&](int row) { return row >= first_row && row < first_row + rows; };
  const T zero = ops::make_scalar<T>(0), one = ops::make_scalar<T>(1);

  for (int e = threadIdx.x; e < rows * w; e += blockDim.x)
    at(e % rows, e / rows) = a[first_row + e % rows + (e / rows) * lda];
  __syncthreads();

  for (int j = 0; j < min(p, w); ++j) {
    const int parity = j & 1;
    T* products = published.products + std::size_t(parity) * blocks * w;
    T* row = published.row + std::size_t(parity) * w;
    Real* squares = published.squares + parity * blocks;
    int* exponents = published.exponents + parity * blocks;
    const int below = max(0, j + 1 - first_row);  // the block's first row below the diagonal

    // The block's parts, x (column j below the diagonal) scaled by the block's power of two.
    // Its largest magnitude and its plain sum of squares come from one pass and one reduction;
    // the plain sum, scaled by the power of two, is the scaled one unless squares could
    // overflow or lose what they add, which a second pass over the scaled x then avoids.
    Real largest = 0, sum = 0;
    for (int i = below + threadIdx.x; i < rows; i += blockDim.x) {
      const Real v = ops::magnitude(at(i, j));
      if (v > largest) largest = v;
      sum += squared_magnitude(at(i, j));
    }
    block_reduce_pair(largest, sum, per_warp);
    const int exponent = block_exponent(largest);
    const Real factor = exponent == no_exponent ? Real(1) : scale2(Real(1), -exponent);
    if (sums_of_squares_safe<Real>(largest, exponent)) {
      if (exponent != no_exponent) sum = scale2(sum, -2 * exponent);
    } else {
      sum = 0;
      for (int i = below + threadIdx.x; i < rows; i += blockDim.x)
        sum += squared_magnitude(times(at(i, j), factor));
      sum = block_reduce(sum, per_warp[2], Plus());
    }
    if (threadIdx.x == 0) {
      squares[block] = sum;
      exponents[block] = exponent;
    }
    for (int c = j + 1 + warp; c < w; c += panel_warps) {
      T s = zero;
      for (int i = below + lane; i < rows; i += 32)
        s = ops::add(s, ops::multiply(ops::conjugate(times(at(i, j), factor)), at(i, c)));
      s = warp_reduce(s, Plus());
      if (lane == 0) products[std::size_t(block) * w + c] = s;
    }
    if (owns(j))
      for (int c = j + threadIdx.x; c < w; c += blockDim.x) row[c] = at(j - first_row, c);
    grid.sync();

    // Every block combines the parts in the same order: all agree on the reflector. Up to 32
    // blocks every warp combines them itself, a block a lane, and needs no block barrier (as the
    // LU panel's candidates); with more, warp 0 combines them for the block. Everything a warp
    // reads of the exchange for this column (its lane's block's parts, the products of its first
    // two columns, row j's entries there) is loaded at once: one round trip to L2, where
    // loading each where it is used took four (H100, 4096 rows: about 4000 of the column's 10300
    // cycles).
    const bool lane_per_block = blocks <= 32;
    const int first_column = j + 1 + warp, second_column = first_column + panel_warps;
    int lane_exponent = no_exponent;
    Real lane_square = 0;
    T first_product = zero, second_product = zero;
    if (lane_per_block && lane < blocks) {
      lane_exponent = ops::load_coherent(&exponents[lane]);
      lane_square = ops::load_coherent(&squares[lane]);
      const T* lane_products = products + std::size_t(lane) * w;
      if (first_column < w) first_product = ops::load_coherent(lane_products + first_column);
      if (second_column < w) second_product = ops::load_coherent(lane_products + second_column);
    }
    const T alpha = ops::load_coherent(&row[j]);
    const T first_row_entry = first_column < w ? ops::load_coherent(&row[first_column]) : zero;
    const T second_row_entry = second_column < w ? ops::load_coherent(&row[second_column]) : zero;
    Real xnorm = 0;
    if (lane_per_block) {
      const int largest_exponent = __reduce_max_sync(0xffffffff, lane_exponent);
      const Real q = warp_reduce(scale2(lane_square, 2 * (lane_exponent - largest_exponent)), Plus());
      xnorm = __shfl_sync(0xffffffff, scale2(square_root(q), largest_exponent), 0);
    } else {
      if (warp == 0) {
        int largest_exponent = no_exponent;
        for (int b = lane; b < blocks; b += 32)
          largest_exponent = max(largest_exponent, ops::load_coherent(&exponents[b]));
        largest_exponent = __reduce_max_sync(0xffffffff, largest_exponent);
        Real q = 0;
        for (int b = lane; b < blocks; b += 32)
          q += scale2(ops::load_coherent(&squares[b]),
                      2 * (ops::load_coherent(&exponents[b]) - largest_exponent));
        q = warp_reduce(q, Plus());
        if (lane == 0) column_norm = scale2(square_root(q), largest_exponent);
      }
      __syncthreads();
      xnorm = column_norm;
    }
    const Real alpha_re = ops::real_part(alpha), alpha_im = ops::imag_part(alpha);
    if (xnorm == Real(0) && alpha_im == Real(0)) {  // H(j) = I: R's diagonal is alpha, tau 0
      if (block == 0 && threadIdx.x == 0) tau[j * tau_stride] = zero;
      continue;
    }
    // larfg: beta = -sign(re alpha) ||(alpha, x)||, tau = (beta - alpha) / beta.
    const Real norm = ops::norm3(alpha_re, alpha_im, xnorm);
    const Real beta = alpha_re >= Real(0) ? -norm : norm;
    const T t = ops::make_scalar<T>((beta - alpha_re) / beta, -alpha_im / beta);
    const T divisor = ops::make_scalar<T>(alpha_re - beta, alpha_im);  // v = x / divisor
    if (block == 0 && threadIdx.x == 0) tau[j * tau_stride] = t;

    // H(j)^H = I - conj(tau) v v^H on column c: w_c = conj(tau) (a_jc + sum_b 2^e_b s_bc /
    // conj(divisor)), each term brought to the divisor's exponent first: 2^e_b <= 2 |divisor|
    // (|x_i| <= |beta| <= |divisor|), so no term exceeds a few times the block's products.
    const int shift = exponent_of(fmax(fabs(alpha_re - beta), fabs(alpha_im)));
    const T inverse = ops::divide(one, scale2(ops::conjugate(divisor), -shift));
    const T applied = ops::conjugate(t);
    for (int c = first_column, k = 0; c < w; c += panel_warps, ++k) {
      T s = zero;
      if (lane_per_block && k < 2)
        s = scale2(k == 0 ? first_product : second_product, lane_exponent - shift);
      else
        for (int b = lane; b < blocks; b += 32)
          s = ops::add(s, scale2(ops::load_coherent(&products[std::size_t(b) * w + c]),
                                 ops::load_coherent(&exponents[b]) - shift));
      s = warp_reduce(s, Plus());
      const T entry =
          k == 0 ? first_row_entry : k == 1 ? second_row_entry : ops::load_coherent(&row[c]);
      if (lane == 0) update[c] = ops::multiply(applied, ops::add(entry, ops::multiply(s, inverse)));
    }
    // v below the diagonal, divided, not multiplied by a reciprocal that could overflow (as the
    // portable geqr2); R's diagonal in place of v(j) = 1, which the update below takes as one.
    for (int i = below + threadIdx.x; i < rows; i += blockDim.x)
      at(i, j) = ops::divide(at(i, j), divisor);
    if (owns(j) && threadIdx.x == 0) at(j - first_row, j) = ops::make_scalar<T>(beta);
    __syncthreads();
    // Lanes take rows and warps columns: consecutive lanes on consecutive words, and no index
    // arithmetic in the loop.
    for (int i = max(0, j - first_row) + lane; i < rows; i += 32) {
      const T v = first_row + i == j ? one : at(i, j);
      for (int c = j + 1 + warp; c < w; c += panel_warps)
        at(i, c) = ops::minus_product(at(i, c), v, update[c]);
    }
    __syncthreads();
  }

  for (int e = threadIdx.x; e < rows * w; e += blockDim.x)
    a[first_row + e % rows + (e / rows) * lda] = at(e % rows, e / rows);
}

std::size_t aligned(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

}  // namespace

int geqr2_height_limit(int device, int w, int entry_bytes) {
  return panel_grid::height_limit(device, w, entry_bytes, static_shared_bytes);
}

template <class T>
void geqr2(int device, cudaStream_t stream, T* panel, T* tau, const Geqr2Problem& p) {
  if (p.p == 0 || p.w == 0) return;
  using Real = ops::real_of_t<T>;
  if (p.p > geqr2_height_limit(device, p.w, sizeof(T)))
    throw std::invalid_argument("basalt: cuda geqr2: the panel exceeds the fused kernel's height");
  const auto grid = panel_grid::plan(device, stream, p.p, p.w, sizeof(T), static_shared_bytes,
                                     min_rows_per_block);
  const int blocks = grid.blocks, rows_per_block = grid.rows_per_block;
  const auto kernel = factor_panel<T, Real>;
  panel_grid::make_resident(kernel, panel_threads, grid, device);

  const std::size_t product_bytes = aligned(2 * std::size_t(blocks) * p.w * sizeof(T));
  const std::size_t row_bytes = aligned(2 * std::size_t(p.w) * sizeof(T));
  const std::size_t square_bytes = aligned(2 * std::size_t(blocks) * sizeof(Real));
  const std::size_t exponent_bytes = 2 * std::size_t(blocks) * sizeof(int);
  auto* exchange = static_cast<unsigned char*>(
      acquire_workspace(device, stream, product_bytes + row_bytes + square_bytes + exponent_bytes));
  Published<T, Real> published{
      reinterpret_cast<T*>(exchange), reinterpret_cast<T*>(exchange + product_bytes),
      reinterpret_cast<Real*>(exchange + product_bytes + row_bytes),
      reinterpret_cast<int*>(exchange + product_bytes + row_bytes + square_bytes)};
  int m = p.p, w = p.w, rows = rows_per_block;
  std::int64_t lda = p.lda, tau_stride = p.tau_stride;
  void* args[] = {&panel, &m, &w, &lda, &tau, &tau_stride, &rows, &published};
  BASALT_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(kernel), blocks,
                                                panel_threads, args, grid.shared_bytes, stream));
  release_workspace(exchange, stream);
}

template void geqr2<float>(int, cudaStream_t, float*, float*, const Geqr2Problem&);
template void geqr2<double>(int, cudaStream_t, double*, double*, const Geqr2Problem&);
template void geqr2<cuFloatComplex>(int, cudaStream_t, cuFloatComplex*, cuFloatComplex*,
                                    const Geqr2Problem&);
template void geqr2<cuDoubleComplex>(int, cudaStream_t, cuDoubleComplex*, cuDoubleComplex*,
                                     const Geqr2Problem&);

}  // namespace basalt::cuda::kernels
