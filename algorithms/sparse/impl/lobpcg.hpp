#pragma once
// LOBPCG's iteration; algorithms/sparse/lobpcg.hpp documents the call. After Knyazev (2001),
// with the stabilizations of Hetmaniuk & Lehoucq (2006) and Duersch et al. (2018): every block
// of the basis [X W P] is B-orthonormalized on its own (W also against X) by Cholesky QR, so
// that the Gram matrix of the basis stays well conditioned as X_i nears X_{i-1} and P shrinks.
// When Cholesky QR breaks down (or leaves R too ill-conditioned to trust), W falls back to SVQB
// (Stathopoulos & Wu 2002), which drops directions it cannot resolve, and P is dropped for
// that step (a restart); a Rayleigh-Ritz step whose Gram matrix B is still not positive
// definite, or too ill-conditioned to trust, is retried without P. The block is the caller's m
// columns and g guard columns (k = m + g in all), the guards B-orthonormalized against X at the
// start as W is at every step.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "basalt/algorithms/dense/impl/blas.hpp"
#include "basalt/algorithms/sparse/formats.hpp"
#include "basalt/algorithms/sparse/impl/spmm_portable.hpp"
#include "basalt/algorithms/sparse/spmv.hpp"
#include "basalt/backends/host/lapacke_eigen.hpp"
#include "basalt/core/dispatch.hpp"
#include "basalt/core/errors.hpp"
#include "basalt/core/views.hpp"

namespace basalt::impl {

template <class T>
KOKKOS_INLINE_FUNCTION real_t<T> squared_magnitude(const T& x) {
  if constexpr (std::is_floating_point_v<T>)
    return x * x;
  else
    return x.real() * x.real() + x.imag() * x.imag();
}

template <class T>
T conjugate(const T& x) {
  if constexpr (std::is_floating_point_v<T>)
    return x;
  else
    return Kokkos::conj(x);
}

template <class T>
real_t<T> real_part(const T& x) {
  if constexpr (std::is_floating_point_v<T>)
    return x;
  else
    return x.real();
}

template <class T>
bool is_finite(const T& x) {
  if constexpr (std::is_floating_point_v<T>)
    return std::isfinite(x);
  else
    return std::isfinite(x.real()) && std::isfinite(x.imag());
}

// Y = Op(X) for a sparse format (basalt::spmm) or a user operator (its apply).
template <class ExecSpace, class Operator, class XView, class YView>
void apply_operator(const ExecSpace& exec, const Operator& op, const XView& X, const YView& Y) {
  if constexpr (is_sparse_format_v<Operator>) {
    using Scalar = typename Operator::scalar_type;
    spmm(exec, Scalar(1), op, X, Scalar(0), Y);
  } else {
    op.apply(exec, X, Y);
  }
}

// a_ii, duplicates summed.
template <class Matrix>
KOKKOS_INLINE_FUNCTION typename Matrix::scalar_type diagonal_entry(
    const Matrix& a, const typename Matrix::ordinal_type i) {
  using Ordinal = typename Matrix::ordinal_type;
  using Scalar = typename Matrix::scalar_type;
  Scalar sum = 0;
  portable::impl::for_each_entry(a, i, [&](const Ordinal c, const Scalar& value) {
    if (c == i) sum += value;
  });
  return sum;
}

// 1 / |a_ii| of a square sparse matrix; 1 where a_ii = 0.
template <class ExecSpace, class Matrix>
Kokkos::View<real_t<typename Matrix::scalar_type>*, typename Matrix::memory_space> inverse_diagonal(
    const ExecSpace& exec, const Matrix& A) {
  using Real = real_t<typename Matrix::scalar_type>;
  using Ordinal = typename Matrix::ordinal_type;
  Kokkos::View<Real*, typename Matrix::memory_space> d("basalt::Jacobi::inverse_diagonal",
                                                       A.num_rows);
  const Matrix a = A;
  Kokkos::parallel_for(
      "basalt::jacobi", Kokkos::RangePolicy<ExecSpace>(exec, 0, A.num_rows),
      KOKKOS_LAMBDA(const Ordinal i) {
        const Real size = magnitude(diagonal_entry(a, i));
        d(i) = size == Real(0) ? Real(1) : Real(1) / size;
      });
  return d;
}

// Kernels of the iteration (free functions: nvcc takes no device lambda in a private member).

// norms(2j) = ||AX_j - lambda_j BX_j||^2, norms(2j + 1) = ||BX_j||^2.
template <class ExecSpace, class Block, class RealView>
void residual_norms(const ExecSpace& exec, const Block& AX, const Block& BX, const RealView& lambda,
                    const RealView& norms) {
  using Real = typename RealView::non_const_value_type;
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  const long n = AX.extent(0);
  Kokkos::parallel_for(
      "basalt::lobpcg::residual_norms", Policy(exec, AX.extent(1), Kokkos::AUTO),
      KOKKOS_LAMBDA(const typename Policy::member_type& team) {
        const int j = team.league_rank();
        Real r2 = 0, b2 = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, n),
            [&](const long i, Real& sum) {
              sum += squared_magnitude(AX(i, j) - lambda(j) * BX(i, j));
            },
            r2);
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, n),
            [&](const long i, Real& sum) { sum += squared_magnitude(BX(i, j)); }, b2);
        Kokkos::single(Kokkos::PerTeam(team), [&] {
          norms(2 * j) = r2;
          norms(2 * j + 1) = b2;
        });
      });
}

