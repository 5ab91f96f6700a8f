#include "onemodel/trace/tracer.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "onemodel/core/tensor_internal.h"
#include "onemodel/trace/state.h"
#include "onemodel/core/module_path.h"

namespace om::trace {
namespace {
std::atomic<uint64_t> g_next_trace_id{1};
constexpr int64_t kMaxConstantBytes = int64_t(2) << 30;
}  // namespace

TraceState::TraceState(const TracerOptions& options)
    : id_(g_next_trace_id.fetch_add(1)), options_(options), arena_(options.arena_bytes), values_(arena_), nodes_(arena_), atoms_(arena_) {}

TraceState::~TraceState() {
  if (detail::trace_hook() == this) detail::set_trace_hook(nullptr);
}

std::string TraceState::where(const char* call) const {
  std::string s = call;
  const std::string path = nn::current_module_path();
  if (!path.empty()) s += msg(" (in module '", path, "')");
  return s;
}

Status TraceState::arena_full() const {
  return Status::trace(TraceErrorKind::InvalidUsage,
                       msg("om::Tracer: the trace arena of ", arena_.capacity(), " bytes is full; raise TracerOptions::arena_bytes"));
}

// ---- the seam ----

Status TraceState::on_user_read(const detail::TensorImpl& t, const char* call) {
  // A creation from sizes holds no input data: its example values may be read.
  if (!is_traced(t) || created_.count(t.trace_value)) return Status::ok();
  return Status::trace(TraceErrorKind::DataDependent,
                       msg(where(call), ": reads the values of a traced tensor; a traced graph cannot depend on data read by user code. "
                           "Express the computation with tensor operators, or read values after Tracer::finish"));
}

Status TraceState::on_user_write(const detail::TensorImpl& t, const char* call) {
  if (!is_traced(t)) return Status::ok();
  if (created_.count(t.trace_value))
    return Status::trace(TraceErrorKind::InPlaceMutation,
                         msg(where(call), ": writes into a tensor created with a symbolic axis' size (recorded from the run-time size, "
                             "docs/tracing.md); in-place writes cannot follow that size. Build it with operators (arange, add, mul, "
                             "relu) instead"));
  return Status::trace(TraceErrorKind::InPlaceMutation,
                       msg(where(call), ": writes into a traced tensor; in-place mutation cannot be recorded. Compute a new tensor instead"));
}

Status TraceState::on_no_grad() {
  return Status::trace(TraceErrorKind::NoGradInTrace,
                       msg(where("om::NoGradGuard"), ": grad mode cannot be disabled while tracing; results computed inside would not be "
                           "recorded and would be frozen into the graph as constants. Remove the guard from the traced code"));
}

void TraceState::on_alias(const detail::TensorImpl& source, detail::TensorImpl& alias) {
  if (!is_traced(source)) return;
  alias.trace_id = id_;
  alias.trace_value = source.trace_value;
}

Status TraceState::on_record(const BackwardRecord& rec, detail::TensorImpl& output) {
  bool traced = false;
  for (const Tensor& t : rec.inputs) traced = traced || (t.defined() && is_traced(*t.impl()));
  // Constants in, constant out: it runs eagerly, no node — except an expand to a symbol's size.
  if (!traced) return rec.op == OpId::Expand ? expand_constant(rec, output) : Status::ok();
  if (rec.op == OpId::Dropout)  // the usual cause: a model still in training mode
    return Status::trace(TraceErrorKind::UnsupportedOperation,
                         msg(where(op_name(rec.op)), ": dropout in training mode is not traceable (its mask is random); call eval() on the "
                             "model before tracing — in eval mode Dropout passes values through, as the exported graph does"));
  if (!op_traceable(rec.op))
    return Status::trace(TraceErrorKind::UnsupportedOperation,
                         msg(where(op_name(rec.op)), ": is not traceable (training-only operators have no ONNX equivalent in the "
                             "inference graph); keep it out of the traced code"));
  std::vector<ValueId> ins;
  ins.reserve(rec.inputs.size());
  for (const Tensor& t : rec.inputs) {
    OM_ASSIGN_OR_RETURN(ValueId v, value_of(t));
    ins.push_back(v);
  }
  OM_ASSIGN_OR_RETURN(ValueId out, lower(*this, rec, ins));
  if (rec.op == OpId::Reshape || rec.op == OpId::Expand) note_sizes(rec);
  output.trace_id = id_;
  output.trace_value = out;
  return Status::ok();
}

// ---- values ----

Result<ValueId> TraceState::new_value(const Value& v) {
  const size_t id = values_.size();
  if (!values_.push(v)) return arena_full();
  return ValueId(id);
}

Status TraceState::set_sym(Value& v, const Shape& shape, const SymShape& sym) {
  v.shape = copy_span<int64_t>(arena_, shape);
  v.sym.data = arena_.array<SymDim>(sym.size());
  v.sym.size = uint32_t(sym.size());
  for (size_t k = 0; k < sym.size(); ++k) {
    v.sym[k].coef = sym[k].coef;
    v.sym[k].atoms = copy_span<uint32_t>(arena_, sym[k].atoms);
  }
  if (arena_.exhausted()) return arena_full();
  return Status::ok();
}

SymShape TraceState::sym_of(ValueId id) {
  const Value& v = values_[id];
  SymShape s(v.sym.size);
  for (uint32_t k = 0; k < v.sym.size; ++k) {
    s[k].coef = v.sym[k].coef;
    s[k].atoms.assign(v.sym[k].atoms.begin(), v.sym[k].atoms.end());
  }
  return s;
}

Shape TraceState::shape_of(ValueId id) {
  const Value& v = values_[id];
  return Shape(v.shape.begin(), v.shape.end());
}

Result<ValueId> TraceState::emit(const char* op_type, const std::vector<ValueId>& inputs, const std::vector<AttrSpec>& attrs, DType dtype,
                                 const Shape& shape, const SymShape& sym) {
  Value v;
  v.kind = ValueKind::Node;
  v.dtype = dtype;
  v.node = int32_t(nodes_.size());
  OM_TRY(set_sym(v, shape, sym));
  OM_ASSIGN_OR_RETURN(ValueId out, new_value(v));
  Node n;
  n.op_type = op_type;
  n.inputs = copy_span<ValueId>(arena_, inputs);
  n.outputs = copy_span<ValueId>(arena_, std::vector<ValueId>{out});
  n.attrs.data = arena_.array<Attr>(attrs.size());
  n.attrs.size = uint32_t(attrs.size());
  for (size_t k = 0; k < attrs.size(); ++k) {
    Attr& a = n.attrs[k];
    a.name = arena_.string(attrs[k].name);
    a.type = attrs[k].type;
    a.i = attrs[k].i;
    a.f = attrs[k].f;
    a.s = arena_.string(attrs[k].s);
    a.ints = copy_span<int64_t>(arena_, attrs[k].ints);
  }
  if (arena_.exhausted() || !nodes_.push(n)) return arena_full();
  return out;
}

Result<ValueId> TraceState::add_output(ValueId first, DType dtype, const Shape& shape, const SymShape& sym) {
  Value v;
  v.kind = ValueKind::Node;
  v.dtype = dtype;
  v.node = values_[first].node;
  OM_TRY(set_sym(v, shape, sym));
  OM_ASSIGN_OR_RETURN(ValueId out, new_value(v));
  Node& n = nodes_[size_t(v.node)];
  std::vector<ValueId> outs(n.outputs.data, n.outputs.data + n.outputs.size);
  outs.push_back(out);
  n.outputs = copy_span<ValueId>(arena_, outs);
  if (arena_.exhausted()) return arena_full();
  return out;
}

// emit_multi: the first output by emit, the others added to the same node.
Result<std::vector<ValueId>> TraceState::emit_multi(const char* op_type, const std::vector<ValueId>& inputs,
                                                     const std::vector<AttrSpec>& attrs, const std::vector<OutSpec>& outs) {
  if (outs.empty()) return Status::error(ErrorKind::Internal, "emit_multi: no outputs");
  OM_ASSIGN_OR_RETURN(ValueId first, emit(op_type, inputs, attrs, outs[0].dtype, outs[0].shape, outs[0].sym));
  std::vector<ValueId> ids = {first};
  for (size_t k = 1; k < outs.size(); ++k) {
    OM_ASSIGN_OR_RETURN(ValueId id, add_output(first, outs[k].dtype, outs[k].shape, outs[k].sym));
    ids.push_back(id);
  }
  return ids;
}

Result<ValueId> TraceState::value_of(const Tensor& t) {
  if (is_traced(*t.impl())) return ValueId(t.impl()->trace_value);
  return capture_constant(t);
}

std::string TraceState::constant_name(const Tensor& t) {
  const detail::TensorImpl& i = *t.impl();
  for (NamedParameter& p : parameters_)
    if (p.storage == i.storage.get() && p.offset == i.offset && p.shape == i.shape && p.strides == i.strides) return p.name;
  for (NamedParameter& p : parameters_) {
    if (p.storage != i.storage.get()) continue;
    ++p.views;
    return p.views == 1 ? p.name + ".view_" : msg(p.name, ".view_", p.views);
  }
  return {};
}

Result<ValueId> TraceState::capture_constant(const Tensor& t) {
  const detail::TensorImpl& i = *t.impl();
  auto key = std::make_tuple(static_cast<const void*>(i.storage.get()), i.offset, i.shape, i.strides);
  auto it = constant_index_.find(key);
  if (it != constant_index_.end()) return it->second;
  OM_TRY(detail::check_live(t, "om::Tracer (capturing a constant)"));
  const int64_t bytes = t.numel() * int64_t(dtype_size(t.dtype()));
  if (bytes > kMaxConstantBytes)
    return Status::trace(TraceErrorKind::UnsupportedOperation,
                         msg("om::Tracer: constant ", t.to_string(), " holds ", bytes, " bytes; constants over 2 GiB cannot be written to ONNX. "
                             "Feed it as an input instead"));
  // A contiguous copy of the logical elements as they are now.
  std::vector<uint8_t> copy(static_cast<size_t>(bytes));
  {
    Tensor dst = detail::make_view(t, t.shape(), contiguous_strides(t.shape()), 0);
    auto holder = std::make_shared<detail::StorageImpl>();
    holder->data = copy.data();
    holder->nbytes = copy.size();
    dst.impl()->storage = holder;
    OM_TRY(detail::copy_elements(t, dst));
  }
  ConstantRecord c;
  c.name = constant_name(t);
  c.storage = i.storage;
  c.version = i.storage->version.load();
  c.data = graph::TensorData::copy_of("", t.dtype(), t.shape(), copy.data(), copy.size());
  Value v;
  v.kind = ValueKind::Constant;
  v.dtype = t.dtype();
  v.index = uint32_t(constants_.size());
  SymShape sym;
  for (int64_t d : t.shape()) sym.push_back(Extent::fixed(d));
  OM_TRY(set_sym(v, t.shape(), sym));
  OM_ASSIGN_OR_RETURN(ValueId id, new_value(v));
  c.value = id;
  constants_.push_back(std::move(c));
  constant_index_.emplace(key, id);
  return id;
}

Result<ValueId> TraceState::const_i64(const std::vector<int64_t>& v, bool scalar) {
  Tensor t = unwrap(detail::make_tensor(scalar ? Shape{} : Shape{int64_t(v.size())}, DType::i64));
  if (!v.empty()) std::memcpy(detail::raw(t), v.data(), v.size() * sizeof(int64_t));
  return capture_constant(t);
}

// ---- atoms and shape operands ----

uint32_t TraceState::new_atom(const std::string& name, int64_t example, ValueId source, uint32_t axis) {
  const uint32_t id = uint32_t(atoms_.size());
  atoms_.push(Atom{arena_.string(name), example, source, axis});
  return id;
}

bool TraceState::atom_with_size(int64_t n, uint32_t* atom) {
  int found = 0;
  atoms_.for_each([&](size_t i, Atom& a) {
    if (a.example == n) {
      *atom = uint32_t(i);
      ++found;
    }
  });
  return found == 1;
}

bool TraceState::extent_with_size(int64_t n, Extent* out) {
  uint32_t atom;
  if (n <= 1) return false;
  if (atom_with_size(n, &atom)) {
    *out = Extent::atom(atom);
    return true;
  }
  int found = 0;
  const size_t count = atoms_.size();
  for (size_t i = 0; i < count && found < 2; ++i)
    for (size_t j = i + 1; j < count && found < 2; ++j) {
      const int64_t a = atoms_[uint32_t(i)].example, b = atoms_[uint32_t(j)].example;
      if (a > 1 && b > 1 && a <= n / b && a * b == n) {
        *out = Extent{1, {uint32_t(i), uint32_t(j)}};
        ++found;
      }
    }
  return found == 1;
}

Result<ValueId> TraceState::atom_extent(uint32_t atom) {
  const Atom& a = atoms_[atom];
  auto key = std::make_pair(a.source, a.axis);
  auto it = extent_cache_.find(key);
  if (it != extent_cache_.end()) return it->second;
  OM_ASSIGN_OR_RETURN(ValueId v, emit("Shape", {a.source}, {AttrSpec::of_int("start", a.axis), AttrSpec::of_int("end", a.axis + 1)}, DType::i64,
                                      {1}, {Extent::fixed(1)}));
  extent_cache_.emplace(key, v);
  return v;
}

Result<ValueId> TraceState::shape_operand(const SymShape& ext, bool allow_minus_one) {
  const AtomSize size = atom_sizer();
  std::vector<int64_t> values;
  size_t symbolic = 0, where_sym = 0;
  for (size_t k = 0; k < ext.size(); ++k) {
    values.push_back(extent_value(ext[k], size));
    if (!ext[k].is_static()) {
      ++symbolic;
      where_sym = k;
    }
  }
  if (symbolic == 0) return const_i64(values);
  if (symbolic == 1 && allow_minus_one) {
    values[where_sym] = -1;
    return const_i64(values);
  }
  // Shape(source, start, end) chains, multiplied, concatenated with the static runs.
  std::vector<ValueId> parts;
  std::vector<int64_t> run;
  auto flush = [&]() -> Status {
    if (run.empty()) return Status::ok();
    OM_ASSIGN_OR_RETURN(ValueId c, const_i64(run));
    parts.push_back(c);
    run.clear();
    return Status::ok();
  };
  for (const Extent& e : ext) {
    if (e.is_static()) {
      run.push_back(e.coef);
      continue;
    }
    OM_TRY(flush());
    ValueId acc = 0;
    bool have = false;
    for (uint32_t a : e.atoms) {
      OM_ASSIGN_OR_RETURN(ValueId x, atom_extent(a));
      if (!have) {
        acc = x;
        have = true;
      } else {
        OM_ASSIGN_OR_RETURN(acc, emit("Mul", {acc, x}, {}, DType::i64, {1}, {Extent::fixed(1)}));
      }
    }
    if (e.coef != 1) {
      OM_ASSIGN_OR_RETURN(ValueId c, const_i64({e.coef}));
      OM_ASSIGN_OR_RETURN(acc, emit("Mul", {acc, c}, {}, DType::i64, {1}, {Extent::fixed(1)}));
    }
    parts.push_back(acc);
  }
  OM_TRY(flush());
  if (parts.size() == 1) return parts[0];
  return emit("Concat", parts, {AttrSpec::of_int("axis", 0)}, DType::i64, {int64_t(ext.size())}, {Extent::fixed(int64_t(ext.size()))});
}

// ---- verification ----

// A reshape or expand given a size equal to a symbol's example size: the first such call per
// symbol is what verification names when the re-run disagrees (the user may have read the size
// from a shape, or written a fixed size the tracer took for the symbol).
void TraceState::note_sizes(const BackwardRecord& rec) {
  atoms_.for_each([&](size_t, Atom& a) {
    if (std::string(a.name).rfind("concat_", 0) == 0 || suspects_.count(a.name)) return;
    for (int64_t d : rec.output_shape)
      if (d == a.example) {
        suspects_[a.name] = msg(where(op_name(rec.op)), " to ", shape_str(rec.output_shape), " was given the size ", d);
        return;
      }
  });
}

VerifyPlan TraceState::verify_plan() {
  VerifyPlan plan;
  plan.inputs = verify_inputs_;
  plan.suspects = suspects_;
  values_.for_each([&](size_t, Value& v) {
    for (uint32_t k = 0; k < v.shape.size; ++k)
      if (v.sym[k].atoms.size == 0) plan.static_sizes.insert(v.shape[k]);
  });
  return plan;
}

// ---- inputs and parameters ----

Result<Tensor> TraceState::add_input(const std::string& name, const Tensor& example, const std::vector<std::string>& axis_names) {
  const char* call = "om::Tracer::input";
  OM_TRY(detail::check_live(example, call));
  if (name.empty()) return Status::trace(TraceErrorKind::InvalidUsage, msg(call, ": an input needs a name"));
  if (std::find(names_.begin(), names_.end(), name) != names_.end())
    return Status::trace(TraceErrorKind::InvalidUsage, msg(call, ": the name '", name, "' is used twice; every input, parameter and output needs its own"));
  if (!axis_names.empty() && int64_t(axis_names.size()) != example.dim())
    return Status::trace(TraceErrorKind::InvalidUsage, msg(call, ": input '", name, "' ", example.to_string(), " has ", example.dim(), " axes but ",
                                                          axis_names.size(), " axis names were given (use \"\" for a static axis)"));
  if (is_traced(*example.impl()) && !created_.count(example.impl()->trace_value))
    return Status::trace(TraceErrorKind::InvalidUsage, msg(call, ": the example for '", name, "' is already a traced value"));
  names_.push_back(name);
  Tensor x = detail::make_view(example, example.shape(), example.strides(), example.storage_offset());
  Value v;
  v.kind = ValueKind::Input;
  v.dtype = example.dtype();
  v.index = uint32_t(inputs_.size());
  OM_ASSIGN_OR_RETURN(ValueId id, new_value(v));
  SymShape sym;
  for (int64_t k = 0; k < example.dim(); ++k) {
    const int64_t size = example.shape()[size_t(k)];
    const std::string axis = axis_names.empty() ? std::string() : axis_names[size_t(k)];
    if (axis.empty()) {
      sym.push_back(Extent::fixed(size));
      continue;
    }
    if (size < 2)
      return Status::trace(TraceErrorKind::InvalidUsage, msg(call, ": symbolic axis '", axis, "' of input '", name, "' has example size ", size,
                                                            "; trace with a size of at least 2 so it can be told apart from broadcasting"));
    bool existing = false;
    uint32_t atom_id = 0;
    Status clash;
    atoms_.for_each([&](size_t i, Atom& a) {
      if (axis == a.name) {
        existing = true;
        atom_id = uint32_t(i);
        if (a.example != size)
          clash = Status::trace(TraceErrorKind::InvalidUsage, msg(call, ": symbolic axis '", axis, "' has example size ", size, " here but ", a.example,
                                                                 " elsewhere; one name means one size"));
      } else if (a.example == size && clash.is_ok()) {
        clash = Status::trace(TraceErrorKind::InvalidUsage, msg(call, ": symbolic axes '", axis, "' and '", a.name, "' both have example size ", size,
                                                               "; give symbolic axes distinct example sizes so the tracer can tell them apart"));
      }
    });
    OM_TRY(clash);
    if (!existing) atom_id = new_atom(axis, size, id, uint32_t(k));
    sym.push_back(Extent::atom(atom_id));
  }
  OM_TRY(set_sym(values_[id], example.shape(), sym));
  inputs_.push_back({name, id});
  verify_inputs_.push_back({name, example, axis_names});
  x.impl()->trace_id = id_;
  x.impl()->trace_value = id;
  return x;
}

Status TraceState::add_parameter(const std::string& name, const Tensor& t) {
  const char* call = "om::Tracer::parameter";
  if (!t.defined()) return Status::trace(TraceErrorKind::InvalidUsage, msg(call, ": '", name, "' is an undefined tensor"));
  if (std::find(names_.begin(), names_.end(), name) != names_.end())
    return Status::trace(TraceErrorKind::InvalidUsage, msg(call, ": the name '", name, "' is used twice; every input, parameter and output needs its own"));
  names_.push_back(name);
  const detail::TensorImpl& i = *t.impl();
  parameters_.push_back({name, i.storage.get(), i.offset, i.shape, i.strides, 0});
  return Status::ok();
}

}  // namespace om::trace

