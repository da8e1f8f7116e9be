// CUDA batched Householder QR of small matrices: one warp segment per matrix, one row per lane,
// held in registers.
#include <cuComplex.h>

#include "basalt/backends/cuda/batched/geqrf_batched_launch.hpp"
#include "basalt/backends/cuda/batched/warp_batch.cuh"
#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/scalar_ops.cuh"

namespace basalt::cuda::kernels {

namespace {

// The portable team kernel's geqr2 (LAPACK's larfg reflectors: beta = -sign(re alpha)
// ||(alpha, x)||, tau = (beta - alpha) / beta, v = x / (alpha - beta), H(j)^H applied to the
// columns right of j), with lane i of a segment holding row i. Control flow is the same on every
// lane of the warp; what differs between segments is data.
template <class T, int S>
__global__ void __launch_bounds__(warp::block_threads)
    geqrf_warp(DeviceBatch<T> batch, DeviceBatch<T> taus, int count) {
  using Real = ops::real_of_t<T>;
  const int thread = blockIdx.x * warp::block_threads + threadIdx.x;
  if ((thread - threadIdx.x % 32) / S >= count) return;  // the whole warp is past the batch
  const int b = thread / S, i = threadIdx.x % S;
  const warp::Located<T> a = warp::locate(batch, b, count);
  const warp::Located<T> tau = warp::locate(taus, b, count);
  const int m = a.rows, n = a.cols, steps = min(m, n);

  T row[S];
#pragma unroll
  for (int c = 0; c < S; ++c)
    row[c] = i < m && c < n ? a.base[i * a.row_stride + c * a.col_stride] : T{};

#pragma unroll
  for (int j = 0; j < S; ++j) {
    const bool below = i > j && i < m;  // the reflector's stored part
    // ||x|| = ||A(j+1:m, j)||, scaled by the largest magnitude so no square overflows.
    const Real magnitude = below ? ops::magnitude(row[j]) : Real(0);
    const Real largest = warp::segment_max<S>(magnitude);
    const Real scale = largest > Real(0) ? largest : Real(1);
    const Real xnorm = scale * sqrt(warp::segment_sum<S>(magnitude / scale * (magnitude / scale)));
    const T alpha = warp::shuffle<S>(row[j], j);
    const Real alpha_re = ops::real_part(alpha), alpha_im = ops::imag_part(alpha);
    const bool identity = xnorm == Real(0) && alpha_im == Real(0);  // H(j) = I, tau = 0
    const bool reflect = j < steps && !identity;
    const Real norm = ops::norm3(alpha_re, alpha_im, xnorm);
    const Real beta = alpha_re >= Real(0) ? -norm : norm;
    const T t = identity ? T{} : ops::make_scalar<T>((beta - alpha_re) / beta, -alpha_im / beta);
    if (j < steps && i == 0) tau.base[j * tau.row_stride] = t;
    // Each entry divided, not multiplied by a reciprocal that could overflow.
    if (reflect && below)
      row[j] = ops::divide(row[j], ops::make_scalar<T>(alpha_re - beta, alpha_im));
    if (reflect && i == j) row[j] = ops::make_scalar<T>(beta);
    const T applied = ops::conjugate(t);
#pragma unroll
    for (int c = j + 1; c < S; ++c) {
      // w = v^H A(j:m, c), v(j) = 1.
      const T w = ops::add(
          warp::segment_sum<S>(below ? ops::multiply(ops::conjugate(row[j]), row[c]) : T{}),
          warp::shuffle<S>(row[c], j));
      const T scaled_w = ops::multiply(applied, w);
      if (reflect && c < n) {
        if (below) row[c] = ops::minus_product(row[c], row[j], scaled_w);
        if (i == j) row[c] = ops::minus_product(row[c], ops::make_scalar<T>(1), scaled_w);
      }
    }
  }

#pragma unroll
  for (int c = 0; c < S; ++c)
    if (i < m && c < n) a.base[i * a.row_stride + c * a.col_stride] = row[c];
}

}  // namespace

template <class T>
void geqrf_batched_small(cudaStream_t stream, const DeviceBatch<T>& A, const DeviceBatch<T>& tau,
                         int count, int largest) {
  warp::launch_segments(
      stream, count, largest, [](auto width) { return geqrf_warp<T, decltype(width)::value>; }, A,
      tau, count);
}

#define BASALT_INSTANTIATE_GEQRF_BATCHED_SMALL(T)                                                  \
  template void geqrf_batched_small<T>(cudaStream_t, const DeviceBatch<T>&, const DeviceBatch<T>&, \
                                       int, int);

BASALT_INSTANTIATE_GEQRF_BATCHED_SMALL(float)
BASALT_INSTANTIATE_GEQRF_BATCHED_SMALL(double)
BASALT_INSTANTIATE_GEQRF_BATCHED_SMALL(cuFloatComplex)
BASALT_INSTANTIATE_GEQRF_BATCHED_SMALL(cuDoubleComplex)

}  // namespace basalt::cuda::kernels