// A fixed pseudo-random number in [-1, 1) of `index`: splitmix64's mix of it, top 53 bits.
KOKKOS_INLINE_FUNCTION double pseudo_random_uniform(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return static_cast<double>(x >> 11) * 0x1p-52 - 1;
}

// The same as a real or complex Scalar.
template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar pseudo_random(std::uint64_t index) {
  using Real = real_t<Scalar>;
  if constexpr (std::is_floating_point_v<Scalar>)
    return Real(pseudo_random_uniform(index));
  else
    return Scalar(Real(pseudo_random_uniform(2 * index)),
                  Real(pseudo_random_uniform(2 * index + 1)));
}

// V(i, j) = pseudo_random(i + n j): the guard columns' start, the same on every backend and
// thread count.
template <class ExecSpace, class Block>
void fill_pseudo_random(const ExecSpace& exec, const Block& V) {
  using Scalar = typename Block::non_const_value_type;
  const std::uint64_t n = V.extent(0);
  Kokkos::parallel_for(
      "basalt::lobpcg::guards",
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>>(exec, {0, 0}, {V.extent(0), V.extent(1)}),
      KOKKOS_LAMBDA(const long i, const long j) { V(i, j) = pseudo_random<Scalar>(i + n * j); });
}

// to(:, c) = from(:, active(c)).
template <class ExecSpace, class Block, class IndexView>
void gather_columns(const ExecSpace& exec, const Block& from, const IndexView& active,
                    const Block& to) {
  Kokkos::parallel_for(
      "basalt::lobpcg::gather",
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>>(exec, {0, 0}, {to.extent(0), to.extent(1)}),
      KOKKOS_LAMBDA(const long i, const long c) { to(i, c) = from(i, active(c)); });
}

// W(:, c) = AX(:, a) - lambda(a) BX(:, a), a = active(c): the residuals of the active columns.
template <class ExecSpace, class Block, class RealView, class IndexView>
void gather_residuals(const ExecSpace& exec, const Block& AX, const Block& BX,
                      const RealView& lambda, const IndexView& active, const Block& W) {
  Kokkos::parallel_for(
      "basalt::lobpcg::residuals",
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>>(exec, {0, 0}, {W.extent(0), W.extent(1)}),
      KOKKOS_LAMBDA(const long i, const long c) {
        const int a = active(c);
        W(i, c) = AX(i, a) - lambda(a) * BX(i, a);
      });
}

