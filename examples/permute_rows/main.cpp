// Applies LAPACK-style row interchanges to a matrix on the default execution space (the GPU in
// a CUDA build) and checks the result on the host.
#include <Kokkos_Core.hpp>
#include <basalt/algorithms/dense/laswp.hpp>
#include <cstdio>
#include <utility>
#include <vector>

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  const int m = 6, n = 3;
  basalt::Matrix<double> A("A", m, n);
  Kokkos::parallel_for(
      "label_rows", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {m, n}),
      KOKKOS_LAMBDA(int i, int j) { A(i, j) = 10 * i + j; });  // row i holds 10i, 10i+1, ...

  const std::vector<int> pivots = {3, 5, 3, 6, 5, 6};  // 1-based, as getrf returns them
  basalt::PivotVector<> ipiv("ipiv", m);
  auto ipiv_host = Kokkos::create_mirror_view(ipiv);
  for (int k = 0; k < m; ++k) ipiv_host(k) = pivots[k];
  Kokkos::deep_copy(ipiv, ipiv_host);

  basalt::laswp(Kokkos::DefaultExecutionSpace(), A, ipiv, 1, m);

  std::vector<int> order = {0, 1, 2, 3, 4, 5};  // the same interchanges, one by one
  for (int k = 0; k < m; ++k) std::swap(order[k], order[pivots[k] - 1]);
  auto result = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A);
  int wrong = 0;
  for (int i = 0; i < m; ++i) {
    std::printf("row %d: %4.0f %4.0f %4.0f\n", i + 1, result(i, 0), result(i, 1), result(i, 2));
    for (int j = 0; j < n; ++j) wrong += result(i, j) != 10 * order[i] + j;
  }
  std::printf("%s on %s\n", wrong ? "WRONG" : "permuted as LAPACK does",
              Kokkos::DefaultExecutionSpace::name());
  return wrong ? 1 : 0;
}
