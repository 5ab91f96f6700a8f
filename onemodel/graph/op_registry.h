// The graph operator registry: one OpDef per (domain, op type) with its opset range, attribute
// types, shape/dtype inference, Fast and Exact kernels, scratch and prepack hook. The ONNX
// reader, Session validation, plan-time constant evaluation, docs/operators.md and the tests
// all come from this one table (docs/adding-an-operator.md). Each op family (graph/ops/*.cpp,
// listed in graph/ops/families.def) contributes a constexpr array; nothing registers itself at
// run time.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <type_traits>
#include <unordered_set>
#include <vector>

#include "onemodel/core/dtype.h"
#include "onemodel/core/shape.h"
#include "onemodel/core/mode.h"
#include "onemodel/core/status.h"
#include "onemodel/graph/ir.h"
#include "onemodel/op_list.h"

namespace om::runtime {
struct ControlFlowHooks;  // runtime/plan_internal.h
struct SequenceHooks;     // runtime/sequence_lowering.h
}

namespace om::graph {

// Ranks above this are refused at plan time; kernels keep index arrays of this size on the
// stack so running never allocates.
constexpr size_t kMaxRank = 8;

// The domain of onemodel's own fused operators (produced by passes, never by importers).
constexpr const char* kOnemodelDomain = "com.onemodel";

// A value at plan time: concrete shape and dtype, and its bytes when known before running
// (initializers, folded constants, Shape results).
struct ValueDesc {
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
  const void* data = nullptr;  // null: not known when planning; an empty known value: kEmptyValue
  int64_t numel() const;
  size_t nbytes() const { return size_t(numel()) * dtype_size(dtype); }
};

// Where the data of a known value without elements points (an empty initializer has no bytes,
// but infer must still see it as known).
extern const void* const kEmptyValue;

struct InferContext {
  const Node& node;
  std::vector<const ValueDesc*> inputs;  // nullptr for omitted optional inputs
  std::vector<ValueDesc> outputs;        // one per node output; infer fills dtype and shape
  // The plan's arithmetic mode, for scratch sizes that depend on it (Fast-only kernel forms).
  ArithmeticMode mode = ArithmeticMode::Fast;

