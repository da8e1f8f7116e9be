// CUDA batched Householder QR of small matrices, the current reflector in shared memory: up to
// 32 x 32 one warp segment per matrix, lane c holding column c in registers; up to 64 x 64 a
// block per matrix, two threads per column.
#include <cuComplex.h>

#include <type_traits>

#include "basalt/backends/cuda/batched/geqrf_batched_launch.hpp"
#include "basalt/backends/cuda/batched/warp_batch.cuh"
#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/scalar_ops.cuh"

namespace basalt::cuda::kernels {

namespace {

// Two warps a block: a 32 x 32 complex double tile is 17 kB a warp, and small blocks leave
// room for several on a multiprocessor.
constexpr int threads_per_block = 64;

// A matrix's tile in shared memory: column c at c * (S + 1), so that lanes reading their own
// columns row by row meet no bank conflict, and one element more, so that the segments of a
// warp reading the same element of their own tiles hit different banks.
template <int S>
constexpr int tile_size = (S + 1) * S + 1;

// Whether x's plain sum of squares gives its norm: finite, and large enough that squares lost
// to underflow cannot matter.
template <class Real>
__device__ __forceinline__ bool squares_trusted(Real squares) {
  return squares >= ops::smallest_trusted_square<Real>() && isfinite(squares);
}

// ||x|| scaled by its largest magnitude, for sums of squares of x (rows j + 1 .. N - 1) that are
// not trusted; from x as the caller has written it to the tile (x(i) at x_in_tile[i]), in loops
// not unrolled (from the registers it would cost some 50 registers on every path, 32 x 32 double).
template <class T, int N>
__device__ __forceinline__ ops::real_of_t<T> scaled_norm(const T* x_in_tile, int j) {
  using Real = ops::real_of_t<T>;
  Real largest = 0;  // a NaN is passed over here and comes back in the sum
#pragma unroll 1
  for (int i = j + 1; i < N; ++i) largest = fmax(largest, ops::magnitude(x_in_tile[i]));
  const Real scale = largest > Real(0) ? largest : Real(1);
  Real scaled = 0;
#pragma unroll 1
  for (int i = j + 1; i < N; ++i) {
    const Real r = ops::magnitude(x_in_tile[i]) / scale;
    scaled += r * r;
  }
  return scale * sqrt(scaled);
}

// larfg's outputs for step j: tau, beta, and the divisor of v = x / (alpha - beta).
template <class T>
struct Reflector {
  T tau;
  T divisor;
  ops::real_of_t<T> beta;
};

// larfg's outputs from norm = ||(alpha, x)||, as the portable team kernel: beta = -sign(re alpha)
// norm, tau = (beta - alpha) / beta (zero where H(j) = I: x zero and alpha real).
template <class T>
__device__ __forceinline__ Reflector<T> reflector_from_norm(ops::real_of_t<T> norm, bool x_is_zero,
                                                            ops::real_of_t<T> alpha_re,
                                                            ops::real_of_t<T> alpha_im) {
  using Real = ops::real_of_t<T>;
  const bool identity = x_is_zero && alpha_im == Real(0);
  const Real beta = alpha_re >= Real(0) ? -norm : norm;
  const T tau = identity ? T{} : ops::make_scalar<T>((beta - alpha_re) / beta, -alpha_im / beta);
  return {tau, ops::make_scalar<T>(alpha_re - beta, alpha_im), beta};
}

// larfg's outputs where the plain sum of squares does not give ||(alpha, x)||: by norm3 where x's
// sum of squares is trusted, else from scaled_norm.
template <class T, int N>
__device__ __forceinline__ Reflector<T> rare_reflector(ops::real_of_t<T> squares, bool trusted,
                                                       ops::real_of_t<T> alpha_re,
                                                       ops::real_of_t<T> alpha_im,
                                                       const T* x_in_tile, int j) {
  using Real = ops::real_of_t<T>;
  const Real xnorm = trusted ? sqrt(squares) : scaled_norm<T, N>(x_in_tile, j);
  return reflector_from_norm<T>(ops::norm3(alpha_re, alpha_im, xnorm), xnorm == Real(0), alpha_re,
                                alpha_im);
}

// rare_reflector as a call. Inlined into each unrolled step of the warp kernel, its divisions and
// square roots brought their slow paths (101 of them at 8 x 8); as a call they cost registers
// instead, which pays only from 17 rows up (perf/NOTES.md, "The warp kernels on full matrices").
// The column-pair kernel (N = 48, 64) runs its steps in a rolled loop, where the inlined paths
// appear once: it keeps them inline.
template <class T, int N>
__device__ __noinline__ Reflector<T> rare_reflector_call(ops::real_of_t<T> squares, bool trusted,
                                                         ops::real_of_t<T> alpha_re,
                                                         ops::real_of_t<T> alpha_im,
                                                         const T* x_in_tile, int j) {
  return rare_reflector<T, N>(squares, trusted, alpha_re, alpha_im, x_in_tile, j);
}

// larfg's outputs from all_squares = |alpha|^2 + ||x||^2, trusted and finite. In double, 1 /
// norm by the hardware's estimate and a Newton step, and tau from it without a division: CUDA's
// square root and division, each with a branch and a call for special operands, in every unrolled
// step, with the divisions of divide_inline_or_call, took the 32-row kernel past what the
// multiprocessor's instruction cache holds (perf/NOTES.md, "QR's steps without divisions").
template <class T>
__device__ __forceinline__ Reflector<T> plain_reflector(ops::real_of_t<T> all_squares,
                                                        ops::real_of_t<T> alpha_re,
                                                        ops::real_of_t<T> alpha_im) {
  using Real = ops::real_of_t<T>;
  if constexpr (std::is_same_v<Real, double>) {
    const Real reciprocal_norm = ops::rsqrt_of_normal(all_squares);
    const Real norm = all_squares * reciprocal_norm;
    const bool nonnegative = alpha_re >= Real(0);
    // 1 / beta = -sign(re alpha) / norm, so (beta - alpha) / beta = 1 + |re alpha| / norm - i
    // im alpha / beta.
    const T tau =
        ops::make_scalar<T>(fma(fabs(alpha_re), reciprocal_norm, Real(1)),
                            alpha_im * (nonnegative ? reciprocal_norm : -reciprocal_norm));
    const Real beta = nonnegative ? -norm : norm;
    return {tau, ops::make_scalar<T>(alpha_re - beta, alpha_im), beta};
  } else {
    return reflector_from_norm<T>(sqrt(all_squares), false, alpha_re, alpha_im);
  }
}

// LAPACK's larfg for step j from alpha and the sum of squares of x (rows j + 1 .. N - 1): beta =
// -sign(re alpha) ||(alpha, x)||, tau = (beta - alpha) / beta, and the divisor of v = x / (alpha -
// beta); as the portable team kernel. ||(alpha, x)|| from the plain sum where that is trusted and
// stays finite with alpha's square; otherwise rare_reflector.
template <class T, int N>
__device__ __forceinline__ void reflector_from_squares(ops::real_of_t<T> squares, T alpha,
                                                       const T* x_in_tile, int j, T& tau,
                                                       T& divisor, ops::real_of_t<T>& beta) {
  using Real = ops::real_of_t<T>;
  constexpr bool complex = ops::is_complex<T>;
  const Real alpha_re = ops::real_part(alpha), alpha_im = ops::imag_part(alpha);
  const bool trusted = squares_trusted(squares);
  const Real all_squares = squares + alpha_re * alpha_re + (complex ? alpha_im * alpha_im : 0);
  Reflector<T> r;
  if (trusted && isfinite(all_squares))
    r = plain_reflector<T>(all_squares, alpha_re, alpha_im);
  else if constexpr (N > 16 && N <= 32)
    r = rare_reflector_call<T, N>(squares, trusted, alpha_re, alpha_im, x_in_tile, j);
  else
    r = rare_reflector<T, N>(squares, trusted, alpha_re, alpha_im, x_in_tile, j);
  tau = r.tau;
  divisor = r.divisor;
  beta = r.beta;
}

// x / d. In double through d's reciprocal where d is moderate (CUDA's division without its
// branch for special operands), otherwise by CUDA's division as a call, for the reason
// plain_reflector gives.
__device__ __noinline__ double divide_call(double x, double d) { return x / d; }
template <class T>
__device__ __forceinline__ T divide_inline_or_call(T x, T d) {
  if constexpr (std::is_same_v<T, double>) {
    if (ops::is_moderate(d))
      return ops::quotient_by_reciprocal(x, d, ops::reciprocal_of_moderate(d));
    return divide_call(x, d);
  } else {
    return ops::divide(x, d);
  }
}

// Whether 1 / d is a normal number, so that x (1 / d) loses nothing to overflow or underflow
// (LAPACK's larfg scales x by that reciprocal): d's larger part from the smallest normal number
// to 2^-4 of the largest power of two (|d| is at most sqrt(2) times that part).
template <class T>
__device__ __forceinline__ bool has_normal_reciprocal(T d) {
  using Real = ops::real_of_t<T>;
  const Real largest = fmax(fabs(ops::real_part(d)), fabs(ops::imag_part(d)));
  if constexpr (sizeof(Real) == 4)
    return largest >= FLT_MIN && largest <= 0x1p124f;
  else
    return largest >= DBL_MIN && largest <= 0x1p1020;
}

// x's sum of squares, x the rows of col past j. Rolled (j not a constant): over the rows from
// `first` (<= j, a constant) on, those up to j as zeros. Four partial sums: a shorter chain of
// dependent additions on the step's critical path. Real sums of squares as one multiply-add each.
template <bool Rolled, class T, int K>
__device__ __forceinline__ ops::real_of_t<T> squares_below(const T (&col)[K], int j, int first) {
  using Real = ops::real_of_t<T>;
  constexpr bool complex = ops::is_complex<T>;
  Real partial[4] = {};
#pragma unroll
  for (int k = first; k < K; ++k) {
    if (!Rolled && k <= j) continue;
    const T x = !Rolled || k > j ? col[k] : T{};
    const Real re = ops::real_part(x), im = ops::imag_part(x);
    partial[k % 4] += re * re;
    if (complex) partial[k % 4] += im * im;
  }
  return (partial[0] + partial[1]) + (partial[2] + partial[3]);
}

// larfg on column j, held whole by the calling lane, x as the lane has already written it to the
// tile; rolled, from the rows from `first` (<= j) on, as squares_below.
template <bool Rolled, class T, int N>
__device__ __forceinline__ void reflector(const T (&col)[N], const T* x_in_tile, int j, int first,
                                          T& tau, T& divisor, ops::real_of_t<T>& beta) {
  T alpha{};
#pragma unroll
  for (int i = first; i < N; ++i)
    if (i == j) alpha = col[i];
  reflector_from_squares<T, N>(squares_below<Rolled>(col, j, first), alpha, x_in_tile, j, tau,
                               divisor, beta);
}

// Whether the warp kernel takes its steps in rolled phases of geqrf_phase_steps: complex double
// from 21 rows, complex single from 29. Unrolled, each step's code is its own, and the complex
// kernels' is the largest (the instruction cache was the likely limit of double's from 29 rows,
// perf/NOTES.md, "QR's steps without divisions"). A phase's rows run from its first step's, the
// rows above a step taking part with v = 0: more work a step, which elsewhere cost more than the
// code saved (perf/NOTES.md, "QR's warp kernel in rolled phases"). Phases of 4 steps from 25
// rows, 8 below (complex double, 20000 matrices: 32 x 32 0.98 ms against 1.05 with 8, 24 x 24
// 0.61 against 0.64 with 4; H200).
template <class T, int N>
constexpr bool geqrf_rolled_steps =
    std::is_same_v<T, cuDoubleComplex> ? N > 20 : N > 28 && std::is_same_v<T, cuFloatComplex>;
template <int N>
constexpr int geqrf_phase_steps = N > 24 ? 4 : 8;

// Step j of geqrf_columns on the calling lane's column col (tile: the segment's, tau: the
// matrix's, stored where stores_tau). Unrolled (j a constant), over the rows from j on, with v(j)
// = 1 a constant. Rolled, over the rows from `first` (<= j, a constant) on: the tile's column j
// then holds v with v(j) = 1 and zeros above, so that rows first .. j - 1 take part unchanged (x
// - 0 w = x for finite w; a NaN or Inf in w reaches them too, as in the column-pair kernel) and
// no row is tested against j. The loops over rows start at `first`: from 0 with a test, their
// bounds constant, the compiler unrolled them before the loop over steps, which it then left
// rolled from 28 rows (j not a constant: twice the time).
template <bool Rolled, int S, class T, int N>
__device__ __forceinline__ void geqrf_columns_step(T (&col)[N], T* tile,
                                                   const warp::Located<T>& tau, bool stores_tau,
                                                   int j, int first, int lane, int m, int steps) {
  // Column j of the tile is written only at step j (x by lane j, then v by each lane in its
  // own row), each time before a barrier after which the others read it; no element is
  // written again once another lane has read it, until R is stored after the steps (rolled,
  // the others read rows first .. j too; a barrier precedes that store).
  T* const v = tile + j * (S + 1);
  T t{}, divisor{};
  if (lane == j) {
#pragma unroll
    for (int i = first; i < N; ++i)  // x below row j, or the output if H(j) = I
      if (Rolled || i > j) v[i] = col[i];
    ops::real_of_t<T> beta;
    reflector<Rolled>(col, v, j, first, t, divisor, beta);
    if (j < steps && stores_tau) tau.base[j * tau.row_stride] = t;
    if (j < steps && !ops::is_zero(t)) {
#pragma unroll
      for (int i = first; i < N; ++i)
        if (i == j) col[i] = ops::make_scalar<T>(beta);
    }
    if constexpr (Rolled) {
      // v(j) = 1 and zeros above it. (Selected in the loop above, row by row, they took the
      // 24-row kernel in double from 126 registers to 190.)
#pragma unroll 1
      for (int i = first; i < j; ++i) v[i] = T{};
      v[j] = ops::make_scalar<T>(1);
    }
  }
  t = warp::shuffle<S>(t, j);
  divisor = warp::shuffle<S>(divisor, j);
  const bool reflect = j < steps && !ops::is_zero(t);  // tau is zero exactly when H(j) = I
  __syncwarp();
  // Each entry divided, not multiplied by a reciprocal that could overflow.
  if (reflect && lane > j && lane < m) v[lane] = divide_inline_or_call(v[lane], divisor);
  __syncwarp();
  // w = v^H A(first:m, c), then A(first:m, c) -= v conj(tau) w.
  const bool update = reflect && lane > j;
  T scaled_w{};
  if (update) {
    T w[2] = {};  // two partial sums, for the same reason as in reflector
#pragma unroll
    for (int i = first; i < N; ++i) {
      w[i % 2] = !Rolled && i == j  // unrolled, row j comes first
                     ? col[i]
                     : ops::add(w[i % 2], ops::multiply(ops::conjugate(v[i]), col[i]));
    }
    scaled_w = ops::multiply(ops::conjugate(t), ops::add(w[0], w[1]));
  }
  // v read again below rather than held in registers from the loop above: S more values in
  // registers (4 S registers in complex double) would cost more warps per multiprocessor than
  // the loads cost.
  __syncwarp();
  if (update) {
#pragma unroll
    for (int i = first; i < N; ++i)
      col[i] =
          ops::minus_product(col[i], !Rolled && i == j ? ops::make_scalar<T>(1) : v[i], scaled_w);
  }
}

// The portable team kernel's geqr2, lane c of a segment owning column c. Step j: lane j forms
// the reflector from its column and leaves x in the tile's column j, every lane divides its row
// of it (v), and each lane c > j computes w = v^H A(j:m, c) on its own (v read as a broadcast)
// and updates its column: no reductions across lanes. Rows and columns past the matrix are
// zero, so the loops over them run to N, the size class (in segments of S lanes, the power of
// two that holds N); the steps stop after the warp's last (the tile's columns past it are then
// stale only below the diagonal, outside the matrices); unrolled, or in rolled phases
// (geqrf_rolled_steps). Control flow around the shuffles and __syncwarp is the same on every
// lane of the warp; lanes branch only around their own arithmetic. Full: every matrix N x N
// (warp::full_size_class).
template <class T, int N, bool Full>
__global__ void __launch_bounds__(threads_per_block)
    geqrf_columns(DeviceBatch<T> batch, DeviceBatch<T> taus, int count) {
  constexpr int S = warp::segment_lanes(N);  // matrices up to N x N in segments of S lanes
  __shared__ T tiles[threads_per_block / S][tile_size<S>];
  const int warp_slot = warp::segment_slot<S, threads_per_block>(blockIdx.x, threadIdx.x / 32 * 32);
  if (warp_slot >= count) return;  // the whole warp is past the batch
  const int b =
      warp::member(batch, warp::segment_slot<S, threads_per_block>(blockIdx.x, threadIdx.x), count);
  const int lane = threadIdx.x % S;  // a row to move, a column to own
  const warp::Located<T> a = warp::locate(batch, b);
  const warp::Located<T> tau = warp::locate(taus, b);
  const int m = Full ? N : a.rows, n = Full ? N : a.cols, steps = min(m, n);
  // Full: a segment past the batch (b = -1) loads and stores nothing but takes its steps.
  const bool mine = lane < m && (!Full || b >= 0);
  // The warp stops after the last step any of its matrices has: a matrix of 17 to 32 columns
  // takes a whole warp, and a variable batch's warps hold matrices of like sizes.
  const int warp_steps = Full ? N : __reduce_max_sync(warp::full_mask, steps);
  T* tile = tiles[threadIdx.x / S];

  // Through the tile: read and written a column at a time, coalesced. All loads first, into
  // the registers that then take the lane's column: a store to the tile between two loads
  // would keep the next load waiting for it (a.base might point into shared memory).
  T col[N];
#pragma unroll
  for (int c = 0; c < N; ++c)
    col[c] = mine && c < n ? a.base[lane * a.row_stride + c * a.col_stride] : T{};
#pragma unroll
  for (int c = 0; c < S; ++c) tile[c * (S + 1) + lane] = c < N ? col[c] : T{};
  __syncwarp();
#pragma unroll
  for (int i = 0; i < N; ++i) col[i] = tile[lane * (S + 1) + i];

  const bool stores_tau = !Full || b >= 0;
  if constexpr (geqrf_rolled_steps<T, N>) {
    warp::steps_in_rolled_phases<N, geqrf_phase_steps<N>>(warp_steps, [&](int j, int first) {
      geqrf_columns_step<true, S>(col, tile, tau, stores_tau, j, first, lane, m, steps);
    });
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j) {
      if (j == warp_steps) break;
      geqrf_columns_step<false, S>(col, tile, tau, stores_tau, j, j, lane, m, steps);
    }
  }

