#pragma once
// Exchanges between the thread blocks of a cluster (sm_90) through their shared memory. A block
// pushes values into its peers' shared memory with `st.async`, each store counting its bytes
// against an mbarrier in the receiving block; the receiver expects the bytes of a round and
// waits for the barrier's phase. On an H100 a round in which every warp of 512-thread blocks
// sends a value to each peer took 320 / 370 / 430 / 590 cycles for clusters of 1 / 2 / 4 / 8
// blocks, where a cluster barrier with release semantics took 1300-2000 (perf/NOTES.md).
#include <cuComplex.h>

#include <cstdint>

// The PTX below is sm_90's; built for an older GPU, these trap (the host launches no clusters
// on a device without them).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define BASALT_CLUSTER_PTX(...) __trap()
#else
#define BASALT_CLUSTER_PTX(...) asm volatile(__VA_ARGS__)
#endif

namespace basalt::cuda::cluster {

__device__ inline unsigned shared_address(const void* p) {
  return unsigned(__cvta_generic_to_shared(p));
}

// This block's rank in its cluster, and the cluster's blocks.
__device__ inline unsigned rank() {
  unsigned r = 0;
  BASALT_CLUSTER_PTX("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ inline unsigned size() {
  unsigned n = 1;
  BASALT_CLUSTER_PTX("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
  return n;
}

// The address of the same shared-memory location in the cluster's block `rank`.
__device__ inline unsigned peer_address(unsigned local, unsigned rank) {
  unsigned peer = 0;
  BASALT_CLUSTER_PTX("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(peer) : "r"(local), "r"(rank));
  return peer;
}

// Every thread of every block of the cluster arrives, and waits for the rest; what each stored
// before, to any block's shared memory, is then visible to all.
__device__ inline void sync() {
  BASALT_CLUSTER_PTX(
      "barrier.cluster.arrive.release.aligned;\n"
      "barrier.cluster.wait.acquire.aligned;" ::
          : "memory");
}

__device__ inline void init_barrier(std::uint64_t* barrier) {
  BASALT_CLUSTER_PTX("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(barrier))
                     : "memory");
}

// Makes the initialized barriers visible to the cluster; then a cluster barrier before any push.
__device__ inline void publish_barrier_init() {
  BASALT_CLUSTER_PTX("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// The receiver's one arrival for a round: `bytes` are to come.
__device__ inline void expect_bytes(std::uint64_t* barrier, unsigned bytes) {
  BASALT_CLUSTER_PTX("mbarrier.arrive.expect_tx.relaxed.cluster.shared::cta.b64 _, [%0], %1;" ::"r"(
                         shared_address(barrier)),
                     "r"(bytes)
                     : "memory");
}

// Waits until the barrier's phase of the given parity has completed: every expected byte has
// landed, and is visible to the calling thread.
__device__ inline void wait_round(std::uint64_t* barrier, unsigned parity) {
  BASALT_CLUSTER_PTX(
      "{\n"
      " .reg .pred done;\n"
      " WAIT:\n"
      " mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], %1;\n"
      " @!done bra WAIT;\n"
      "}" ::"r"(shared_address(barrier)),
      "r"(parity)
      : "memory");
}

// Stores x at the peer address `to`, its bytes counted against the peer's barrier `barrier`:
// by its bits, 4 or 8 bytes in one store, 16 (complex double) in two.
template <class V>
__device__ inline void push(unsigned to, V x, unsigned barrier) {
  static_assert(sizeof(V) == 4 || sizeof(V) % 8 == 0);
  if constexpr (sizeof(V) == 4) {
    unsigned bits;
    __builtin_memcpy(&bits, &x, 4);
    BASALT_CLUSTER_PTX(
        "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(to),
        "r"(bits), "r"(barrier)
        : "memory");
  } else {
    std::uint64_t bits[sizeof(V) / 8];
    __builtin_memcpy(bits, &x, sizeof(V));
    for (unsigned i = 0; i < sizeof(V) / 8; ++i)
      BASALT_CLUSTER_PTX(
          "st.async.shared::cluster.mbarrier::complete_tx::bytes.b64 [%0], %1, [%2];" ::"r"(to +
                                                                                            8 * i),
          "l"(bits[i]), "r"(barrier)
          : "memory");
  }
}

// Stores x at `local`'s place in every block of the cluster; the next `sync` makes the stores
// visible.
__device__ inline void store_everywhere(int* local, int x) {
  const unsigned address = shared_address(local);
  for (unsigned r = 0; r < size(); ++r)
    BASALT_CLUSTER_PTX("st.shared::cluster.u32 [%0], %1;" ::"r"(peer_address(address, r)), "r"(x)
                       : "memory");
}
template <class V>
__device__ inline void store_everywhere(V* local, V x) {
  static_assert(sizeof(V) % sizeof(int) == 0);
  int words[sizeof(V) / sizeof(int)];
  __builtin_memcpy(words, &x, sizeof(V));
  for (unsigned i = 0; i < sizeof(V) / sizeof(int); ++i)
    store_everywhere(reinterpret_cast<int*>(local) + i, words[i]);
}

}  // namespace basalt::cuda::cluster

#undef BASALT_CLUSTER_PTX
