#include "lathe/runtime/memory_plan.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <queue>

namespace lathe {

size_t BufferPlan::total_bytes() const { return std::accumulate(buffer_nbytes.begin(), buffer_nbytes.end(), size_t{0}); }

BufferPlan plan_buffers(const std::vector<BufferRequest>& requests) {
  BufferPlan plan;
  plan.buffer_of.assign(requests.size(), -1);
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return requests[a].first < requests[b].first; });

  std::multimap<size_t, int32_t> free_by_size;  // capacity -> buffer
  // Live roots ordered by their last use, to release them in time.
  using Live = std::pair<int64_t, int32_t>;     // (last, buffer)
  std::priority_queue<Live, std::vector<Live>, std::greater<Live>> live;

  for (size_t idx : order) {
    const BufferRequest& r = requests[idx];
    while (!live.empty() && live.top().first < r.first) {
      const int32_t b = live.top().second;
      live.pop();
      free_by_size.emplace(plan.buffer_nbytes[b], b);
    }
    int32_t buffer;
    auto fit = free_by_size.lower_bound(r.nbytes);
    if (fit != free_by_size.end()) {
      buffer = fit->second;
      free_by_size.erase(fit);
    } else if (!free_by_size.empty()) {
      auto largest = std::prev(free_by_size.end());
      buffer = largest->second;
      free_by_size.erase(largest);
      plan.buffer_nbytes[buffer] = r.nbytes;
    } else {
      buffer = static_cast<int32_t>(plan.buffer_nbytes.size());
      plan.buffer_nbytes.push_back(r.nbytes);
    }
    plan.buffer_of[idx] = buffer;
    live.emplace(std::max(r.last, r.first), buffer);
  }
  return plan;
}

}  // namespace lathe