template <class ExecSpace, class Scalar, class AOperator, class BOperator, class Preconditioner>
class Lobpcg {
 public:
  using Real = real_t<Scalar>;
  using MemorySpace = typename ExecSpace::memory_space;
  using Block = Kokkos::View<Scalar**, Kokkos::LayoutLeft, MemorySpace>;
  using HostBlock = Kokkos::View<Scalar**, Kokkos::LayoutLeft, Kokkos::HostSpace>;
  static constexpr bool has_b = !std::is_same_v<BOperator, IdentityOperator>;
  static constexpr bool has_t = !std::is_same_v<Preconditioner, IdentityOperator>;

  Lobpcg(const ExecSpace& exec, const AOperator& A, const BOperator& B, const Preconditioner& T,
         long n, long m, long guards, const LobpcgOptions& options)
      : exec_(exec),
        A_(A),
        B_(B),
        T_(T),
        n_(n),
        m_(m),
        k_(m + guards),
        options_(options),
        tolerance_(options.tolerance > 0 ? Real(options.tolerance)
                                         : std::sqrt(std::numeric_limits<Real>::epsilon())),
        S_(uninitialized("basalt::lobpcg::S"), n, 3 * k_),
        AS_(uninitialized("basalt::lobpcg::AS"), n, 3 * k_),
        BS_(has_b ? Block(uninitialized("basalt::lobpcg::BS"), n, 3 * k_) : S_),
        P_(uninitialized("basalt::lobpcg::P"), n, k_),
        AP_(uninitialized("basalt::lobpcg::AP"), n, k_),
        BP_(has_b ? Block(uninitialized("basalt::lobpcg::BP"), n, k_) : P_),
        scratch_(uninitialized("basalt::lobpcg::scratch"), n, k_),
        gram_(uninitialized("basalt::lobpcg::gram"), 2 * small()),
        coefficients_(uninitialized("basalt::lobpcg::coefficients"), small()),
        host_gram_(uninitialized("basalt::lobpcg::host_gram"), 2 * small()),
        host_work_(uninitialized("basalt::lobpcg::host_work"), 2 * small()),
        lambda_(uninitialized("basalt::lobpcg::lambda"), k_),
        host_lambda_(uninitialized("basalt::lobpcg::host_lambda"), k_),
        norms_(uninitialized("basalt::lobpcg::norms"), 2 * k_),
        host_norms_(uninitialized("basalt::lobpcg::host_norms"), 2 * k_),
        active_(uninitialized("basalt::lobpcg::active"), k_),
        host_active_(uninitialized("basalt::lobpcg::host_active"), k_),
        theta_(3 * k_) {}

  template <class XView>
  LobpcgResult<Real> run(const XView& X_in) {
    LobpcgResult<Real> result;
    result.status = LobpcgStatus::not_finite;
    result.eigenvalues.assign(m_, std::numeric_limits<Real>::quiet_NaN());
    result.residuals = result.eigenvalues;
    const Block X = columns(S_, 0, m_);
    Kokkos::deep_copy(exec_, X, X_in);
    const Step started = start();
    if (started == Step::ok)
      iterate(result);
    else if (started == Step::breakdown)
      result.status = LobpcgStatus::breakdown;
    Kokkos::deep_copy(exec_, X_in, X);
    exec_.fence();
    return result;
  }

 private:
  enum class Step { ok, not_finite, breakdown };

  static auto uninitialized(const std::string& label) {
    return Kokkos::view_alloc(Kokkos::WithoutInitializing, label);
  }
  size_t small() const { return 9 * k_ * k_; }  // (3k)^2: the largest small matrix

  static Block columns(const Block& V, long first, long count) {
    return Kokkos::subview(V, Kokkos::ALL, std::make_pair(first, first + count));
  }
  Block device_matrix(Scalar* data, long rows, long cols) const { return Block(data, rows, cols); }
  static HostBlock host_matrix(Scalar* data, long rows, long cols) {
    return HostBlock(data, rows, cols);
  }

  // U^H V on the host, in host_gram_ at `slot` (0 or 1). Waits for exec.
  HostBlock gram(const Block& U, const Block& V, int slot) {
    const size_t offset = slot * small();
    const Block g = device_matrix(gram_.data() + offset, U.extent(1), V.extent(1));
    gemm(exec_, Op::conj_transpose, Op::none, Scalar(1), U, V, Scalar(0), g);
    const HostBlock h = host_matrix(host_gram_.data() + offset, U.extent(1), V.extent(1));
    Kokkos::deep_copy(exec_, h, g);
    exec_.fence();
    return h;
  }

