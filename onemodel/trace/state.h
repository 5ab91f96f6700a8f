// Internal: the state of one active trace and the helpers lowering functions use.
#pragma once
#include <map>
#include <set>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "onemodel/ops/record.h"
#include "onemodel/core/trace_hook.h"
#include "onemodel/graph/ir.h"
#include "onemodel/trace/arena.h"
#include "onemodel/trace/symbolic.h"
#include "onemodel/trace/tracer.h"
#include "onemodel/trace/verify_plan.h"

namespace om::trace {

using ValueId = uint32_t;
constexpr ValueId kNoValue = UINT32_MAX;  // an omitted optional node input

struct SymDim {
  int64_t coef;
  Span<uint32_t> atoms;
};

enum class ValueKind : uint8_t { Input, Node, Constant };

struct Value {
  ValueKind kind = ValueKind::Node;
  DType dtype = DType::f32;
  Span<int64_t> shape;  // example sizes
  Span<SymDim> sym;     // symbolic extents, one per axis
  int32_t node = -1;    // producer (kind Node)
  uint32_t index = 0;   // input or constant index
};

struct Atom {
  const char* name;
  int64_t example;
  ValueId source;  // a value with this extent on `axis` (read with Shape at run time)
  uint32_t axis;
};

struct Attr {
  const char* name;
  graph::AttrType type;
  int64_t i;
  float f;
  const char* s;
  Span<int64_t> ints;
};

struct Node {
  const char* op_type;
  Span<ValueId> inputs;
  Span<ValueId> outputs;
  Span<Attr> attrs;
};

struct InputRecord {
  std::string name;
  ValueId value;
};

// A captured constant: the logical elements copied at capture time (the traced model's own
// buffer, not the arena) and what is needed to name it and to detect later mutation.
struct ConstantRecord {
  ValueId value;
  std::string name;  // empty: generated at finish
  std::shared_ptr<detail::StorageImpl> storage;
  uint64_t version;
  graph::TensorData data;
};

struct NamedParameter {
  std::string name;
  const detail::StorageImpl* storage;
  int64_t offset;
  Shape shape, strides;
  int views = 0;  // differently strided views named so far
};

// Attribute builders for lowering code.
struct AttrSpec {
  std::string name;
  graph::AttrType type;
  int64_t i = 0;
  float f = 0;
  std::string s;
  std::vector<int64_t> ints;
  static AttrSpec of_int(std::string n, int64_t v) { return {std::move(n), graph::AttrType::Int, v, 0, {}, {}}; }
  static AttrSpec of_float(std::string n, float v) { return {std::move(n), graph::AttrType::Float, 0, v, {}, {}}; }
  static AttrSpec of_string(std::string n, std::string v) { return {std::move(n), graph::AttrType::String, 0, 0, std::move(v), {}}; }
  static AttrSpec of_ints(std::string n, std::vector<int64_t> v) { return {std::move(n), graph::AttrType::Ints, 0, 0, {}, std::move(v)}; }
};

class TraceState : public detail::TraceHook {
 public:
  explicit TraceState(const TracerOptions& options);
  ~TraceState() override;

  // ---- the seam ----
  bool is_traced(const detail::TensorImpl& t) const override { return t.trace_id == id_; }
  Status on_record(const BackwardRecord& record, detail::TensorImpl& output) override;
  Status on_user_read(const detail::TensorImpl& t, const char* call) override;
  Status on_user_write(const detail::TensorImpl& t, const char* call) override;
  Status on_no_grad() override;
  void on_alias(const detail::TensorImpl& source, detail::TensorImpl& alias) override;
  Status on_create(detail::TensorImpl& t, detail::CreateKind kind, double a, double b) override;  // creation.cpp
  // An expand of a constant whose new size equals a symbol's example size (creation.cpp).
  Status expand_constant(const BackwardRecord& rec, detail::TensorImpl& output);

  // ---- public calls ----
  Result<Tensor> add_input(const std::string& name, const Tensor& example, const std::vector<std::string>& axis_names);
  Status add_parameter(const std::string& name, const Tensor& t);
  Result<graph::Graph> finish(const std::vector<std::pair<std::string, Tensor>>& outputs);
  // What verification needs after finish: the inputs' examples and axis names, and every static
  // size the trace saw (verify.h).
  VerifyPlan verify_plan();
  const TracerOptions& options() const { return options_; }

