#pragma once
// The CUDA specialization of the batched LU (basalt::portable::getrf_batched's contract) for
// batches whose matrices are all at most 512 x 512: takes the batch apart and launches the
// warp-per-matrix kernel (all at most 32 x 32) or the block-per-matrix one. Larger matrices stay
// on the portable path (Specialization::handles).
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <optional>
#include <type_traits>
#include <vector>

#include "basalt/backends/cuda/batched/getrf_batched_launch.hpp"
#include "basalt/backends/cuda/scalar.hpp"
#include "basalt/backends/cuda/side_streams.hpp"
#include "basalt/core/dispatch.hpp"

namespace basalt {

namespace cuda {

// A batch as the portable layer describes it (data, fixed sizes and strides, or per-matrix
// sizes, leading dimensions and offsets), as the kernels take it.
template <class Access>
auto device_batch(const Access& A) {
  using T = std::remove_const_t<typename Access::value_type>;
  kernels::DeviceBatch<scalar_t<T>> d;
  d.data = device_pointer(const_cast<T*>(A.data));
  d.variable = A.variable;
  d.rows = A.fixed_rows;
  d.cols = A.fixed_cols;
  d.row_stride = A.row_stride;
  d.col_stride = A.col_stride;
  d.batch_stride = A.batch_stride;
  d.var_rows = A.var_rows.data();
  d.var_cols = A.var_cols.data();
  d.var_ld = A.var_ld.data();
  d.var_offset = A.var_offset.data();
  return d;
}

// Launch classes of a variable batch by rows: the warp kernels' size classes (up to 4, 8, 12,
// ..., 32 rows: classes 0 to 7), then the block kernels' heights (33 to 64 rows: class 8, and so
// on by 32 rows).
inline int launch_class(int rows) {
  if (rows <= 32) return rows <= 4 ? 0 : rows <= 8 ? 1 : (rows + 3) / 4 - 1;
  return 7 + (rows + 31) / 32 - 1;
}

// How launch_by_class takes a variable batch's launch classes of up to 32 rows (the warp
// kernels') where all of their matrices fit the warp kernel (resident_matrices(largest): the
// matrices of up to that size that one multiprocessor keeps resident under the routine's warp
// kernel); otherwise each class is a launch of its own.
// - MergedInTwoWaves: where two waves hold them, they go to the largest warp class among them.
//   In one wave they run side by side anyway, and each further launch with its events cost
//   microseconds against calls of 10 to 30; a second wave costs less than that (20000 matrices of
//   1..8 rows: 31 us in two launches, 18 us for a fixed batch of the merged class; perf/NOTES.md,
//   "Variable batches up to n = 32").
// - Grouped: they go to one launch, launch(stream, a, kernels::WarpClasses), each class in
//   segments as wide as its own matrices need, so that the small ones take fewer warps than in
//   the largest class's. Where two waves hold them, the classes of one segment width run the code
//   of the largest among them: the SMs, each holding blocks of several classes, then share fewer
//   codes in their instruction caches (perf/NOTES.md, "The LU warp classes of a variable batch in
//   one launch"). Beyond two waves, where beyond_two_waves allows, each class runs its own code:
//   the blocks go widest class first, so an SM holds few classes at a time, and a class's own
//   steps save more than the shared code. One launch there instead of one per class: 20000
//   single matrices of 1..16 rows took 0.0099-0.0109 ms against 0.0228-0.0303 for LU and
//   0.0071-0.0073 against 0.0290-0.0312 for Cholesky (H200; perf/NOTES.md, "Variable LU and
//   Cholesky batches beyond two waves in one launch").
template <class ResidentMatrices>
struct MergedInTwoWaves {
  ResidentMatrices resident_matrices;
};
template <class ResidentMatrices>
MergedInTwoWaves(ResidentMatrices) -> MergedInTwoWaves<ResidentMatrices>;
template <class ResidentMatrices, class Launch>
struct Grouped {
  ResidentMatrices resident_matrices;
  Launch launch;
  bool beyond_two_waves;
};
template <class ResidentMatrices, class Launch>
Grouped(ResidentMatrices, Launch, bool) -> Grouped<ResidentMatrices, Launch>;

template <class WarpRule>
inline constexpr bool is_grouped = false;
template <class ResidentMatrices, class Launch>
inline constexpr bool is_grouped<Grouped<ResidentMatrices, Launch>> = true;

// The largest warp class with matrices (launch classes 0 to 7), where every warp class's
// matrices fit the warp kernel and `rule` takes them in one launch (in_two_waves: whether two
// waves of it hold them all); -1 otherwise.
template <class WarpRule>
int warp_classes_in_one_launch(const Kokkos::Cuda& exec, const std::vector<int>& matrices,
                               const std::vector<int>& rows, const std::vector<int>& cols,
                               const WarpRule& rule, bool& in_two_waves) {
  const int warp_classes = std::min(launch_class(32) + 1, static_cast<int>(matrices.size()));
  int members = 0, widest = -1;
  for (int k = 0; k < warp_classes; ++k)
    if (matrices[k] > 0) members += matrices[k], widest = k;
  if (widest < 0) return -1;
  const int largest =
      std::max(rows[widest], *std::max_element(cols.begin(), cols.begin() + widest + 1));
  if (largest > 32) return -1;
  in_two_waves =
      members <= 2 * rule.resident_matrices(largest) * exec.cuda_device_prop().multiProcessorCount;
  if constexpr (is_grouped<WarpRule>) {
    if (rule.beyond_two_waves) return widest;
  }
  return in_two_waves ? widest : -1;
}

// Calls launch(stream, a, count, rows, cols) to launch a routine's kernels on the batch a
// describes: a fixed batch at once on exec's stream (rows, cols: its sizes); a variable batch
// taken most rows first (VariableBatch's order) in one call per launch class, a's order
// pointing at the class's first slot, count of them, rows and cols the largest among them; the
// tallest class on exec's stream, the others on side streams. A thread block keeps the registers of
// its height for as long as its matrix takes, so a launch sized for the batch's tallest matrix left
// an SM to a few short ones; a warp's segments are as wide as its widest matrix needs; and in the
// batch's own order, blocks of mixed sizes ran up to 3x slower (perf/NOTES.md, "Variable batches").
// The classes come from VariableBatch's count of matrices by rows, so the host does no per-matrix
// work here. The classes of up to 32 rows go as `warp` says (MergedInTwoWaves or Grouped).
template <class Access, class Launch, class WarpRule>
void launch_by_class(const Kokkos::Cuda& exec, const Access& A, const Launch& launch,
                     const WarpRule& warp) {
  auto a = device_batch(A);
  if (!A.variable) return launch(exec.cuda_stream(), a, A.count, A.max_rows, A.max_cols);
  const int classes = launch_class(A.max_rows) + 1;
  std::vector<int> matrices(classes, 0), rows(classes, 0), cols(classes, 0);
  for (int r = 0; r <= A.max_rows; ++r) {
    if (A.with_rows_(r) == 0) continue;
    const int k = launch_class(r);
    matrices[k] += A.with_rows_(r);
    rows[k] = r;
    cols[k] = std::max(cols[k], A.most_cols_with_rows_(r));
  }
  bool in_two_waves = false;
  const int widest = warp_classes_in_one_launch(exec, matrices, rows, cols, warp, in_two_waves);
  if constexpr (!is_grouped<WarpRule>) {
    for (int k = 0; k < widest; ++k) {  // merged into the widest
      matrices[widest] += matrices[k];
      cols[widest] = std::max(cols[widest], cols[k]);
      matrices[k] = 0;
    }
  }
  std::vector<int> first_slot(classes, 0);  // of each class in the order, most rows first
  for (int k = classes - 2; k >= 0; --k) first_slot[k] = first_slot[k + 1] + matrices[k + 1];
  kernels::WarpClasses grouped;
  if constexpr (is_grouped<WarpRule>) {
    grouped.own_codes = !in_two_waves;
    for (int k = widest; k >= 0; --k) {
      if (matrices[k] == 0) continue;
      const int e = grouped.entries++;
      grouped.size[e] = std::max(rows[k], cols[k]);
      grouped.count[e] = matrices[k];
      grouped.first_slot[e] = first_slot[k];
      matrices[k] = 0;
    }
  }
  const int launches = classes - static_cast<int>(std::count(matrices.begin(), matrices.end(), 0)) +
                       (grouped.entries > 0);
  if (launches == 0) return;
  std::optional<SideStreams> side;
  if (launches > 1) side.emplace(exec.cuda_device(), exec.cuda_stream());
  int launched = 0;
  auto next_stream = [&] { return launched++ == 0 ? exec.cuda_stream() : (*side)[launched - 2]; };
  for (int k = classes - 1; k >= 0; --k) {
    if constexpr (is_grouped<WarpRule>) {
      if (k == widest) {
        a.order = A.var_most_rows_first.data();
        warp.launch(next_stream(), a, grouped);
      }
    }
    if (matrices[k] == 0) continue;
    a.order = A.var_most_rows_first.data() + first_slot[k];
    launch(next_stream(), a, matrices[k], rows[k], cols[k]);
  }
  if (side) side->join();
}

// Whether matrices of at most rows x cols fit the warp-segment kernel.
inline bool getrf_batched_fits_small(int rows, int cols) {
  return rows <= kernels::getrf_batched_max_rows && cols <= kernels::getrf_batched_max_columns;
}

// Whether every matrix of A fits one of the CUDA kernels.
template <class Access>
bool getrf_batched_fits(const Access& A) {
  return std::max(A.max_rows, A.max_cols) <= kernels::getrf_batched_block_max_size;
}

template <class Access, class PivAccess, class InfoView>
void getrf_batched(const Kokkos::Cuda& exec, const Access& A, const PivAccess& ipiv,
                   const InfoView& info) {
  using T = scalar_t<std::remove_const_t<typename Access::value_type>>;
  launch_by_class(
      exec, A,
      [&](cudaStream_t stream, const auto& a, int count, int rows, int cols) {
        if (getrf_batched_fits_small(rows, cols))
          kernels::getrf_batched_small(stream, a, device_batch(ipiv), info.data(), info.stride(0),
                                       count, std::max(rows, cols));
        else
          kernels::getrf_batched_block(stream, a, device_batch(ipiv), info.data(), info.stride(0),
                                       count, rows);
      },
      // Complex double's classes from 24 rows ran 3-30% slower in one launch beyond two
      // waves than in launches of their own (H200; perf/NOTES.md, "Variable LU and Cholesky
      // batches beyond two waves in one launch").
      Grouped{kernels::getrf_batched_small_resident_matrices<T>,
              [&](cudaStream_t stream, const auto& a, const kernels::WarpClasses& classes) {
                kernels::getrf_batched_small_classes(stream, a, device_batch(ipiv), info.data(),
                                                     info.stride(0), classes);
              },
              !std::is_same_v<T, cuDoubleComplex>});
}

}  // namespace cuda

template <>
struct Specialization<routine::getrf_batched, Kokkos::Cuda> {
  static constexpr bool available = true;
  template <class Access>
  static bool handles(const Access& A) {
    return cuda::getrf_batched_fits(A);
  }
  template <class... Args>
  static void apply(const Kokkos::Cuda& exec, const Args&... args) {
    cuda::getrf_batched(exec, args...);
  }
};

}  // namespace basalt