  // ||G - G^H||_F / ||G||_F
  static Real asymmetry(const HostBlock& G) {
    Real difference = 0, size = 0;
    for (size_t j = 0; j < G.extent(1); ++j)
      for (size_t i = 0; i < G.extent(0); ++i) {
        difference += squared_magnitude(G(i, j) - conjugate(G(j, i)));
        size += squared_magnitude(G(i, j));
      }
    return size == 0 ? Real(0) : std::sqrt(difference / size);
  }

  // G := (G + G^H) / 2; false when an entry is not finite.
  static bool hermitian_part(const HostBlock& G) {
    for (size_t j = 0; j < G.extent(1); ++j)
      for (size_t i = 0; i <= j; ++i) {
        if (!is_finite(G(i, j)) || !is_finite(G(j, i))) return false;
        const Scalar average = (G(i, j) + conjugate(G(j, i))) / Real(2);
        G(i, j) = average;
        G(j, i) = conjugate(average);
      }
    return true;
  }

  // The `count` columns at `first` of S_ (and of AS_ with with_a, BS_ with B) := themselves
  // times C (count x kept), into the first `kept` of those columns.
  void transform(long first, const HostBlock& C, bool with_a) {
    const long count = C.extent(0), kept = C.extent(1);
    const Block c = device_matrix(coefficients_.data(), count, kept);
    Kokkos::deep_copy(exec_, c, C);
    const Block out = columns(scratch_, 0, kept);
    auto multiply = [&](const Block& V) {
      gemm(exec_, Op::none, Op::none, Scalar(1), columns(V, first, count), c, Scalar(0), out);
      Kokkos::deep_copy(exec_, columns(V, first, kept), out);
    };
    multiply(S_);
    if (with_a) multiply(AS_);
    if (has_b) multiply(BS_);
  }

  // R, a Hermitian G on entry, := the upper Cholesky factor U of G = U^H U (the lower triangle
  // left as it was); true when U exists and is conditioned well enough to trust: Cholesky QR
  // loses orthogonality like eps cond(U)^2, so cond(U) <= eps^(-1/4), judged on U's diagonal.
  static bool trusted_cholesky(const HostBlock& R) {
    if (lapacke::potrf(Triangle::upper, R) != 0) return false;
    const long count = R.extent(0);
    Real smallest = magnitude(R(0, 0)), largest = smallest;
    for (long i = 1; i < count; ++i) {
      smallest = std::min(smallest, magnitude(R(i, i)));
      largest = std::max(largest, magnitude(R(i, i)));
    }
    return smallest >= std::pow(std::numeric_limits<Real>::epsilon(), Real(0.25)) * largest;
  }

  // B-orthonormalizes the `count` columns at `first` of S_ (with AS_ and BS_, as transform).
  // Cholesky QR; where it breaks down, SVQB when `svqb` (dropping directions below eps
  // relative to the largest), else nothing is kept. Returns the columns kept, -1 when the
  // Gram matrix is not finite.
  long orthonormalize(long first, long count, bool with_a, bool svqb) {
    if (count == 0) return 0;
    const HostBlock G = gram(columns(S_, first, count), columns(BS_, first, count), 0);
    if (!hermitian_part(G)) return -1;
    const HostBlock R = host_matrix(host_work_.data(), count, count);
    Kokkos::deep_copy(R, G);
    if (trusted_cholesky(R)) {
      for (long j = 0; j < count; ++j)
        for (long i = j + 1; i < count; ++i) R(i, j) = 0;
      if (lapacke::trtri_upper(R) == 0) {
        transform(first, R, with_a);
        return count;
      }
    }
    if (!svqb) return 0;
    // SVQB: D G D = V L V^H with D = diag(G)^(-1/2); C = D V L^(-1/2) over the resolved L.
    std::vector<Real> scale(count);
    for (long i = 0; i < count; ++i) {
      const Real diagonal = real_part(G(i, i));
      scale[i] = diagonal > 0 ? 1 / std::sqrt(diagonal) : Real(0);
    }
    const HostBlock V = R;
    for (long j = 0; j < count; ++j)
      for (long i = 0; i < count; ++i) V(i, j) = scale[i] * G(i, j) * scale[j];
    std::vector<Real> values(count);
    if (lapacke::heevd(V, values.data()) != 0) return 0;
    const Real floor = std::numeric_limits<Real>::epsilon() * count * values[count - 1];
    long skipped = 0;
    while (skipped < count && !(values[skipped] > floor)) ++skipped;
    const long kept = count - skipped;
    if (kept == 0) return 0;
    const HostBlock C = host_matrix(host_work_.data() + small(), count, kept);
    for (long j = 0; j < kept; ++j)
      for (long i = 0; i < count; ++i)
        C(i, j) = scale[i] * V(i, skipped + j) / std::sqrt(values[skipped + j]);
    transform(first, C, with_a);
    return kept;
  }