  // R on and above the diagonal from the registers; below it the tile already holds v. Rolled,
  // the last step read its column's rows from its phase's first on, which R now overwrites.
  if constexpr (geqrf_rolled_steps<T, N>) __syncwarp();
#pragma unroll
  for (int i = 0; i < N; ++i)
    if (i <= lane) tile[lane * (S + 1) + i] = col[i];
  __syncwarp();
#pragma unroll
  for (int c = 0; c < N; ++c)
    if (mine && c < n) a.base[lane * a.row_stride + c * a.col_stride] = tile[c * (S + 1) + lane];
}

// Matrices of 33 to 64 rows and columns (N = 48 or 64, the class): a block of 2 N threads per
// matrix, two threads per column, half h of column c holding rows h, h + 2, h + 4, ... of it (so
// that both halves stay busy as the steps leave the top rows behind); warp k holds columns 16 k
// to 16 k + 15, its lane l the half l / 16 of column 16 k + l % 16. Step j: the warp holding
// column j forms the reflector (the pair's two sums of squares added by a shuffle) and the pair
// scales x by 1 / (alpha - beta), as LAPACK's larfg does (dividing where that reciprocal is not a
// normal number), into the tile's column j; after one block barrier each column c > j takes w =
// v^H A(j:m, c) as two half sums and a shuffle, and updates its rows. One block barrier a step,
// no reductions across more than a pair of lanes. Rows and columns past the matrix are zero.
template <class T, int N>
__global__ void __launch_bounds__(2 * N, N == 64 ? 3 : 4)
    geqrf_column_pairs(DeviceBatch<T> batch, DeviceBatch<T> taus) {
  static_assert(N == 48 || N == 64, "phases of 16 steps, a warp per 16 columns");
  using Real = ops::real_of_t<T>;
  constexpr bool complex = ops::is_complex<T>;
  constexpr int ld = N + 1;  // 2 x 16 lanes reading rows 2 k + h of their columns: 2 wavefronts
  constexpr int K = N / 2;   // rows a thread holds
  __shared__ T tile[N * ld];
  __shared__ T step_tau[2];  // by step parity: step j + 2 writes only after every read of j's
  const int b = warp::member(batch, blockIdx.x, gridDim.x);
  const warp::Located<T> a = warp::locate(batch, b);
  const warp::Located<T> tau = warp::locate(taus, b);
  const int m = a.rows, n = a.cols, steps = min(m, n);
  const int lane = threadIdx.x % 32, h = lane / 16, warp_first = threadIdx.x / 32 * 16;
  const int column = warp_first + lane % 16;

  // Loads down the columns (thread t: row t % N of columns 2 k + t / N), all before the tile.
  const int load_row = threadIdx.x % N, load_column = threadIdx.x / N;
  T col[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int c = 2 * k + load_column;
    col[k] = load_row < m && c < n ? a.base[load_row * a.row_stride + c * a.col_stride] : T{};
  }
#pragma unroll
  for (int k = 0; k < K; ++k) tile[(2 * k + load_column) * ld + load_row] = col[k];
  __syncthreads();
#pragma unroll
  for (int k = 0; k < K; ++k) col[k] = tile[column * ld + 2 * k + h];

  // The steps in phases of 16: a phase's loops over a thread's rows start at its first step's
  // row (k = F), every step of it runs the same code (rolled: with the steps unrolled the kernel
  // ran 1.6x-1.7x slower, perf/NOTES.md), and the rows between that start and step j take part with
  // v = 0 (v(j) = 1), so no row needs a test. The tile's column j is written only at step j, by
  // column j's pair, which alone read it before; the others read it after that step's barrier.
  const auto phase = [&](auto first_k) {
    constexpr int F = decltype(first_k)::value;
#pragma unroll 1
    for (int j = 2 * F; j < min(2 * F + 16, steps); ++j) {
      T* const v = tile + j * ld;
      if (threadIdx.x / 32 == j / 16) {
        // The whole warp runs larfg, so that its shuffles take every lane; only column j's pair
        // uses the result (the others' sum is set to one, which keeps them off the scaled path).
        Real partial[4] = {};
        T alpha_here{};
#pragma unroll
        for (int k = F; k < K; ++k) {
          const int row = 2 * k + h;
          const Real re = ops::real_part(col[k]), im = ops::imag_part(col[k]);
          partial[k % 4] += row > j ? (complex ? re * re + im * im : re * re) : Real(0);
          if (row == j) alpha_here = col[k];
        }
        Real squares = (partial[0] + partial[1]) + (partial[2] + partial[3]);
        squares += warp::shuffle_xor<32>(squares, 16);
        const T alpha = warp::shuffle<32>(alpha_here, j % 16 + 16 * (j % 2));
        if (column != j) squares = Real(1);
        const bool scaled = !squares_trusted(squares);
        if (scaled) {
#pragma unroll
          for (int k = F; k < K; ++k)
            if (2 * k + h > j) v[2 * k + h] = col[k];
        }
        __syncwarp();
        T t, divisor;
        Real beta;
        reflector_from_squares<T, N>(squares, alpha, v, j, t, divisor, beta);
        __syncwarp();  // the scaled path's reads of x are done
        if (column == j) {
          if (!ops::is_zero(t)) {
            if (has_normal_reciprocal(divisor)) {
              const T reciprocal = ops::divide(ops::make_scalar<T>(Real(1)), divisor);
#pragma unroll
              for (int k = F; k < K; ++k)
                if (2 * k + h > j) col[k] = ops::multiply(col[k], reciprocal);
            } else {
#pragma unroll
              for (int k = F; k < K; ++k)
                if (2 * k + h > j) col[k] = ops::divide(col[k], divisor);
            }
#pragma unroll
            for (int k = F; k < K; ++k)
              if (2 * k + h == j) col[k] = ops::make_scalar<T>(beta);
          }
          // The column as the others apply it (where H(j) = I they do not: x stays, the output).
#pragma unroll
          for (int k = F; k < K; ++k) {
            const int row = 2 * k + h;
            v[row] = row > j ? col[k] : ops::make_scalar<T>(row == j ? Real(1) : Real(0));
          }
          if (h == 0) {
            step_tau[j % 2] = t;
            tau.base[j * tau.row_stride] = t;
          }
        }
      }
      __syncthreads();
      const T t = step_tau[j % 2];
      if (ops::is_zero(t) || warp_first + 15 <= j) continue;  // the same on the whole warp
      // w = v^H A(j:m, c), then A(j:m, c) -= v conj(tau) w. v read again in the update rather
      // than held: K more registers would cost blocks per multiprocessor.
      T sums[2] = {};
#pragma unroll
      for (int k = F; k < K; ++k)
        sums[k % 2] = ops::add(sums[k % 2], ops::multiply(ops::conjugate(v[2 * k + h]), col[k]));
      const T part = ops::add(sums[0], sums[1]);
      const T w = ops::add(part, warp::shuffle_xor<32>(part, 16));
      if (column > j) {
        const T scaled_w = ops::multiply(ops::conjugate(t), w);
#pragma unroll
        for (int k = F; k < K; ++k) col[k] = ops::minus_product(col[k], v[2 * k + h], scaled_w);
      }
    }
  };
  phase(std::integral_constant<int, 0>{});
  phase(std::integral_constant<int, 8>{});
  phase(std::integral_constant<int, 16>{});
  if constexpr (N > 48) phase(std::integral_constant<int, 24>{});

  // The output from the registers (R, and v or x below the diagonal), through the tile.
  __syncthreads();
#pragma unroll
  for (int k = 0; k < K; ++k) tile[column * ld + 2 * k + h] = col[k];
  __syncthreads();
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int c = 2 * k + load_column;
    if (load_row < m && c < n)
      a.base[load_row * a.row_stride + c * a.col_stride] = tile[c * ld + load_row];
  }
}

}  // namespace