namespace om {

Tracer::Tracer(std::unique_ptr<trace::TraceState> state) : state_(std::move(state)) {}
Tracer::Tracer(Tracer&&) noexcept = default;
Tracer& Tracer::operator=(Tracer&& o) noexcept {
  state_ = std::move(o.state_);
  return *this;
}
Tracer::~Tracer() = default;  // TraceState's destructor uninstalls the hook

Tracer Tracer::begin(const TracerOptions& options) {
  if (detail::trace_hook())
    raise(Status::trace(TraceErrorKind::InvalidUsage, "om::Tracer::begin: a trace is already recording on this thread; "
                                                      "finish it (or let its Tracer go out of scope) before beginning another"));
  auto state = std::make_unique<trace::TraceState>(options);
  if (state->arena().capacity() == 0)
    raise(Status::error(ErrorKind::OutOfMemory, msg("om::Tracer::begin: cannot reserve the trace arena of ", options.arena_bytes, " bytes")));
  detail::set_trace_hook(state.get());
  return Tracer(std::move(state));
}

Tensor Tracer::input(const std::string& name, const Tensor& example, const std::vector<std::string>& axis_names) {
  if (!state_) raise(Status::trace(TraceErrorKind::InvalidUsage, "om::Tracer::input: the tracer has finished (or was moved from)"));
  return unwrap(state_->add_input(name, example, axis_names));
}

void Tracer::parameter(const std::string& name, const Tensor& tensor) {
  auto* state = dynamic_cast<trace::TraceState*>(detail::trace_hook());
  if (!state) return;  // no trace on this thread: nothing to name (docs/tracing.md, "Constants")
  check(state->add_parameter(name, tensor));
}

TracedModel Tracer::end_recording(const std::vector<std::pair<std::string, Tensor>>& outputs,
                                  std::unique_ptr<trace::TraceState>* ended) {
  if (!state_) raise(Status::trace(TraceErrorKind::InvalidUsage, "om::Tracer::finish: the tracer has finished (or was moved from)"));
  // The recording ends whatever happens: a failed finish abandons the trace.
  *ended = std::move(state_);
  detail::set_trace_hook(nullptr);
  return TracedModel(unwrap((*ended)->finish(outputs)));
}

TracedModel Tracer::finish(const std::vector<std::pair<std::string, Tensor>>& outputs) {
  std::unique_ptr<trace::TraceState> ended;
  return end_recording(outputs, &ended);
}

}  // namespace om