  // The `count` columns at `first` of S_ := themselves B-orthogonalized against its first
  // `against` columns (B-orthonormal), and BS_ for them.
  void b_orthogonalize(long first, long count, long against) {
    const Block V = columns(S_, first, count);
    const Block projection = device_matrix(gram_.data(), against, count);
    gemm(exec_, Op::conj_transpose, Op::none, Scalar(1), columns(BS_, 0, against), V, Scalar(0),
         projection);
    gemm(exec_, Op::none, Op::none, Scalar(-1), columns(S_, 0, against), projection, Scalar(1), V);
    if constexpr (has_b) apply_operator(exec_, B_, V, columns(BS_, first, count));
  }

  // What orthonormalize's count of kept columns means for the step.
  static Step kept_all(long kept, long count) {
    return kept == count ? Step::ok : kept < 0 ? Step::not_finite : Step::breakdown;
  }

  // The caller's contract, checked on the initial block, then X B-orthonormalized, the guard
  // columns seeded and B-orthonormalized against it, and A times the k columns.
  Step start() {
    const Block X = columns(S_, 0, m_), BX = columns(BS_, 0, m_);
    if constexpr (has_b) apply_operator(exec_, B_, X, BX);
    const Real symmetric_enough = 10 * std::sqrt(std::numeric_limits<Real>::epsilon());
    const HostBlock G = gram(X, BX, 0);
    if (has_b)
      require(!(asymmetry(G) > symmetric_enough), "lobpcg", "B", "X^H B X is not Hermitian");
    if (!hermitian_part(G)) return Step::not_finite;
    const HostBlock E = host_matrix(host_work_.data(), m_, m_);
    Kokkos::deep_copy(E, G);
    std::vector<Real> values(m_);
    require(lapacke::heevd(E, values.data()) == 0, "lobpcg", "X",
            "the eigenvalues of X^H B X did not converge");
    const Real largest = values[m_ - 1], floor = std::numeric_limits<Real>::epsilon() * m_;
    require(largest > 0 && values[0] >= -floor * largest, "lobpcg", "B",
            "B is not positive definite: x^H B x <= 0 for a vector x of X's span");
    require(values[0] > floor * largest, "lobpcg", "X",
            "X's columns are linearly dependent (or B is singular on their span)");
    Step step = kept_all(orthonormalize(0, m_, false, true), m_);
    const long guards = k_ - m_;
    if (step == Step::ok && guards > 0) {
      fill_pseudo_random(exec_, columns(S_, m_, guards));
      b_orthogonalize(m_, guards, m_);
      step = kept_all(orthonormalize(m_, guards, false, true), guards);
    }
    if (step != Step::ok) return step;
    const Block block = columns(S_, 0, k_), A_block = columns(AS_, 0, k_);
    apply_operator(exec_, A_, block, A_block);
    const HostBlock H = gram(block, A_block, 0);
    require(!(asymmetry(H) > symmetric_enough), "lobpcg", "A", "X^H A X is not Hermitian");
    return hermitian_part(H) ? Step::ok : Step::not_finite;
  }

