#include "basalt/core/call_scratch.hpp"

#include <catch2/catch.hpp>
#include <cstdint>

#include "basalt/core/cholesky_state.hpp"
#include "basalt/core/lu_state.hpp"
#if defined(BASALT_ENABLE_CUDA)
#include "basalt/backends/cuda/call_scratch.hpp"
#endif

using namespace basalt;
using Exec = Kokkos::DefaultExecutionSpace;

namespace {

template <class Memory>
struct ThreePieces {
  using Pieces = impl::ScratchPieces<Memory>;
  ThreePieces(Pieces& pieces, int rows, int cols, int n)
      : a(pieces.template matrix<double>(rows, cols)),
        b(pieces.template vector<int>(n)),
        c(pieces.template scalar<Kokkos::complex<float>>()) {}
  typename Pieces::template Piece<double**> a;
  typename Pieces::template Piece<int*> b;
  typename Pieces::template Piece<Kokkos::complex<float>> c;
};

}  // namespace

TEST_CASE("ScratchPieces lays pieces out one after another, each aligned", "[core]") {
  using Pieces = impl::ScratchPieces<Kokkos::HostSpace>;
  constexpr std::size_t a = Pieces::alignment;
  Pieces count;
  const ThreePieces<Kokkos::HostSpace> counted(count, 7, 5, 300);
  // 280 bytes, 1200 bytes, 8 bytes: each rounded up to the alignment.
  CHECK(count.bytes() == 2 * a + 5 * a + a);
  alignas(256) static unsigned char memory[8 * 256];
  Pieces pieces(memory);
  const ThreePieces<Kokkos::HostSpace> laid(pieces, 7, 5, 300);
  CHECK(reinterpret_cast<unsigned char*>(laid.a.data()) == memory);
  CHECK(reinterpret_cast<unsigned char*>(laid.b.data()) == memory + 2 * a);
  CHECK(reinterpret_cast<unsigned char*>(laid.c.data()) == memory + 7 * a);
  CHECK(laid.a.extent(0) == 7);
  CHECK(laid.a.extent(1) == 5);
  CHECK(laid.a.stride(1) == 7);
  CHECK(pieces.bytes() == count.bytes());
  Pieces empty;
  const ThreePieces<Kokkos::HostSpace> none(empty, 0, 0, 0);
  CHECK(empty.bytes() == a);  // the scalar alone
}

namespace {

struct NoPieces {
  template <class Pieces>
  explicit NoPieces(Pieces&) {}
};

}  // namespace

TEST_CASE("a call scratch of no pieces is made and given back without error", "[core]") {
  const impl::ScratchViews<Exec, NoPieces> nothing{Exec()};
  SUCCEED("made and given back");
}

// Scratch taken and given back many times over (the pool reuses it): the pieces are disjoint,
// writable and readable on exec, and a state's info starts at zero even where the memory held a
// failed call's info before.
TEST_CASE("a call's scratch is disjoint, usable on exec, and states start clean", "[core]") {
  const Exec exec;
  for (int round = 0; round < 20; ++round) {
    const int rows = 1 + round * 13 % 37, cols = 1 + round * 7 % 11, n = 1 + round * 101 % 700;
    CAPTURE(round, rows, cols, n);
    const impl::ScratchViews<Exec, ThreePieces<Exec::memory_space>> scratch(exec, rows, cols, n);
    const auto a = scratch.a;
    const auto b = scratch.b;
    const auto c = scratch.c;
    Kokkos::parallel_for(
        "fill", Kokkos::RangePolicy<Exec>(exec, 0, 1), KOKKOS_LAMBDA(const int) {
          for (int j = 0; j < cols; ++j)
            for (int i = 0; i < rows; ++i) a(i, j) = 1000.0 * j + i;
          for (int i = 0; i < n; ++i) b(i) = -i;
          c() = Kokkos::complex<float>(round, -round);
        });
    int wrong = 0;
    Kokkos::parallel_reduce(
        "check", Kokkos::RangePolicy<Exec>(exec, 0, 1),
        KOKKOS_LAMBDA(const int, int& count) {
          for (int j = 0; j < cols; ++j)
            for (int i = 0; i < rows; ++i) count += a(i, j) != 1000.0 * j + i;
          for (int i = 0; i < n; ++i) count += b(i) != -i;
          count += c() != Kokkos::complex<float>(round, -round);
        },
        wrong);
    CHECK(wrong == 0);

    const impl::CholeskyState<Exec, double> cholesky(exec);
    const impl::LuState<Exec, double> lu(exec);
    int infos[2] = {-1, -1};
    Kokkos::deep_copy(Kokkos::View<int, Kokkos::HostSpace>(&infos[0]), cholesky.info);
    Kokkos::deep_copy(Kokkos::View<int, Kokkos::HostSpace>(&infos[1]), lu.info);
    CHECK(infos[0] == 0);
    CHECK(infos[1] == 0);
    Kokkos::deep_copy(cholesky.info, 7);  // as a failed factorization leaves it
    Kokkos::deep_copy(lu.info, 9);
  }
}

#if defined(BASALT_ENABLE_CUDA)
// Basalt's pool keeps at most cuda::pool_kept_bytes of what calls give back: a scratch 3 GiB
// larger (QR's work for a matrix of tens of millions of rows) is back in the device's free
// memory after the next synchronization, not held for the rest of the process.
TEST_CASE("a large call scratch goes back to the device", "[core][cuda]") {
  const Kokkos::Cuda exec;
  exec.fence();
  std::size_t free_before = 0, free_after = 0, total = 0;
  REQUIRE(cudaMemGetInfo(&free_before, &total) == cudaSuccess);
  constexpr std::size_t bytes = cuda::pool_kept_bytes + (std::size_t{3} << 30);
  constexpr int rows = 1 << 20, cols = static_cast<int>(bytes / sizeof(double) / rows);
  REQUIRE(free_before > bytes + (std::size_t{1} << 30));
  {
    const impl::ScratchViews<Kokkos::Cuda, ThreePieces<Kokkos::CudaSpace>> scratch(exec, rows, cols,
                                                                                   1);
    const auto a = scratch.a;
    Kokkos::parallel_for(
        "touch", Kokkos::RangePolicy<Kokkos::Cuda>(exec, 0, cols),
        KOKKOS_LAMBDA(const int j) { a(rows - 1, j) = j; });
  }
  exec.fence();
  REQUIRE(cudaMemGetInfo(&free_after, &total) == cudaSuccess);
  CAPTURE(free_before, free_after);
  // What the pool held before, and up to pool_kept_bytes of this scratch, may stay.
  CHECK(free_after + cuda::pool_kept_bytes + (std::size_t{64} << 20) >= free_before);
}
#endif
