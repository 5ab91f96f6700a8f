// Batches split between threads (docs/threads.md, "Batches split between threads"): a run over a
// batch of n items runs as two runs over its halves, each in an arena of its own and on a thread
// of its own, when every node computes each item of axis 0 from the same items of its inputs.
// The kernels give every item the bits they give it in the whole batch (the split tests), so
// splitting changes no bit; what it changes is that each core writes and reads only memory it
// wrote itself, which intra-op parts of one arena cannot promise (docs/performance.md).
#pragma once
#include <cstdint>

#include "onemodel/runtime/plan.h"

namespace om::runtime {

// Creation time: no control flow (a graph's nodes may still fold away when planning, so their
// rules are checked per plan).
bool may_split_batch(const CompiledGraph& cg);

// Per input signature, before any half is planned: every node `whole` runs (not folded) has a
// batch rule (graph::BatchRule other than None).
bool nodes_have_batch_rules(const CompiledGraph& cg, const Plan& whole);

// Per input signature: `whole` is planned for inputs of n items on axis 0, `part` for the same
// inputs with nh items (1 <= nh < n). True when every fed input, every value computed at run time
// and every output carries the batch on axis 0 in both plans (n and nh items, the other dims
// equal) and every node meets its operator's rule.
bool splits_batch(const CompiledGraph& cg, const Plan& whole, const Plan& part, int64_t n, int64_t nh);

}  // namespace om::runtime
