#include "onemodel/runtime/plan_internal.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>

#include "onemodel/core/shape.h"
#include "onemodel/graph/infer_check.h"
#include "onemodel/kernels/kernels.h"
#include "onemodel/runtime/memory_planner.h"

namespace om::runtime {

namespace {

// Every node of g and of its subgraphs, depth first (verify() bounds the nesting).
template <typename Fn>
void for_each_node(const graph::Graph& g, Fn fn) {
  for (const auto& n : g.nodes) {
    fn(n);
    for (const auto& a : n.attributes) {
      if (a.type == graph::AttrType::Graph && a.g) for_each_node(*a.g, fn);
      if (a.type == graph::AttrType::Graphs)
        for (const auto& sub : a.graphs)
          if (sub) for_each_node(*sub, fn);
    }
  }
}

}  // namespace

Result<std::vector<const OpDef*>> resolve_ops(const graph::Graph& g, ArithmeticMode mode) {
  std::vector<const OpDef*> ops;
  ops.reserve(g.nodes.size());
  for (const auto& n : g.nodes) ops.push_back(graph::find_op(n.domain, n.op_type));
  std::vector<std::string> unknown, inexact;
  auto add_once = [](std::vector<std::string>& v, const graph::Node& n) {
    std::string s = graph::is_default_domain(n.domain) ? n.op_type : n.domain + "::" + n.op_type;
    if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(std::move(s));
  };
  Status attrs = Status::ok();
  for_each_node(g, [&](const graph::Node& n) {
    const OpDef* op = graph::find_op(n.domain, n.op_type);
    if (!op) add_once(unknown, n);
    // Control flow runs its subgraphs' kernels, checked node by node here.
    else if (mode == ArithmeticMode::Exact && !graph::runs_in(*op, mode)) add_once(inexact, n);
    // Graphs built in code skip the reader: the same attribute schema check here.
    if (op && attrs.is_ok()) attrs = graph::check_attributes(*op, n, ErrorKind::InvalidArgument);
  });
  OM_TRY(attrs);
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  };
  if (!unknown.empty())
    return Status::error(ErrorKind::Unsupported,
                         graph::registered_op_list().selective
                             ? msg("om::Session: operators this program does not register: ", join(unknown), "; ", graph::unknown_op_hint())
                             : msg("om::Session: unsupported operators: ", join(unknown), " (", graph::unknown_op_hint(), ")"));
  if (!inexact.empty())
    return Status::error(ErrorKind::Unsupported, msg("om::Session: ArithmeticMode::Exact needs an exact kernel for every operator; "
                                                     "these have none: ", join(inexact), ". Use ArithmeticMode::Fast or remove them"));
  return ops;
}

Status Flattener::nodes_of(const graph::Graph& g, const std::vector<const OpDef*>* top_ops, int guard, int branch) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const graph::Node& n = g.nodes[i];
    const OpDef* op = top_ops ? (*top_ops)[i] : graph::find_op(n.domain, n.op_type);
    if (!op) return Status::error(ErrorKind::Internal, msg("compile_graph: ", n.label(), " has no resolved operator"));
    std::vector<int> ins, outs;
    for (const auto& in : n.inputs) ins.push_back(in.empty() ? -1 : use(in));
    FlatEntry e;
    e.guard = guard;
    e.branch = branch;
    if (!(op->flags & graph::kOpControlFlow)) {
      for (const auto& out : n.outputs) outs.push_back(out.empty() ? -1 : define(out));
      entry(&n, op, std::move(ins), std::move(outs), e);
      continue;
    }
    if (!op->control_flow)
      return Status::error(ErrorKind::Internal, msg("compile_graph: ", n.label(), " is control flow without its planner"));
    OM_TRY(op->control_flow->flatten(*this, n, op, std::move(ins), e));
  }
  return Status::ok();
}

