// CUDA QR panel: one cooperative kernel, the panel in shared memory, factored in leaves of up to
// 32 columns (16 in a wider panel). It first tries each leaf by Cholesky QR twice with
// Householder reconstruction (two grid barriers), followed in a wider panel by the leaf's block
// reflector on the columns to its right (two more); where a leaf is too ill-conditioned for
// that, Householder QR with one grid barrier per column (the LU panel's design, getf2.cu).
#include <cooperative_groups.h>
#include <cuComplex.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "basalt/backends/cuda/batched/warp_batch.cuh"
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

// Cholesky QR of the panel (Ballard, Demmel, Grigori et al., 2015; qr_tall_skinny.hpp takes the
// same steps over Kokkos for a whole tall-skinny matrix), with Householder reconstruction:
// - A^H A = L1 L1^H, W = A L1^-H: the blocks publish their rows' Gram matrices, grid barrier;
// - W^H W = L2 L2^H, Q = W L2^-H: again, grid barrier;
// - Q1 - S = L U for Q's top w rows, without pivoting, S = diag(+-1) against each pivot's real
//   part;
// - V = L on top, Q U^-1 below; R = S L2^H L1^H; tau = -diag(U) S.
// Every block sums the Gram matrices in the same order and factors the small matrices itself,
// so all agree on them bit for bit without another barrier: two grid barriers per panel, where
// Householder QR takes one per column. A panel too ill-conditioned for this path (kappa beyond
// about u^-1/2, a zero column, NaN, Inf, squares that overflow or underflow), or with a column
// already zero below the diagonal (where LAPACK's reflector is the identity, tau = 0, and this
// one would not be), is left to Householder QR.
//
// The small factorizations keep a row per lane in registers, their loops unrolled over a width W
// known at compile time (16 or 32). Such code runs once a launch and waits on instruction
// fetches, so each routine has one call site: the three triangular solves over the rows (by L1,
// L2 and U) are one loop.
constexpr int cholesky_qr_widest = 32;
// A panel wider than cholesky_qr_widest is factored in leaves of this many columns, each
// followed by its block reflector's update of the columns to its right, all in one launch.
constexpr int wide_leaf = 16;
// Columns of W = V^H C a block reads and applies at a time.
constexpr int chunk_columns = 128;
// The small matrices' column stride: odd, so that lanes on rows and lanes on columns both hit
// distinct banks.
constexpr int small_ld = cholesky_qr_widest + 1;
constexpr int gram_entries = cholesky_qr_widest * cholesky_qr_widest;
// W is close enough to orthonormal for the second Cholesky QR when ||W^H W - I||_F <= 1/2, so
// that kappa(W) <= sqrt(3); then Q is orthonormal to working precision, and U well-conditioned.
constexpr double orthonormal_distance_limit = 0.5;

// What the blocks publish for one another.
template <class T>
struct CholeskyQrExchange {
  T* grams;    // [2][blocks][gram_entries]: each block's A^H A, then W^H W (lower triangles)
  int* below;  // [blocks]: bit c set where the block has a nonzero below the diagonal in column c
  T* parts;    // [blocks][wide_leaf * w]: each block's V^H [V C] of a wide panel's leaf
  T* reduced;  // [wide_leaf * w]: their sums
};

// The bytes of a block's small matrices (SmallMatrices, below) for entries of entry_bytes; S's
// entries are counted at that size too, so that the height limit needs no T.
constexpr std::size_t small_matrices_bytes(std::size_t entry_bytes) {
  return (4 * std::size_t(cholesky_qr_widest) * small_ld + 4 * cholesky_qr_widest +
          4 * panel_threads) *
             entry_bytes +
         sizeof(int);
}

// A block's own small matrices in shared memory, w x w each with column stride small_ld.
template <class T, class Real>
struct SmallMatrices {
  T* factors;      // [3]: L1, L2 and U^H (lower triangles), the solves' right-hand factors
  T* reciprocals;  // [3][widest]: the reciprocals of their diagonals
  T* top;          // A's top w rows, then W's, then Q's, then L and U
  T* scratch;      // the thread groups' sums of a Gram matrix
  Real* signs;     // S
  int* below;

  __device__ explicit SmallMatrices(T* base)
      : factors(base),
        reciprocals(factors + 3 * cholesky_qr_widest * small_ld),
        top(reciprocals + 3 * cholesky_qr_widest),
        scratch(top + cholesky_qr_widest * small_ld),
        signs(reinterpret_cast<Real*>(scratch + 4 * panel_threads)),
        below(reinterpret_cast<int*>(signs + cholesky_qr_widest)) {}
  __device__ T* factor(int k) const { return factors + k * cholesky_qr_widest * small_ld; }
};

