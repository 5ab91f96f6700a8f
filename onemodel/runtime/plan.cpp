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
        continue;
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
  // A step of the plan's own (control flow): its kernel, or a control step (Plan::Step).
  graph::KernelFn fn = nullptr;
  StepControl control = StepControl::None;
  int target = -1;
  int64_t count = -1;
};

// The steps control flow adds (their nodes' records have no kernels).

// A condition's truth: one element of bool, u8 or an integer type.
bool truth(const void* data, DType dt) {
  switch (dt) {
    case DType::i64: return *static_cast<const int64_t*>(data) != 0;
    case DType::i32: return *static_cast<const int32_t*>(data) != 0;
    default: return *static_cast<const uint8_t*>(data) != 0;
  }
}
int64_t int_value(const void* data, DType dt) {
  return dt == DType::i32 ? *static_cast<const int32_t*>(data) : *static_cast<const int64_t*>(data);
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

  // Per control-flow entry while planning: what its later entries patch and share.
  struct Flow {
    int chosen = -1;  // If: 0 then, 1 else, 2 both (a run-time condition); Loop, Scan: 0 (planned)
    int branch_step = -1, jump_step = -1, else_begin = -1;  // a run-time If's steps
    std::vector<int> outs;  // a run-time If: the values both branches copy their outputs into
    int begin = -1, test_step = -1;  // Loop, Scan: its first step and its LoopTest
    int counter = -1, cond = -1;     // the iteration counter's value; Loop's condition's
    std::vector<int> carried;        // the loop-carried values (the body's inputs)
    int64_t count = -1;              // Scan: its slices
  };
  std::vector<Flow> flow;
  size_t at = 0;  // the flat entry being planned

  // An error planning entry `at` inside subgraphs names the control-flow nodes around it.
  Status in_subgraph(Status st) const {
    for (int g = cg.flat[at].guard; g >= 0; g = cg.flat[size_t(g)].guard) {
      const graph::Node& n = *cg.nodes[size_t(g)];
      st = st.with_context(msg(n.label(), n.op_type == "If" ? ", a branch" : ", its body"));
    }
    return st;
  }

  Planner(CompiledGraph& c, ArithmeticMode m, const PlanLimits& l)
      : cg(c), g(*c.graph), mode(m), limits(l), buf_of(size_t(c.num_values), -1), known(size_t(c.num_values), false) {}

  Status seed(const std::vector<std::vector<int64_t>>& input_dims, const std::vector<char>& fed,
              const std::vector<void*>* input_data);
  Status nodes();
  Status if_head(size_t ni);
  Status if_else(size_t ni);
  Status if_join(size_t ni);
  Status loop_head(size_t ni);
  Status loop_end(size_t ni);

  int step_now() const { return int(pending.size()); }
  // Value `id` (or a new value of the plan's own, id -1) as `d` in a new arena buffer live from
  // the next step on.
  int arena_value(ValueDesc d, int id = -1) {
    d.data = nullptr;
    Buffer b;
    b.size = d.nbytes();
    b.first = b.last = step_now();
    if (id < 0) {
      id = int(plan->values.size());
      plan->values.push_back(ValueDesc{});
      known.push_back(false);
      buf_of.push_back(-1);
    }
    plan->values[size_t(id)] = std::move(d);
    known[size_t(id)] = true;
    buf_of[size_t(id)] = int(bufs.size());
    bufs.push_back(b);
    return id;
  }
  // A step of the plan's own reading `ins` and writing `outs` (value ids, -1 omitted), with an
  // optional record; returns its index.
  int own_step(size_t node, graph::KernelFn fn, StepControl control, std::vector<int> ins, std::vector<int> outs,
               const void* record = nullptr, size_t record_bytes = 0) {
    PendingStep st;
    st.node = node;
    st.fn = fn;
    st.control = control;
    const int at = step_now();
    for (int id : ins)
      if (id >= 0) bufs[size_t(buf_of[size_t(id)])].last = std::max(bufs[size_t(buf_of[size_t(id)])].last, at);
    for (int id : outs) {
      Buffer& b = bufs[size_t(buf_of[size_t(id)])];
      b.last = std::max(b.last, at);
      st.out_bufs.push_back(buf_of[size_t(id)]);
    }
    st.ins = std::move(ins);
    st.outs = std::move(outs);
    if (record) {
      st.params_offset = records.size();
      st.params_bytes = record_bytes;
      const auto* bytes = static_cast<const unsigned char*>(record);
      records.insert(records.end(), bytes, bytes + record_bytes);
      records.resize(st.params_offset + (record_bytes + 63) / 64 * 64, 0);
    }
    pending.push_back(std::move(st));
    return at;
  }
  int copy_step(size_t node, int from, int to) { return own_step(node, copy_value, StepControl::None, {from}, {to}); }
  Status defined(size_t ni, const std::vector<int>& ids) const {
    for (int id : ids)
      if (id >= 0 && !known[size_t(id)])
        return Status::error(ErrorKind::Internal, msg("plan: ", cg.nodes[ni]->label(), ": a value it reads is not defined"));
    return Status::ok();
  }
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
    if (op.flags & graph::kOpControlFlow) {
      switch (fe.kind) {
        case FlatKind::Node: OM_TRY(node.op_type == "If" ? if_head(ni) : loop_head(ni)); break;
        case FlatKind::IfElse: OM_TRY(if_else(ni)); break;
        case FlatKind::IfJoin: OM_TRY(if_join(ni)); break;
        case FlatKind::LoopEnd: OM_TRY(loop_end(ni)); break;
      }
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
      plan->values[size_t(outs[o])] = plan->values[size_t(from)];
      buf_of[size_t(outs[o])] = buf_of[size_t(from)];
      known[size_t(outs[o])] = true;
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
  for (size_t o = 0; o < outs.size(); ++o) {
    if (outs[o] < 0) continue;
    plan->values[size_t(outs[o])] = plan->values[size_t(f.outs[o])];
    buf_of[size_t(outs[o])] = buf_of[size_t(f.outs[o])];
    known[size_t(outs[o])] = true;
  }
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
  for (size_t k = 0; k < n; ++k) {
    if (outs[k] < 0) continue;
    plan->values[size_t(outs[k])] = plan->values[size_t(f.carried[k])];
    buf_of[size_t(outs[k])] = buf_of[size_t(f.carried[k])];
    known[size_t(outs[k])] = true;
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
          if (more && c >= s.max_iterations)
            return Status::error(ErrorKind::OutOfMemory, msg(plan.labels[i], ": more than SessionOptions::max_loop_iterations = ", s.max_iterations,
                                                             " iterations (its trip count and condition would run on); raise that option "
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
    OM_TRY(graph::run_kernel(s.fn, k, s.work, s.cost));
    if (profile)
      plan.step_ns[i] += uint64_t(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
    ++i;
  }
  return Status::ok();
}

}  // namespace om::runtime