template <class T>
void geqrf_batched_small(cudaStream_t stream, const DeviceBatch<T>& A, const DeviceBatch<T>& tau,
                         int count, int largest) {
  warp::with_full(warp::full_size_class(A, largest), [&](auto full) {
    warp::launch_segments_in_blocks<threads_per_block>(
        stream, count, largest,
        [](auto size) { return geqrf_columns<T, decltype(size)::value, decltype(full)::value>; }, A,
        tau, count);
  });
}

template <class T>
int geqrf_batched_small_resident_matrices(int largest) {
  return warp::resident_matrices<threads_per_block>(
      largest, [](auto size) { return geqrf_columns<T, decltype(size)::value, false>; });
}

template <class T>
void geqrf_batched_pairs(cudaStream_t stream, const DeviceBatch<T>& A, const DeviceBatch<T>& tau,
                         int count, int largest) {
  if (count == 0) return;
  if (largest <= 48)
    geqrf_column_pairs<T, 48><<<count, 96, 0, stream>>>(A, tau);
  else
    geqrf_column_pairs<T, 64><<<count, 128, 0, stream>>>(A, tau);
  BASALT_CUDA_CHECK_LAUNCH();
}

#define BASALT_INSTANTIATE_GEQRF_BATCHED_SMALL(T)                                                  \
  template void geqrf_batched_small<T>(cudaStream_t, const DeviceBatch<T>&, const DeviceBatch<T>&, \
                                       int, int);                                                  \
  template int geqrf_batched_small_resident_matrices<T>(int);

BASALT_INSTANTIATE_GEQRF_BATCHED_SMALL(float)
BASALT_INSTANTIATE_GEQRF_BATCHED_SMALL(double)
BASALT_INSTANTIATE_GEQRF_BATCHED_SMALL(cuFloatComplex)
BASALT_INSTANTIATE_GEQRF_BATCHED_SMALL(cuDoubleComplex)

// Not complex double: its 64 x 64 tile exceeds a block's static shared memory, and its columns
// the registers.
#define BASALT_INSTANTIATE_GEQRF_BATCHED_PAIRS(T)                                                  \
  template void geqrf_batched_pairs<T>(cudaStream_t, const DeviceBatch<T>&, const DeviceBatch<T>&, \
                                       int, int);
BASALT_INSTANTIATE_GEQRF_BATCHED_PAIRS(float)
BASALT_INSTANTIATE_GEQRF_BATCHED_PAIRS(double)
BASALT_INSTANTIATE_GEQRF_BATCHED_PAIRS(cuFloatComplex)

}  // namespace basalt::cuda::kernels