Result<CompiledGraph> compile_graph(const graph::Graph& g, std::vector<const OpDef*> ops) {
  if (ops.size() != g.nodes.size())
    return Status::error(ErrorKind::Internal, msg("compile_graph: ", ops.size(), " resolved operators for ", g.nodes.size(), " nodes"));
  CompiledGraph cg;
  cg.graph = &g;
  auto id_of = [&](const std::string& name) {
    auto it = cg.ids.find(name);
    if (it != cg.ids.end()) return it->second;
    cg.ids.emplace(name, cg.num_values);
    return cg.num_values++;
  };
  for (const auto& t : g.initializers) id_of(t.name);
  for (const auto& v : g.inputs) cg.input_ids.push_back(id_of(v.name));
  Flattener fl{cg, {&cg.ids}};
  OM_TRY(fl.nodes_of(g, &ops, -1, 0));
  for (const auto& v : g.outputs) cg.output_ids.push_back(id_of(v.name));
  // Values that must be known when planning, walked back from the plan-time operands (`needed`),
  // and values whose being known folds an If (`cond`): a condition computed at run time works
  // too, so only an integer or bool graph input becomes a value input for it, never a float one.
  auto walk_back = [&](bool conditions) {
    std::vector<char> needed(size_t(cg.num_values), 0);
    for (size_t ni = cg.nodes.size(); ni-- > 0;) {
      const OpDef& op = *cg.ops[ni];
      const FlatEntry& fe = cg.flat[ni];
      const auto& ins = cg.node_inputs[ni];
      if (op.flags & graph::kOpControlFlow) {
        // Only the operands that plan the node: If's condition; a Loop's trip count and
        // condition when it has scan outputs (their length). A join passes through to the
        // branches' outputs; loop values are never known when planning.
        if (fe.kind == FlatKind::IfJoin) {
          bool out_needed = false;
          for (int o : cg.node_outputs[ni]) out_needed = out_needed || (o >= 0 && needed[size_t(o)]);
          if (out_needed)
            for (int i : ins)
              if (i >= 0) needed[size_t(i)] = 1;
        } else if (fe.kind == FlatKind::Node && cg.nodes[ni]->op_type == "If") {
          if (conditions && !ins.empty() && ins[0] >= 0) needed[size_t(ins[0])] = 1;
        } else if (fe.kind == FlatKind::Node && cg.nodes[ni]->op_type == "Loop" && !conditions) {
          if (cg.nodes[ni]->outputs.size() > ins.size() - 2)
            for (size_t i = 0; i < 2; ++i)
              if (ins[i] >= 0) needed[size_t(ins[i])] = 1;
        }
        continue;
      }
      bool out_needed = false;
      for (int o : cg.node_outputs[ni]) out_needed = out_needed || (o >= 0 && needed[size_t(o)]);
      const bool through = out_needed && !(op.flags & graph::kOpShapeOnly);
      for (size_t i = 0; i < ins.size(); ++i)
        if (ins[i] >= 0 && (through || (i < 32 && ((op.plan_time_inputs >> i) & 1u)))) needed[size_t(ins[i])] = 1;
    }
    return needed;
  };
  const std::vector<char> needed = walk_back(false), cond = walk_back(true);
  // Eligible: integer or bool inputs, and any input declared with a static shape of at most
  // kMaxValueInputElements elements (OneHot's f32 depth); never a float input of open size.
  cg.value_input.assign(g.inputs.size(), 0);
  for (size_t j = 0; j < g.inputs.size(); ++j) {
    const DType dt = g.inputs[j].dtype;
    int64_t n = 1;
    for (const graph::Dim& d : g.inputs[j].shape) n = d.is_static() && n <= kMaxValueInputElements ? n * d.size : kMaxValueInputElements + 1;
    const bool small = n <= kMaxValueInputElements;
    const bool integral = dt == DType::i64 || dt == DType::i32 || dt == DType::boolean;
    const int id = cg.input_ids[j];
    cg.value_input[j] = (needed[size_t(id)] && (integral || small)) || (cond[size_t(id)] && integral);
  }
  return cg;
}