// The lower triangle of X^H X over the block's rows of X (rows x w, w <= W, column stride ld,
// odd) into `gram`: each thread a 2 x 2 block of entries over a share of the rows (with W = 16,
// four groups of threads take every fourth row), so that one load serves two products; the
// groups' sums are added through `scratch`.
template <int W, class T>
__device__ void publish_gram(const T* x, int ld, int rows, int w, T* scratch, T* gram) {
  constexpr int pairs = W / 2, groups = panel_threads / (pairs * pairs);
  const int b = threadIdx.x % (pairs * pairs), group = threadIdx.x / (pairs * pairs);
  const int i0 = 2 * (b % pairs), j0 = 2 * (b / pairs);
  // Columns beyond w read column w - 1: their sums are never published.
  const T* xi0 = x + min(i0, w - 1) * ld;
  const T* xi1 = x + min(i0 + 1, w - 1) * ld;
  const T* xj0 = x + min(j0, w - 1) * ld;
  const T* xj1 = x + min(j0 + 1, w - 1) * ld;
  T s00 = ops::make_scalar<T>(0), s01 = s00, s10 = s00, s11 = s00;
#pragma unroll 4
  for (int r = group; r < rows; r += groups) {
    const T a0 = ops::conjugate(xi0[r]), a1 = ops::conjugate(xi1[r]), c0 = xj0[r], c1 = xj1[r];
    s00 = ops::add(s00, ops::multiply(a0, c0));
    s01 = ops::add(s01, ops::multiply(a0, c1));
    s10 = ops::add(s10, ops::multiply(a1, c0));
    s11 = ops::add(s11, ops::multiply(a1, c1));
  }
  T* mine = scratch + 4 * threadIdx.x;
  mine[0] = s00;
  mine[1] = s01;
  mine[2] = s10;
  mine[3] = s11;
  __syncthreads();
  for (int e = threadIdx.x; e < w * w; e += blockDim.x) {
    const int i = e % w, j = e / w;
    if (i < j) continue;
    const int entry = 4 * (i / 2 + j / 2 * pairs) + 2 * (i % 2) + j % 2;
    T sum = scratch[entry];
    for (int g = 1; g < groups; ++g) sum = ops::add(sum, scratch[g * 4 * pairs * pairs + entry]);
    gram[i + j * cholesky_qr_widest] = sum;
  }
}

// g = the sum of the blocks' Gram matrices (lower triangles), added in block order so that
// every block gets the same bits. Adds this thread's share of ||G - I||_F^2 to distance, and
// clears `trusted` where a diagonal entry it summed is not a sum of squares that neither
// overflowed nor lost what it adds to underflow.
template <class T, class Real>
__device__ void sum_grams(const T* grams, int blocks, int w, T* g, Real& distance, bool& trusted) {
  for (int e = threadIdx.x; e < w * w; e += blockDim.x) {
    const int i = e % w, j = e / w;
    if (i < j) continue;
    T sum = ops::make_scalar<T>(0);
#pragma unroll 8
    for (int b = 0; b < blocks; ++b)
      sum = ops::add(sum, ops::load_coherent(
                              &grams[std::size_t(b) * gram_entries + i + j * cholesky_qr_widest]));
    g[i + j * small_ld] = sum;
    const Real d = ops::magnitude(ops::add(sum, ops::make_scalar<T>(i == j ? -1 : 0)));
    distance += (i == j ? 1 : 2) * d * d;
    if (i == j) {
      const Real square = ops::real_part(sum);
      trusted = trusted && square >= ops::smallest_trusted_square<Real>() && isfinite(square);
    }
  }
}

