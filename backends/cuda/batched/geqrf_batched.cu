// CUDA batched Householder QR of small matrices: one warp segment per matrix, lane c holding
// column c in registers, the current reflector in shared memory.
#include <cuComplex.h>

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

// LAPACK's larfg on column j, held by the calling lane (col: its rows): beta = -sign(re alpha)
// ||(alpha, x)||, tau = (beta - alpha) / beta, and the divisor of v = x / (alpha - beta); as
// the portable team kernel. ||x|| from the plain sum of squares where that can neither have
// overflowed nor lost squares to underflow, else scaled by the largest magnitude, from x as
// the lane has already written it to the tile (x(i) at x_in_tile[i], i > j); ||(alpha, x)||
// from the plain sum too where that is finite, else by norm3. Inlined into the
// unrolled loop over j, so that every index of col is a constant.
template <class T, int N>
__device__ __forceinline__ void reflector(const T (&col)[N], const T* x_in_tile, int j, T& tau,
                                          T& divisor, ops::real_of_t<T>& beta) {
  using Real = ops::real_of_t<T>;
  constexpr bool complex = sizeof(T) != sizeof(Real);
  // Four partial sums: a shorter chain of dependent additions on the step's critical path.
  Real partial[4] = {};
#pragma unroll
  for (int i = j + 1; i < N; ++i) {
    const Real re = ops::real_part(col[i]), im = ops::imag_part(col[i]);
    partial[i % 4] += re * re;
    if (complex) partial[i % 4] += im * im;
  }
  const Real squares = (partial[0] + partial[1]) + (partial[2] + partial[3]);
  const Real alpha_re = ops::real_part(col[j]), alpha_im = ops::imag_part(col[j]);
  const bool trusted = squares >= ops::smallest_trusted_square<Real>() && isfinite(squares);
  // ||(alpha, x)|| from the plain sum where that is finite too: one square root on the step's
  // critical path instead of two and norm3's divisions.
  const Real all_squares = squares + alpha_re * alpha_re + (complex ? alpha_im * alpha_im : 0);
  Real norm;
  bool x_is_zero = false;  // a trusted sum of squares is positive
  if (trusted && isfinite(all_squares)) {
    norm = sqrt(all_squares);
  } else if (trusted) {
    norm = ops::norm3(alpha_re, alpha_im, sqrt(squares));
  } else {
    // The rare path, from the tile in loops not unrolled: from the registers it would cost
    // some 50 registers on every path (32 x 32 double).
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
    const Real xnorm = scale * sqrt(scaled);
    x_is_zero = xnorm == Real(0);
    norm = ops::norm3(alpha_re, alpha_im, xnorm);
  }
  const bool identity = x_is_zero && alpha_im == Real(0);  // H(j) = I, tau = 0
  beta = alpha_re >= Real(0) ? -norm : norm;
  tau = identity ? T{} : ops::make_scalar<T>((beta - alpha_re) / beta, -alpha_im / beta);
  divisor = ops::make_scalar<T>(alpha_re - beta, alpha_im);
}