Status check_plan_time_operands(const CompiledGraph& cg) {
  const graph::Graph& g = *cg.graph;
  std::vector<char> knowable(size_t(cg.num_values), 0);
  for (const auto& t : g.initializers) knowable[size_t(cg.ids.at(t.name))] = 1;
  for (const auto& t : cg.sub_initializers) knowable[size_t(t.first)] = 1;
  for (size_t j = 0; j < g.inputs.size(); ++j) {
    const bool init = g.find_initializer(g.inputs[j].name) != nullptr;
    // An overridable initializer stays knowable: a caller's value of it is a value input or the
    // plan refuses it.
    knowable[size_t(cg.input_ids[j])] = cg.value_input[j] || init;
  }
  for (size_t ni = 0; ni < cg.nodes.size(); ++ni) {
    const graph::Node& node = *cg.nodes[ni];
    const OpDef& op = *cg.ops[ni];
    const auto& ins = cg.node_inputs[ni];
    const FlatEntry& fe = cg.flat[ni];
    bool all = true;
    for (size_t i = 0; i < ins.size(); ++i) {
      if (ins[i] < 0) continue;
      const bool k = knowable[size_t(ins[i])] != 0;
      all = all && k;
      if (!k && fe.kind == FlatKind::Node && node.op_type == "Loop" && i < 2 && node.outputs.size() > ins.size() - 2)
        return Status::error(ErrorKind::Unsupported,
                             msg(node.label(), ": its scan outputs stack one slice per iteration, so the iteration count must be known "
                                 "when the session plans, but input ", i, " ('", node.inputs[i], "', the ",
                                 i == 0 ? "trip count" : "condition", ") is computed from run-time data. Compute it from constants and "
                                 "Shape, feed it as an integer graph input, or carry the results as loop-carried values; docs/onnx.md, "
                                 "\"Control flow\""));
      if (!k && !(op.flags & graph::kOpControlFlow) && i < 32 && ((op.plan_time_inputs >> i) & 1u))
        return Status::error(ErrorKind::Unsupported,
                             msg(node.label(), ": input ", i, " ('", node.inputs[i], "') decides the output shape, so it must be known "
                                 "when the session plans, but it is computed from run-time data (a float graph input, a loop's "
                                 "iteration value or a node that cannot be evaluated before running). Make it a constant, compute it "
                                 "from constants and Shape, or feed it as an i64 graph input"));
    }
    // A Loop's or Scan's body inputs and outputs change per iteration: never known when planning.
    const bool loop = (op.flags & graph::kOpControlFlow) && (fe.kind == FlatKind::LoopEnd || node.op_type != "If");
    // A join is known only where the condition choosing its branch is.
    if (fe.kind == FlatKind::IfJoin) {
      const auto& head_ins = cg.node_inputs[size_t(fe.head)];
      all = all && !head_ins.empty() && head_ins[0] >= 0 && knowable[size_t(head_ins[0])];
    }
    if (!loop && (all || (op.flags & graph::kOpShapeOnly)))
      for (int o : cg.node_outputs[ni])
        if (o >= 0) knowable[size_t(o)] = 1;
  }
  return Status::ok();
}

namespace {

// Kernels get an address for every tensor, as every arena and folded buffer has one
// (graph::aligned_buffer): an empty input the caller gives without data, or an empty constant,
// points here instead of at null, which memcpy and friends may not receive even for 0 bytes.
void* address_of_empty(void* data) {
  alignas(64) static uint8_t empty[64];
  return data ? data : empty;
}

// The packed copy of node ni's constant right-hand operand, made on first use and kept in cg
// for every later plan. Null when the node has none or memory is short (then it repacks per
// call, as without prepacking).
const float* packed_operand(CompiledGraph& cg, size_t ni, const std::vector<const ValueDesc*>& in_desc,
                            ArithmeticMode mode) {
  if (cg.packed_b.size() != cg.ops.size()) cg.packed_b.resize(cg.ops.size());
  if (cg.packed_b[ni]) return cg.packed_b[ni].get();
  const graph::Node& node = *cg.nodes[ni];
  graph::PackableB pb;
  pb.mode = mode;
  if (!graph::packable_b(*cg.ops[ni], node, in_desc, &pb) || pb.K == 0 || pb.N == 0) return nullptr;
  const graph::TensorData* w = cg.graph->find_initializer(node.inputs[pb.input]);
  const int operand = pb.input < cg.node_inputs[ni].size() ? cg.node_inputs[ni][pb.input] : -1;
  if (!w && operand >= 0)  // a subgraph's own weight
    for (const auto& t : cg.sub_initializers)
      if (t.first == operand) w = t.second;
  const void* bytes = w ? static_cast<const void*>(w->bytes) : nullptr;
  DType dtype = w ? w->dtype : DType::f32;
  if (!w && operand >= 0) {
    // A Constant node's output (weights exported as Constants, as in subgraphs) is the same in
    // every plan, so its packed copy may be kept like an initializer's; other plan-time values
    // differ per plan.
    for (size_t p = 0; p < cg.nodes.size() && !bytes; ++p) {
      const auto& outs = cg.node_outputs[p];
      if (std::find(outs.begin(), outs.end(), operand) == outs.end()) continue;
      if (cg.nodes[p]->op_type != "Constant" || !graph::is_default_domain(cg.nodes[p]->domain)) return nullptr;
      bytes = in_desc[pb.input]->data;
      dtype = in_desc[pb.input]->dtype;
    }
  }
  if (!bytes) return nullptr;
  if (dtype != (pb.pack ? in_desc[pb.input]->dtype : DType::f32)) return nullptr;
  if (w)
    for (const auto& in : cg.graph->inputs)
      if (in.name == w->name) return nullptr;  // overridable by the caller
  const size_t floats = pb.pack ? pb.floats : kernels::gemm_packed_b_floats(pb.K, pb.N);
  std::shared_ptr<void> buf = graph::aligned_buffer(floats * sizeof(float));
  if (!buf) return nullptr;
  if (pb.pack) pb.pack(pb.params, bytes, static_cast<float*>(buf.get()));
  else kernels::gemm_pack_b(static_cast<const float*>(bytes), pb.rs, pb.cs, pb.K, pb.N, static_cast<float*>(buf.get()));
  cg.packed_b[ni] = std::static_pointer_cast<const float>(std::shared_ptr<void>(buf, static_cast<float*>(buf.get())));
  return cg.packed_b[ni].get();
}

}  // namespace

