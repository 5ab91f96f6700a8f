// Per-shape execution plans (internal to the runtime). A CompiledGraph indexes the session's
// graph once; a Plan is built for one concrete input-shape signature: shapes inferred, nodes
// whose inputs are known folded (constants, Shape of known shapes and everything computed
// from them), reshape-type nodes aliased, kernels chosen for the mode, and every remaining
// activation placed in one arena by the greedy memory planner. Executing a plan allocates
// nothing.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "onemodel/graph/op_registry.h"

namespace om::runtime {

// A graph input of another dtype than i64/i32/bool is a value input only when its declared
// shape is static with at most this many elements.
constexpr int64_t kMaxValueInputElements = 64;

// The planner's node list: the graph's nodes in order, with each control-flow node's subgraphs
// laid out after it (docs/onnx.md, "Control flow"):
// - If: the If, then_branch's nodes, an IfElse entry (its inputs: then's outputs), else_branch's
//   nodes, and an IfJoin entry (inputs: then's outputs, then else's; outputs: the If's). A plan
//   whose condition is known runs one branch and skips the other, the join making the If's
//   outputs that branch's (same buffers, no copy); a run-time condition plans both, a branch step
//   at the If and a jump at IfElse choosing one per run, each branch copying its outputs into
//   the If's.
// - Loop and Scan: the node (its outputs are the body's inputs: the iteration number and the
//   condition for Loop, then the loop-carried values, then Scan's slices), the body's nodes, and
//   a LoopEnd entry (inputs: the body's outputs; outputs: the node's).
enum class FlatKind : uint8_t { Node, IfElse, IfJoin, LoopEnd };
struct FlatEntry {
  FlatKind kind = FlatKind::Node;
  int guard = -1;   // the flat index of the control-flow node whose subgraph holds this entry (-1: the main graph)
  int branch = 0;   // 0: then_branch or a body, 1: else_branch
  int head = -1;    // IfElse, IfJoin, LoopEnd: the flat index of their control-flow node
  size_t branch_outputs = 0;  // IfJoin: outputs per branch (its inputs are then's, then else's)
};

struct CompiledGraph {
  const graph::Graph* graph = nullptr;
  // Per flat entry (see FlatEntry; without control flow, exactly the graph's nodes):
  std::vector<const graph::Node*> nodes;
  std::vector<FlatEntry> flat;
  std::vector<const graph::OpDef*> ops;           // per flat entry
  std::unordered_map<std::string, int> ids;       // value name -> id
  int num_values = 0;
  std::vector<std::vector<int>> node_inputs;      // -1 for omitted optional inputs
  std::vector<std::vector<int>> node_outputs;     // -1 for omitted outputs
  std::vector<int> input_ids, output_ids;
  // Initializers of subgraphs (each value id with its tensor): constants of every plan.
  std::vector<std::pair<int, const graph::TensorData*>> sub_initializers;
  // Per node: its constant right-hand GEMM operand packed once for the session (initializers
  // only, so every plan can share it), filled by the first plan that needs it.
  std::vector<std::shared_ptr<const float>> packed_b;
  // Per graph input: a value input (integer or bool) whose values decide shapes, found by
  // walking back from the ops' plan_time_inputs through every node whose output they need
  // (Shape-type nodes need only their input's shape). Its values are part of the plan key.
  std::vector<char> value_input;
};

// Each node's operator, looked up once per graph: the one place a session resolves operators
// by name. Every unknown operator at once, every operator without an exact kernel when `mode`
// is Exact, and each node's attributes against its schema are errors.
Result<std::vector<const graph::OpDef*>> resolve_ops(const graph::Graph& g, ArithmeticMode mode);

// Indexes g's values; `ops` is resolve_ops(g, ...), per node of g (subgraphs' nodes are looked
// up here, resolve_ops having checked them).
Result<CompiledGraph> compile_graph(const graph::Graph& g, std::vector<const graph::OpDef*> ops);

// Creation-time check: every operand that must be known when planning (OpDef::plan_time_inputs)
// can be — it comes from initializers, value inputs, Shape-type nodes and nodes computed from
// those only. Otherwise the error names the node (by its output when it has no name), the
// operand and the fix, before any run.
Status check_plan_time_operands(const CompiledGraph& cg);

// The steps that move a run within its plan (control flow; their args are the values they read):
// BranchIfFalse (input: the condition) goes to `target` when it is zero; Jump always goes there;
// LoopTest (inputs: the iteration counter, the trip count, the condition; either may be absent)
// goes to `target` when the loop is done, and fails when the run's loops together would pass
// max_iterations; LoopNext (input: the
// counter) adds one to it and goes back to its LoopTest.
enum class StepControl : uint8_t { None, BranchIfFalse, Jump, LoopTest, LoopNext };

struct Plan {
  std::vector<std::vector<int64_t>> signature;   // input dims, in session input order
  std::vector<char> fed;                         // per graph input: given by the caller
  // Per value input given: a copy of the values this plan was built for (the plan key's second
  // half; known when planning, so the nodes reading them fold). Null for other inputs.
  std::vector<std::shared_ptr<void>> input_values;
  std::vector<size_t> input_value_bytes;
  std::vector<graph::ValueDesc> values;          // per value id
  // The inferred dtype and dims of node outputs the graph leaves unnamed (omitted optional
  // outputs): the kernel still writes them, so their TensorArg is as complete as a named one's.
  // A deque, so the args' dims pointers stay valid while it grows.
  std::deque<graph::ValueDesc> unnamed_values;
  std::vector<std::shared_ptr<const void>> owned; // folded constants
  std::shared_ptr<void> arena;
  size_t arena_bytes = 0;
  size_t lower_bound_bytes = 0;
  size_t folded_nodes = 0;
  size_t aliased_nodes = 0;
  size_t number = 0;  // the order in which the session built its plans (PlanStats::plan_number)

