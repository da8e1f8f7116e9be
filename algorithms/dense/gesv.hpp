#pragma once
// basalt::gesv: solves A X = B by LU with partial pivoting (LAPACK's xGESV).
//
//   int info = basalt::gesv(exec, A, ipiv, B);
//
// A is overwritten by its LU factors, ipiv by the pivots and B by X; info as basalt::getrf's.
// When info > 0 the factors are complete but singular and B is left unchanged, as LAPACK does.
#include "basalt/algorithms/dense/getrf.hpp"
#include "basalt/algorithms/dense/getrs.hpp"

namespace basalt {

template <class ExecSpace, class AView, class PivView, class BView>
int gesv(const ExecSpace& exec, const AView& A, const PivView& ipiv, const BView& B) {
  require_int_extents("gesv", "A", A);
  require_int_extents("gesv", "B", B);
  require(A.extent(1) == A.extent(0), "gesv", "A", "A is ", A.extent(0), " x ", A.extent(1),
          "; it must be square");
  require(B.extent(0) == A.extent(0), "gesv", "B", "B has ", B.extent(0), " rows; A has ",
          A.extent(0));
  const int info = getrf(exec, A, ipiv);
  if (info == 0) getrs(exec, Op::none, A, ipiv, B);
  return info;
}

}  // namespace basalt