  // The Rayleigh-Ritz step on the first q columns of [X W P]: the new X, AX, BX and P, AP, BP
  // (the W and P parts of the k Ritz vectors of the wanted end) and lambda.
  Step rayleigh_ritz(long q) {
    const Block basis = columns(S_, 0, q);
    const HostBlock GA = gram(basis, columns(AS_, 0, q), 0);
    const HostBlock GB = gram(basis, columns(BS_, 0, q), 1);
    if (!hermitian_part(GA) || !hermitian_part(GB)) return Step::not_finite;
    // Each block of the basis is B-orthonormal, but P can lie nearly in the span of X and W;
    // hegvd on a nearly singular GB returns Ritz values that mean nothing (a negative one for a
    // positive definite A was seen), so such a basis counts as a breakdown: retried without P.
    // Judged on GB's eigenvalues, cond(GB) <= eps^(-1/2) as trusted_cholesky allows: the
    // diagonal of GB's Cholesky factor missed a GB singular to rounding (float, 3 x 7 columns).
    const HostBlock E = host_matrix(host_work_.data(), q, q);
    Kokkos::deep_copy(E, GB);
    if (lapacke::heevd(E, theta_.data()) != 0) return Step::breakdown;
    if (!(theta_[0] >= std::sqrt(std::numeric_limits<Real>::epsilon()) * theta_[q - 1]))
      return Step::breakdown;
    if (lapacke::hegvd(GA, GB, theta_.data()) != 0) return Step::breakdown;
    for (long i = 0; i < q; ++i)
      if (!std::isfinite(theta_[i])) return Step::not_finite;
    sigma_ = std::max({sigma_, std::abs(theta_[0]), std::abs(theta_[q - 1])});

    const HostBlock C = host_matrix(host_work_.data(), q, k_);
    const HostBlock C_wp = host_matrix(host_work_.data() + q * k_, q - k_, k_);
    for (long j = 0; j < k_; ++j) {
      const long pair = options_.wanted == Wanted::smallest ? j : q - 1 - j;
      host_lambda_(j) = theta_[pair];
      for (long i = 0; i < q; ++i) C(i, j) = GA(i, pair);
      for (long i = k_; i < q; ++i) C_wp(i - k_, j) = GA(i, pair);
    }
    const Block c = device_matrix(coefficients_.data(), q, k_);
    const Block c_wp = device_matrix(coefficients_.data() + q * k_, q - k_, k_);
    Kokkos::deep_copy(exec_, c, C);
    Kokkos::deep_copy(exec_, c_wp, C_wp);
    Kokkos::deep_copy(exec_, lambda_, host_lambda_);
    auto update = [&](const Block& V, const Block& PV) {
      if (q > k_)
        gemm(exec_, Op::none, Op::none, Scalar(1), columns(V, k_, q - k_), c_wp, Scalar(0), PV);
      gemm(exec_, Op::none, Op::none, Scalar(1), columns(V, 0, q), c, Scalar(0), scratch_);
      Kokkos::deep_copy(exec_, columns(V, 0, k_), scratch_);
    };
    update(S_, P_);
    update(AS_, AP_);
    if (has_b) update(BS_, BP_);
    return Step::ok;
  }

  // ||A x_j - lambda_j B x_j|| / (sigma ||B x_j||) for the k columns of X.
  void relative_residuals(std::vector<Real>& residuals) {
    residual_norms(exec_, columns(AS_, 0, k_), columns(BS_, 0, k_), lambda_, norms_);
    Kokkos::deep_copy(exec_, host_norms_, norms_);
    exec_.fence();
    for (long j = 0; j < k_; ++j) {
      const Real r = std::sqrt(host_norms_(2 * j));
      const Real scale = sigma_ * std::sqrt(host_norms_(2 * j + 1));
      residuals[j] = r == 0 ? Real(0) : r / scale;
    }
  }