Status Planner::seed(const std::vector<std::vector<int64_t>>& input_dims, const std::vector<char>& fed,
                     const std::vector<void*>* input_data) {
  plan->signature = input_dims;
  plan->fed = fed;
  plan->fed.resize(g.inputs.size(), 1);
  plan->values.resize(size_t(cg.num_values));
  std::vector<char> overridden(size_t(cg.num_values), 0);  // initializers the caller replaces in this plan
  for (size_t i = 0; i < g.inputs.size(); ++i)
    if (plan->fed[i]) overridden[size_t(cg.input_ids[i])] = 1;
  for (const auto& t : g.initializers) {
    const int id = cg.ids.at(t.name);
    if (overridden[size_t(id)]) continue;
    ValueDesc& v = plan->values[size_t(id)];
    v.dtype = t.dtype;
    v.shape = t.dims;
    v.data = t.bytes ? static_cast<const void*>(t.bytes) : graph::kEmptyValue;
    known[size_t(id)] = true;
    Buffer b;
    b.kind = BufKind::Const;
    buf_of[size_t(id)] = int(bufs.size());
    bufs.push_back(b);
  }
  for (const auto& [id, t] : cg.sub_initializers) {
    ValueDesc& v = plan->values[size_t(id)];
    v.dtype = t->dtype;
    v.shape = t->dims;
    v.data = t->bytes ? static_cast<const void*>(t->bytes) : graph::kEmptyValue;
    known[size_t(id)] = true;
    Buffer b;
    b.kind = BufKind::Const;
    buf_of[size_t(id)] = int(bufs.size());
    bufs.push_back(b);
  }
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const int id = cg.input_ids[i];
    if (!plan->fed[i]) continue;  // an initializer-backed input left out: the initializer's value
    ValueDesc& v = plan->values[size_t(id)];
    v.dtype = g.inputs[i].dtype;
    v.shape = input_dims[i];
    v.data = nullptr;
    if (input_data && i < cg.value_input.size() && cg.value_input[i]) {
      // A value input: this plan holds a copy of its values (the key) and folds what reads them.
      int64_t n = 0;
      if (!checked_numel(v.shape, &n)) return Status::error(ErrorKind::ShapeMismatch, "plan: input size overflows");
      const size_t bytes = size_t(n) * dtype_size(v.dtype);
      if (bytes > limits.max_folded_bytes)
        return Status::error(ErrorKind::OutOfMemory, msg("input '", g.inputs[i].name, "' decides shapes, so its ", bytes,
                                                         " bytes are kept with the plan: above SessionOptions::max_folded_bytes"));
      const void* src = (*input_data)[i];
      if (n > 0 && !src)
        return Status::error(ErrorKind::InvalidArgument, msg("input '", g.inputs[i].name, "' decides output shapes (it feeds a shape "
                                                             "operand), so planning needs its values: give its data"));
      if (plan->input_values.size() != g.inputs.size()) {
        plan->input_values.resize(g.inputs.size());
        plan->input_value_bytes.assign(g.inputs.size(), 0);
      }
      std::shared_ptr<void> copy = graph::aligned_buffer(bytes);
      if (!copy) return Status::error(ErrorKind::OutOfMemory, msg("plan: no memory for the values of input '", g.inputs[i].name, "'"));
      if (bytes > 0) std::memcpy(copy.get(), src, bytes);
      plan->input_values[i] = copy;
      plan->input_value_bytes[i] = bytes;
      v.data = copy.get();
    }
    known[size_t(id)] = true;
    Buffer b;
    b.kind = BufKind::Input;
    b.input = int(i);
    buf_of[size_t(id)] = int(bufs.size());
    bufs.push_back(b);
  }

  return Status::ok();
}

