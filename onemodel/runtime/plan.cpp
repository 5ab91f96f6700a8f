#include "onemodel/runtime/plan.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>

#include "onemodel/core/shape.h"
#include "onemodel/graph/infer_check.h"
#include "onemodel/kernels/kernels.h"
#include "onemodel/runtime/memory_planner.h"

namespace om::runtime {

using graph::OpDef;
using graph::TensorArg;
using graph::ValueDesc;

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

namespace {

// Builds cg's flat entries for g's nodes. `scopes` maps names to value ids, the main graph's
// first (cg.ids) and each enclosing subgraph's after it; a name resolves in the innermost scope
// that has it.
struct Flattener {
  CompiledGraph& cg;
  std::vector<std::unordered_map<std::string, int>*> scopes;

  int lookup(const std::string& name) {
    for (size_t k = scopes.size(); k-- > 0;) {
      auto it = scopes[k]->find(name);
      if (it != scopes[k]->end()) return it->second;
    }
    return -1;
  }
  int define(const std::string& name) {
    auto& m = *scopes.back();
    auto it = m.find(name);
    if (it != m.end()) return it->second;
    m.emplace(name, cg.num_values);
    return cg.num_values++;
  }
  int use(const std::string& name) {
    const int id = lookup(name);
    return id >= 0 ? id : define(name);  // verify() ran: only a main-graph value not yet seen
  }
  void entry(const graph::Node* n, const OpDef* op, std::vector<int> ins, std::vector<int> outs, FlatEntry e) {
    cg.nodes.push_back(n);
    cg.ops.push_back(op);
    cg.node_inputs.push_back(std::move(ins));
    cg.node_outputs.push_back(std::move(outs));
    cg.flat.push_back(e);
  }

  Status nodes_of(const graph::Graph& g, const std::vector<const OpDef*>* top_ops, int guard, int branch) {
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
      // If: the condition entry, both branches, then the join that defines the outputs.
      const int at = int(cg.nodes.size());
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
      }
      for (const auto& out : n.outputs) outs.push_back(out.empty() ? -1 : define(out));
      FlatEntry j = e;
      j.kind = FlatKind::IfJoin;
      j.if_at = at;
      j.branch_outputs = per_branch;
      entry(&n, op, std::move(join_ins), std::move(outs), j);
    }
    return Status::ok();
  }
};

}  // namespace

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
  // Values that must be known when planning, walked back from the plan-time operands.
  std::vector<char> needed(size_t(cg.num_values), 0);
  for (size_t ni = cg.nodes.size(); ni-- > 0;) {
    const OpDef& op = *cg.ops[ni];
    bool out_needed = false;
    for (int o : cg.node_outputs[ni]) out_needed = out_needed || (o >= 0 && needed[size_t(o)]);
    const bool through = out_needed && !(op.flags & graph::kOpShapeOnly);
    const auto& ins = cg.node_inputs[ni];
    const bool join = cg.flat[ni].kind == FlatKind::IfJoin;
    for (size_t i = 0; i < ins.size(); ++i)
      if (ins[i] >= 0 && (through || (!join && i < 32 && ((op.plan_time_inputs >> i) & 1u)))) needed[size_t(ins[i])] = 1;
  }
  // Eligible: integer or bool inputs, and any input declared with a static shape of at most
  // kMaxValueInputElements elements (OneHot's f32 depth); never a float input of open size.
  cg.value_input.assign(g.inputs.size(), 0);
  for (size_t j = 0; j < g.inputs.size(); ++j) {
    const DType dt = g.inputs[j].dtype;
    int64_t n = 1;
    for (const graph::Dim& d : g.inputs[j].shape) n = d.is_static() && n <= kMaxValueInputElements ? n * d.size : kMaxValueInputElements + 1;
    const bool small = n <= kMaxValueInputElements;
    cg.value_input[j] = needed[size_t(cg.input_ids[j])] && (dt == DType::i64 || dt == DType::i32 || dt == DType::boolean || small);
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
    const bool join = cg.flat[ni].kind == FlatKind::IfJoin;
    bool all = true;
    for (size_t i = 0; i < ins.size(); ++i) {
      if (ins[i] < 0) continue;
      const bool k = knowable[size_t(ins[i])] != 0;
      all = all && k;
      if (!k && !join && (op.flags & graph::kOpControlFlow))
        return Status::error(ErrorKind::Unsupported,
                             msg(node.label(), ": the condition ('", node.inputs[i], "') must be known when the session plans, but it is "
                                 "computed from run-time data. onemodel runs If when its condition is a constant, follows from shapes, or "
                                 "comes from an i64/bool graph input (each value then gets a plan of its own); docs/onnx.md, \"Control flow\""));
      if (!k && !join && i < 32 && ((op.plan_time_inputs >> i) & 1u))
        return Status::error(ErrorKind::Unsupported,
                             msg(node.label(), ": input ", i, " ('", node.inputs[i], "') decides the output shape, so it must be known "
                                 "when the session plans, but it is computed from run-time data (a float graph input or a node that "
                                 "cannot be evaluated before running). Make it a constant, compute it from constants and Shape, or feed it "
                                 "as an i64 graph input"));
    }
    if (all || (op.flags & graph::kOpShapeOnly))
      for (int o : cg.node_outputs[ni])
        if (o >= 0) knowable[size_t(o)] = 1;
  }
  return Status::ok();
}

