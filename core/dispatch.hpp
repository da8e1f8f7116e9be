#pragma once
// How a routine picks its implementation, after Kokkos Kernels' spec structs.
//
// Every public routine is written once, portably, over Kokkos. A backend that has a faster
// implementation for an execution space specializes Specialization<Routine, ExecSpace> with
// `available = true` and a static `apply` taking the routine's arguments. The public routine
// calls apply when it exists and the portable code otherwise, decided at compile time.
#include <Kokkos_Core.hpp>

namespace basalt {

namespace routine {
// One tag per routine or building block, so backends can name what they specialize.
struct laswp;
struct getf2;  // the LU panel: unblocked LU with partial pivoting of a tall, narrow block
struct gemm;
struct trsm;
struct herk;            // Hermitian rank-k update of one triangle (syrk for real scalars)
struct herk_trapezoid;  // the same on a trapezoid: Cholesky's update of the columns beside a block
struct potf2;           // the Cholesky diagonal block: unblocked Cholesky of a small square block
struct potrf_panel;     // a Cholesky panel: its diagonal block factored, the rows below solved
struct trmm;            // triangular matrix times matrix, either side (the QR drivers)
struct geqr2;           // the QR panel: unblocked Householder QR of a tall, narrow block
struct larft_factor;    // larft's T of a block reflector from V^H V and tau
struct getrf_batched;   // LU of every matrix of a batch
struct potrf_batched;   // Cholesky factorization of every matrix of a batch
struct geqrf_batched;   // Householder QR of every matrix of a batch
struct spmm;            // sparse matrix times vectors (SpMV: one vector), every sparse format
struct side_space;      // a second instance of an execution space (core/side_space.hpp)
struct call_scratch;    // device memory for the length of one call (core/call_scratch.hpp)
struct recorded_call;   // a call's work recorded once and replayed (core/recorded_call.hpp)
}  // namespace routine

template <class Routine, class ExecSpace>
struct Specialization {
  static constexpr bool available = false;
};

template <class Routine, class ExecSpace>
inline constexpr bool has_specialization_v = Specialization<Routine, ExecSpace>::available;

// The direction in which a sequence of row interchanges is applied (LAPACK's sign of INCX).
enum class Direction { forward, backward };

// How a matrix enters an operation (LAPACK's TRANS: 'N', 'T', 'C').
enum class Op { none, transpose, conj_transpose };

// Which triangle of a Hermitian matrix is stored and factored (LAPACK's UPLO: 'L', 'U'). Not
// named Uplo: Kokkos Kernels 3.4's trsm header puts KokkosBatched::Uplo in the global namespace.
enum class Triangle { lower, upper };

// The side from which an operator multiplies a matrix (LAPACK's SIDE: 'L', 'R'): left is
// C := op(Q) C, right is C := C op(Q). Not named Side: Kokkos Kernels 3.4's trsm header puts
// KokkosBatched::Side in the global namespace too.
enum class ApplySide { left, right };

// The storage of a sparse matrix (algorithms/sparse/formats.hpp), for backends to tell them apart.
enum class SparseFormat { csr, ell, sellp };

inline const char* blas_letter(Op op) {
  return op == Op::none ? "N" : op == Op::transpose ? "T" : "C";
}

}  // namespace basalt