Status Planner::nodes() {
  flow.assign(cg.nodes.size(), Flow{});
  for (size_t ni = 0; ni < cg.nodes.size(); ++ni) {
    at = ni;
    const graph::Node& node = *cg.nodes[ni];
    const OpDef& op = *cg.ops[ni];
    const auto& ins = cg.node_inputs[ni];
    const auto& outs = cg.node_outputs[ni];
    const FlatEntry& fe = cg.flat[ni];
    if (fe.guard >= 0) {  // in a subgraph: skipped when its node is, or when its branch is not taken
      const int c = flow[size_t(fe.guard)].chosen;
      if (c < 0 || (c < 2 && c != fe.branch)) continue;
    }
    if (op.flags & graph::kOpControlFlow) {  // its planner (runtime/plan_control.cpp), linked with the operator
      if (!op.control_flow) return Status::error(ErrorKind::Internal, msg("plan: ", node.label(), " is control flow without its planner"));
      OM_TRY(op.control_flow->plan(*this, ni));
      continue;
    }
    std::vector<const ValueDesc*> in_desc(ins.size(), nullptr);
    bool all_const = true;
    for (size_t i = 0; i < ins.size(); ++i) {
      if (ins[i] < 0) continue;
      if (!known[size_t(ins[i])]) return Status::error(ErrorKind::Internal, msg("plan: value '", node.inputs[i], "' used before defined"));
      in_desc[i] = &plan->values[size_t(ins[i])];
      if (!in_desc[i]->data) all_const = false;
    }
    const int n_present = int(std::count_if(ins.begin(), ins.end(), [](int x) { return x >= 0; }));
    if (int(ins.size()) < op.min_inputs || int(ins.size()) > op.max_inputs || n_present < std::min<int>(op.min_inputs, int(ins.size())))
      return Status::error(ErrorKind::InvalidArgument, msg(node.label(), " has ", ins.size(), " inputs; it takes ",
                                                           op.min_inputs, "..", op.max_inputs));

    if (all_const || (op.flags & graph::kOpShapeOnly)) {
      // Plan-time evaluation: computed once per signature, never per run.
      std::vector<ValueDesc> shapes;
      OM_TRY(graph::infer_checked(node, op, in_desc, &shapes));  // before allocating anything
      for (const ValueDesc& d : shapes) folded_bytes = saturating_add(folded_bytes, d.nbytes());
      if (folded_bytes > limits.max_folded_bytes)
        return Status::error(ErrorKind::OutOfMemory,
                             msg(node.label(), ": constants evaluated when planning reach ", folded_bytes,
                                 " bytes, above SessionOptions::max_folded_bytes = ", limits.max_folded_bytes,
                                 "; raise that option to allow it"));
      std::vector<graph::EvaluatedValue> results;
      OM_TRY(graph::evaluate_node(node, op, mode, in_desc, &results));
      for (size_t o = 0; o < outs.size() && o < results.size(); ++o) {
        if (outs[o] < 0) continue;
        plan->values[size_t(outs[o])] = results[o].desc;
        plan->owned.push_back(results[o].owner);
        known[size_t(outs[o])] = true;
        Buffer b;
        b.kind = BufKind::Const;
        buf_of[size_t(outs[o])] = int(bufs.size());
        bufs.push_back(b);
      }
      ++plan->folded_nodes;
      continue;
    }

    graph::InferContext ctx{node, in_desc, std::vector<ValueDesc>(node.outputs.size())};
    ctx.mode = mode;
    OM_TRY(op.infer(ctx));
    OM_TRY(graph::check_inferred(ctx));  // dims >= 0, <= 2^48 elements, rank <= kMaxRank
    for (size_t o = 0; o < outs.size(); ++o) {
      if (outs[o] < 0) continue;
      plan->values[size_t(outs[o])] = ctx.outputs[o];
      plan->values[size_t(outs[o])].data = nullptr;
      known[size_t(outs[o])] = true;
    }
    const int step_index = int(pending.size());
    if ((op.flags & graph::kOpAlias) && outs.size() == 1 && outs[0] >= 0) {
      // Same bytes, new shape: share the input's buffer and extend its life.
      const int b = buf_of[size_t(ins[0])];
      buf_of[size_t(outs[0])] = b;
      ++plan->aliased_nodes;
      continue;
    }
    PendingStep st;
    st.node = ni;
    st.ins = ins;
    st.outs = outs;
    for (size_t i = 0; i < ins.size(); ++i)
      if (ins[i] >= 0) {
        Buffer& b = bufs[size_t(buf_of[size_t(ins[i])])];
        b.last = std::max(b.last, step_index);
      }
    for (size_t o = 0; o < outs.size(); ++o) {
      Buffer b;
      b.size = o < ctx.outputs.size() ? ctx.outputs[o].nbytes() : 0;
      b.first = b.last = step_index;
      if (outs[o] >= 0) buf_of[size_t(outs[o])] = int(bufs.size());
      else st.unnamed.push_back(o < ctx.outputs.size() ? ctx.outputs[o] : ValueDesc{});  // its dims for the kernel
      st.out_bufs.push_back(int(bufs.size()));
      bufs.push_back(b);
    }
    graph::Prepared prepared;
    OM_TRY(graph::prepare_node(ctx, op, &prepared));
    st.work = prepared.work;
    st.cost = prepared.cost;
    st.params_offset = records.size();
    st.params_bytes = prepared.size;
    records.insert(records.end(), prepared.bytes, prepared.bytes + (prepared.size + 63) / 64 * 64);
    st.table_bytes = prepared.table.size();
    records.insert(records.end(), prepared.table.begin(), prepared.table.end());
    records.resize((records.size() + 63) / 64 * 64, 0);
    st.scratch_bytes = op.scratch ? op.scratch(ctx) : 0;
    if (st.scratch_bytes) {
      Buffer b;
      b.size = st.scratch_bytes;
      b.first = b.last = step_index;
      st.scratch_buf = int(bufs.size());
      bufs.push_back(b);
    }
    pending.push_back(std::move(st));
  }

  return Status::ok();
}

