#pragma once
// One view of both batch forms for the kernels: matrix b as a pointer and two strides. A fixed
// batch (a rank-3 View, or a rank-2 View of per-matrix vectors) and a VariableBatch become the
// same BatchAccess, so every kernel is written and compiled once for both.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <vector>

#include "basalt/algorithms/batched/batch.hpp"
#include "basalt/core/errors.hpp"
#include "basalt/core/views.hpp"

namespace basalt::impl {

// One matrix of a batch (in global memory or team scratch): the type every team kernel takes.
template <class T>
using MatrixRef = Kokkos::View<T**, Kokkos::LayoutStride, Kokkos::AnonymousSpace,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class T>
using VectorRef = Kokkos::View<T*, Kokkos::LayoutStride, Kokkos::AnonymousSpace,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

template <class T, class Memory>
struct BatchAccess {
  using value_type = T;
  T* data = nullptr;
  int count = 0;
  bool variable = false;
  // Fixed form: every matrix fixed_rows x fixed_cols at data + b * batch_stride.
  int fixed_rows = 0, fixed_cols = 0;
  std::int64_t row_stride = 1, col_stride = 1, batch_stride = 0;
  // Variable form: VariableBatch's device sizes, and its matrices most rows first.
  Kokkos::View<const int*, Memory> var_rows, var_cols, var_ld;
  Kokkos::View<const std::int64_t*, Memory> var_offset;
  Kokkos::View<const int*, Memory> var_most_rows_first;
  // Host side, for checks and launch sizes (with_rows_, most_cols_with_rows_: VariableBatch's).
  Kokkos::View<const int*, Kokkos::HostSpace> host_rows_, host_cols_;
  Kokkos::View<const int*, Kokkos::HostSpace> with_rows_, most_cols_with_rows_;
  Kokkos::View<const int*, Kokkos::HostSpace> made_for_rows_, made_for_cols_;
  int max_rows = 0, max_cols = 0;
  bool all_square_ = false;  // a variable batch's summary; a fixed batch checks its one size

  KOKKOS_INLINE_FUNCTION int rows(int b) const { return variable ? var_rows(b) : fixed_rows; }
  KOKKOS_INLINE_FUNCTION int cols(int b) const { return variable ? var_cols(b) : fixed_cols; }

  KOKKOS_INLINE_FUNCTION MatrixRef<T> matrix(int b) const {
    if (variable)
      return MatrixRef<T>(data + var_offset(b),
                          Kokkos::LayoutStride(var_rows(b), 1, var_cols(b), var_ld(b)));
    return MatrixRef<T>(data + b * batch_stride,
                        Kokkos::LayoutStride(fixed_rows, row_stride, fixed_cols, col_stride));
  }
  // Column 0 of matrix b: a per-matrix vector (pivots, tau) of rows(b) entries.
  KOKKOS_INLINE_FUNCTION VectorRef<T> vector(int b) const {
    if (variable) return VectorRef<T>(data + var_offset(b), Kokkos::LayoutStride(var_rows(b), 1));
    return VectorRef<T>(data + b * batch_stride, Kokkos::LayoutStride(fixed_rows, row_stride));
  }

  int host_rows(int b) const { return variable ? host_rows_(b) : fixed_rows; }
  int host_cols(int b) const { return variable ? host_cols_(b) : fixed_cols; }
};

template <class T>
inline constexpr bool is_variable_batch_v = false;
template <class T, class M>
inline constexpr bool is_variable_batch_v<VariableBatch<T, M>> = true;

// The scalar type of a batch, either form.
template <class Batch>
using batch_scalar_t = std::remove_const_t<typename Batch::value_type>;

template <class ExecSpace, class T, class M>
BatchAccess<T, M> variable_access(const VariableBatch<T, M>& batch) {
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, M>::accessible,
                "the batch must be accessible from the execution space");
  BatchAccess<T, M> a;
  a.data = batch.values.data();
  a.count = batch.count();
  a.variable = true;
  a.var_rows = batch.rows;
  a.var_cols = batch.cols;
  a.var_ld = batch.ld;
  a.var_offset = batch.offset;
  a.var_most_rows_first = batch.most_rows_first;
  a.host_rows_ = batch.host_rows;
  a.host_cols_ = batch.host_cols;
  a.with_rows_ = batch.with_rows;
  a.most_cols_with_rows_ = batch.most_cols_with_rows;
  a.made_for_rows_ = batch.made_for_rows;
  a.made_for_cols_ = batch.made_for_cols;
  a.max_rows = batch.max_rows;
  a.max_cols = batch.max_cols;
  a.all_square_ = batch.all_square;
  return a;
}

