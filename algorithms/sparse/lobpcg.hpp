#pragma once
// basalt::lobpcg: the m smallest or largest eigenpairs of A x = lambda B x, A Hermitian, B
// Hermitian positive definite (B = I when left out), by Knyazev's locally optimal block
// preconditioned conjugate gradient.
//
//   auto result = basalt::lobpcg(exec, A, X);                     // smallest, A x = lambda x
//   auto result = basalt::lobpcg(exec, A, X, options, B, basalt::jacobi(exec, A));
//
// A, B and the preconditioner T are each a Csr, Ell or SellP (formats.hpp) or any operator
// with a const member `apply(exec, X, Y)` setting Y = Op(X) for n x k blocks X, Y given as
// Kokkos::View<Scalar**, Kokkos::LayoutLeft, memory space> (k <= m + g, X not to be changed);
// IdentityOperator{} stands for B = I or no preconditioner. T should be Hermitian positive
// definite (it approximates A^-1, or (A - sigma B)^-1); jacobi(exec, A) gives 1 / |a_ii|.
//
// X (n x m, any layout) holds the initial guess on entry (random vectors will do; its columns
// must be linearly independent) and the B-orthonormal eigenvectors on return, column j paired
// with result.eigenvalues[j], the wanted end first (ascending for smallest, descending for
// largest). Needs n >= 3m: the Rayleigh-Ritz basis [X W P] has 3 times the block's columns.
//
// Guard vectors: the iterated block is X widened by g = min(options.guard_vectors, n / 3 - m)
// columns, seeded inside with fixed pseudo-random numbers (the same run to run), and the
// Rayleigh-Ritz step keeps the m + g pairs of the wanted end. Pair j then converges at a rate
// set by its gap to pair m + g + 1, not to pair m + 1: a wanted eigenvalue next to the first
// unwanted one (a gap of 1e-5 of the spread ran into the 500-step limit without guards; the
// test spectrum in tests/sparse/lobpcg.cpp) converges like the others. Only the m wanted pairs
// are tested for convergence and returned; the guard columns cost their share of every block
// product (m + g columns instead of m). guard_vectors = 0 gives the plain method.
//
// Convergence: column j has converged when its relative residual
//   ||A x_j - lambda_j B x_j||_2 / (sigma ||B x_j||_2) <= options.tolerance,
// sigma being the largest |Ritz value| of any Rayleigh-Ritz step so far, an estimate of
// ||B^-1 A||_2 that the W blocks bring close within a few steps (for B = I: the residual
// relative to ||A||_2 ||x_j||_2). Converged columns, wanted or guard, are soft-locked: they get
// no W and P columns but stay in the Rayleigh-Ritz basis, and unlock should their residual
// grow again. The iteration ends when the m wanted columns have converged.
//
// The caller's contract: A Hermitian, B Hermitian positive definite. Checked cheaply on the
// initial block: an asymmetric X^H A X or X^H B X throws InvalidArgument naming A or B, as does
// an X^H B X with a non-positive eigenvalue (B), and a singular one (X). A NaN or Inf reaching
// the small Gram matrices ends the iteration (status not_finite); no LAPACK call sees one.
//
// Each iteration copies the small Gram matrices (at most 3(m + g) square) to the host and
// solves the Rayleigh-Ritz problem there with LAPACKE's xSYGVD/xHEGVD: by design, a few waits
// for exec per iteration. The block products run on exec (impl::gemm: cuBLAS on CUDA, Kokkos
// Kernels elsewhere), the sparse products through basalt::spmm.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <type_traits>
#include <vector>

#include "basalt/algorithms/sparse/formats.hpp"
#include "basalt/core/errors.hpp"
#include "basalt/core/profiling.hpp"
#include "basalt/core/views.hpp"

namespace basalt {

enum class Wanted { smallest, largest };

struct LobpcgOptions {
  Wanted wanted = Wanted::smallest;
  double tolerance = 0;  // the relative residual above; 0: sqrt(eps) of the real type
  int max_iterations = 500;
  // Columns iterated beside the m wanted ones, fewer where n < 3 (m + guard_vectors); the
  // header comment says why.
  int guard_vectors = 4;
};

enum class LobpcgStatus {
  converged,        // every wanted column within the tolerance
  iteration_limit,  // max_iterations reached first
  not_finite,       // a NaN or Inf in the Gram matrices (in A, B, T or X)
  breakdown         // the basis lost rank beyond the fallbacks (B not positive definite on it)
};

template <class Real>
struct LobpcgResult {
  LobpcgStatus status = LobpcgStatus::converged;
  int converged = 0;              // wanted columns within the tolerance
  int iterations = 0;             // steps with W (and P) blocks
  std::vector<Real> eigenvalues;  // m Ritz values, the wanted end first (no guard columns)
  std::vector<Real> residuals;    // m relative residuals, as defined above
};

// Stands for B = I, or for no preconditioner.
struct IdentityOperator {};

}  // namespace basalt