void Planner::prepack() {
  for (PendingStep& st : pending) {
    std::vector<const ValueDesc*> in_desc(st.ins.size(), nullptr);
    for (size_t i = 0; i < st.ins.size(); ++i)
      if (st.ins[i] >= 0) in_desc[i] = &plan->values[size_t(st.ins[i])];
    st.packed_b = packed_operand(cg, st.node, in_desc, mode);
  }
}

Status Planner::place() {
  // Graph outputs live to the end.
  const int end = int(pending.size());
  for (int id : cg.output_ids) {
    if (!known[size_t(id)]) return Status::error(ErrorKind::Internal, "plan: a graph output is never produced");
    bufs[size_t(buf_of[size_t(id)])].last = end;
  }

  // Memory plan over arena buffers.
  std::vector<BufferRequest> reqs;
  std::vector<size_t> req_buf;
  for (size_t i = 0; i < bufs.size(); ++i)
    if (bufs[i].kind == BufKind::Arena) {
      reqs.push_back({bufs[i].size, bufs[i].first, bufs[i].last});
      req_buf.push_back(i);
    }
  MemoryPlan mp = plan_memory(reqs, 64);
  if (mp.arena_bytes > limits.max_arena_bytes) {
    // Name the node of the largest buffer: with a hostile attribute it is the one to look at.
    size_t largest = 0;
    for (size_t r = 1; r < reqs.size(); ++r)
      if (reqs[r].size > reqs[largest].size) largest = r;
    const Buffer& big = bufs[req_buf[largest]];
    return Status::error(ErrorKind::OutOfMemory, msg("plan: the activation arena needs ", mp.arena_bytes,
                                                     " bytes, above SessionOptions::max_arena_bytes = ", limits.max_arena_bytes,
                                                     " (the largest buffer, ", big.size, " bytes, is written by ",
                                                     cg.nodes[pending[size_t(big.first)].node]->label(),
                                                     "); raise that option or use smaller input shapes"));
  }
  for (size_t r = 0; r < reqs.size(); ++r) bufs[req_buf[r]].offset = mp.offsets[r];
  plan->arena_bytes = mp.arena_bytes;
  plan->lower_bound_bytes = mp.lower_bound_bytes;
  if (limits.arena) {
    if (mp.arena_bytes > limits.arena_bytes)
      return Status::error(ErrorKind::OutOfMemory, msg("plan: the activation arena needs ", mp.arena_bytes,
                                                       " bytes, SessionOptions::arena_bytes gives ", limits.arena_bytes,
                                                       "; pass a buffer of at least ", mp.arena_bytes,
                                                       " bytes (Session::arena_bytes_for, `onemodel info MODEL --arena`)"));
    // Aliasing an empty owner: the caller frees the arena, and no control block is allocated.
    plan->arena = std::shared_ptr<void>(std::shared_ptr<void>(), limits.arena);
  } else {
    plan->arena = graph::aligned_buffer(mp.arena_bytes);
  }
  if (!plan->arena)
    return Status::error(ErrorKind::OutOfMemory, msg("plan: cannot allocate the ", mp.arena_bytes, "-byte activation arena"));

  arena = static_cast<uint8_t*>(plan->arena.get());
  return Status::ok();
}