  // ---- for lowering ----
  Result<ValueId> value_of(const Tensor& t);  // the traced value, or the tensor captured as a constant
  Result<ValueId> const_i64(const std::vector<int64_t>& v, bool scalar = false);
  // Emits a node with one output of the given dtype / example shape / extents.
  Result<ValueId> emit(const char* op_type, const std::vector<ValueId>& inputs, const std::vector<AttrSpec>& attrs, DType dtype,
                       const Shape& shape, const SymShape& sym);
  // A node with several outputs (LSTM, GRU): one (dtype, example shape, extents) per output.
  // An input kNoValue is an omitted optional input (written as "").
  struct OutSpec {
    DType dtype;
    Shape shape;
    SymShape sym;
  };
  Result<std::vector<ValueId>> emit_multi(const char* op_type, const std::vector<ValueId>& inputs, const std::vector<AttrSpec>& attrs,
                                          const std::vector<OutSpec>& outs);
  // The final-state outputs (Y_h, Y_c) of the recurrent node whose output sequence lowered to
  // the key value; read by the RnnState lowering.
  std::map<ValueId, std::vector<ValueId>> rnn_states;
  // Gives the node that produced `first` a second output (TopK's indices) and returns it.
  Result<ValueId> add_output(ValueId first, DType dtype, const Shape& shape, const SymShape& sym);
  const Value& value(ValueId v) { return values_[v]; }
  // The node that computed `v`, or null for an input or a constant.
  const Node* producer(ValueId v) {
    const Value& x = values_[v];
    return x.kind == ValueKind::Node ? &nodes_[size_t(x.node)] : nullptr;
  }
  SymShape sym_of(ValueId v);
  Status update_sym(ValueId v, const SymShape& sym) { return set_sym(values_[v], shape_of(v), sym); }
  Shape shape_of(ValueId v);
  int64_t atom_size(uint32_t atom) { return atoms_[atom].example; }
  std::string atom_name(uint32_t atom) { return atoms_[atom].name; }
  AtomSize atom_sizer() {
    return [this](uint32_t a) { return atoms_[a].example; };
  }
  // An atom whose example size equals `n` (declared or derived), if exactly one exists.
  bool atom_with_size(int64_t n, uint32_t* atom);
  // The extent a size list's entry `n` (> 1) stands for in a creation from sizes or an expand:
  // one atom of that example size, else the one pair of distinct atoms whose example sizes
  // multiply to it (B*T, by the reshape rule); false when neither is unique.
  bool extent_with_size(int64_t n, Extent* out);
  uint32_t new_atom(const std::string& name, int64_t example, ValueId source, uint32_t axis);
  // A [1] i64 value holding the run-time size of `atom` (a Shape node, cached).
  Result<ValueId> atom_extent(uint32_t atom);
  // The i64 shape operand for Reshape (`minus_one` allowed) or Expand, from output extents.
  Result<ValueId> shape_operand(const SymShape& extents, bool allow_minus_one);
  // Error helpers naming the call and the module path.
  std::string where(const char* call) const;
  Status arena_full() const;
  Arena& arena() { return arena_; }

 private:
  Result<ValueId> new_value(const Value& v);
  Status set_sym(Value& v, const Shape& shape, const SymShape& sym);
  Result<ValueId> capture_constant(const Tensor& t);
  Result<ValueId> scalar_constant(double v, DType dtype);  // creation.cpp
  std::string constant_name(const Tensor& t);

  uint64_t id_;
  TracerOptions options_;
  Arena arena_;
  ArenaList<Value> values_;
  ArenaList<Node> nodes_;
  ArenaList<Atom> atoms_;
  std::vector<InputRecord> inputs_;
  std::vector<ConstantRecord> constants_;
  std::vector<NamedParameter> parameters_;
  std::map<std::tuple<const void*, int64_t, Shape, Shape>, ValueId> constant_index_;
  std::map<std::pair<ValueId, uint32_t>, ValueId> extent_cache_;
  std::vector<std::string> names_;  // every user-given name, for the "used twice" check
  std::vector<VerifyInput> verify_inputs_;
  std::map<std::string, std::string> suspects_;  // symbol -> the first reshape/expand given its example size
  void note_sizes(const BackwardRecord& rec);
  std::set<ValueId> created_;       // values of creations from sizes (creation.cpp): readable, usable as examples
  friend class GraphBuilder;
};

// Lowers one record (lowering.cpp): emits nodes and returns the output's value, or an alias.
Result<ValueId> lower(TraceState& s, const BackwardRecord& rec, const std::vector<ValueId>& inputs);

}  // namespace om::trace