// A batch of matrices: a rank-3 View (batch, m, n) in any layout, or a VariableBatch (whose
// count and sizes are ints already).
template <class ExecSpace, class Batch>
auto matrices(const Batch& batch, const char* routine, const char* argument) {
  if constexpr (is_variable_batch_v<Batch>) {
    static_assert(is_basalt_scalar_v<typename Batch::value_type>,
                  "a VariableBatch of float, double or their Kokkos::complex types");
    return variable_access<ExecSpace>(batch);
  } else {
    static_assert(Kokkos::is_view<Batch>::value && Batch::rank == 3 &&
                      is_basalt_scalar_v<typename Batch::value_type>,
                  "a batch of matrices is a rank-3 View A(batch, m, n) of float, double or their "
                  "Kokkos::complex types, or a basalt::VariableBatch");
    static_assert(is_accessible_from_v<ExecSpace, Batch>,
                  "the batch must be accessible from the execution space");
    require_int_extents(routine, argument, batch);
    BatchAccess<typename Batch::value_type, typename Batch::memory_space> a;
    a.data = batch.data();
    a.count = static_cast<int>(batch.extent(0));
    a.fixed_rows = a.max_rows = static_cast<int>(batch.extent(1));
    a.fixed_cols = a.max_cols = static_cast<int>(batch.extent(2));
    a.batch_stride = batch.stride(0);
    a.row_stride = batch.stride(1);
    a.col_stride = batch.stride(2);
    return a;
  }
}

// A batch of per-matrix vectors: a rank-2 View (batch, length) in any layout, or a
// VariableBatch whose matrices have at least one column (column 0 is the vector).
template <class ExecSpace, class Batch>
auto vectors(const Batch& batch, const char* routine, const char* argument) {
  if constexpr (is_variable_batch_v<Batch>) {
    if (batch.count() > 0 && batch.min_cols < 1)
      for (int b = 0; b < batch.count(); ++b)
        require(batch.host_cols(b) >= 1, routine, argument, "matrix ", b, " of ", argument,
                " has no column to hold its vector");
    return variable_access<ExecSpace>(batch);
  } else {
    static_assert(Kokkos::is_view<Batch>::value && Batch::rank == 2,
                  "a batch of vectors is a rank-2 View (batch, length) or a basalt::VariableBatch");
    static_assert(is_accessible_from_v<ExecSpace, Batch>,
                  "the batch must be accessible from the execution space");
    require_int_extents(routine, argument, batch);
    BatchAccess<typename Batch::value_type, typename Batch::memory_space> a;
    a.data = batch.data();
    a.count = static_cast<int>(batch.extent(0));
    a.fixed_rows = a.max_rows = static_cast<int>(batch.extent(1));
    a.fixed_cols = a.max_cols = 1;
    a.batch_stride = batch.stride(0);
    a.row_stride = batch.stride(1);
    return a;
  }
}

// Argument checks shared by the batched routines; each throws InvalidArgument naming the
// argument, before any work.
template <class A, class B>
void require_same_count(const char* routine, const char* argument, const A& first, const B& other) {
  require(other.count == first.count, routine, argument, argument, " holds ", other.count,
          " entries for a batch of ", first.count);
}

template <class ExecSpace, class InfoView>
void require_info(const char* routine, const InfoView& info, int count) {
  static_assert(Kokkos::is_view<InfoView>::value && InfoView::rank == 1 &&
                    std::is_same_v<typename InfoView::value_type, int>,
                "info must be a writable rank-1 View of int");
  static_assert(is_accessible_from_v<ExecSpace, InfoView>,
                "info must be accessible from the execution space");
  require(static_cast<int>(info.extent(0)) == count, routine, "info", "info holds ", info.extent(0),
          " entries for a batch of ", count);
}

