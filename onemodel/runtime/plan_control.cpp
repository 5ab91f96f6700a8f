// Control flow in the plan (docs/onnx.md, "Control flow"): the entries of If, Loop and Scan and
// their subgraphs (CompiledGraph::flat), and their planning: a folded If's branch inline, a
// run-time If's two branches between a branch step and a jump, a loop's body between its test and
// the step back to it, with the counter, the condition and the loop-carried values in the arena.
// Reached only through the operators' records (kControlFlowHooks), so a program that registers
// none of them does not link this file.
#include <algorithm>
#include <cstring>

#include "onemodel/core/shape.h"
#include "onemodel/runtime/plan_internal.h"

namespace om::runtime {
namespace {

// Loop: inputs M, cond, N initial values; the body takes the iteration number, the condition
// and N values, and gives the condition, N values and K scan outputs; the node gives N + K.
// Scan: N initial states and num_scan_inputs scanned inputs; the body takes N states and one
// slice of each, and gives N states and K scan outputs; the node gives N + K.
Status check_body_arity(const graph::Node& n, const graph::Graph& body) {
  const size_t ins = n.inputs.size(), outs = n.outputs.size();
  if (n.op_type == "Loop") {
    const size_t carried = ins - 2;  // the record asks for at least 2 inputs
    if (body.inputs.size() != carried + 2 || body.outputs.size() < carried + 1 || outs != body.outputs.size() - 1)
      return Status::error(ErrorKind::InvalidArgument,
                           msg(n.label(), ": ", carried, " loop-carried values (inputs after M and cond) need a body with ", carried + 2,
                               " inputs (iteration number, condition, the values) and 1 + ", carried, " + K outputs (condition, the values, "
                               "K scan outputs), and the node ", carried, " + K outputs; the body has ", body.inputs.size(), " inputs and ",
                               body.outputs.size(), " outputs, the node ", outs, " outputs"));
    return Status::ok();
  }
  const graph::Attribute* m = n.attr("num_scan_inputs");
  const int64_t scanned = m ? m->i : 0;
  if (scanned < 1 || size_t(scanned) > ins)
    return Status::error(ErrorKind::InvalidArgument, msg(n.label(), ": attribute num_scan_inputs must be 1..", ins,
                                                         " (the node's inputs), got ", scanned));
  const size_t states = ins - size_t(scanned);
  if (body.inputs.size() != ins || body.outputs.size() < states || outs != body.outputs.size())
    return Status::error(ErrorKind::InvalidArgument,
                         msg(n.label(), ": ", states, " states and ", scanned, " scanned inputs need a body with ", ins,
                             " inputs and ", states, " + K outputs, and the node as many outputs as the body; the body has ",
                             body.inputs.size(), " inputs and ", body.outputs.size(), " outputs, the node ", outs));
  return Status::ok();
}

// Output 0 = input 0 (a branch's result into the If's, an iteration's into the loop-carried value).
Status copy_value(const graph::KernelContext& k) {
  const TensorArg& in = k.in(0);
  const TensorArg& out = k.out(0);
  const size_t bytes = size_t(out.numel) * dtype_size(out.dtype);
  if (bytes && in.data != out.data) std::memmove(out.data, in.data, bytes);
  return Status::ok();
}

// Output 0 (the iteration counter) = 0; output 1 (Loop's condition), when present, = input 0's
// truth or true.
Status loop_init(const graph::KernelContext& k) {
  *static_cast<int64_t*>(k.out(0).data) = 0;
  if (k.num_outputs > 1) *static_cast<uint8_t*>(k.out(1).data) = k.has_input(0) ? truth(k.in(0).data, k.in(0).dtype) : 1;
  return Status::ok();
}

// One slice of a tensor along an axis, at the iteration counter's index (or count - 1 - it,
// backwards): `gather` copies it out of the whole (input 1) into output 0 (a Scan's slice
// input), otherwise input 1 into that slice of output 0 (a stacked scan output).
struct SliceCopy {
  int64_t outer = 1, len = 0, inner_bytes = 0, count = 0;
  int32_t reverse = 0, gather = 0;
};
Status slice_copy(const graph::KernelContext& k) {
  const SliceCopy& p = k.params<SliceCopy>();
  const int64_t c = *static_cast<const int64_t*>(k.in(0).data);
  const int64_t i = p.reverse ? p.count - 1 - c : c;
  if (i < 0 || i >= p.len) return k.error(ErrorKind::Internal, msg("slice ", i, " of ", p.len));
  const char* src = static_cast<const char*>(k.in(1).data);
  char* dst = static_cast<char*>(k.out(0).data);
  const size_t inner = size_t(p.inner_bytes);
  for (int64_t o = 0; o < p.outer; ++o) {
    const size_t whole = size_t(o * p.len + i) * inner, part = size_t(o) * inner;
    if (p.gather) std::memcpy(dst + part, src + whole, inner);
    else std::memcpy(dst + whole, src + part, inner);
  }
  return Status::ok();
}

// The slice record of `whole` along axis a (0 <= a < rank).
SliceCopy slice_of(const ValueDesc& whole, size_t a, int64_t count, bool reverse, bool gather) {
  SliceCopy p;
  for (size_t d = 0; d < a; ++d) p.outer *= whole.shape[d];
  p.len = whole.shape[a];
  p.inner_bytes = int64_t(dtype_size(whole.dtype));
  for (size_t d = a + 1; d < whole.shape.size(); ++d) p.inner_bytes *= whole.shape[d];
  p.count = count;
  p.reverse = reverse;
  p.gather = gather;
  return p;
}

// A Scan's per-input or per-output attribute (axes, directions): `n` values, default 0.
Status scan_ints(const graph::Node& n, const char* name, size_t count, std::vector<int64_t>* out) {
  out->assign(count, 0);
  const graph::Attribute* a = n.attr(name);
  if (!a) return Status::ok();
  if (a->ints.size() != count)
    return Status::error(ErrorKind::InvalidArgument, msg(n.label(), ": attribute ", name, " has ", a->ints.size(),
                                                         " values, one per scanned ", std::strstr(name, "input") ? "input" : "output",
                                                         " (", count, ") expected"));
  *out = a->ints;
  return Status::ok();
}

}  // namespace

Status Flattener::control_flow(const graph::Node& n, const OpDef* op, std::vector<int> ins, FlatEntry e) {
  std::vector<int> outs;
  const int at = int(cg.nodes.size());
  if (n.op_type == "If") {
    // The condition entry, then's nodes, IfElse, else's nodes, then the join that defines
    // the outputs.
    entry(&n, op, std::move(ins), {}, e);
    std::vector<int> join_ins;
    size_t per_branch = 0;
    const char* names[2] = {"then_branch", "else_branch"};
    for (int b = 0; b < 2; ++b) {
      const graph::Attribute* a = n.attr(names[b]);
      if (!a || a->type != graph::AttrType::Graph || !a->g)
        return Status::error(ErrorKind::InvalidArgument, msg(n.label(), ": attribute '", names[b], "' (a graph) is missing"));
      const graph::Graph& sub = *a->g;
      if (sub.outputs.size() != n.outputs.size())
        return Status::error(ErrorKind::InvalidArgument, msg(n.label(), ": ", names[b], " has ", sub.outputs.size(),
                                                             " outputs, the node ", n.outputs.size(), "; each branch must give one per output"));
      std::unordered_map<std::string, int> local;
      scopes.push_back(&local);
      for (const auto& t : sub.initializers) cg.sub_initializers.push_back({define(t.name), &t});
      Status st = nodes_of(sub, nullptr, at, b);
      for (const auto& o : sub.outputs) join_ins.push_back(use(o.name));
      scopes.pop_back();
      OM_TRY(st);
      per_branch = sub.outputs.size();
      if (b == 0) {
        FlatEntry m = e;
        m.kind = FlatKind::IfElse;
        m.head = at;
        entry(&n, op, join_ins, {}, m);
      }
    }
    for (const auto& out : n.outputs) outs.push_back(out.empty() ? -1 : define(out));
    FlatEntry j = e;
    j.kind = FlatKind::IfJoin;
    j.head = at;
    j.branch_outputs = per_branch;
    entry(&n, op, std::move(join_ins), std::move(outs), j);
    return Status::ok();
  }
  // Loop and Scan: the node (defining the body's inputs), the body's nodes, then LoopEnd.
  const graph::Attribute* a = n.attr("body");
  if (!a || a->type != graph::AttrType::Graph || !a->g)
    return Status::error(ErrorKind::InvalidArgument, msg(n.label(), ": attribute 'body' (a graph) is missing"));
  const graph::Graph& body = *a->g;
  OM_TRY(check_body_arity(n, body));
  std::unordered_map<std::string, int> local;
  scopes.push_back(&local);
  std::vector<int> body_ins, body_outs;
  for (const auto& v : body.inputs) body_ins.push_back(define(v.name));
  for (const auto& t : body.initializers) cg.sub_initializers.push_back({define(t.name), &t});
  entry(&n, op, std::move(ins), std::move(body_ins), e);
  Status st = nodes_of(body, nullptr, at, 0);
  for (const auto& o : body.outputs) body_outs.push_back(use(o.name));
  scopes.pop_back();
  OM_TRY(st);
  for (const auto& out : n.outputs) outs.push_back(out.empty() ? -1 : define(out));
  FlatEntry j = e;
  j.kind = FlatKind::LoopEnd;
  j.head = at;
  entry(&n, op, std::move(body_outs), std::move(outs), j);
  return Status::ok();
}

int Planner::copy_step(size_t node, int from, int to) { return own_step(node, copy_value, StepControl::None, {from}, {to}); }

Status Planner::control_flow(size_t ni) {
  switch (cg.flat[ni].kind) {
    case FlatKind::Node: return cg.nodes[ni]->op_type == "If" ? if_head(ni) : loop_head(ni);
    case FlatKind::IfElse: return if_else(ni);
    case FlatKind::IfJoin: return if_join(ni);
    case FlatKind::LoopEnd: return loop_end(ni);
  }
  return Status::ok();
}

Status Planner::if_head(size_t ni) {
  const graph::Node& node = *cg.nodes[ni];
  const auto& ins = cg.node_inputs[ni];
  if (ins.empty() || ins[0] < 0 || !known[size_t(ins[0])])
    return Status::error(ErrorKind::Internal, msg("plan: ", node.label(), ": its condition is not defined"));
  const ValueDesc& cond = plan->values[size_t(ins[0])];
  if (cond.numel() != 1 || (cond.dtype != DType::boolean && cond.dtype != DType::u8 && cond.dtype != DType::i64 && cond.dtype != DType::i32))
    return Status::error(ErrorKind::InvalidArgument, msg(node.label(), ": the condition must be one bool, got ", dtype_name(cond.dtype),
                                                         " ", shape_str(cond.shape)));
  Flow& f = flow[ni];
  if (cond.data) {  // known when planning: one branch, inlined
    f.chosen = truth(cond.data, cond.dtype) ? 0 : 1;
    ++plan->folded_nodes;
    return Status::ok();
  }
  f.chosen = 2;
  f.branch_step = own_step(ni, nullptr, StepControl::BranchIfFalse, {ins[0]}, {});
  return Status::ok();
}

// After a run-time If's then_branch: its outputs copied into the If's, then a jump past else.
Status Planner::if_else(size_t ni) {
  Flow& f = flow[size_t(cg.flat[ni].head)];
  if (f.chosen != 2) return Status::ok();
  const auto& ins = cg.node_inputs[ni];
  OM_TRY(defined(ni, ins));
  for (int id : ins) {
    const int to = arena_value(plan->values[size_t(id)]);
    copy_step(ni, id, to);
    f.outs.push_back(to);
  }
  f.jump_step = own_step(ni, nullptr, StepControl::Jump, {}, {});
  f.else_begin = step_now();
  return Status::ok();
}

Status Planner::if_join(size_t ni) {
  const graph::Node& node = *cg.nodes[ni];
  const FlatEntry& fe = cg.flat[ni];
  const auto& ins = cg.node_inputs[ni];
  const auto& outs = cg.node_outputs[ni];
  Flow& f = flow[size_t(fe.head)];
  if (f.chosen < 2) {
    // The If's outputs are the chosen branch's: the same values and buffers.
    const size_t first = size_t(f.chosen) * fe.branch_outputs;
    for (size_t o = 0; o < outs.size(); ++o) {
      const int from = ins[first + o];
      if (outs[o] < 0) continue;
      if (from < 0 || !known[size_t(from)])
        return Status::error(ErrorKind::Internal, msg("plan: ", node.label(), ": branch output ", o, " is not defined"));
      alias_value(outs[o], from);
    }
    return Status::ok();
  }
  OM_TRY(defined(ni, ins));
  for (size_t o = 0; o < outs.size(); ++o) {
    const int from = ins[fe.branch_outputs + o];
    const ValueDesc& a = plan->values[size_t(f.outs[o])];
    const ValueDesc& b = plan->values[size_t(from)];
    if (a.dtype != b.dtype || a.shape != b.shape)
      return Status::error(ErrorKind::ShapeMismatch,
                           msg(node.label(), ": output ", o, " is ", dtype_name(a.dtype), " ", shape_str(a.shape), " from then_branch and ",
                               dtype_name(b.dtype), " ", shape_str(b.shape), " from else_branch. Its condition is computed at run time, "
                               "so both branches are planned and must give equal shapes and dtypes; make the condition known when "
                               "planning (a constant, from shapes, or an integer/bool graph input) to allow different ones"));
    copy_step(ni, from, f.outs[o]);
  }
  pending[size_t(f.jump_step)].target = step_now();
  pending[size_t(f.branch_step)].target = f.else_begin;
  for (size_t o = 0; o < outs.size(); ++o) alias_value(outs[o], f.outs[o]);
  return Status::ok();
}

// Loop and Scan: the counter, the condition and the loop-carried values in the arena, set once;
// then the test that ends the loop (and Scan's slices, taken per iteration).
Status Planner::loop_head(size_t ni) {
  const graph::Node& node = *cg.nodes[ni];
  const auto& ins = cg.node_inputs[ni];
  const auto& body_in = cg.node_outputs[ni];
  OM_TRY(defined(ni, ins));
  Flow& f = flow[ni];
  f.chosen = 0;
  f.begin = step_now();
  const ValueDesc counter{DType::i64, {}, nullptr};
  if (node.op_type == "Loop") {
    for (size_t i = 0; i < 2; ++i) {
      if (ins[i] < 0) continue;
      const ValueDesc& d = plan->values[size_t(ins[i])];
      const bool ok = d.numel() == 1 && (i == 0 ? (d.dtype == DType::i64 || d.dtype == DType::i32)
                                                : (d.dtype == DType::boolean || d.dtype == DType::u8));
      if (!ok)
        return Status::error(ErrorKind::InvalidArgument, msg(node.label(), ": input ", i, " (", i == 0 ? "the trip count M" : "the condition",
                                                             ") must be one ", i == 0 ? "i64" : "bool", ", got ", dtype_name(d.dtype), " ",
                                                             shape_str(d.shape)));
    }
    f.counter = arena_value(counter, body_in[0]);
    f.cond = arena_value(ValueDesc{DType::boolean, {}, nullptr}, body_in[1]);
    own_step(ni, loop_init, StepControl::None, {ins[1]}, {f.counter, f.cond});
    for (size_t k = 2; k < ins.size(); ++k) {
      if (ins[k] < 0)
        return Status::error(ErrorKind::InvalidArgument, msg(node.label(), ": loop-carried input ", k, " is omitted; give every one"));
      f.carried.push_back(arena_value(plan->values[size_t(ins[k])], body_in[k]));
      copy_step(ni, ins[k], f.carried.back());
    }
    // The count is fixed at LoopEnd when scan outputs need it.
    f.test_step = own_step(ni, nullptr, StepControl::LoopTest, {f.counter, ins[0], f.cond}, {});
    return Status::ok();
  }
  const size_t scanned = size_t(node.attr("num_scan_inputs")->i);  // checked by compile_graph
  const size_t states = ins.size() - scanned;
  std::vector<int64_t> axes, directions;
  OM_TRY(scan_ints(node, "scan_input_axes", scanned, &axes));
  OM_TRY(scan_ints(node, "scan_input_directions", scanned, &directions));
  for (size_t j = 0; j < scanned; ++j) {
    if (ins[states + j] < 0) return Status::error(ErrorKind::InvalidArgument, msg(node.label(), ": scanned input ", j, " is omitted"));
    const ValueDesc& d = plan->values[size_t(ins[states + j])];
    const int64_t r = int64_t(d.shape.size());
    if (axes[j] < -r || axes[j] >= r || directions[j] < 0 || directions[j] > 1)
      return Status::error(ErrorKind::InvalidArgument, msg(node.label(), ": scanned input ", j, " (", shape_str(d.shape), ") has axis ", axes[j],
                                                           " and direction ", directions[j], "; the axis must be in [", -r, ", ", r - 1,
                                                           "] and the direction 0 or 1"));
    if (axes[j] < 0) axes[j] += r;
    const int64_t len = d.shape[size_t(axes[j])];
    if (j > 0 && len != f.count)
      return Status::error(ErrorKind::ShapeMismatch, msg(node.label(), ": scanned input ", j, " has ", len, " slices along axis ", axes[j],
                                                         ", input 0 ", f.count, "; every scanned input needs the same number"));
    f.count = len;
  }
  if (f.count > limits.max_loop_iterations)
    return Status::error(ErrorKind::OutOfMemory, msg(node.label(), ": ", f.count, " slices, above SessionOptions::max_loop_iterations = ",
                                                     limits.max_loop_iterations, "; raise that option to allow it"));
  f.counter = arena_value(counter);
  own_step(ni, loop_init, StepControl::None, {-1}, {f.counter});
  for (size_t k = 0; k < states; ++k) {
    if (ins[k] < 0) return Status::error(ErrorKind::InvalidArgument, msg(node.label(), ": state input ", k, " is omitted; give every one"));
    f.carried.push_back(arena_value(plan->values[size_t(ins[k])], body_in[k]));
    copy_step(ni, ins[k], f.carried.back());
  }
  for (size_t j = 0; j < scanned; ++j) {
    ValueDesc slice = plan->values[size_t(ins[states + j])];
    slice.shape.erase(slice.shape.begin() + axes[j]);
    arena_value(slice, body_in[states + j]);
  }
  f.test_step = own_step(ni, nullptr, StepControl::LoopTest, {f.counter, -1, -1}, {});
  pending[size_t(f.test_step)].count = f.count;
  for (size_t j = 0; j < scanned; ++j) {
    const SliceCopy rec = slice_of(plan->values[size_t(ins[states + j])], size_t(axes[j]), f.count, directions[j] != 0, true);
    own_step(ni, slice_copy, StepControl::None, {f.counter, ins[states + j]}, {body_in[states + j]}, &rec, sizeof rec);
  }
  return Status::ok();
}

// After the body: scan outputs stacked, the condition and loop-carried values moved to the next
// iteration's inputs, and the step back to the test.
Status Planner::loop_end(size_t ni) {
  const graph::Node& node = *cg.nodes[ni];
  const FlatEntry& fe = cg.flat[ni];
  const auto& body_out = cg.node_inputs[ni];
  const auto& outs = cg.node_outputs[ni];
  Flow& f = flow[size_t(fe.head)];
  OM_TRY(defined(ni, body_out));
  const bool loop = node.op_type == "Loop";
  const size_t first = loop ? 1 : 0, n = f.carried.size(), scans = body_out.size() - first - n;
  for (size_t k = 0; k < n; ++k) {
    const ValueDesc& in = plan->values[size_t(f.carried[k])];
    const ValueDesc& out = plan->values[size_t(body_out[first + k])];
    if (in.dtype != out.dtype || in.shape != out.shape)
      return Status::error(ErrorKind::ShapeMismatch,
                           msg(node.label(), ": loop-carried value ", k, " ('", node.inputs[(loop ? 2 : 0) + k], "') is ", dtype_name(in.dtype), " ",
                               shape_str(in.shape), " on entry and ", dtype_name(out.dtype), " ", shape_str(out.shape),
                               " after an iteration; onemodel plans one shape per value, so a loop-carried value must keep its shape "
                               "and dtype (carry a fixed-size buffer, or use a scan output to collect per-iteration results)"));
  }
  if (loop) {
    const ValueDesc& c = plan->values[size_t(body_out[0])];
    if (c.numel() != 1 || (c.dtype != DType::boolean && c.dtype != DType::u8))
      return Status::error(ErrorKind::InvalidArgument, msg(node.label(), ": the body's condition output must be one bool, got ",
                                                           dtype_name(c.dtype), " ", shape_str(c.shape)));
  }
  if (loop && scans > 0) {
    // Scan outputs stack one slice per iteration: the count must be known now (the trip count
    // and the first condition, checked at creation; the body's condition passed through or constant).
    const auto& head_ins = cg.node_inputs[size_t(fe.head)];
    const ValueDesc* m = head_ins[0] >= 0 ? &plan->values[size_t(head_ins[0])] : nullptr;
    const ValueDesc* c0 = head_ins[1] >= 0 ? &plan->values[size_t(head_ins[1])] : nullptr;
    const ValueDesc& c = plan->values[size_t(body_out[0])];
    const bool passed = buf_of[size_t(body_out[0])] == buf_of[size_t(f.cond)];
    if (!m || !m->data || (c0 && !c0->data) || (!passed && !c.data))
      return Status::error(ErrorKind::Unsupported,
                           msg(node.label(), ": its scan outputs stack one slice per iteration, so the iteration count must be known when "
                               "the session plans: ", !m ? "the trip count M is omitted" : !m->data ? "the trip count is computed at run time" :
                               (c0 && !c0->data) ? "the first condition is computed at run time" : "the body computes its condition from data",
                               ". Give a trip count known when planning and a condition the body passes through, or carry the results as "
                               "loop-carried values; docs/onnx.md, \"Control flow\""));
    const int64_t trips = std::max<int64_t>(int_value(m->data, m->dtype), 0);
    int64_t count = trips;
    if (c0 && !truth(c0->data, c0->dtype)) count = 0;
    else if (!passed && !truth(c.data, c.dtype)) count = std::min<int64_t>(trips, 1);
    if (count > limits.max_loop_iterations)
      return Status::error(ErrorKind::OutOfMemory, msg(node.label(), ": ", count, " iterations, above SessionOptions::max_loop_iterations = ",
                                                       limits.max_loop_iterations, "; raise that option to allow it"));
    f.count = count;
    pending[size_t(f.test_step)].count = count;
  }
  std::vector<int64_t> axes(scans, 0), directions(scans, 0);
  if (!loop) {
    OM_TRY(scan_ints(node, "scan_output_axes", scans, &axes));
    OM_TRY(scan_ints(node, "scan_output_directions", scans, &directions));
  }
  for (size_t j = 0; j < scans; ++j) {
    const int y = body_out[first + n + j];
    ValueDesc stacked = plan->values[size_t(y)];
    const int64_t r = int64_t(stacked.shape.size()) + 1;
    if (axes[j] < -r || axes[j] >= r || directions[j] < 0 || directions[j] > 1)
      return Status::error(ErrorKind::InvalidArgument, msg(node.label(), ": scan output ", j, " has axis ", axes[j], " and direction ",
                                                           directions[j], "; the axis must be in [", -r, ", ", r - 1, "] and the direction 0 or 1"));
    const size_t a = size_t(axes[j] < 0 ? axes[j] + r : axes[j]);
    stacked.shape.insert(stacked.shape.begin() + ptrdiff_t(a), f.count);
    const ValueDesc whole = stacked;
    const int out = arena_value(std::move(stacked), outs[n + j]);
    bufs[size_t(buf_of[size_t(out)])].first = f.begin;  // written by every iteration
    const SliceCopy rec = slice_of(whole, a, f.count, directions[j] != 0, false);
    own_step(ni, slice_copy, StepControl::None, {f.counter, y}, {out}, &rec, sizeof rec);
  }
  // The next iteration's inputs; a source that another of these copies overwrites is staged first.
  std::vector<std::pair<int, int>> copies;
  if (loop) copies.push_back({body_out[0], f.cond});
  for (size_t k = 0; k < n; ++k) copies.push_back({body_out[first + k], f.carried[k]});
  for (auto& c : copies) {
    const int src = buf_of[size_t(c.first)];
    if (src == buf_of[size_t(c.second)]) {
      c.first = -1;  // passed through: already in place
      continue;
    }
    for (const auto& w : copies)
      if (buf_of[size_t(w.second)] == src) {
        const int staged = arena_value(plan->values[size_t(c.first)]);
        copy_step(ni, c.first, staged);
        c.first = staged;
        break;
      }
  }
  for (const auto& c : copies)
    if (c.first >= 0) copy_step(ni, c.first, c.second);
  const int next = own_step(ni, nullptr, StepControl::LoopNext, {f.counter}, {});
  pending[size_t(next)].target = f.test_step;
  pending[size_t(f.test_step)].target = step_now();
  // Buffers live when the loop starts and read in it (or after) stay live to its last step:
  // the next iteration reads them again.
  for (Buffer& b : bufs)
    if (b.kind == BufKind::Arena && b.first <= f.test_step && b.last >= f.test_step) b.last = std::max(b.last, next);
  for (size_t k = 0; k < n; ++k) alias_value(outs[k], f.carried[k]);
  return Status::ok();
}

const ControlFlowHooks kControlFlowHooks = {
    [](Flattener& f, const graph::Node& n, const OpDef* op, std::vector<int> ins, FlatEntry e) { return f.control_flow(n, op, std::move(ins), e); },
    [](Planner& p, size_t entry) { return p.control_flow(entry); },
};

}  // namespace om::runtime
