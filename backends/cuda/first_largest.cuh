#pragma once
// LAPACK's pivot over a warp: the first largest magnitude. Shared by the dense LU panel
// (dense/getf2.cu) and the batched block LU (batched/block_batch.cuh).

namespace basalt::cuda::kernels {

// The largest positive `value` among the warp's lanes and the smallest `at` among the lanes
// that hold it, on every lane; value 0 and at -1 where no lane holds a positive value. Every lane
// of the warp must call it. Magnitudes are never negative (a NaN is never passed as a candidate),
// so they order as their bit patterns: a warp reduction per 32 bits, then one for the position,
// where compare-and-shuffle rounds took 15 dependent shuffles in double (H100: the dense LU panel
// of 2048 x 256 16% faster, getrf 2048 ... 16384 7-15%).
template <class Real>
__device__ inline void warp_first_largest(Real& value, int& at) {
  constexpr unsigned all = 0xffffffff;
  const bool holds = at >= 0 && value > Real(0);
  unsigned position;
  if constexpr (sizeof(Real) == 8) {
    const auto key = holds ? static_cast<unsigned long long>(__double_as_longlong(value)) : 0ull;
    const unsigned top = __reduce_max_sync(all, unsigned(key >> 32));
    const unsigned rest = __reduce_max_sync(all, unsigned(key >> 32) == top ? unsigned(key) : 0u);
    const bool largest = unsigned(key >> 32) == top && unsigned(key) == rest;
    position = __reduce_min_sync(all, largest && holds ? unsigned(at) : ~0u);
    value = __longlong_as_double(static_cast<long long>(top) << 32 | rest);
  } else {
    const unsigned key = holds ? __float_as_uint(value) : 0u;
    const unsigned top = __reduce_max_sync(all, key);
    position = __reduce_min_sync(all, key == top && holds ? unsigned(at) : ~0u);
    value = __uint_as_float(top);
  }
  at = position == ~0u ? -1 : int(position);
}

}  // namespace basalt::cuda::kernels