  size_t num_inputs() const { return inputs.size(); }
  const ValueDesc* input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  // An error naming the node and its op type.
  Status error(ErrorKind kind, const std::string& what) const;
  void set_output(size_t i, DType dtype, std::vector<int64_t> shape);
};

// A tensor as kernels see it at run time: dims point into the plan, data into the arena, the
// caller's input buffer or a constant.
struct TensorArg {
  bool present = false;
  DType dtype = DType::f32;
  const int64_t* dims = nullptr;
  size_t rank = 0;
  int64_t numel = 0;
  void* data = nullptr;
  template <typename T> T* as() const { return static_cast<T*>(data); }
  int64_t dim(size_t i) const { return dims[i]; }
};

// What an operator's prepare step leaves in the plan step, once per plan: the size of the
// kernel's iteration space (`work` units: output rows, planes, tiles, batch items... per family,
// docs/adding-an-operator.md) and the operator's own record, a trivially copyable struct the
// kernel reads through KernelContext::params<T>(). Prepare runs after shape inference, so it
// sees the node, the concrete input and output shapes and the plan-time constants; the kernel
// sees none of the node.
constexpr size_t kMaxParamsBytes = 512;
struct Prepared {
  int64_t work = 1;
  // Estimated scalar operations of the whole work (multiply-adds for the products), which
  // decides how many threads it is worth (kernels::parts_for). 0: prepare_node estimates the
  // elements read and written.
  int64_t cost = 0;
  size_t size = 0;  // bytes of the record; 0: the op keeps none
  alignas(64) unsigned char bytes[kMaxParamsBytes];
  // Plan-time data too large for the record (TfIdfVectorizer's n-gram pool): the plan keeps a
  // copy beside the record, 64-byte aligned, which the kernel reads as KernelContext::table.
  std::vector<unsigned char> table;
  // A value-initialised record of type T (zeroed, then default member initializers) to fill.
  template <typename T>
  T& record() {
    static_assert(std::is_trivially_copyable<T>::value, "a prepared record is copied bytewise into the plan");
    static_assert(sizeof(T) <= kMaxParamsBytes, "a prepared record holds at most kMaxParamsBytes");
    static_assert(alignof(T) <= 64, "a prepared record is at most 64-byte aligned");
    size = sizeof(T);
    std::memset(bytes, 0, sizeof(T));
    return *new (bytes) T();
  }
};

// What a kernel sees. It holds no Node: a kernel cannot read an attribute, a name or an op type
// while running, only its prepared record (params<T>()) and its tensors.
struct KernelContext {
  ArithmeticMode mode = ArithmeticMode::Fast;
  // The operator's prepared record (Prepared), or null when its op has no prepare step.
  const void* params_data = nullptr;
  size_t params_bytes = 0;
  // The prepared table (Prepared::table), or null when the op keeps none.
  const void* table = nullptr;
  size_t table_bytes = 0;
  // The sub-range [begin, end) of the prepared iteration space this call runs (0 <= begin <=
  // end <= Prepared::work). Calls over any partition of [0, work) together write exactly what
  // one call over the whole range writes, bit for bit (the split test runs every kernel so).
  int64_t begin = 0, end = 1;
  // The node's label (name and op type) for run-time errors: kernels never see the node.
  const char* label = "";
  Status error(ErrorKind kind, const std::string& what) const;
  template <typename T>
  const T& params() const {
    static_assert(std::is_trivially_copyable<T>::value, "a prepared record is trivially copyable");
    return *static_cast<const T*>(params_data);
  }
  const TensorArg* inputs = nullptr;
  size_t num_inputs = 0;
  const TensorArg* outputs = nullptr;
  size_t num_outputs = 0;
  void* scratch = nullptr;  // scratch_bytes from the op's ScratchFn, 64-byte aligned
  size_t scratch_bytes = 0;
  // The constant right-hand GEMM operand packed once by the plan (see packable_b), or null.
  const float* packed_b = nullptr;
  const TensorArg& in(size_t i) const { return inputs[i]; }
  bool has_input(size_t i) const { return i < num_inputs && inputs[i].present; }
  const TensorArg& out(size_t i) const { return outputs[i]; }
};

using InferFn = Status (*)(InferContext&);
using KernelFn = Status (*)(const KernelContext&);
using ScratchFn = size_t (*)(const InferContext&);  // after infer ran; bytes
// Once per plan step, after infer ran (ctx.outputs hold the inferred shapes): validates what
// running needs, chooses the algorithm and fills `out` (the work size and the kernel's record).
using PrepareFn = Status (*)(const InferContext& ctx, Prepared& out);

enum OpFlags : uint32_t {
  kOpNone = 0,
  // Output 0 holds exactly input 0's bytes (Reshape, Squeeze, Identity...): the plan aliases
  // the buffer instead of running a kernel.
  kOpAlias = 1u << 0,
  // Reads only its input's shape (Shape): always evaluated at plan time.
  kOpShapeOnly = 1u << 1,
  // Control flow (If): the plan runs the node's subgraphs, not a kernel (runtime/plan.cpp), so
  // the record has no infer step or kernels of its own.
  kOpControlFlow = 1u << 2,
  // Its float inputs and output 0 share one dtype and its f32 kernel computes it, so its f16 form
  // means "the same in f32": compute_f16_in_f32 runs it inside an f32 region (docs/graph-passes.md).
  // Data movement (Reshape, Concat, Gather...) is exact in any float dtype; it carries the flag
  // so that a region need not be cast at it.
  kOpF16InF32 = 1u << 3,
  // Sequences and optionals (SequenceInsert, OptionalGetElement...): the sequence lowering
  // (runtime/sequence_lowering.cpp) rewrites them into tensor nodes before planning, so the record
  // has no infer step or kernels of its own (docs/onnx.md, "Sequences and optionals").
  kOpSequence = 1u << 4,
};

// How a node of the operator treats axis 0 of its run-time data: whether a run over a batch may
// run as runs over parts of it, each on its own thread and arena, with the same bits
// (runtime/batch_split.h; docs/threads.md, "Batches split between threads"). Run-time inputs are
// the ones not known when planning; the others are parameters. Every rule also needs each
// run-time input and output to carry the batch on axis 0 (runtime/batch_split.cpp checks both
// plans' shapes).
enum class BatchRule : uint8_t {
  None,         // may mix items along axis 0, or not known: a graph with such a node is never split
  Items,        // each output item from the same input items (Conv, pools, normalisations, Reshape);
                //   inputs from OpDef::batch_arg on (default 2) must broadcast along the batch when known
  FirstOutput,  // as Items, while only output 0 is used (MaxPool's Indices count over the whole batch)
  Broadcast,    // elementwise: run-time inputs have the output's rank; parameters broadcast along axis 0
  Rows,         // a product: input 0's rows untransposed; input 1 a parameter or batched with rank >= 3
  Axis,         // as Items, along attribute `axis` (default OpDef::batch_arg), which must not be 0
  Transpose,    // perm keeps axis 0 first
  AxesInput,    // its axes (input OpDef::batch_arg, known) leave axis 0 whole (Slice, reductions)
};

// The type an attribute must have. PositiveInt(s): every value must be >= 1 (kernel sizes,
// strides, dilations, group, hidden sizes); a 0 or negative one is refused by the reader.
enum class AttrKind { Int, PositiveInt, Float, String, Ints, PositiveInts, Floats, Strings, Tensor, Graph, TypeProto };
struct AttrSpec {
  const char* name;
  AttrKind kind;
};
AttrType attr_type_of(AttrKind kind);
const char* attr_kind_name(AttrKind kind);

// An attribute that older opsets carried and newer ones take as an input (ReduceMean's `axes`
// became input 1 in opset 18): the reader moves it into an initializer for models older than
// `since`, so the IR always has the newest form. Ints attributes become 1-D tensors of `dtype`
// (i64); Float attributes (Clip's min/max, Dropout's ratio) become f32 scalars, Floats ones (Upsample's
// scales) f32 1-D tensors.
struct MovedAttr {
  const char* name = nullptr;
  int input = 0;
  int since = 0;
};

// What an upgrade hook sees: the node (after the moves), the model's default-domain opset, and
// room for nodes the reader inserts before and after it when the old form is a composition of
// registry operators (Softmax before 13: Shape, Flatten, Softmax, Reshape). fresh() gives a
// value name not yet used in the graph.
struct UpgradeContext {
  Node& node;
  int64_t opset = 0;
  std::unordered_set<std::string>* names = nullptr;  // every value name of the graph
  std::vector<Node> before, after;
  std::string fresh(const std::string& base) {
    std::string n = base;
    for (int s = 1; names->count(n); ++s) n = base + "_" + std::to_string(s);
    names->insert(n);
    return n;
  }
};

// A node of an older opset brought to the registry's form beyond what moved attributes say
// (renamed or dropped attributes, inserted nodes, or a refusal when the old semantics cannot be
// expressed). Runs after the moves. docs/onnx.md, "Opsets".
using UpgradeFn = Status (*)(UpgradeContext& ctx);

// How a node of an opset older than OpDef::since reaches the registry's form: the oldest opset
// whose form the reader can bring there (default: since, i.e. no upgrade), up to four moved
// attributes and an optional hook. Between `oldest` and `since` the operator gained only dtypes
// or the changes are exactly what the moves and the hook undo.
struct OpUpgrade {
  static constexpr int kMaxMoved = 4;
  int oldest = 0;  // 0: the op's since
  MovedAttr moved[kMaxMoved] = {};
  int num_moved = 0;
  UpgradeFn hook = nullptr;
};

// A node whose right-hand GEMM operand (input `input`) the plan may pack once when that input
// is a constant: the K x N view of it the kernel multiplies by (strides in elements). Every GEMM
// call of the node then uses this whole operand, so the kernel can take the packed copy.
struct PackableB {
  size_t input = 1;
  size_t K = 0, N = 0;
  ptrdiff_t rs = 0, cs = 1;
  // Set by the plan before the hook runs: its arithmetic mode (a layout may be Fast-only).
  ArithmeticMode mode = ArithmeticMode::Fast;
  // An op-specific layout instead of gemm_pack_b's: when `pack` is set, the plan allocates
  // `floats` floats and calls pack(params, w, dst) with the initializer's bytes (f32, or the
  // integers of the quantized products); K and N then only need to be nonzero. Conv packs its
  // weights as the GEMM's left operand, or their Winograd transform (kernels/conv.h); the
  // integer products pack theirs as kernels/q8_gemm.h's operands.
  size_t floats = 0;
  void (*pack)(const int64_t* params, const void* w, float* dst) = nullptr;
  int64_t params[4] = {};
};

using PrepackFn = bool (*)(const Node& node, const std::vector<const ValueDesc*>& inputs, PackableB* out);

// A graph pass's rewrite (graph/passes/pass.h): the rewrites made go to *changes.
using RewriteFn = Status (*)(Graph& g, ArithmeticMode mode, size_t* changes);
// The passes that write an operator, as its record holds them: `.written_by_passes(writers<a, b>)`,
// one null-terminated list (a pointer in every record instead of a fixed array of slots).
template <RewriteFn... Fns>
inline constexpr RewriteFn writers[sizeof...(Fns) + 1] = {Fns..., nullptr};

// The default-domain opsets the reader accepts: kOldestOpset..kNewestOpset. Whether a node of an
// old opset is read is each operator's decision, not the model's: OpDef::since is the first
// opset whose form its kernel implements (default kFormOpset, the opset most forms were last
// changed in); nodes of older opsets reach that form through the op's OpUpgrade (as far back as
// upgrades_from), or are refused naming the operator and both versions (docs/onnx.md, "Opsets").
constexpr int kOldestOpset = 1;
constexpr int kFormOpset = 13;
constexpr int kNewestOpset = 20;

// THE record of one graph operator. The ONNX reader (support, opset, attribute types), Session
// validation, plan-time evaluation, weight prepacking, docs/operators.md and the tests all read
// it; nothing else lists operators. Built with the named setters below (constexpr), so a table
// entry says what each function is for and an omitted part has a declared default.
struct OpDef {
  const char* op_type = "";
  const char* domain = "";            // "" = ai.onnx
  int since = kFormOpset;             // the first opset whose form the kernel implements
  int min_inputs = 0;
  int max_inputs = 0;
  const AttrSpec* attrs = nullptr;    // attribute types the reader checks; others pass through
  size_t num_attrs = 0;
  OpUpgrade upgrade;                  // how older opsets' nodes reach this form (reader)
  InferFn infer = nullptr;
  KernelFn fast = nullptr;
  KernelFn exact = nullptr;           // nullptr: no exact kernel (Exact sessions refuse the op)
  PrepareFn prepare = nullptr;        // nullptr: no record, one work unit
  ScratchFn scratch = nullptr;        // nullptr: no scratch
  PrepackFn prepack = nullptr;        // nullptr: no constant operand packed at plan time
  // The graph passes that write nodes of this operator (FusedConv: the Conv epilogue fusion).
  // The record links them: a pass that writes operators runs only when one of them is registered
  // (graph/passes/pass.cpp), and a program registering only some operators (onemodel/op_list.h)
  // links only the passes that can write those.
  const RewriteFn* written_by = nullptr;  // null-terminated (writers<...> above), or null: none
  uint32_t flags = kOpNone;
  // Bit i: input i's values decide the output shapes (Reshape's shape, Slice's starts...), so
  // they must be known when planning. A graph input feeding one (directly or through foldable
  // nodes) is a value input: its values join the plan key (docs/memory.md, "Plans").
  uint32_t plan_time_inputs = 0;
  // Control flow (kOpControlFlow): how the plan lays out and plans the node's subgraphs
  // (runtime/plan_control.cpp). Referenced only from these records, so a program that registers
  // no control-flow operator links none of that planning.
  const runtime::ControlFlowHooks* control_flow = nullptr;
  // Sequences (kOpSequence): the lowering that runs a graph with them (runtime/sequence_lowering.cpp),
  // referenced only from these records likewise.
  const runtime::SequenceHooks* sequences = nullptr;
  BatchRule batch = BatchRule::None;  // how it treats axis 0 (above)
  int8_t batch_arg = 0;               // per BatchRule: Items' first broadcast operand, Axis' default, AxesInput's input
  const char* notes = "";             // one line for docs/operators.md