// G = L L^H in place (g's lower triangle, w <= W) by one warp, lane i on row i in registers,
// padded with the identity beyond w (with W = 16 both half-warps do the same); reciprocal(j) =
// 1 / L(j, j). Returns on every lane whether every pivot was a positive normal number.
template <int W, class T>
__device__ bool cholesky(T* g, int w, T* reciprocal) {
  using Real = ops::real_of_t<T>;
  const int lane = threadIdx.x % 32, i = lane % W;
  T row[W];
#pragma unroll
  for (int c = 0; c < W; ++c)
    row[c] = i < w && c < w && c <= i ? g[i + c * small_ld] : ops::make_scalar<T>(i == c ? 1 : 0);
  bool positive = true;
#pragma unroll
  for (int j = 0; j < W; ++j) {
    const Real d = ops::real_part(warp::shuffle<W>(row[j], j));
    positive = positive && ops::is_positive_normal(d);
    const Real inverse = ops::rsqrt_of_normal(d);
    // Lanes i < j scale an entry above the diagonal, never used.
    row[j] = i == j ? ops::make_scalar<T>(ops::root_from_reciprocal(d, inverse))
                    : ops::times_real(row[j], inverse);
    if (lane == j) reciprocal[j] = ops::make_scalar<T>(inverse);
#pragma unroll
    for (int c = j + 1; c < W; ++c) {
      const T l_c = warp::shuffle<W>(row[j], c);
      if (i >= c) row[c] = ops::minus_product(row[c], row[j], ops::conjugate(l_c));
    }
  }
  __syncwarp();  // every lane has read g
  if (lane < w)
#pragma unroll
    for (int c = 0; c < W; ++c)
      if (c <= i) g[i + c * small_ld] = row[c];
  return positive;
}

// B - S = L U in place without pivoting (B w x w, w <= W, in b): before step j, S(j) = +1 where
// the pivot's real part is negative, else -1, so that |pivot| >= 1 (qr_tall_skinny.hpp's
// modified_lu). One warp, lane i on row i in registers, padded with zeros beyond w (pivots 1
// there). U^H also goes to u_adjoint's lower triangle, the reciprocals of U's diagonal to
// reciprocal.
template <int W, class T>
__device__ void factor_shifted_lu(T* b, int w, ops::real_of_t<T>* signs, T* u_adjoint,
                                  T* reciprocal) {
  using Real = ops::real_of_t<T>;
  const int lane = threadIdx.x % 32, i = lane % W;
  T row[W];
#pragma unroll
  for (int c = 0; c < W; ++c)
    row[c] = i < w && c < w ? b[i + c * small_ld] : ops::make_scalar<T>(0);
#pragma unroll
  for (int j = 0; j < W; ++j) {
    const T diagonal = warp::shuffle<W>(row[j], j);
    const Real sign = ops::real_part(diagonal) < Real(0) ? Real(1) : Real(-1);
    const T pivot = ops::add(diagonal, ops::make_scalar<T>(-sign));
    const T inverse = ops::divide(ops::make_scalar<T>(1), pivot);
    if (lane == j) {
      signs[j] = sign;
      reciprocal[j] = inverse;
    }
    if (i == j) row[j] = pivot;
    if (i > j) row[j] = ops::multiply(row[j], inverse);
#pragma unroll
    for (int c = j + 1; c < W; ++c) {
      const T u = warp::shuffle<W>(row[c], j);
      if (i > j) row[c] = ops::minus_product(row[c], row[j], u);
    }
  }
  __syncwarp();  // every lane has read b
  if (lane < w)
#pragma unroll
    for (int c = 0; c < W; ++c)
      if (c < w) {
        b[i + c * small_ld] = row[c];
        if (c >= i) u_adjoint[c + i * small_ld] = ops::conjugate(row[c]);
      }
}

// x F^H = a in place for a row a (w <= W entries, stride apart) in registers, F lower
// triangular (a small matrix) with reciprocal(c) = 1 / conj(F(c, c)): forward substitution.
template <int W, class T>
__device__ void solve_row(T* a, int stride, int w, const T* f, const T* reciprocal) {
  T x[W];
#pragma unroll
  for (int c = 0; c < W; ++c) x[c] = c < w ? a[c * stride] : ops::make_scalar<T>(0);
#pragma unroll
  for (int c = 0; c < W; ++c) {
    x[c] = ops::multiply(x[c], reciprocal[c]);
#pragma unroll
    for (int c2 = c + 1; c2 < W; ++c2)
      x[c2] = ops::minus_product(x[c2], x[c], ops::conjugate(f[c2 + c * small_ld]));
  }
#pragma unroll
  for (int c = 0; c < W; ++c)
    if (c < w) a[c * stride] = x[c];
}

