#pragma once
// Workspace: one allocation per call, sized up front, carved into typed pieces.
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>

namespace basalt {

template <class MemorySpace>
class Workspace {
 public:
  explicit Workspace(std::size_t bytes)
      : buffer_(Kokkos::view_alloc(Kokkos::WithoutInitializing, "basalt::workspace"), bytes) {}

  void* data() const { return buffer_.data(); }
  std::size_t size() const { return buffer_.extent(0); }

 private:
  Kokkos::View<std::uint8_t*, MemorySpace> buffer_;
};

}  // namespace basalt
