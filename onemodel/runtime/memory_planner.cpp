#include "onemodel/runtime/memory_planner.h"

#include <algorithm>
#include <map>

namespace om::runtime {

static size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

MemoryPlan plan_memory(const std::vector<BufferRequest>& requests, size_t alignment) {
  MemoryPlan plan;
  const size_t n = requests.size();
  plan.offsets.assign(n, 0);
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return align_up(requests[a].size, alignment) > align_up(requests[b].size, alignment);
  });

  std::vector<size_t> placed;  // request indices already given an offset
  std::vector<size_t> conflicts;
  for (size_t idx : order) {
    const BufferRequest& r = requests[idx];
    const size_t size = align_up(r.size, alignment);
    conflicts.clear();
    for (size_t p : placed) {
      const BufferRequest& q = requests[p];
      if (q.first_use <= r.last_use && r.first_use <= q.last_use && align_up(q.size, alignment) > 0)
        conflicts.push_back(p);
    }
    std::sort(conflicts.begin(), conflicts.end(), [&](size_t a, size_t b) {
      return plan.offsets[a] != plan.offsets[b] ? plan.offsets[a] < plan.offsets[b] : a < b;
    });
    // Walk the conflicting buffers by offset and take the first gap that holds this one.
    size_t candidate = 0;
    for (size_t p : conflicts) {
      const size_t p_off = plan.offsets[p];
      if (size > 0 && candidate + size <= p_off) break;
      candidate = std::max(candidate, p_off + align_up(requests[p].size, alignment));
    }
    plan.offsets[idx] = size == 0 ? 0 : candidate;
    plan.arena_bytes = std::max(plan.arena_bytes, plan.offsets[idx] + size);
    placed.push_back(idx);
  }

  // Lower bound: the largest total of aligned sizes alive at one step.
  std::map<int, long long> delta;
  for (const BufferRequest& r : requests) {
    delta[r.first_use] += static_cast<long long>(align_up(r.size, alignment));
    delta[r.last_use + 1] -= static_cast<long long>(align_up(r.size, alignment));
  }
  long long live = 0;
  for (const auto& kv : delta) {
    live += kv.second;
    plan.lower_bound_bytes = std::max(plan.lower_bound_bytes, static_cast<size_t>(live));
  }
  return plan;
}

}  // namespace om::runtime