// The portable team kernel's geqr2, lane c of a segment owning column c. Step j: lane j forms
// the reflector from its column and leaves x in the tile's column j, every lane divides its row
// of it (v), and each lane c > j computes w = v^H A(j:m, c) on its own (v read as a broadcast)
// and updates its column: no reductions across lanes. Rows and columns past the matrix are
// zero, so the loops over them run to N, the size class (in segments of S lanes, the power of
// two that holds N); the steps stop after the warp's last (the tile's columns past it are then
// stale only below the diagonal, outside the matrices). Control flow around the shuffles and
// __syncwarp is the same on every lane of the warp; lanes branch only around their own
// arithmetic.
template <class T, int N>
__global__ void __launch_bounds__(threads_per_block)
    geqrf_columns(DeviceBatch<T> batch, DeviceBatch<T> taus, int count) {
  constexpr int S = warp::segment_lanes(N);  // matrices up to N x N in segments of S lanes
  __shared__ T tiles[threads_per_block / S][tile_size<S>];
  const int thread = blockIdx.x * threads_per_block + threadIdx.x;
  if ((thread - threadIdx.x % 32) / S >= count) return;  // the whole warp is past the batch
  const int b = warp::member(batch, thread / S, count);
  const int lane = threadIdx.x % S;  // a row to move, a column to own
  const warp::Located<T> a = warp::locate(batch, b);
  const warp::Located<T> tau = warp::locate(taus, b);
  const int m = a.rows, n = a.cols, steps = min(m, n);
  // The warp stops after the last step any of its matrices has: a matrix of 17 to 32 columns
  // takes a whole warp, and a variable batch's warps hold matrices of like sizes.
  const int warp_steps = __reduce_max_sync(warp::full_mask, steps);
  T* tile = tiles[threadIdx.x / S];

  // Through the tile: read and written a column at a time, coalesced. All loads first, into
  // the registers that then take the lane's column: a store to the tile between two loads
  // would keep the next load waiting for it (a.base might point into shared memory).
  T col[N];
#pragma unroll
  for (int c = 0; c < N; ++c)
    col[c] = lane < m && c < n ? a.base[lane * a.row_stride + c * a.col_stride] : T{};
#pragma unroll
  for (int c = 0; c < S; ++c) tile[c * (S + 1) + lane] = c < N ? col[c] : T{};
  __syncwarp();
#pragma unroll
  for (int i = 0; i < N; ++i) col[i] = tile[lane * (S + 1) + i];

#pragma unroll
  for (int j = 0; j < N; ++j) {
    if (j == warp_steps) break;
    // Column j of the tile is written only at step j (x by lane j, then v by each lane in its
    // own row), each time before a barrier after which the others read it; no element is
    // written again once another lane has read it.
    T* const v = tile + j * (S + 1);
    T t{}, divisor{};
    if (lane == j) {
#pragma unroll
      for (int i = j + 1; i < N; ++i) v[i] = col[i];  // x, or the output if H(j) = I
      ops::real_of_t<T> beta;
      reflector(col, v, j, t, divisor, beta);
      if (j < steps) tau.base[j * tau.row_stride] = t;
      if (j < steps && !ops::is_zero(t)) col[j] = ops::make_scalar<T>(beta);
    }
    t = warp::shuffle<S>(t, j);
    divisor = warp::shuffle<S>(divisor, j);
    const bool reflect = j < steps && !ops::is_zero(t);  // tau is zero exactly when H(j) = I
    __syncwarp();
    // Each entry divided, not multiplied by a reciprocal that could overflow.
    if (reflect && lane > j && lane < m) v[lane] = ops::divide(v[lane], divisor);
    __syncwarp();
    // w = v^H A(j:m, c), v(j) = 1, then A(j:m, c) -= v conj(tau) w.
    const bool update = reflect && lane > j;
    T scaled_w{};
    if (update) {
      T w[2] = {col[j], T{}};  // two partial sums, for the same reason as in reflector
#pragma unroll
      for (int i = j + 1; i < N; ++i)
        w[i % 2] = ops::add(w[i % 2], ops::multiply(ops::conjugate(v[i]), col[i]));
      scaled_w = ops::multiply(ops::conjugate(t), ops::add(w[0], w[1]));
      col[j] = ops::minus_product(col[j], ops::make_scalar<T>(1), scaled_w);
    }
    // v read again below rather than held in registers from the loop above: S more values in
    // registers (4 S registers in complex double) would cost more warps per multiprocessor than
    // the loads cost.
    __syncwarp();
    if (update) {
#pragma unroll
      for (int i = j + 1; i < N; ++i) col[i] = ops::minus_product(col[i], v[i], scaled_w);
    }
  }

  // R on and above the diagonal from the registers; below it the tile already holds v.
#pragma unroll
  for (int i = 0; i < N; ++i)
    if (i <= lane) tile[lane * (S + 1) + i] = col[i];
  __syncwarp();
#pragma unroll
  for (int c = 0; c < N; ++c)
    if (lane < m && c < n)
      a.base[lane * a.row_stride + c * a.col_stride] = tile[c * (S + 1) + lane];
}

}  // namespace

template <class T>
void geqrf_batched_small(cudaStream_t stream, const DeviceBatch<T>& A, const DeviceBatch<T>& tau,
                         int count, int largest) {
  warp::launch_segments_in_blocks<threads_per_block>(
      stream, count, largest, [](auto size) { return geqrf_columns<T, decltype(size)::value>; }, A,
      tau, count);
}

template <class T>
int geqrf_batched_small_resident_matrices(int largest) {
  return warp::resident_matrices<threads_per_block>(
      largest, [](auto size) { return geqrf_columns<T, decltype(size)::value>; });
}

#define BASALT_INSTANTIATE_GEQRF_BATCHED_SMALL(T)                                                  \
  template void geqrf_batched_small<T>(cudaStream_t, const DeviceBatch<T>&, const DeviceBatch<T>&, \
                                       int, int);                                                  \
  template int geqrf_batched_small_resident_matrices<T>(int);

BASALT_INSTANTIATE_GEQRF_BATCHED_SMALL(float)
BASALT_INSTANTIATE_GEQRF_BATCHED_SMALL(double)
BASALT_INSTANTIATE_GEQRF_BATCHED_SMALL(cuFloatComplex)
BASALT_INSTANTIATE_GEQRF_BATCHED_SMALL(cuDoubleComplex)

}  // namespace basalt::cuda::kernels