Status Planner::emit() {
  auto data_of = [&](int id) -> void* {
    const Buffer& b = bufs[size_t(buf_of[size_t(id)])];
    switch (b.kind) {
      case BufKind::Arena: return arena + b.offset;
      case BufKind::Const: return const_cast<void*>(plan->values[size_t(id)].data);
      case BufKind::Input: return nullptr;  // patched per run
    }
    return nullptr;
  };
  auto make_arg = [&](int id, uint32_t arg_index) {
    TensorArg a;
    const ValueDesc& v = plan->values[size_t(id)];
    a.present = true;
    a.dtype = v.dtype;
    a.dims = v.shape.data();
    a.rank = v.shape.size();
    a.numel = v.numel();
    a.data = address_of_empty(data_of(id));
    const Buffer& b = bufs[size_t(buf_of[size_t(id)])];
    if (b.kind == BufKind::Input) plan->patches.push_back({arg_index, uint32_t(b.input)});
    return a;
  };
  plan->params = graph::aligned_buffer(records.size());
  if (!plan->params) return Status::error(ErrorKind::OutOfMemory, "plan: cannot allocate the prepared operator records");
  if (!records.empty()) std::memcpy(plan->params.get(), records.data(), records.size());
  plan->labels.reserve(pending.size());
  for (const PendingStep& st : pending) plan->labels.push_back(cg.nodes[st.node]->label());
  for (const PendingStep& st : pending) {
    Plan::Step s;
    s.work = st.work;
    s.cost = st.cost;
    plan->max_scratch_bytes = std::max(plan->max_scratch_bytes, st.scratch_bytes);
    s.params_offset = st.params_offset;
    s.params_bytes = st.params_bytes;
    s.node = st.node;
    s.fn = st.control != StepControl::None ? nullptr : st.fn ? st.fn : mode == ArithmeticMode::Exact ? cg.ops[st.node]->exact : cg.ops[st.node]->fast;
    s.control = st.control;
    s.target = uint32_t(std::max(st.target, 0));
    s.count = st.count;
    s.max_iterations = limits.max_loop_iterations;
    s.in_begin = uint32_t(plan->args.size());
    s.num_in = uint32_t(st.ins.size());
    for (int id : st.ins) {
      const uint32_t idx = uint32_t(plan->args.size());
      plan->args.push_back(id >= 0 ? make_arg(id, idx) : TensorArg{});
    }
    s.out_begin = uint32_t(plan->args.size());
    s.num_out = uint32_t(st.outs.size());
    size_t unnamed = 0;
    for (size_t o = 0; o < st.outs.size(); ++o) {
      const int id = st.outs[o];
      if (id >= 0) {
        plan->args.push_back(make_arg(id, uint32_t(plan->args.size())));
      } else {  // an unnamed output: bytes in the arena, nobody reads them; dims as inferred
        plan->unnamed_values.push_back(st.unnamed[unnamed++]);
        const ValueDesc& v = plan->unnamed_values.back();
        TensorArg a;
        a.present = true;
        a.dtype = v.dtype;
        a.dims = v.shape.data();
        a.rank = v.shape.size();
        a.numel = v.numel();
        a.data = arena + bufs[size_t(st.out_bufs[o])].offset;
        plan->args.push_back(a);
      }
    }
    if (st.scratch_buf >= 0) {
      s.scratch = arena + bufs[size_t(st.scratch_buf)].offset;
      s.scratch_bytes = st.scratch_bytes;
    }
    s.packed_b = st.packed_b;
    s.table_bytes = st.table_bytes;
    plan->steps.push_back(s);
  }
  for (int id : cg.output_ids) {
    Plan::Output o;
    const Buffer& b = bufs[size_t(buf_of[size_t(id)])];
    o.input = b.kind == BufKind::Input ? b.input : -1;
    o.data = data_of(id);
    o.desc = &plan->values[size_t(id)];
    plan->outputs.push_back(o);
  }
  return Status::ok();
}

