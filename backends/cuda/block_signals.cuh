#pragma once
// One-way signals between the thread blocks of a kernel, through counters in global memory
// that only grow: a block adds one once its threads' memory accesses are done (release), and a
// block waits until a counter reaches a target (acquire). Only for blocks that are all resident,
// or will become so without waiting on the kernel, so that no wait is on a block that never runs.
namespace basalt::cuda::signals {

__device__ inline unsigned load_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// Returns on every thread of the block once *counter >= target.
__device__ inline void wait_for(const unsigned* counter, unsigned target) {
  if (threadIdx.x == 0)
    while (load_acquire(counter) < target) {
    }
  __syncthreads();
}

// Adds one to *counter; called by the whole block right after a block barrier, it publishes
// every access the block's threads made before that barrier.
__device__ inline void arrive(unsigned* counter) {
  if (threadIdx.x == 0)
    asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(counter) : "memory");
}

// Adds one to *counter once every thread of the block has made its accesses.
__device__ inline void signal(unsigned* counter) {
  __syncthreads();
  arrive(counter);
}

// Adds one to *counter and returns its value before, as one thread's acquire-release: the
// thread's accesses before it (other counters' updates included) reach every thread that later
// counts after it, and what those did before reaches this one. The last block to count then
// sees every block's earlier updates, and may reset the counters.
__device__ inline unsigned count(unsigned* counter) {
  unsigned before;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;"
               : "=r"(before)
               : "l"(counter)
               : "memory");
  return before;
}

}  // namespace basalt::cuda::signals
