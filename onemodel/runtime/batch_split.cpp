// The batch rules of graph::BatchRule, checked on two plans of one graph (runtime/batch_split.h).
#include "onemodel/runtime/batch_split.h"

#include <algorithm>

namespace om::runtime {

namespace {

struct Plans {
  const Plan& whole;
  const Plan& part;
  int64_t n, nh;

  // Known when planning (initializers, folded values): the same in both plans, a parameter.
  bool known(int id) const { return whole.values[size_t(id)].data != nullptr; }
  // Computed at run time with the batch on axis 0: n items in the whole, nh in the part, the
  // other dims equal.
  bool batched(int id) const {
    const graph::ValueDesc& w = whole.values[size_t(id)];
    const graph::ValueDesc& p = part.values[size_t(id)];
    if (w.data || p.data || w.shape.empty() || w.shape.size() != p.shape.size()) return false;
    return w.shape[0] == n && p.shape[0] == nh && std::equal(w.shape.begin() + 1, w.shape.end(), p.shape.begin() + 1);
  }
  size_t rank(int id) const { return whole.values[size_t(id)].shape.size(); }
  // A parameter that broadcasts along the batch: fewer axes than the output, or axis 0 of one.
  bool broadcasts(int id, size_t out_rank) const {
    const std::vector<int64_t>& s = whole.values[size_t(id)].shape;
    return s.size() < out_rank || s[0] == 1;
  }
};

bool axis_zero(int64_t axis, size_t rank) { return axis == 0 || (axis < 0 && axis + int64_t(rank) == 0); }

// Input i (present) of a node whose output has out_rank axes: batched (with the output's rank
// where `same_rank`), or a parameter; from input `first_operand` on, a parameter must broadcast
// along the batch (weights before it may have any shape).
bool input_ok(const Plans& p, int id, size_t i, size_t out_rank, bool same_rank, size_t first_operand) {
  if (!p.known(id)) return p.batched(id) && (!same_rank || p.rank(id) == out_rank);
  return i < first_operand || p.broadcasts(id, out_rank);
}

// The axes input `at` (Slice's, a reduction's): known and without axis 0 (absent means every axis).
bool axes_keep_axis0(const Plans& p, const std::vector<int>& ins, size_t at) {
  if (ins.size() <= at || ins[at] < 0 || !p.known(ins[at])) return false;
  const graph::ValueDesc& axes = p.whole.values[size_t(ins[at])];
  const size_t rank = p.rank(ins[0]);
  const int64_t count = axes.numel();
  for (int64_t i = 0; i < count; ++i) {
    int64_t a;
    if (axes.dtype == DType::i64) a = static_cast<const int64_t*>(axes.data)[i];
    else if (axes.dtype == DType::i32) a = static_cast<const int32_t*>(axes.data)[i];
    else return false;
    if (axis_zero(a, rank)) return false;
  }
  return true;
}

bool perm_keeps_axis0(const graph::Node& node, const char* name, bool required) {
  if (!node.attr(name)) return !required;
  const std::vector<int64_t> perm = node.attr_ints(name);
  return !perm.empty() && perm[0] == 0;
}

bool node_splits(const Plans& p, const graph::OpDef& op, const graph::Node& node, const std::vector<int>& ins,
                 const std::vector<int>& outs) {
  if (outs.empty() || outs[0] < 0) return false;
  for (int id : outs)
    if (id >= 0 && !p.batched(id)) return false;
  const size_t out_rank = p.rank(outs[0]);
  using graph::BatchRule;
  switch (op.batch) {
    case BatchRule::None:
      return false;
    case BatchRule::FirstOutput:
      for (size_t o = 1; o < outs.size(); ++o)
        if (outs[o] >= 0) return false;
      [[fallthrough]];
    case BatchRule::Items:
    case BatchRule::Axis:
      if (op.batch == BatchRule::Axis && (ins.empty() || ins[0] < 0 || axis_zero(node.attr_int("axis", op.batch_arg), p.rank(ins[0]))))
        return false;
      {
        const size_t first_operand = op.batch != BatchRule::Axis && op.batch_arg > 0 ? size_t(op.batch_arg) : 2;
        for (size_t i = 0; i < ins.size(); ++i)
          if (ins[i] >= 0 && !input_ok(p, ins[i], i, out_rank, false, first_operand)) return false;
      }
      return true;
    case BatchRule::Broadcast:
      for (size_t i = 0; i < ins.size(); ++i)
        if (ins[i] >= 0 && !input_ok(p, ins[i], i, out_rank, true, 0)) return false;
      return true;
    case BatchRule::Rows: {
      if (ins.size() < 2 || ins[0] < 0 || ins[1] < 0 || !p.batched(ins[0]) || p.rank(ins[0]) < 2) return false;
      if (node.attr_int("transA", 0) != 0 || !perm_keeps_axis0(node, "perm_a", false) || !perm_keeps_axis0(node, "perm_y", false))
        return false;
      // Input 1: weights, or a batched operand of a batched product (its axis 0 the batch).
      if (!p.known(ins[1]) &&
          !(p.batched(ins[1]) && p.rank(ins[1]) >= 3 && p.rank(ins[1]) == p.rank(ins[0]) && perm_keeps_axis0(node, "perm_b", false)))
        return false;
      for (size_t i = 2; i < ins.size(); ++i)
        if (ins[i] >= 0 && !input_ok(p, ins[i], i, out_rank, true, 2)) return false;
      return true;
    }
    case BatchRule::Transpose:
      return !ins.empty() && ins[0] >= 0 && p.batched(ins[0]) && perm_keeps_axis0(node, "perm", true);
    case BatchRule::AxesInput:
      if (ins.empty() || ins[0] < 0 || !p.batched(ins[0]) || !axes_keep_axis0(p, ins, size_t(op.batch_arg))) return false;
      for (size_t i = 1; i < ins.size(); ++i)
        if (ins[i] >= 0 && !p.known(ins[i])) return false;
      return true;
  }
  return false;
}

}  // namespace

bool may_split_batch(const CompiledGraph& cg) {
  if (cg.flat.size() != cg.nodes.size()) return false;  // control flow
  for (size_t i = 0; i < cg.flat.size(); ++i)
    if (cg.flat[i].kind != FlatKind::Node || !cg.ops[i]) return false;
  return true;
}

bool nodes_have_batch_rules(const CompiledGraph& cg, const Plan& whole) {
  for (size_t i = 0; i < cg.nodes.size(); ++i) {
    const std::vector<int>& outs = cg.node_outputs[i];
    const bool runs = std::any_of(outs.begin(), outs.end(), [&](int id) { return id >= 0 && !whole.values[size_t(id)].data; });
    if (runs && cg.ops[i]->batch == graph::BatchRule::None) return false;
  }
  return true;
}

bool splits_batch(const CompiledGraph& cg, const Plan& whole, const Plan& part, int64_t n, int64_t nh) {
  if (nh < 1 || nh >= n || whole.values.size() != part.values.size()) return false;
  const Plans p{whole, part, n, nh};
  for (size_t j = 0; j < cg.input_ids.size(); ++j)
    if (whole.fed[j] && !p.batched(cg.input_ids[j])) return false;
  for (int id : cg.output_ids)
    if (id < 0 || !p.batched(id)) return false;
  for (size_t i = 0; i < cg.nodes.size(); ++i) {
    const std::vector<int>& outs = cg.node_outputs[i];
    // Nodes folded when planning compute nothing at run time.
    const bool runs = std::any_of(outs.begin(), outs.end(), [&](int id) { return id >= 0 && !p.known(id); });
    if (runs && !node_splits(p, *cg.ops[i], *cg.nodes[i], cg.node_inputs[i], outs)) return false;
  }
  return true;
}

}  // namespace om::runtime