  struct Step {
    graph::KernelFn fn = nullptr;
    size_t node = 0;  // its node's flat index (CompiledGraph::nodes, for profiles; kernels never see the node)
    uint32_t in_begin = 0, num_in = 0, out_begin = 0, num_out = 0;
    void* scratch = nullptr;
    size_t scratch_bytes = 0;
    const float* packed_b = nullptr;  // owned by CompiledGraph::packed_b
    int64_t work = 1;                 // Prepared::work: the kernel runs [0, work)
    int64_t cost = 0;                 // Prepared::cost: how many threads the work is worth
    size_t params_offset = 0, params_bytes = 0;  // the prepared record in Plan::params
    size_t table_bytes = 0;  // Prepared::table, after the record in Plan::params (64-byte aligned)
    // Control flow (fn null): a step that moves the run to step `target` or on (execute_plan).
    StepControl control = StepControl::None;
    uint32_t target = 0;
    int64_t count = -1;      // LoopTest: iterations fixed when planning (-1: from the trip count and condition)
    int64_t max_iterations = 0;  // LoopTest: SessionOptions::max_loop_iterations (over the whole run)
  };
  std::shared_ptr<void> params;  // every step's prepared record, each 64-byte aligned
  std::vector<std::string> labels;  // per step: its node's label, for run-time errors
  std::vector<Step> steps;
  // The largest step scratch: what each worker of a thread pool needs to run a part of any step
  // (ThreadPool::reserve_scratch, when the plan is built).
  size_t max_scratch_bytes = 0;
  std::vector<graph::TensorArg> args;  // step inputs and outputs, contiguous
  struct Patch {
    uint32_t arg;
    uint32_t input;
  };
  std::vector<Patch> patches;  // args that point at a caller's input buffer
  struct Output {
    int input = -1;            // >= 0: the output is that caller input's buffer
    const void* data = nullptr;
    const graph::ValueDesc* desc = nullptr;
  };
  std::vector<Output> outputs;
  // With profiling (SessionOptions::profile): nanoseconds spent in each step over `profiled_runs`
  // runs; sized when the plan is built, so timing allocates nothing.
  std::vector<uint64_t> step_ns;
  uint64_t profiled_runs = 0;
};

// What one plan may take (SessionOptions of the same names); errors name the option.
struct PlanLimits {
  size_t max_arena_bytes = SIZE_MAX;
  size_t max_folded_bytes = SIZE_MAX;
  // A caller-owned arena (SessionOptions::arena): the plan's activations go there instead of a
  // buffer of its own; a plan needing more than arena_bytes fails naming both.
  void* arena = nullptr;
  size_t arena_bytes = 0;
  // Iterations all loops of one run may take together (SessionOptions::max_loop_iterations); a
  // Scan or stacked Loop whose count alone passes it fails planning.
  int64_t max_loop_iterations = INT64_MAX;
};

// input_dims[i] are the concrete dims of graph input i; fed[i] tells whether the caller gives
// it (always for plain inputs; an initializer-backed input not fed takes the initializer). With
// prepack, constant right-hand GEMM operands that are initializers are packed into cg.packed_b
// (once per session). input_data (per graph input) supplies the values of cg.value_input
// inputs; without it they are unknown when planning.
Result<std::unique_ptr<Plan>> build_plan(CompiledGraph& cg, ArithmeticMode mode,
                                         const std::vector<std::vector<int64_t>>& input_dims, const std::vector<char>& fed,
                                         bool prepack = false, const PlanLimits& limits = {},
                                         const std::vector<void*>* input_data = nullptr);

// What one run of a plan writes: an activation arena and the step arguments pointing into it
// (with the caller's input buffers patched in). Several contexts of one plan run at once
// (concurrent callers of one Session) sharing the plan's steps, records and packed weights; the
// plan's own args are then only the template each context copies. make_context(plan, false) is
// the plan's own arena (`shift` 0) with args of its own; make_context(plan, true) a new arena,
// the plan's args with every pointer into the plan's arena moved by the same offset.
struct ExecContext {
  std::shared_ptr<void> arena;  // null: the plan's own
  ptrdiff_t shift = 0;          // this arena minus the plan's, in bytes
  std::vector<graph::TensorArg> args;
  // A pointer of the plan (a step's scratch, an output) as this context sees it.
  const void* rebase(const Plan& plan, const void* p) const;
};
Result<std::unique_ptr<ExecContext>> make_context(const Plan& plan, bool own_arena);

// Runs every step; input_data[i] is session input i's buffer. With `profile`, each step's time is
// added to plan.step_ns (which must then hold one entry per step). With `ctx`, into that context
// (the outputs are ctx->rebase(plan, Plan::Output::data)); without, into the plan's own arena.
Status execute_plan(Plan& plan, ArithmeticMode mode, void* const* input_data, bool profile = false,
                    ExecContext* ctx = nullptr);

}  // namespace om::runtime