  void iterate(LobpcgResult<Real>& result) {
    std::vector<Real> residuals(k_);
    long w_columns = 0, p_columns = 0;
    for (int iteration = 0;; ++iteration) {
      Step step = rayleigh_ritz(k_ + w_columns + p_columns);
      if (step == Step::breakdown && p_columns > 0) step = rayleigh_ritz(k_ + w_columns);
      if (step != Step::ok) {
        result.status =
            step == Step::breakdown ? LobpcgStatus::breakdown : LobpcgStatus::not_finite;
        return;
      }
      const bool have_p = w_columns + p_columns > 0;
      relative_residuals(residuals);
      for (long j = 0; j < m_; ++j) {
        result.eigenvalues[j] = host_lambda_(j);
        result.residuals[j] = residuals[j];
      }
      result.iterations = iteration;
      // Every column above the tolerance, guards too, stays active; the wanted ones decide.
      long active = 0, wanted_active = 0;
      for (long j = 0; j < k_; ++j) {
        if (!std::isfinite(residuals[j])) {
          result.status = LobpcgStatus::not_finite;
          result.converged = 0;
          return;
        }
        if (!(residuals[j] <= tolerance_)) {
          host_active_(active++) = j;
          if (j < m_) ++wanted_active;
        }
      }
      result.converged = m_ - wanted_active;
      if (wanted_active == 0) {
        result.status = LobpcgStatus::converged;
        return;
      }
      if (iteration == options_.max_iterations) {
        result.status = LobpcgStatus::iteration_limit;
        return;
      }
      Kokkos::deep_copy(exec_, active_, host_active_);

      // W: the preconditioned residuals of the active columns, B-orthogonal to X.
      const Block W = columns(S_, k_, active);
      gather_residuals(exec_, columns(AS_, 0, k_), columns(BS_, 0, k_), lambda_, active_, W);
      if constexpr (has_t) {
        const Block out = columns(scratch_, 0, active);
        apply_operator(exec_, T_, W, out);
        Kokkos::deep_copy(exec_, W, out);
      }
      b_orthogonalize(k_, active, k_);
      w_columns = orthonormalize(k_, active, false, true);
      if (w_columns <= 0) {
        result.status = w_columns < 0 ? LobpcgStatus::not_finite : LobpcgStatus::breakdown;
        return;
      }
      apply_operator(exec_, A_, columns(S_, k_, w_columns), columns(AS_, k_, w_columns));

      // P: the active columns of the last step's implicit P, normalized (dropped, a restart,
      // where that breaks down).
      p_columns = 0;
      if (have_p) {
        const long first = k_ + w_columns;
        gather_columns(exec_, P_, active_, columns(S_, first, active));
        gather_columns(exec_, AP_, active_, columns(AS_, first, active));
        if (has_b) gather_columns(exec_, BP_, active_, columns(BS_, first, active));
        p_columns = std::max(orthonormalize(first, active, true, false), 0L);
      }
    }
  }

  ExecSpace exec_;
  const AOperator& A_;
  const BOperator& B_;
  const Preconditioner& T_;
  long n_, m_, k_;  // k = m + g: the block X with its guard columns
  LobpcgOptions options_;
  Real tolerance_;
  Real sigma_ = 0;     // the largest |Ritz value| so far
  Block S_, AS_, BS_;  // [X W P] and A, B times it, n x 3k (BS_ is S_ when B = I)
  Block P_, AP_, BP_;  // the implicit P of all k columns, from the last Rayleigh-Ritz step
  Block scratch_;      // n x k
  Kokkos::View<Scalar*, MemorySpace> gram_, coefficients_;  // small matrices, (3k)^2 each
  Kokkos::View<Scalar*, Kokkos::HostSpace> host_gram_, host_work_;
  Kokkos::View<Real*, MemorySpace> lambda_;
  Kokkos::View<Real*, Kokkos::HostSpace> host_lambda_;
  Kokkos::View<Real*, MemorySpace> norms_;  // ||r_j||^2, ||B x_j||^2
  Kokkos::View<Real*, Kokkos::HostSpace> host_norms_;
  Kokkos::View<int*, MemorySpace> active_;
  Kokkos::View<int*, Kokkos::HostSpace> host_active_;
  std::vector<Real> theta_;
};

}  // namespace basalt::impl
