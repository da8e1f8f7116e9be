#include <algorithm>
#include <vector>

#include "basalt/backends/cuda/batched/launch_order.hpp"
#include "basalt/backends/cuda/error.hpp"
#include "basalt/backends/cuda/workspace.hpp"

namespace basalt::cuda {

int* most_rows_first(int device, cudaStream_t stream, const int* rows, int count) {
  if (count == 0) return nullptr;
  // A counting sort, descending: slots_before[r] ends as the first slot of the matrices of
  // `most - r` rows.
  const int most = *std::max_element(rows, rows + count);
  std::vector<int> slots_before(most + 2, 0);
  for (int b = 0; b < count; ++b) ++slots_before[most - rows[b] + 1];
  for (int r = 1; r <= most + 1; ++r) slots_before[r] += slots_before[r - 1];
  std::vector<int> order(count);
  for (int b = 0; b < count; ++b) order[slots_before[most - rows[b]]++] = b;
  auto* device_order = static_cast<int*>(acquire_workspace(device, stream, count * sizeof(int)));
  // From pageable memory the call returns once `order` is staged, so it may go out of scope.
  BASALT_CUDA_CHECK(cudaMemcpyAsync(device_order, order.data(), count * sizeof(int),
                                    cudaMemcpyHostToDevice, stream));
  return device_order;
}

}  // namespace basalt::cuda