Result<std::unique_ptr<Plan>> build_plan(CompiledGraph& cg, ArithmeticMode mode,
                                         const std::vector<std::vector<int64_t>>& input_dims, const std::vector<char>& fed,
                                         bool prepack, const PlanLimits& limits, const std::vector<void*>* input_data) {
  Planner p(cg, mode, limits);
  OM_TRY(p.seed(input_dims, fed, input_data));
  if (Status st = p.nodes(); !st.is_ok()) return p.in_subgraph(st);
  if (prepack) p.prepack();
  OM_TRY(p.place());
  OM_TRY(p.emit());
  return std::move(p.plan);
}

const void* ExecContext::rebase(const Plan& plan, const void* p) const {
  const char* base = static_cast<const char*>(plan.arena.get());
  const char* q = static_cast<const char*>(p);
  if (shift == 0 || q == nullptr || q < base || q >= base + plan.arena_bytes) return p;
  return q + shift;
}

Result<std::unique_ptr<ExecContext>> make_context(const Plan& plan, bool own_arena) {
  auto ctx = std::make_unique<ExecContext>();
  if (!own_arena) {
    ctx->args = plan.args;
    return ctx;
  }
  ctx->arena = graph::aligned_buffer(plan.arena_bytes);
  if (!ctx->arena)
    return Status::error(ErrorKind::OutOfMemory, msg("plan: cannot allocate a second activation arena of ", plan.arena_bytes,
                                                     " bytes for a concurrent run"));
  ctx->shift = static_cast<char*>(ctx->arena.get()) - static_cast<char*>(plan.arena.get());
  ctx->args = plan.args;
  for (graph::TensorArg& a : ctx->args) a.data = const_cast<void*>(ctx->rebase(plan, a.data));
  return ctx;
}

Status execute_plan(Plan& plan, ArithmeticMode mode, void* const* input_data, bool profile, ExecContext* ctx) {
  graph::TensorArg* args = ctx ? ctx->args.data() : plan.args.data();
  for (const Plan::Patch& p : plan.patches) args[p.arg].data = address_of_empty(input_data[p.input]);
  if (profile) ++plan.profiled_runs;
  const unsigned char* records = static_cast<const unsigned char*>(plan.params.get());
  int64_t iterations = 0;  // of all loops in this run (SessionOptions::max_loop_iterations)
  for (size_t i = 0; i < plan.steps.size();) {
    const Plan::Step& s = plan.steps[i];
    if (s.control != StepControl::None) {  // control flow: where the run goes next
      const TensorArg* in = args + s.in_begin;
      switch (s.control) {
        case StepControl::BranchIfFalse: i = truth(in[0].data, in[0].dtype) ? i + 1 : s.target; break;
        case StepControl::Jump: i = s.target; break;
        case StepControl::LoopTest: {
          const int64_t c = *static_cast<const int64_t*>(in[0].data);
          const bool more = s.count >= 0 ? c < s.count
                                         : (!in[1].present || c < int_value(in[1].data, in[1].dtype)) && (!in[2].present || truth(in[2].data, in[2].dtype));
          // The cap counts every iteration of every loop in this run, so nested loops cannot
          // multiply past it.
          if (more && ++iterations > s.max_iterations)
            return Status::error(ErrorKind::OutOfMemory, msg(plan.labels[i], ": the run's loops would take more than "
                                                             "SessionOptions::max_loop_iterations = ", s.max_iterations,
                                                             " iterations in all (this one at iteration ", c, "); raise that option "
                                                             "if the model needs more"));
          i = more ? i + 1 : s.target;
          break;
        }
        case StepControl::LoopNext: ++*static_cast<int64_t*>(in[0].data); i = s.target; break;
        case StepControl::None: break;
      }
      continue;
    }
    const auto start = profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    graph::KernelContext k;
    k.label = plan.labels[i].c_str();
    k.mode = mode;
    k.inputs = args + s.in_begin;
    k.num_inputs = s.num_in;
    k.outputs = args + s.out_begin;
    k.num_outputs = s.num_out;
    k.scratch = ctx ? const_cast<void*>(ctx->rebase(plan, s.scratch)) : s.scratch;
    k.scratch_bytes = s.scratch_bytes;
    k.packed_b = s.packed_b;
    k.params_data = s.params_bytes ? records + s.params_offset : nullptr;
    k.params_bytes = s.params_bytes;
    k.table = s.table_bytes ? records + s.params_offset + (s.params_bytes + 63) / 64 * 64 : nullptr;
    k.table_bytes = s.table_bytes;
    OM_TRY(graph::run_kernel(s.fn, k, s.work, s.cost));
    if (profile)
      plan.step_ns[i] += uint64_t(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
    ++i;
  }
  return Status::ok();
}

}  // namespace om::runtime