// The panel (the block's rows of it in `rows_tile`, column stride ld, odd) by Cholesky QR, as
// above, for w <= W. Returns true, on every thread of every block, with the block's rows of V
// and R in rows_tile and tau written; or false, on every thread of every block, with rows_tile
// no longer A's.
template <int W, class T, class Real>
__device__ bool factor_by_cholesky_qr(T* rows_tile, int ld, int rows, int first_row, int w,
                                      const T* a, std::int64_t lda, T* tau, std::int64_t tau_stride,
                                      const CholeskyQrExchange<T>& exchange,
                                      const SmallMatrices<T, Real>& s, Real* per_warp,
                                      cg::grid_group& grid) {
  const int tid = threadIdx.x, block = blockIdx.x, blocks = gridDim.x;
  auto at = [&](int r, int c) -> T& { return rows_tile[r + c * ld]; };

  if (tid == 0) *s.below = 0;
  __syncthreads();
  unsigned below = 0;
  for (int e = tid; e < rows * w; e += blockDim.x) {
    const int r = e % rows, c = e / rows;
    if (first_row + r > c && !ops::is_zero(at(r, c))) below |= 1u << c;
  }
  below = __reduce_or_sync(0xffffffff, below);
  if (tid % 32 == 0 && below != 0) atomicOr(s.below, int(below));

#pragma unroll 1
  for (int pass = 0; pass < 3; ++pass) {
    // Pass 0: W = A L1^-H, pass 1: Q = W L2^-H (the block's rows and the top block), pass 2:
    // V = Q U^-1 below the top block.
    T* factor = s.factor(pass);
    T* reciprocal = s.reciprocals + pass * cholesky_qr_widest;
    bool ok = true;
    if (pass < 2) {
      T* grams = exchange.grams + std::size_t(pass) * blocks * gram_entries;
      publish_gram<W>(rows_tile, ld, rows, w, s.scratch, grams + std::size_t(block) * gram_entries);
      if (pass == 0 && tid == 0) exchange.below[block] = *s.below;
      grid.sync();
      // A's top w rows, which another block may have stored just before the barrier: every
      // block factors Q's top block itself.
      if (pass == 0)
        for (int e = tid; e < w * w; e += blockDim.x)
          s.top[e % w + e / w * small_ld] = ops::load_coherent(&a[e % w + e / w * lda]);
      Real distance = 0;
      sum_grams(grams, blocks, w, factor, distance, ok);
      if (pass == 0) {
        if (tid < 32) {
          unsigned columns = 0;
          for (int b = tid; b < blocks; b += 32)
            columns |= unsigned(ops::load_coherent(&exchange.below[b]));
          columns = __reduce_or_sync(0xffffffff, columns);
          ok = ok && columns == (w == 32 ? ~0u : (1u << w) - 1);
        }
      } else {
        distance = block_reduce(distance, per_warp, Plus());
        ok = distance <= Real(orthonormal_distance_limit * orthonormal_distance_limit);
      }
      __syncthreads();
      if (tid < 32) ok = cholesky<W>(factor, w, reciprocal) && ok;
    } else if (tid < 32) {
      factor_shifted_lu<W>(s.top, w, s.signs, factor, reciprocal);
    }
    if (!__syncthreads_and(ok)) return false;
    const int solved = pass < 2 ? rows + w : rows;  // the top block's rows after the block's
    for (int r = tid; r < solved; r += blockDim.x) {
      if (pass == 2 && first_row + r < w) continue;
      const bool own = r < rows;
      solve_row<W>(own ? &at(r, 0) : &s.top[r - rows], own ? ld : small_ld, w, factor, reciprocal);
    }
    __syncthreads();
  }

  // The top block: L below the diagonal, R = S L2^H L1^H on and above it.
  const T* l1 = s.factor(0);
  const T* l2 = s.factor(1);
  for (int e = tid; e < w * w; e += blockDim.x) {
    const int i = e % w, c = e / w;
    if (i < first_row || i >= first_row + rows) continue;
    T v = s.top[i + c * small_ld];
    if (c >= i) {
      v = ops::make_scalar<T>(0);
      for (int k = i; k <= c; ++k)
        v = ops::add(v, ops::multiply(ops::conjugate(l2[k + i * small_ld]),
                                      ops::conjugate(l1[c + k * small_ld])));
      v = ops::times_real(v, s.signs[i]);
    }
    at(i - first_row, c) = v;
  }
  if (block == 0 && tid < w)
    tau[tid * tau_stride] = ops::times_real(s.top[tid * (small_ld + 1)], -s.signs[tid]);
  __syncthreads();
  return true;
}