  constexpr OpDef inputs(int lo, int hi) const { OpDef d = *this; d.min_inputs = lo; d.max_inputs = hi; return d; }
  constexpr OpDef inputs(int n) const { return inputs(n, n); }
  constexpr OpDef in_domain(const char* dom) const { OpDef d = *this; d.domain = dom; return d; }
  constexpr OpDef since_opset(int v) const { OpDef d = *this; d.since = v; return d; }
  template <size_t N>
  constexpr OpDef attributes(const AttrSpec (&a)[N]) const { OpDef d = *this; d.attrs = a; d.num_attrs = N; return d; }
  // Before `since_opset` the value was attribute `name`; the reader makes it input `input`.
  constexpr OpDef attr_became_input(const char* name, int input, int since_opset) const {
    OpDef d = *this;
    MovedAttr& m = d.upgrade.moved[d.upgrade.num_moved++];
    m.name = name; m.input = input; m.since = since_opset;
    return d;
  }
  // Models from opset `v` on are upgraded to this form (moves, hook); older ones are refused.
  constexpr OpDef upgrades_from(int v) const { OpDef d = *this; d.upgrade.oldest = v; return d; }
  constexpr OpDef upgrade_hook(UpgradeFn f) const { OpDef d = *this; d.upgrade.hook = f; return d; }
  // The oldest opset whose nodes of this op the reader takes.
  constexpr int oldest_opset() const { return upgrade.oldest ? upgrade.oldest : since; }
  constexpr OpDef shapes(InferFn f) const { OpDef d = *this; d.infer = f; return d; }
  // One kernel for both modes: the op is exact by nature (one rounding per element, or a copy).
  constexpr OpDef kernel(KernelFn f) const { return kernels(f, f); }
  constexpr OpDef kernels(KernelFn fast_fn, KernelFn exact_fn) const { OpDef d = *this; d.fast = fast_fn; d.exact = exact_fn; return d; }
  constexpr OpDef fast_only(KernelFn f) const { return kernels(f, nullptr); }
  constexpr OpDef prepared(PrepareFn f) const { OpDef d = *this; d.prepare = f; return d; }
  constexpr OpDef with_scratch(ScratchFn f) const { OpDef d = *this; d.scratch = f; return d; }
  constexpr OpDef with_prepack(PrepackFn f) const { OpDef d = *this; d.prepack = f; return d; }
  constexpr OpDef with_flags(uint32_t f) const { OpDef d = *this; d.flags |= f; return d; }  // adds to the flags
  constexpr OpDef written_by_passes(const RewriteFn* list) const { OpDef d = *this; d.written_by = list; return d; }
  constexpr OpDef plan_time_inputs_mask(uint32_t mask) const { OpDef d = *this; d.plan_time_inputs = mask; return d; }
  constexpr OpDef runs_subgraphs(const runtime::ControlFlowHooks* hooks) const {
    OpDef d = *this;
    d.control_flow = hooks;
    d.flags |= kOpControlFlow;
    return d;
  }
  constexpr OpDef lowered_by(const runtime::SequenceHooks* hooks) const {
    OpDef d = *this;
    d.sequences = hooks;
    d.flags |= kOpSequence;
    return d;
  }
  constexpr OpDef doc(const char* line) const { OpDef d = *this; d.notes = line; return d; }
  constexpr OpDef per_item(BatchRule rule, int8_t arg = 0) const {
    OpDef d = *this;
    d.batch = rule;
    d.batch_arg = arg;
    return d;
  }
};
constexpr OpDef op(const char* op_type) { OpDef d; d.op_type = op_type; return d; }

// Whether a session of `mode` runs the op: it has that mode's kernel, or it is control flow (it
// runs its subgraphs' kernels, each checked by itself).
inline bool runs_in(const OpDef& op, ArithmeticMode mode) {
  if (op.flags & (kOpControlFlow | kOpSequence)) return true;
  return mode == ArithmeticMode::Exact ? op.exact != nullptr : op.fast != nullptr;
}

// The plan packs the node's constant right-hand GEMM operand when its op has a prepack hook.
bool packable_b(const OpDef& op, const Node& node, const std::vector<const ValueDesc*>& inputs, PackableB* out);

// nullptr when unknown or not registered. "ai.onnx" and "" are the same domain. A hash lookup;
// code holding a compiled graph uses the OpDef* it resolved once per node
// (runtime::CompiledGraph::ops).
const OpDef* find_op(const std::string& domain, const std::string& op_type);
// The registered operators: the full registry, or the program's own list (onemodel/op_list.h).
inline OpList all_ops() { return registered_op_list(); }
// What an error about an operator find_op does not know adds: where the supported ones are
// listed, or, in a program with its own list, that the list leaves it out and how to add it.
const char* unknown_op_hint();

// Checks the node's attributes against its operator's schema (op.attrs): each listed one has its
// kind's type and PositiveInt(s) values are >= 1; names the schema does not list pass through
// (kernels read what they know). The ONNX reader (kind Format) and Session creation (kind
// InvalidArgument, for graphs built in code) both run it, so no kernel sees a value its schema
// excludes. The error names the node, the attribute and the value.
Status check_attributes(const OpDef& op, const Node& node, ErrorKind kind);


// The op's prepare step (a no-op filling one work unit and no record when it has none), with
// the checks every prepare result must pass.
Status prepare_node(const InferContext& ctx, const OpDef& op, Prepared* out);

// Runs a kernel over all of its `work` units (nothing when there are none). On the current
// thread pool (kernels::current_pool) the work is cut into kernels::parts_for(pool, work, cost)
// consecutive sub-ranges run in parallel; a part on a worker gets that worker's scratch
// (reserved by the plan: ThreadPool::reserve_scratch), and without enough of it the kernel runs
// on this thread. After set_work_split_for_testing(parts), `parts` sub-ranges run one after the
// other here instead. Plans and plan-time evaluation both run kernels through here.
Status run_kernel(KernelFn fn, KernelContext& k, int64_t work, int64_t cost);

// For the split test: from now on every kernel run by run_kernel is called over `parts`
// consecutive sub-ranges of its work instead of once (1, the default: one call). Process-wide;
// tests set it around the runs they compare.
void set_work_split_for_testing(int parts);

// Runs one node whose inputs are all known (plan-time constant evaluation and the constant
// folding pass): infers, allocates 64-byte aligned owned outputs and calls the mode's kernel.
struct EvaluatedValue {
  ValueDesc desc;                      // desc.data points into owner
  std::shared_ptr<const void> owner;
};
Status evaluate_node(const Node& node, const OpDef& op, ArithmeticMode mode,
                     const std::vector<const ValueDesc*>& inputs, std::vector<EvaluatedValue>* outputs);

// 64-byte aligned zeroed bytes owned by a shared_ptr; null when memory is exhausted.
std::shared_ptr<void> aligned_buffer(size_t nbytes);


}  // namespace om::graph