// The solver, after the types it fills in.
#include "basalt/algorithms/sparse/impl/lobpcg.hpp"

namespace basalt {

// Diagonal (Jacobi) preconditioner: W = D R, D = diag(1 / |a_ii|), 1 where a_ii = 0.
template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
struct Jacobi {
  Kokkos::View<real_t<Scalar>*, MemorySpace> inverse_diagonal;

  template <class ExecSpace, class RView, class WView>
  void apply(const ExecSpace& exec, const RView& R, const WView& W) const {
    const auto d = inverse_diagonal;
    Kokkos::parallel_for(
        "basalt::Jacobi::apply",
        Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>>(exec, {0, 0}, {R.extent(0), R.extent(1)}),
        KOKKOS_LAMBDA(const size_t i, const size_t j) { W(i, j) = d(i) * R(i, j); });
  }
};

// The Jacobi preconditioner of a square sparse matrix (duplicate diagonal entries summed).
template <class ExecSpace, class Matrix>
Jacobi<typename Matrix::scalar_type, typename Matrix::memory_space> jacobi(const ExecSpace& exec,
                                                                           const Matrix& A) {
  static_assert(is_sparse_format_v<Matrix>, "basalt::jacobi: A must be a Csr, Ell or SellP");
  require(A.num_rows == A.num_cols, "jacobi", "A", "A is ", A.num_rows, " x ", A.num_cols,
          ", not square");
  return {impl::inverse_diagonal(exec, A)};
}

template <class ExecSpace, class AOperator, class XView, class BOperator = IdentityOperator,
          class Preconditioner = IdentityOperator>
LobpcgResult<real_t<typename XView::value_type>> lobpcg(const ExecSpace& exec, const AOperator& A,
                                                        const XView& X,
                                                        const LobpcgOptions& options = {},
                                                        const BOperator& B = {},
                                                        const Preconditioner& T = {}) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "basalt::lobpcg: the first argument must be a Kokkos execution space instance");
  static_assert(is_matrix_view_v<XView> && !std::is_const_v<typename XView::value_type>,
                "basalt::lobpcg: X must be a rank-2 View of float, double or their complex types");
  static_assert(is_accessible_from_v<ExecSpace, XView>,
                "basalt::lobpcg: X must be accessible from the execution space");
  using Scalar = typename XView::value_type;
  const long n = X.extent(0), m = X.extent(1);
  require(n > 0, "lobpcg", "X", "X has no rows: A is 0 x 0");
  const auto check_operator = [&](const auto& op, const char* name) {
    using Op = std::decay_t<decltype(op)>;
    if constexpr (is_sparse_format_v<Op>) {
      static_assert(std::is_same_v<typename Op::scalar_type, Scalar>,
                    "basalt::lobpcg: A, B and T must hold X's scalar type");
      require(op.num_rows == n && op.num_cols == n, "lobpcg", name, name, " is ", op.num_rows,
              " x ", op.num_cols, ", X has ", n, " rows");
    }
  };
  check_operator(A, "A");
  check_operator(B, "B");
  check_operator(T, "T");
  // The block products (cuBLAS, LAPACKE) take int sizes.
  require_int_extents("lobpcg", "X", X);
  require(3 * m <= n, "lobpcg", "X", "X has ", m, " columns; LOBPCG needs at most n / 3 = ", n / 3,
          " (the basis [X W P] has 3 m columns)");
  require(options.tolerance >= 0 && options.tolerance < 1, "lobpcg", "options.tolerance",
          "the tolerance must lie in [0, 1), not ", options.tolerance);
  require(options.max_iterations >= 0, "lobpcg", "options.max_iterations",
          "the iteration limit must not be negative");
  require(options.guard_vectors >= 0, "lobpcg", "options.guard_vectors",
          "the number of guard vectors must not be negative");
  if (m == 0) return {};
  ProfilingRegion region("basalt::lobpcg");
  const long guards = std::min<long>(options.guard_vectors, n / 3 - m);
  impl::Lobpcg<ExecSpace, Scalar, AOperator, BOperator, Preconditioner> solver(exec, A, B, T, n, m,
                                                                               guards, options);
  return solver.run(X);
}

}  // namespace basalt