// The columns to the right of a wide panel's leaf, C (nc columns after the leaf's wide_leaf),
// overwritten by Q^H C, Q = I - V T V^H the leaf's reflectors just factored by Cholesky QR.
// `leaf` holds the block's rows of the leaf from its first row at or below the leaf's top
// (first_row of them above it in the leaf), C's columns after them. Two grid barriers: the
// blocks publish their rows' V^H [V C]; each block sums a slice of the parts and publishes it;
// then every block reads the sums, builds T from V^H V and tau (LAPACK's larft) and applies
// C -= V (T^H (V^H C)) to its own rows. In the products over rows, lanes run along columns and
// every lane of a warp reads the same row of V: one broadcast load an entry.
template <class T, class Real>
__device__ void update_right_of_leaf(T* leaf, int ld, int rows, int first_row, int nc, T* parts,
                                     T* reduced, const SmallMatrices<T, Real>& s,
                                     cg::grid_group& grid) {
  constexpr int L = wide_leaf;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, block = blockIdx.x;
  const int columns = L + nc;  // V's, then C's
  auto at = [&](int r, int c) -> T& { return leaf[r + c * ld]; };
  const T zero = ops::make_scalar<T>(0);

  // V explicit on the top rows (unit diagonal, zeros above), R kept aside meanwhile.
  T* kept = s.scratch;
  for (int e = tid; e < L * L; e += blockDim.x) {
    const int i = e % L, c = e / L, r = i - first_row;
    if (r < 0 || r >= rows || i > c) continue;
    kept[e] = at(r, c);
    at(r, c) = ops::make_scalar<T>(i == c ? 1 : 0);
  }
  __syncthreads();

  // This block's part of V^H [V C], entry (i, c) at parts[block][i + c L]. Warps split the
  // groups of 32 columns and the rows between them; the splits after the first hand their sums
  // to the first through the small matrices' room (3 x widest x small_ld entries, free now).
  T* mine = parts + std::size_t(block) * L * (L + nc);
  T* handed = s.factor(0);
  const int groups = (columns + 31) / 32;
  const int splits =
      max(1, min(panel_warps / groups, 1 + 3 * cholesky_qr_widest * small_ld / (groups * 32 * L)));
  const int split_rows = (rows + splits - 1) / splits;
  T sum[L];
  for (int unit = warp; unit < groups * splits; unit += panel_warps) {
    const int group = unit % groups, split = unit / groups;
    const int c = group * 32 + lane, read = min(c, columns - 1);
#pragma unroll
    for (int i = 0; i < L; ++i) sum[i] = zero;
#pragma unroll 2
    for (int r = split * split_rows; r < min(rows, (split + 1) * split_rows); ++r) {
      const T y = at(r, read);
#pragma unroll
      for (int i = 0; i < L; ++i)
        sum[i] = ops::add(sum[i], ops::multiply(ops::conjugate(at(r, i)), y));
    }
    if (split > 0)  // entry i at handed[(unit - groups) * 32 L + lane + 32 i]
#pragma unroll
      for (int i = 0; i < L; ++i) handed[(unit - groups) * 32 * L + lane + 32 * i] = sum[i];
    else if (splits == 1 && c < columns)
#pragma unroll
      for (int i = 0; i < L; ++i) mine[i + c * L] = sum[i];
  }
  if (splits > 1) {  // then every warp took one unit at most, warp g < groups group g's first
    __syncthreads();
    const int c = warp * 32 + lane;
    if (warp < groups) {
      for (int unit = warp + groups; unit < groups * splits; unit += groups)
#pragma unroll
        for (int i = 0; i < L; ++i)
          sum[i] = ops::add(sum[i], handed[(unit - groups) * 32 * L + lane + 32 * i]);
      if (c < columns)
#pragma unroll
        for (int i = 0; i < L; ++i) mine[i + c * L] = sum[i];
    }
  }
  grid.sync();

  // Each block sums its slice of the entries over all blocks and publishes it; after one more
  // grid barrier every block reads all the sums. (Every block summing all the parts itself
  // reads every part from L2 once per block, which cost more than this barrier.) A slice is
  // summed 64 entries at a time, each entry's blocks in four runs side by side, the runs then
  // added in order: the same bits every run.
  const std::size_t part_stride = std::size_t(L) * columns;
  {
    const int blocks = gridDim.x, total = L * columns, slice = (total + blocks - 1) / blocks;
    const int first_entry = block * slice,
              count = max(0, min(total, first_entry + slice) - first_entry);
    const int run_length = (blocks + 3) / 4, entry = tid % 64, run = tid / 64;
    T* run_sums = s.factor(0);
    for (int e0 = 0; e0 < count; e0 += 64) {
      const int e = first_entry + e0 + entry;
      T sum = zero;
      if (e0 + entry < count)
#pragma unroll 4
        for (int b = run * run_length; b < min(blocks, (run + 1) * run_length); ++b)
          sum = ops::add(sum, ops::load_coherent(&parts[b * part_stride + e]));
      run_sums[tid] = sum;
      __syncthreads();
      if (run == 0 && e0 + entry < count)
        reduced[e] = ops::add(ops::add(ops::add(sum, run_sums[tid + 64]), run_sums[tid + 128]),
                              run_sums[tid + 192]);
      __syncthreads();
    }
  }
  grid.sync();

  // G = V^H V (its upper triangle is what larft reads), then T by warp 0, lane i on row i.
  T* g = s.factor(0);
  T* t = g + L * L;
  T* w = t + L * L;  // a chunk of W = V^H C, then T^H W, L x chunk
  for (int e = tid; e < L * L; e += blockDim.x) g[e] = ops::load_coherent(&reduced[e]);
  __syncthreads();
  if (tid < L) {
    const int i = tid;
    T row[L];
#pragma unroll
    for (int j = 0; j < L; ++j) {
      const T tau_j = ops::times_real(s.top[j * (small_ld + 1)], -s.signs[j]);
      T sum = zero;
#pragma unroll
      for (int l = 0; l < j; ++l)
        if (l >= i) sum = ops::add(sum, ops::multiply(row[l], g[l + j * L]));
      row[j] = i < j ? ops::minus_product(zero, tau_j, sum) : i == j ? tau_j : zero;
    }
#pragma unroll
    for (int j = 0; j < L; ++j) t[i + j * L] = row[j];
  }
  __syncthreads();

  for (int first = 0; first < nc; first += chunk_columns) {
    const int width = min(chunk_columns, nc - first);
#pragma unroll
    for (int k = 0; k < L * chunk_columns / panel_threads; ++k) {  // all loads at once
      const int e = tid + k * panel_threads;
      if (e < L * width) w[e] = ops::load_coherent(&reduced[L * (L + first) + e]);
    }
    __syncthreads();
    if (tid < width) {  // column tid of W becomes T^H W: (T^H)(i, l) = conj(T(l, i)), l <= i
      T x[L];
#pragma unroll
      for (int l = 0; l < L; ++l) x[l] = w[l + tid * L];
#pragma unroll
      for (int i = 0; i < L; ++i) {
        T sum = zero;
#pragma unroll
        for (int l = 0; l <= i; ++l)
          sum = ops::add(sum, ops::multiply(ops::conjugate(t[l + i * L]), x[l]));
        w[i + tid * L] = sum;
      }
    }
    __syncthreads();
    // C -= V (T^H W): warps split the chunk's groups of 32 columns and the rows between them.
    const int groups = (width + 31) / 32, splits = max(1, panel_warps / groups);
    const int split_rows = (rows + splits - 1) / splits;
    for (int unit = warp; unit < groups * splits; unit += panel_warps) {
      // A lane past the chunk stays out: reading a column that another lane writes was a race
      // (racecheck), harmless only because the value went unused.
      const int c = unit % groups * 32 + lane;
      if (c >= width) continue;
      const int begin = unit / groups * split_rows, end = min(rows, begin + split_rows);
      T y[L];
#pragma unroll
      for (int i = 0; i < L; ++i) y[i] = w[i + c * L];
      constexpr int together = 4;  // rows, each a chain of L dependent multiply-adds
      for (int r = begin; r < end; r += together) {
        T x[together];
#pragma unroll
        for (int q = 0; q < together; ++q) x[q] = at(min(r + q, end - 1), L + first + c);
#pragma unroll
        for (int i = 0; i < L; ++i)
#pragma unroll
          for (int q = 0; q < together; ++q)
            x[q] = ops::minus_product(x[q], at(min(r + q, end - 1), i), y[i]);
#pragma unroll
        for (int q = 0; q < together; ++q)
          if (r + q < end) at(r + q, L + first + c) = x[q];
      }
    }
    __syncthreads();
  }

  for (int e = tid; e < L * L; e += blockDim.x) {
    const int i = e % L, c = e / L, r = i - first_row;
    if (r < 0 || r >= rows || i > c) continue;
    at(r, c) = kept[e];
  }
  __syncthreads();
}