// How many matrices the per-matrix checks must visit: all of them when any batch has variable
// sizes, one when every batch is fixed-size (its sizes are the same for all).
template <class... Access>
int matrices_to_check(int count, const Access&... batches) {
  return (batches.variable || ...) ? count : std::min(count, 1);
}

// A batch's sizes as host arrays (rows[b], cols[b]) for check_each_matrix: a variable batch's
// own, or a fixed batch's sizes repeated for each matrix checked.
class HostSizes {
 public:
  template <class Access>
  HostSizes(const Access& batch, int checked) {
    if (batch.variable) {
      rows = batch.host_rows_.data();
      cols = batch.host_cols_.data();
    } else {
      repeated_rows_.assign(checked, batch.fixed_rows);
      repeated_cols_.assign(checked, batch.fixed_cols);
      rows = repeated_rows_.data();
      cols = repeated_cols_.data();
    }
  }
  const int* rows;
  const int* cols;

 private:
  std::vector<int> repeated_rows_, repeated_cols_;
};

// Checks the matrices that matrices_to_check names: each_matrix(b, need, sizes...) states
// matrix b's requirements as need(condition, argument, why...) (require's arguments after the
// routine), with sizes the HostSizes of the batches (first, rest...), in order. A first pass only
// gathers the conditions, in a loop without branches over plain arrays; only when one fails does a
// second pass throw require's InvalidArgument for the first. A call on 20000 small matrices
// takes tens of microseconds on a GPU; the checks one by one through BatchAccess's accessors
// took as long (a branch per check, then a branch on the form that the compiler left in the
// loop).
template <class EachMatrix, class First, class... Rest>
void check_each_matrix(const char* routine, const EachMatrix& each_matrix, const First& first,
                       const Rest&... rest) {
  const int checked = matrices_to_check(first.count, first, rest...);
  // Moved into the tuple, a HostSizes keeps its arrays where they were.
  const auto sizes = std::make_tuple(HostSizes(first, checked), HostSizes(rest, checked)...);
  const auto for_each = [&](const auto& need) {
    std::apply(
        [&](const auto&... sizes_of) {
          for (int b = 0; b < checked; ++b) each_matrix(b, need, sizes_of...);
        },
        sizes);
  };
  int failed = 0;  // a count, not a bool: GCC vectorizes a sum, not a logical and
  for_each([&failed](bool condition, const char*, const auto&...) { failed += !condition; });
  if (failed == 0) return;
  for_each([routine](bool condition, const char* argument, const auto&... why) {
    require(condition, routine, argument, why...);
  });
}

// Checks that v, a batch of vectors (pivots, tau), holds min(m, n) entries or more for each
// matrix of a: at once where v was made for a (make_variable_vectors(label, matrices)), else
// matrix by matrix.
template <class A, class V>
void check_min_dimension_vectors(const char* routine, const char* argument, const A& a,
                                 const V& v) {
  if (a.variable && v.variable && v.made_for_rows_.data() == a.host_rows_.data() &&
      v.made_for_cols_.data() == a.host_cols_.data())
    return;
  check_each_matrix(
      routine,
      [argument](int b, const auto& need, const HostSizes& a_sizes, const HostSizes& v_sizes) {
        const int k = std::min(a_sizes.rows[b], a_sizes.cols[b]);
        need(v_sizes.rows[b] >= k, argument, "matrix ", b, ": ", argument, " holds ",
             v_sizes.rows[b], " entries; min(m, n) = ", k, " are needed");
      },
      a, v);
}

// Checks that every matrix of a is square: at once from a variable batch's summary, else matrix
// by matrix.
template <class A>
void check_square(const char* routine, const A& a) {
  if (a.variable && a.all_square_) return;
  check_each_matrix(
      routine,
      [](int b, const auto& need, const HostSizes& a_sizes) {
        need(a_sizes.rows[b] == a_sizes.cols[b], "A", "matrix ", b, " is ", a_sizes.rows[b], " x ",
             a_sizes.cols[b], "; it must be square");
      },
      a);
}

}  // namespace basalt::impl
