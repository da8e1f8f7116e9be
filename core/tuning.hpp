#pragma once
// Tuning tables, read by the drivers rather than literals inside them (after MAGMA's get_nb).
#include <Kokkos_Core.hpp>

namespace basalt::tuning {

// An execution space whose memory the host cannot reach is taken for a GPU.
template <class ExecSpace>
inline constexpr bool is_gpu_v =
    !Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible;

struct Lu {
  int block;            // nb: columns of the outer blocked loop
  int recursion_width;  // the recursive panel stops halving at this width
};

// Outer blocks wide enough for gemm to run near its peak (seed 000, section 6.2: nb >= 256 in
// double on a GPU); on a CPU, OpenBLAS' gemm peaks with narrower blocks. On the H100, nb = 512
// with 64-column leaves beat 256 and 32 or 128 leaves at n = 4096 to 16384 (basalt-perf
// --routine getrf --nb --recursion-width): fewer, larger gemms, and fewer interchange calls.
template <class ExecSpace>
Lu lu() {
  if constexpr (is_gpu_v<ExecSpace>)
    return {512, 64};
  else
    return {128, 16};
}

}  // namespace basalt::tuning
