// The planner's internals, shared by runtime/plan.cpp and runtime/plan_control.cpp (control flow:
// If, Loop, Scan). Control flow reaches the planner through its operators' records
// (OpDef::control_flow -> ControlFlowHooks), so a program that registers none of them links none
// of its planning (onemodel/op_list.h).
#pragma once
#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "onemodel/runtime/plan.h"

namespace om::runtime {

using graph::OpDef;
using graph::TensorArg;
using graph::ValueDesc;

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

  // Appends g's nodes (and, through each control-flow operator's planner, their subgraphs').
  Status nodes_of(const graph::Graph& g, const std::vector<const OpDef*>* top_ops, int guard, int branch);
  // A control-flow node: its entries and its subgraphs' (runtime/plan_control.cpp).
  Status control_flow(const graph::Node& n, const OpDef* op, std::vector<int> ins, FlatEntry e);
};

enum class BufKind { Arena, Input, Const };

struct Buffer {
  BufKind kind = BufKind::Arena;
  size_t size = 0;
  int first = 0, last = 0;
  int input = -1;
  size_t offset = 0;
};

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
  size_t table_bytes = 0;  // Prepared::table, after the record (64-byte aligned)
  // A step of the plan's own (control flow): its kernel, or a control step (Plan::Step).
  graph::KernelFn fn = nullptr;
  StepControl control = StepControl::None;
  int target = -1;
  int64_t count = -1;
};

// A condition's truth: one element of bool, u8 or an integer type.
inline bool truth(const void* data, DType dt) {
  switch (dt) {
    case DType::i64: return *static_cast<const int64_t*>(data) != 0;
    case DType::i32: return *static_cast<const int32_t*>(data) != 0;
    default: return *static_cast<const uint8_t*>(data) != 0;
  }
}
inline int64_t int_value(const void* data, DType dt) {
  return dt == DType::i32 ? *static_cast<const int32_t*>(data) : *static_cast<const int64_t*>(data);
}

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
  // A control-flow entry (runtime/plan_control.cpp).
  Status control_flow(size_t ni);
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
  // Value `id` is value `from`: the same desc and buffer (an If's output is its branch's, a
  // loop's final value its carried buffer). Nothing for an unnamed output (id -1).
  void alias_value(int id, int from) {
    if (id < 0) return;
    plan->values[size_t(id)] = plan->values[size_t(from)];
    buf_of[size_t(id)] = buf_of[size_t(from)];
    known[size_t(id)] = true;
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
  int copy_step(size_t node, int from, int to);
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

// What a control-flow operator's record gives the planner (graph/ops/control_flow.cpp):
// laying out its subgraphs' entries, and planning each of its entries.
struct ControlFlowHooks {
  Status (*flatten)(Flattener& f, const graph::Node& n, const OpDef* op, std::vector<int> ins, FlatEntry e);
  Status (*plan)(Planner& p, size_t entry);
};
extern const ControlFlowHooks kControlFlowHooks;

}  // namespace om::runtime