namespace {

enum class BufKind { Arena, Input, Const };

struct Buffer {
  BufKind kind = BufKind::Arena;
  size_t size = 0;
  int first = 0, last = 0;
  int input = -1;
  size_t offset = 0;
};

// Kernels get an address for every tensor, as every arena and folded buffer has one
// (graph::aligned_buffer): an empty input the caller gives without data, or an empty constant,
// points here instead of at null, which memcpy and friends may not receive even for 0 bytes.
void* address_of_empty(void* data) {
  alignas(64) static uint8_t empty[64];
  return data ? data : empty;
}

struct PendingStep {
  size_t node;
  std::vector<int> ins, outs;  // value ids (-1 omitted)
  std::vector<int> out_bufs;   // per output: its buffer (an unnamed output's too: it is written)
  std::vector<ValueDesc> unnamed;  // inferred descs of the unnamed outputs, in output order
  int scratch_buf = -1;
  size_t scratch_bytes = 0;
  const float* packed_b = nullptr;
  int64_t work = 1;
  int64_t cost = 0;
  size_t params_offset = 0, params_bytes = 0;  // in the records gathered while planning
};

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

namespace {

// build_plan's phases over one plan: seed (initializers and inputs), nodes (plan-time
// evaluation, inference, prepare, buffer lifetimes), prepack (constant GEMM operands, once per
// session), place (the memory plan and the arena), emit (steps and their tensor arguments).
struct Planner {
  CompiledGraph& cg;
  const graph::Graph& g;
  ArithmeticMode mode;
  const PlanLimits& limits;
  std::unique_ptr<Plan> plan = std::make_unique<Plan>();
  size_t folded_bytes = 0;
  std::vector<int> buf_of;      // per value id: its buffer
  std::vector<bool> known;      // per value id: shape known (defined so far)
  std::vector<Buffer> bufs;
  std::vector<PendingStep> pending;
  std::vector<unsigned char> records;  // prepared records, each padded to 64 bytes
  uint8_t* arena = nullptr;

  Planner(CompiledGraph& c, ArithmeticMode m, const PlanLimits& l)
      : cg(c), g(*c.graph), mode(m), limits(l), buf_of(size_t(c.num_values), -1), known(size_t(c.num_values), false) {}

  Status seed(const std::vector<std::vector<int64_t>>& input_dims, const std::vector<char>& fed,
              const std::vector<void*>* input_data);
  Status nodes();
  void prepack();
  Status place();
  Status emit();
};

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
  // Per flat entry of an If: the branch this plan runs (-1: the If itself is in a branch not run).
  std::vector<int> chosen(cg.nodes.size(), -1);
  for (size_t ni = 0; ni < cg.nodes.size(); ++ni) {
    const graph::Node& node = *cg.nodes[ni];
    const OpDef& op = *cg.ops[ni];
    const auto& ins = cg.node_inputs[ni];
    const auto& outs = cg.node_outputs[ni];
    const FlatEntry& fe = cg.flat[ni];
    if (fe.guard >= 0 && chosen[size_t(fe.guard)] != fe.branch) continue;  // in a branch this plan does not run
    if (fe.kind == FlatKind::IfJoin) {
      // The If's outputs are the chosen branch's: the same values and buffers.
      const size_t first = size_t(chosen[size_t(fe.if_at)]) * fe.branch_outputs;
      for (size_t o = 0; o < outs.size(); ++o) {
        const int from = ins[first + o];
        if (outs[o] < 0) continue;
        if (from < 0 || !known[size_t(from)])
          return Status::error(ErrorKind::Internal, msg("plan: ", node.label(), ": branch output ", o, " is not defined"));
        plan->values[size_t(outs[o])] = plan->values[size_t(from)];
        buf_of[size_t(outs[o])] = buf_of[size_t(from)];
        known[size_t(outs[o])] = true;
      }
      continue;
    }
    if (op.flags & graph::kOpControlFlow) {
      const ValueDesc* cond = ins.empty() || ins[0] < 0 || !known[size_t(ins[0])] ? nullptr : &plan->values[size_t(ins[0])];
      if (!cond || !cond->data)
        return Status::error(ErrorKind::Unsupported, msg(node.label(), ": the condition is not known when planning (computed from "
                                                         "run-time data); docs/onnx.md, \"Control flow\""));
      if (cond->numel() != 1 || (cond->dtype != DType::boolean && cond->dtype != DType::u8 && cond->dtype != DType::i64 &&
                                 cond->dtype != DType::i32))
        return Status::error(ErrorKind::InvalidArgument, msg(node.label(), ": the condition must be one bool, got ", dtype_name(cond->dtype),
                                                             " ", shape_str(cond->shape)));
      bool c = false;
      switch (cond->dtype) {
        case DType::i64: c = *static_cast<const int64_t*>(cond->data) != 0; break;
        case DType::i32: c = *static_cast<const int32_t*>(cond->data) != 0; break;
        default: c = *static_cast<const uint8_t*>(cond->data) != 0; break;
      }
      chosen[ni] = c ? 0 : 1;
      ++plan->folded_nodes;
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
    s.fn = mode == ArithmeticMode::Exact ? cg.ops[st.node]->exact : cg.ops[st.node]->fast;
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

}  // namespace

Result<std::unique_ptr<Plan>> build_plan(CompiledGraph& cg, ArithmeticMode mode,
                                         const std::vector<std::vector<int64_t>>& input_dims, const std::vector<char>& fed,
                                         bool prepack, const PlanLimits& limits, const std::vector<void*>* input_data) {
  Planner p(cg, mode, limits);
  OM_TRY(p.seed(input_dims, fed, input_data));
  OM_TRY(p.nodes());
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
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Plan::Step& s = plan.steps[i];
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
    OM_TRY(graph::run_kernel(s.fn, k, s.work, s.cost));
    if (profile)
      plan.step_ns[i] += uint64_t(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
  }
  return Status::ok();
}

}  // namespace om::runtime
