#include "onemodel/runtime/memory_planner.h"

#include <algorithm>
#include <map>

#include "onemodel/core/shape.h"

namespace om::runtime {

// Saturates instead of wrapping (sizes come from checked shapes, but a sum of many could not).
static size_t align_up(size_t n, size_t a) { return n > SIZE_MAX - a ? SIZE_MAX / a * a : (n + a - 1) / a * a; }

MemoryPlan plan_memory(const std::vector<BufferRequest>& requests, size_t alignment) {
  MemoryPlan plan;
  const size_t n = requests.size();
  plan.offsets.assign(n, 0);
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return align_up(requests[a].size, alignment) > align_up(requests[b].size, alignment);
  });

  // The placed buffers whose lifetimes intersect a new one are found with a max segment tree
  // over the requests sorted by first_use, holding each placed request's last_use (-1 while
  // unplaced): a query visits only subtrees that contain a conflict, so planning costs
  // O((n + conflicts) log n) instead of scanning every placed buffer for every request. The
  // conflict set, and so every offset, is the same as the plain scan's.
  std::vector<size_t> by_first(n);
  for (size_t i = 0; i < n; ++i) by_first[i] = i;
  std::stable_sort(by_first.begin(), by_first.end(), [&](size_t a, size_t b) { return requests[a].first_use < requests[b].first_use; });
  std::vector<size_t> pos_of(n);
  std::vector<int> firsts(n);
  for (size_t p = 0; p < n; ++p) pos_of[by_first[p]] = p, firsts[p] = requests[by_first[p]].first_use;
  size_t leaves = 1;
  while (leaves < n) leaves *= 2;
  std::vector<long long> tree(2 * leaves, -1);  // max last_use of placed requests in the subtree
  auto place = [&](size_t idx) {
    size_t t = leaves + pos_of[idx];
    tree[t] = requests[idx].last_use;
    for (t /= 2; t >= 1; t /= 2) tree[t] = std::max(tree[2 * t], tree[2 * t + 1]);
  };
  std::vector<size_t> conflicts;
  std::vector<size_t> stack;
  for (size_t idx : order) {
    const BufferRequest& r = requests[idx];
    const size_t size = align_up(r.size, alignment);
    conflicts.clear();
    if (size > 0) {
      // Placed q with q.first <= r.last (a prefix of by_first) and q.last >= r.first.
      const size_t limit = size_t(std::upper_bound(firsts.begin(), firsts.end(), r.last_use) - firsts.begin());
      stack.assign(1, 1);
      while (!stack.empty()) {
        const size_t t = stack.back();
        stack.pop_back();
        if (tree[t] < r.first_use) continue;
        // The first leaf under node t; the subtree lies beyond the prefix when it does.
        size_t lo = t;
        while (lo < leaves) lo *= 2;
        lo -= leaves;
        if (lo >= limit) continue;
        if (t >= leaves) {
          const size_t q = by_first[lo];
          if (align_up(requests[q].size, alignment) > 0) conflicts.push_back(q);
          continue;
        }
        stack.push_back(2 * t + 1);
        stack.push_back(2 * t);
      }
    }
    std::sort(conflicts.begin(), conflicts.end(), [&](size_t a, size_t b) {
      return plan.offsets[a] != plan.offsets[b] ? plan.offsets[a] < plan.offsets[b] : a < b;
    });
    // Walk the conflicting buffers by offset and take the first gap that holds this one.
    size_t candidate = 0;
    for (size_t p : conflicts) {
      const size_t p_off = plan.offsets[p];
      if (size > 0 && saturating_add(candidate, size) <= p_off) break;
      candidate = std::max(candidate, saturating_add(p_off, align_up(requests[p].size, alignment)));
    }
    plan.offsets[idx] = size == 0 ? 0 : candidate;
    plan.arena_bytes = std::max(plan.arena_bytes, saturating_add(plan.offsets[idx], size));
    place(idx);
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
