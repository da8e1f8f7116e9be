#pragma once
// trsm on CUDA through the inverse of the triangle (seed 001's and MAGMA's trsm): the triangle's
// inverse by a small kernel (trtri_launch.hpp), B copied aside, and B = alpha op(A)^-1 B as one
// cuBLAS gemm. cuBLAS' trsm on potrf's 128-wide triangle and a tall B ran near 4 Tflop/s on the
// H100 in double, its gemm near 50.
#include <Kokkos_Core.hpp>
#include <cstddef>

#include "basalt/backends/cuda/cublas.hpp"
#include "basalt/backends/cuda/dense/trtri_launch.hpp"
#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/scalar.hpp"
#include "basalt/backends/cuda/workspace.hpp"
#include "basalt/core/dispatch.hpp"

namespace basalt::cuda {

// The widest triangle inverted (at most the kernel's limit, and tuning::trsm_leaf_width on the
// GPU): narrower if inverting ill-conditioned triangles costs the factorizations accuracy.
constexpr int trsm_inverted_width = kernels::trtri_width_limit;

// The fewest right-hand sides (columns of B for side left, rows for side right) for which the
// inverse and the copy of B pay: a guess, to be measured (basalt-perf --routine potrf --breakdown).
constexpr int trsm_inverse_min_rhs = 512;

template <class AView, class BView>
bool trsm_inverse_pays(ApplySide side, const AView& A, const BView& B) {
  const std::size_t rhs = side == ApplySide::left ? B.extent(1) : B.extent(0);
  return A.extent(0) <= std::size_t(trsm_inverted_width) &&
         rhs >= std::size_t(trsm_inverse_min_rhs);
}

// B = alpha op(A)^-1 B (side left) or alpha B op(A)^-1 (side right), A triangular and at most
// trsm_inverted_width wide, B column-major.
template <class AView, class BView, class Scalar>
void trsm_by_inverse(const Kokkos::Cuda& exec, ApplySide side, bool lower, Op op,
                     bool unit_diagonal, Scalar alpha, const AView& A, const BView& B) {
  using T = typename BView::non_const_value_type;
  using Matrix = Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::CudaSpace, Kokkos::MemoryUnmanaged>;
  const int w = static_cast<int>(A.extent(0));
  const int m = static_cast<int>(B.extent(0)), n = static_cast<int>(B.extent(1));
  kernels::TrtriProblem problem;
  problem.n = w;
  problem.lda = cublas::detail::leading_dimension(A);
  problem.lower = lower;
  problem.transpose = op != Op::none;
  problem.conjugate = op == Op::conj_transpose;
  problem.unit_diagonal = unit_diagonal;
  // The inverse, then the copy of B, each on a 256-byte boundary as cuBLAS prefers.
  const std::size_t inverse_bytes = (std::size_t(w) * w * sizeof(T) + 255) / 256 * 256;
  const std::size_t copy_bytes = std::size_t(m) * n * sizeof(T);
  const cudaStream_t stream = exec.cuda_stream();
  auto* workspace = static_cast<unsigned char*>(
      acquire_workspace(exec.cuda_device(), stream, inverse_bytes + copy_bytes));
  const Matrix inverse(reinterpret_cast<T*>(workspace), w, w);
  const Matrix copy(reinterpret_cast<T*>(workspace + inverse_bytes), m, n);
  kernels::trtri(stream, device_pointer(A.data()), device_pointer(inverse.data()), problem);
  BASALT_CUDA_CHECK(cudaMemcpy2DAsync(copy.data(), m * sizeof(T), B.data(),
                                      cublas::detail::leading_dimension(B) * sizeof(T),
                                      m * sizeof(T), n, cudaMemcpyDeviceToDevice, stream));
  if (side == ApplySide::left)
    cublas::gemm(exec, Op::none, Op::none, alpha, inverse, copy, Scalar(0), B);
  else
    cublas::gemm(exec, Op::none, Op::none, alpha, copy, inverse, Scalar(0), B);
  release_workspace(workspace, stream);
}

}  // namespace basalt::cuda