// One instance per Cholesky QR leaf width W (16 or 32): built together, the 32-wide leaf's
// registers made the whole kernel spill (ptxas, double: 255 registers and 128 bytes spilled; the
// 16-wide instance alone takes 192 and spills none, and a 16-column leaf ran 0.039 -> 0.033 ms).
template <int W, class T, class Real>
__global__ void __launch_bounds__(panel_threads)
    factor_panel(T* a, int p, int w, std::int64_t lda, T* tau, std::int64_t tau_stride,
                 int rows_per_block, int ld, Published<T, Real> published,
                 CholeskyQrExchange<T> exchange) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* tile = reinterpret_cast<T*>(shared_bytes);  // rows_per_block x w, column stride ld
  T* update = tile + std::size_t(ld) * w;        // w_c = conj(tau) v^H a_c of column j
  __shared__ Real per_warp[3][panel_warps];
  __shared__ Real column_norm;
  cg::grid_group grid = cg::this_grid();

  const int blocks = gridDim.x, block = blockIdx.x;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int first_row = block * rows_per_block;
  const int rows = max(0, min(p, first_row + rows_per_block) - first_row);
  auto at = [&](int local_row, int c) -> T& { return tile[local_row + c * ld]; };
  auto owns = [&](int row) { return row >= first_row && row < first_row + rows; };
  const T zero = ops::make_scalar<T>(0), one = ops::make_scalar<T>(1);

  // The block's rows of columns [begin, end) between the tile and the panel in global memory.
  const auto load_rows = [&](int begin, int end) {
    for (int e = threadIdx.x; e < rows * (end - begin); e += blockDim.x)
      at(e % rows, begin + e / rows) = a[first_row + e % rows + (begin + e / rows) * lda];
    __syncthreads();
  };
  const auto store_rows = [&](int begin, int end) {
    for (int e = threadIdx.x; e < rows * (end - begin); e += blockDim.x)
      a[first_row + e % rows + (begin + e / rows) * lda] = at(e % rows, begin + e / rows);
  };
  load_rows(0, w);
  // Leaves of the whole width up to cholesky_qr_widest columns, else of wide_leaf. Each is
  // tried by Cholesky QR first (the launcher's choice, alike for every block) where it is taller
  // than wide, then by Householder QR as below if that fails.
  const int leaf_width = w <= cholesky_qr_widest ? w : wide_leaf;
  for (int leaf = 0; leaf < min(p, w); leaf += leaf_width) {
    const int leaf_end = min(w, leaf + leaf_width);
    if (exchange.grams != nullptr && p - leaf > leaf_end - leaf) {
      // A later leaf's columns go to global memory first: every block reads the leaf's top
      // rows from there, and reloads its own from there if Cholesky QR fails.
      if (leaf > 0) store_rows(leaf, leaf_end);
      const SmallMatrices<T, Real> small(update + w);
      const int above = min(rows, max(0, leaf - first_row));  // the block's rows above the leaf
      T* leaf_rows = &at(above, leaf);
      T* leaf_top = a + leaf + leaf * lda;
      const int n_rows = rows - above, n_first = max(0, first_row - leaf), lw = leaf_end - leaf;
      const bool factored = factor_by_cholesky_qr<W>(leaf_rows, ld, n_rows, n_first, lw, leaf_top,
                                                     lda, tau + leaf * tau_stride, tau_stride,
                                                     exchange, small, per_warp[2], grid);
      if (factored) {
        if (leaf_end < w)
          update_right_of_leaf(leaf_rows, ld, n_rows, n_first, w - leaf_end, exchange.parts,
                               exchange.reduced, small, grid);
        continue;
      }
      load_rows(leaf, leaf_end);
    }

    for (int j = leaf; j < min(p, leaf_end); ++j) {
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
        const Real q =
            warp_reduce(scale2(lane_square, 2 * (lane_exponent - largest_exponent)), Plus());
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
        const T entry = k == 0   ? first_row_entry
                        : k == 1 ? second_row_entry
                                 : ops::load_coherent(&row[c]);
        if (lane == 0)
          update[c] = ops::multiply(applied, ops::add(entry, ops::multiply(s, inverse)));
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
  }

  store_rows(0, w);
}

