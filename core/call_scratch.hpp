#pragma once
// Device memory for the length of one call (a factorization's state and workspaces), taken at
// once and given back in the order of the call's work. A backend with a stream-ordered pool
// specializes Specialization<routine::call_scratch, ExecSpace> with acquire(exec, bytes) and
// release(exec, data); elsewhere it is a Kokkos allocation. On CUDA each Kokkos allocation is a
// cudaMalloc, a blocking copy of the allocation's header and a cudaFree: potrf's two state
// scalars cost about 35 us a call that way on an H200 (perf/NOTES.md, "A call's scratch from
// the pool").
#include <Kokkos_Core.hpp>
#include <cstddef>

#include "basalt/core/dispatch.hpp"

namespace basalt::impl {

// Consecutive pieces of a call's scratch as unmanaged Views, each at a multiple of `alignment`
// bytes. Taken once over no memory to count the bytes (the Views then point nowhere), then over
// the scratch.
template <class Memory>
class ScratchPieces {
 public:
  static constexpr std::size_t alignment = 256;  // cuBLAS' and the vector loads' liking
  template <class T>
  using Piece =
      Kokkos::View<T, Kokkos::LayoutLeft, Memory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  explicit ScratchPieces(unsigned char* base = nullptr) : base_(base) {}

  template <class T>
  Piece<T> scalar() {
    return Piece<T>(take<T>(1));
  }
  template <class T>
  Piece<T*> vector(int n) {
    return Piece<T*>(take<T>(n), n);
  }
  template <class T>
  Piece<T**> matrix(int rows, int cols) {
    return Piece<T**>(take<T>(static_cast<std::size_t>(rows) * cols), rows, cols);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  template <class T>
  T* take(std::size_t count) {
    T* at = base_ ? reinterpret_cast<T*>(base_ + bytes_) : nullptr;
    bytes_ += (count * sizeof(T) + alignment - 1) / alignment * alignment;
    return at;
  }

  unsigned char* base_;
  std::size_t bytes_ = 0;
};

// The allocation under ScratchViews.
template <class ExecSpace>
class CallScratch {
  using Spec = Specialization<routine::call_scratch, ExecSpace>;
  using Memory = typename ExecSpace::memory_space;
  // A device backend specializes it; a translation unit that saw no specialization would take a
  // definition of its own here.
  static_assert(
      Spec::available || Kokkos::SpaceAccessibility<Kokkos::HostSpace, Memory>::accessible,
      "include the backend's call_scratch.hpp (e.g. basalt/backends/cuda/call_scratch.hpp)");

 public:
  CallScratch(const ExecSpace& exec, std::size_t bytes) : exec_(exec) {
    if (bytes == 0) return;  // no pieces: nothing to take or give back
    if constexpr (Spec::available) {
      data_ = static_cast<unsigned char*>(Spec::acquire(exec, bytes));
    } else {
      owned_ = Kokkos::View<unsigned char*, Memory>(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "basalt::call_scratch"), bytes);
      data_ = owned_.data();
    }
    pieces_ = ScratchPieces<Memory>(data_);
  }
  ~CallScratch() {
    if constexpr (Spec::available)
      if (data_) Spec::release(exec_, data_);
  }
  CallScratch(const CallScratch&) = delete;
  CallScratch& operator=(const CallScratch&) = delete;

 protected:
  ScratchPieces<Memory> pieces_;

 private:
  ExecSpace exec_;
  unsigned char* data_ = nullptr;
  Kokkos::View<unsigned char*, Memory> owned_;  // without a backend's pool
};

// Views, a struct of unmanaged Views made from (ScratchPieces&, args...), over one call scratch
// of exactly the bytes they take.
template <class ExecSpace, class Views>
class ScratchViews : private CallScratch<ExecSpace>, public Views {
  using Pieces = ScratchPieces<typename ExecSpace::memory_space>;

 public:
  template <class... Args>
  explicit ScratchViews(const ExecSpace& exec, const Args&... args)
      : CallScratch<ExecSpace>(exec, bytes(args...)), Views(this->pieces_, args...) {}

 private:
  template <class... Args>
  static std::size_t bytes(const Args&... args) {
    Pieces count;
    const Views counted(count, args...);
    return count.bytes();
  }
};

}  // namespace basalt::impl
