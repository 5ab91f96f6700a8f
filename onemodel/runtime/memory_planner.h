// Static activation memory plan: one arena, one offset per buffer, chosen by a greedy planner
// (largest buffer first, each placed at the lowest offset that does not overlap any already
// placed buffer whose lifetime intersects its own) — the approach of TensorFlow Lite Micro's
// greedy planner.
//
// Lifetimes are inclusive step indices: a buffer written by step 3 and last read by step 5 has
// first_use = 3, last_use = 5; two buffers conflict when [first, last] ranges intersect, so an
// output never shares bytes with an input of the same step.
#pragma once
#include <cstddef>
#include <vector>

namespace om::runtime {

struct BufferRequest {
  size_t size = 0;
  int first_use = 0;
  int last_use = 0;
};

struct MemoryPlan {
  std::vector<size_t> offsets;    // one per request, multiples of the alignment
  size_t arena_bytes = 0;         // max(offset + aligned size): the arena to allocate
  size_t lower_bound_bytes = 0;   // max over steps of the aligned sizes live at that step
};

// Sizes are rounded up to `alignment` (a power of two) before placement. Ties in size keep the
// request order, so the plan is deterministic.
MemoryPlan plan_memory(const std::vector<BufferRequest>& requests, size_t alignment = 64);

}  // namespace om::runtime