std::size_t aligned(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

}  // namespace

// Shared memory the Cholesky QR path needs beside the rows: the small matrices, and one more row
// of w entries for an odd column stride (the Gram matrices' loads then hit distinct banks).
std::size_t cholesky_qr_bytes(int w, int entry_bytes) {
  return small_matrices_bytes(entry_bytes) + std::size_t(w) * entry_bytes;
}

// A panel wider than cholesky_qr_widest is taken only where its leaves fit the Cholesky QR path;
// a taller one would run Householder QR column by column, slower than the caller's recursion.
int geqr2_height_limit(int device, int w, int entry_bytes) {
  const std::size_t leaves = w > cholesky_qr_widest ? cholesky_qr_bytes(w, entry_bytes) : 0;
  return panel_grid::height_limit(device, w, entry_bytes, static_shared_bytes + int(leaves));
}

template <class T>
void geqr2(int device, cudaStream_t stream, T* panel, T* tau, const Geqr2Problem& p) {
  if (p.p == 0 || p.w == 0) return;
  using Real = ops::real_of_t<T>;
  if (p.p > geqr2_height_limit(device, p.w, sizeof(T)))
    throw std::invalid_argument("basalt: cuda geqr2: the panel exceeds the fused kernel's height");
  // Cholesky QR first where the first leaf is taller than wide and the rows fit beside the
  // small matrices.
  const int leaf_width = p.w <= cholesky_qr_widest ? p.w : wide_leaf;
  const std::size_t leaf_bytes = cholesky_qr_bytes(p.w, sizeof(T));
  const bool cholesky_qr =
      p.p > leaf_width &&
      p.p <= panel_grid::height_limit(device, p.w, sizeof(T), static_shared_bytes + leaf_bytes);
  auto grid =
      panel_grid::plan(device, stream, p.p, p.w, sizeof(T),
                       static_shared_bytes + (cholesky_qr ? leaf_bytes : 0), min_rows_per_block);
  if (cholesky_qr) grid.shared_bytes += leaf_bytes;
  const int blocks = grid.blocks, rows_per_block = grid.rows_per_block;
  const auto kernel = leaf_width <= 16 ? factor_panel<16, T, Real> : factor_panel<32, T, Real>;
  panel_grid::make_resident(kernel, panel_threads, grid, device);

  const std::size_t product_bytes = aligned(2 * std::size_t(blocks) * p.w * sizeof(T));
  const std::size_t row_bytes = aligned(2 * std::size_t(p.w) * sizeof(T));
  const std::size_t square_bytes = aligned(2 * std::size_t(blocks) * sizeof(Real));
  const std::size_t exponent_bytes = aligned(2 * std::size_t(blocks) * sizeof(int));
  const std::size_t gram_bytes =
      cholesky_qr ? aligned(2 * std::size_t(blocks) * gram_entries * sizeof(T)) : 0;
  const std::size_t below_bytes = cholesky_qr ? aligned(std::size_t(blocks) * sizeof(int)) : 0;
  const std::size_t part_bytes =
      cholesky_qr && p.w > leaf_width ? (std::size_t(blocks) + 1) * wide_leaf * p.w * sizeof(T) : 0;
  auto* exchange = static_cast<unsigned char*>(
      acquire_workspace(device, stream,
                        product_bytes + row_bytes + square_bytes + exponent_bytes + gram_bytes +
                            below_bytes + part_bytes));
  Published<T, Real> published{
      reinterpret_cast<T*>(exchange), reinterpret_cast<T*>(exchange + product_bytes),
      reinterpret_cast<Real*>(exchange + product_bytes + row_bytes),
      reinterpret_cast<int*>(exchange + product_bytes + row_bytes + square_bytes)};
  CholeskyQrExchange<T> cholesky_qr_exchange{};
  if (cholesky_qr) {
    unsigned char* grams = exchange + product_bytes + row_bytes + square_bytes + exponent_bytes;
    T* parts = part_bytes ? reinterpret_cast<T*>(grams + gram_bytes + below_bytes) : nullptr;
    cholesky_qr_exchange = {reinterpret_cast<T*>(grams), reinterpret_cast<int*>(grams + gram_bytes),
                            parts, parts ? parts + std::size_t(blocks) * wide_leaf * p.w : nullptr};
  }
  int m = p.p, w = p.w, rows = rows_per_block,
      ld = cholesky_qr ? rows_per_block | 1 : rows_per_block;
  std::int64_t lda = p.lda, tau_stride = p.tau_stride;
  void* args[] = {&panel,      &m,    &w,  &lda,       &tau,
                  &tau_stride, &rows, &ld, &published, &cholesky_qr_exchange};
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
