#pragma once
// basalt::posv: solves A X = B for a Hermitian positive definite A by Cholesky (LAPACK's xPOSV).
//
//   int info = basalt::posv(exec, Triangle::lower, A, B);
//
// A's triangle is overwritten by its factor and B by X; info as basalt::potrf's. When info > 0
// the factorization stopped and B is left unchanged, as LAPACK does.
#include "basalt/algorithms/dense/potrf.hpp"
#include "basalt/algorithms/dense/potrs.hpp"

namespace basalt {

template <class ExecSpace, class AView, class BView>
int posv(const ExecSpace& exec, Triangle uplo, const AView& A, const BView& B) {
  require_int_extents("posv", "A", A);
  require_int_extents("posv", "B", B);
  require(A.extent(1) == A.extent(0), "posv", "A", "A is ", A.extent(0), " x ", A.extent(1),
          "; it must be square");
  require(B.extent(0) == A.extent(0), "posv", "B", "B has ", B.extent(0), " rows; A has ",
          A.extent(0));
  const int info = potrf(exec, uplo, A);
  if (info == 0) potrs(exec, uplo, A, B);
  return info;
}

}  // namespace basalt
