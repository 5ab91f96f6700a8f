#include "onemodel/trace/lowering.h"

#include <algorithm>
#include <climits>
#include <cmath>

#include "onemodel/core/tensor_internal.h"
#include "onemodel/trace/state.h"

namespace om::trace {
namespace lowering_impl {

struct Ctx {
  TraceState& s;
  const BackwardRecord& rec;
  const std::vector<ValueId>& in;
  const char* call() const { return op_name(rec.op); }
  Result<ValueId> emit(const char* op, const std::vector<ValueId>& inputs, const std::vector<AttrSpec>& attrs, const SymShape& sym) {
    return s.emit(op, inputs, attrs, rec.output_dtype, rec.output_shape, sym);
  }
};

template <OpId op>
struct Lowering {
  static constexpr bool available = false;
  static Result<ValueId> run(Ctx& c) {
    return Status::trace(TraceErrorKind::UnsupportedOperation,
                         msg(c.s.where(c.call()), ": has no ONNX lowering yet; it cannot be traced"));
  }
};

#define OM_LOWER(op) \
  template <>        \
  struct Lowering<OpId::op> { static constexpr bool available = true; static Result<ValueId> run(Ctx& c); }; \
  Result<ValueId> Lowering<OpId::op>::run(Ctx& c)

namespace {
// numpy broadcasting of extents; where a static size meets a symbolic one of equal example size
// the symbolic one wins (it is the one that varies).
SymShape broadcast_sym(const SymShape& a, const SymShape& b) {
  const size_t r = std::max(a.size(), b.size());
  SymShape out(r);
  for (size_t k = 0; k < r; ++k) {
    const Extent* ea = k < r - a.size() ? nullptr : &a[k - (r - a.size())];
    const Extent* eb = k < r - b.size() ? nullptr : &b[k - (r - b.size())];
    if (!ea) { out[k] = *eb; continue; }
    if (!eb) { out[k] = *ea; continue; }
    if (ea->is_static() && ea->coef == 1) out[k] = *eb;
    else if (eb->is_static() && eb->coef == 1) out[k] = *ea;
    else out[k] = ea->is_static() ? *eb : *ea;
  }
  return out;
}

Result<ValueId> elementwise(Ctx& c, const char* op) {
  return c.emit(op, c.in, {}, broadcast_sym(c.s.sym_of(c.in[0]), c.s.sym_of(c.in[1])));
}
Result<ValueId> unary(Ctx& c, const char* op) { return c.emit(op, c.in, {}, c.s.sym_of(c.in[0])); }

// A Reshape to `target` (or an alias when nothing changes).
Result<ValueId> reshape_to(Ctx& c, const SymShape& ext) {
  if (c.s.shape_of(c.in[0]) == c.rec.output_shape) return c.in[0];
  OM_ASSIGN_OR_RETURN(ValueId shape, c.s.shape_operand(ext, true));
  return c.emit("Reshape", {c.in[0], shape}, {}, ext);
}
// The name of an atom derived from `in` by out = floor((n + offset) / stride), when `in` is one
// atom: "h-2", "h+1", "h/2" (floor division, offset 0); otherwise the internal name `fallback`.
std::string derived_name(Ctx& c, const Extent& in, int64_t offset, int64_t stride, const std::string& fallback) {
  if (in.atoms.size() != 1 || in.coef != 1) return fallback;
  const std::string n = c.s.atom_name(in.atoms[0]);
  const std::string base = n.find_first_of("+-*/") == std::string::npos ? n : "(" + n + ")";
  if (stride == 1) {
    // "h+4" then "-4" gives "h" again: a trailing constant term is folded in.
    std::string root = n;
    int64_t total = offset;
    const size_t pos = n.find_last_of("+-");
    if (pos != std::string::npos && pos > 0 && n.find_first_of("*/()") == std::string::npos &&
        n.find_first_not_of("0123456789", pos + 1) == std::string::npos && pos + 1 < n.size()) {
      root = n.substr(0, pos);
      total += (n[pos] == '+' ? 1 : -1) * std::stoll(n.substr(pos + 1));
    }
    const std::string rb = root.find_first_of("+-*/") == std::string::npos ? root : "(" + root + ")";
    return total == 0 ? root : msg(rb, total > 0 ? "+" : "-", total > 0 ? total : -total);
  }
  if (offset == 0) return msg(base, "/", stride);
  return fallback;
}
}  // namespace

OM_LOWER(Add) { return elementwise(c, "Add"); }
OM_LOWER(Sub) { return elementwise(c, "Sub"); }
OM_LOWER(Mul) { return elementwise(c, "Mul"); }
OM_LOWER(Div) { return elementwise(c, "Div"); }
OM_LOWER(Neg) { return unary(c, "Neg"); }
OM_LOWER(Relu) { return unary(c, "Relu"); }
OM_LOWER(Sigmoid) { return unary(c, "Sigmoid"); }
OM_LOWER(Tanh) { return unary(c, "Tanh"); }
OM_LOWER(Gelu) {
  return c.emit("Gelu", c.in, {AttrSpec::of_string("approximate", c.rec.attrs_of<OpId::Gelu>().tanh ? "tanh" : "none")}, c.s.sym_of(c.in[0]));
}

OM_LOWER(MatMul) {
  SymShape a = c.s.sym_of(c.in[0]), b = c.s.sym_of(c.in[1]);
  const bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), Extent::fixed(1));
  if (b1) b.push_back(Extent::fixed(1));
  SymShape ba(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  SymShape out = broadcast_sym(ba, bb);
  if (!a1) out.push_back(a[a.size() - 2]);
  if (!b1) out.push_back(b.back());
  return c.emit("MatMul", c.in, {}, out);
}

namespace {
Result<ValueId> reduce(Ctx& c, const char* op) {
  const ReduceAttrs& a = c.rec.attrs_as<ReduceAttrs>();
  const bool all = a.all;
  SymShape sym = c.s.sym_of(c.in[0]);
  if (all) return c.emit(op, {c.in[0]}, {AttrSpec::of_int("keepdims", 0)}, {});
  const int64_t axis = a.axis;
  const bool keep = a.keepdim;
  if (keep) sym[size_t(axis)] = Extent::fixed(1);
  else sym.erase(sym.begin() + axis);
  OM_ASSIGN_OR_RETURN(ValueId axes, c.s.const_i64({axis}));
  return c.emit(op, {c.in[0], axes}, {AttrSpec::of_int("keepdims", keep ? 1 : 0)}, sym);
}

// Softmax over the last axis; other axes arrive as a Transpose around it.
Result<ValueId> softmax(Ctx& c, const char* op) {
  const SymShape sym = c.s.sym_of(c.in[0]);
  const int64_t rank = int64_t(sym.size());
  const int64_t axis = c.rec.attrs_as<SoftmaxAttrs>().axis;
  if (axis == rank - 1) return c.emit(op, c.in, {AttrSpec::of_int("axis", -1)}, sym);
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  for (int64_t k = 0; k < rank; ++k) perm[size_t(k)] = k;
  std::swap(perm[size_t(axis)], perm[size_t(rank - 1)]);
  SymShape tsym = sym;
  std::swap(tsym[size_t(axis)], tsym[size_t(rank - 1)]);
  Shape tshape = c.rec.output_shape;
  std::swap(tshape[size_t(axis)], tshape[size_t(rank - 1)]);
  OM_ASSIGN_OR_RETURN(ValueId t, c.s.emit("Transpose", c.in, {AttrSpec::of_ints("perm", perm)}, c.rec.output_dtype, tshape, tsym));
  OM_ASSIGN_OR_RETURN(ValueId y, c.s.emit(op, {t}, {AttrSpec::of_int("axis", -1)}, c.rec.output_dtype, tshape, tsym));
  return c.emit("Transpose", {y}, {AttrSpec::of_ints("perm", perm)}, sym);
}
}  // namespace

OM_LOWER(Sum) { return reduce(c, "ReduceSum"); }
OM_LOWER(Mean) { return reduce(c, "ReduceMean"); }
OM_LOWER(Softmax) { return softmax(c, "Softmax"); }
OM_LOWER(LogSoftmax) { return softmax(c, "LogSoftmax"); }

OM_LOWER(Concat) {
  const int64_t axis = c.rec.attrs_of<OpId::Concat>().axis;
  SymShape out = c.s.sym_of(c.in[0]);
  Extent total = Extent::fixed(0);
  bool same_atoms = true, symbolic = false;
  for (size_t i = 0; i < c.in.size(); ++i) {
    const Extent e = c.s.sym_of(c.in[i])[size_t(axis)];
    symbolic = symbolic || !e.is_static();
    if (i == 0) total = e;
    else if (e.atoms == total.atoms) total.coef += e.coef;
    else same_atoms = false;
  }
  if (!symbolic || same_atoms) {
    out[size_t(axis)] = total;
    return c.emit("Concat", c.in, {AttrSpec::of_int("axis", axis)}, out);
  }
  // A sum of different symbolic extents: a new atom held by the output.
  out[size_t(axis)] = Extent::fixed(c.rec.output_shape[size_t(axis)]);
  OM_ASSIGN_OR_RETURN(ValueId y, c.emit("Concat", c.in, {AttrSpec::of_int("axis", axis)}, out));
  const uint32_t atom = c.s.new_atom(msg("concat_", y, "_", axis), c.rec.output_shape[size_t(axis)], y, uint32_t(axis));
  out[size_t(axis)] = Extent::atom(atom);
  OM_TRY(c.s.update_sym(y, out));
  return y;
}

OM_LOWER(Reshape) {
  OM_ASSIGN_OR_RETURN(SymShape ext, reshape_extents(c.s.sym_of(c.in[0]), c.rec.output_shape, c.s.atom_sizer(), c.s.where(c.call())));
  return reshape_to(c, ext);
}

// Squeeze and Unsqueeze write ONNX's own nodes (axes as a constant): unlike a Reshape they need
// no shape operand, so no Shape / Concat chain when several axes are symbolic.
OM_LOWER(Squeeze) {
  const SymShape in = c.s.sym_of(c.in[0]);
  const Shape shape = c.s.shape_of(c.in[0]);
  const int64_t d = c.rec.attrs_of<OpId::Squeeze>().dim;
  SymShape ext;
  std::vector<int64_t> axes;
  for (size_t k = 0; k < in.size(); ++k) {
    if (shape[k] == 1 && (d < 0 || int64_t(k) == d)) axes.push_back(int64_t(k));
    else ext.push_back(in[k]);
  }
  if (axes.empty()) return c.in[0];
  // Squeezing what an Unsqueeze added gives its input back (the 1-D layers, which run the 2-D
  // operators on a height-1 view; their Conv and pools are written 1-D, see below).
  if (const Node* p = c.s.producer(c.in[0]); p && std::string(p->op_type) == "Unsqueeze" && c.s.shape_of(p->inputs[0]) == c.rec.output_shape)
    return p->inputs[0];
  OM_ASSIGN_OR_RETURN(ValueId ax, c.s.const_i64(axes));
  return c.emit("Squeeze", {c.in[0], ax}, {}, ext);
}

OM_LOWER(Unsqueeze) {
  SymShape ext = c.s.sym_of(c.in[0]);
  const int64_t d = c.rec.attrs_of<OpId::Unsqueeze>().dim;
  ext.insert(ext.begin() + d, Extent::fixed(1));
  OM_ASSIGN_OR_RETURN(ValueId ax, c.s.const_i64({d}));
  return c.emit("Unsqueeze", {c.in[0], ax}, {}, ext);
}

OM_LOWER(Permute) {
  const SymShape in = c.s.sym_of(c.in[0]);
  SymShape out;
  const std::vector<int64_t>& perm = c.rec.attrs_of<OpId::Permute>().perm;
  for (int64_t p : perm) out.push_back(in[size_t(p)]);
  return c.emit("Transpose", c.in, {AttrSpec::of_ints("perm", perm)}, out);
}

OM_LOWER(Expand) {
  const SymShape in = c.s.sym_of(c.in[0]);
  const Shape& target = c.rec.output_shape;
  if (c.s.shape_of(c.in[0]) == target) return c.in[0];
  const size_t lead = target.size() - in.size();
  SymShape out(target.size()), operand(target.size());
  for (size_t k = 0; k < target.size(); ++k) {
    const bool from_input = k >= lead && !(in[k - lead].is_static() && in[k - lead].coef == 1);
    if (from_input) {
      out[k] = in[k - lead];
      operand[k] = Extent::fixed(1);  // broadcasting keeps the input's extent
      continue;
    }
    Extent e;
    out[k] = c.s.extent_with_size(target[k], &e) ? e : Extent::fixed(target[k]);
    operand[k] = out[k];
  }
  OM_ASSIGN_OR_RETURN(ValueId shape, c.s.shape_operand(operand, false));
  return c.emit("Expand", {c.in[0], shape}, {}, out);
}

OM_LOWER(Slice) {
  const SliceAttrs& a = c.rec.attrs_of<OpId::Slice>();
  const int64_t d = a.dim, step = a.step;
  SymShape sym = c.s.sym_of(c.in[0]);
  const int64_t size = c.s.shape_of(c.in[0])[size_t(d)];
  if (a.start == 0 && a.end == size && step == 1) return c.in[0];  // full range: an alias
  int64_t start = a.start, end = a.end;
  const int64_t out_len = c.rec.output_shape[size_t(d)];
  if (sym[size_t(d)].is_static()) {
    sym[size_t(d)] = Extent::fixed(out_len);
  } else {
    // A symbolic axis keeps the bounds as written when they hold at every size: the start from
    // the beginning or from the end, the end from the end (negative) or "to the end" (at or past
    // the size, INT64_MAX). An end at a fixed position inside the axis cannot follow it.
    const int64_t gs = a.start_as_given, ge = a.end_as_given;
    const bool end_from_end = ge < 0, to_end = ge >= size;
    if ((!end_from_end && !to_end) || gs >= size) {
      auto bound = [](int64_t v) { return v == INT64_MAX ? std::string("INT64_MAX") : std::to_string(v); };
      return Status::trace(TraceErrorKind::SymbolicShape,
                           msg(c.s.where(c.call()), ": the slice [", bound(gs), ":", bound(ge), ":", step, "] of symbolic axis ", d,
                               " (example size ", size, ") ends at a fixed position, which cannot be expressed for other sizes; "
                               "count the end from the end (a negative end, or INT64_MAX for \"to the end\"), or slice a static axis"));
    }
    start = gs;
    end = to_end ? INT64_MAX : ge;
    // Both bounds from the end: a fixed length; a start from the beginning: a new atom below.
    sym[size_t(d)] = Extent::fixed(out_len);
  }
  OM_ASSIGN_OR_RETURN(ValueId s0, c.s.const_i64({start}));
  OM_ASSIGN_OR_RETURN(ValueId e0, c.s.const_i64({end}));
  OM_ASSIGN_OR_RETURN(ValueId ax, c.s.const_i64({d}));
  OM_ASSIGN_OR_RETURN(ValueId st, c.s.const_i64({step}));
  OM_ASSIGN_OR_RETURN(ValueId y, c.emit("Slice", {c.in[0], s0, e0, ax, st}, {}, sym));
  if (!c.s.sym_of(c.in[0])[size_t(d)].is_static() && a.start_as_given >= 0) {
    // The length depends on the size: a new atom held by the output (as a strided convolution's).
    const std::string internal = msg("Slice_", y, "_", d);
    const int64_t cut = a.start_as_given + (a.end_as_given < 0 ? -a.end_as_given : 0);  // n - cut elements
    const std::string name = step == 1 ? derived_name(c, c.s.sym_of(c.in[0])[size_t(d)], -cut, 1, internal) : internal;
    sym[size_t(d)] = Extent::atom(c.s.new_atom(name, out_len, y, uint32_t(d)));
    OM_TRY(c.s.update_sym(y, sym));
  }
  return y;
}

OM_LOWER(Select) {
  const SelectAttrs& a = c.rec.attrs_of<OpId::Select>();
  const int64_t d = a.dim;
  SymShape sym = c.s.sym_of(c.in[0]);
  // On a symbolic axis a negative index keeps counting from the end at every size.
  const int64_t index = sym[size_t(d)].is_static() ? a.index : a.index_as_given;
  sym.erase(sym.begin() + d);
  OM_ASSIGN_OR_RETURN(ValueId idx, c.s.const_i64({index}, true));
  return c.emit("Gather", {c.in[0], idx}, {AttrSpec::of_int("axis", d)}, sym);
}

OM_LOWER(IndexSelect) {
  const int64_t d = c.rec.attrs_of<OpId::IndexSelect>().dim;
  SymShape sym = c.s.sym_of(c.in[0]);
  sym[size_t(d)] = c.s.sym_of(c.in[1])[0];
  return c.emit("Gather", {c.in[0], c.in[1]}, {AttrSpec::of_int("axis", d)}, sym);
}

OM_LOWER(Flip) {
  const int64_t d = c.rec.attrs_of<OpId::Flip>().dim;
  OM_ASSIGN_OR_RETURN(ValueId s0, c.s.const_i64({-1}));
  OM_ASSIGN_OR_RETURN(ValueId e0, c.s.const_i64({INT64_MIN}));
  OM_ASSIGN_OR_RETURN(ValueId ax, c.s.const_i64({d}));
  OM_ASSIGN_OR_RETURN(ValueId st, c.s.const_i64({-1}));
  return c.emit("Slice", {c.in[0], s0, e0, ax, st}, {}, c.s.sym_of(c.in[0]));
}

OM_LOWER(Cast) { return c.emit("Cast", c.in, {AttrSpec::of_int("to", int64_t(c.rec.attrs_of<OpId::Cast>().to))}, c.s.sym_of(c.in[0])); }
// Copies keep the identity of their source: no node.
OM_LOWER(Contiguous) { return c.in[0]; }
OM_LOWER(Clone) { return c.in[0]; }

#include "onemodel/trace/lowering_rnn.inc"
// ---- training: math, comparisons, selection ----
OM_LOWER(Exp) { return unary(c, "Exp"); }
OM_LOWER(Log) { return unary(c, "Log"); }
OM_LOWER(Sqrt) { return unary(c, "Sqrt"); }
OM_LOWER(Abs) { return unary(c, "Abs"); }
OM_LOWER(Pow) { return elementwise(c, "Pow"); }
OM_LOWER(Clamp) {
  // Clip with scalar f32 operands; an open side is +-infinity (the same result).
  const ClampAttrs& a = c.rec.attrs_of<OpId::Clamp>();
  OM_ASSIGN_OR_RETURN(ValueId lo, c.s.value_of(scalar_tensor(a.has_min ? a.min : -HUGE_VAL)));
  OM_ASSIGN_OR_RETURN(ValueId hi, c.s.value_of(scalar_tensor(a.has_max ? a.max : HUGE_VAL)));
  return c.emit("Clip", {c.in[0], lo, hi}, {}, c.s.sym_of(c.in[0]));
}
OM_LOWER(Eq) { return elementwise(c, "Equal"); }
OM_LOWER(Lt) { return elementwise(c, "Less"); }
OM_LOWER(Gt) { return elementwise(c, "Greater"); }
OM_LOWER(Where) {
  const SymShape ab = broadcast_sym(c.s.sym_of(c.in[1]), c.s.sym_of(c.in[2]));
  return c.emit("Where", c.in, {}, broadcast_sym(c.s.sym_of(c.in[0]), ab));
}
OM_LOWER(MaxReduce) { return reduce(c, "ReduceMax"); }
OM_LOWER(Ne) {
  OM_ASSIGN_OR_RETURN(ValueId eq, elementwise(c, "Equal"));
  return c.emit("Not", {eq}, {}, c.s.sym_of(eq));
}
OM_LOWER(Le) { return elementwise(c, "LessOrEqual"); }
OM_LOWER(Ge) { return elementwise(c, "GreaterOrEqual"); }
OM_LOWER(Maximum) { return elementwise(c, "Max"); }
OM_LOWER(Minimum) { return elementwise(c, "Min"); }
namespace {
// min = -max(-x), so the graph needs only ReduceMax (same values; NaN propagates either way).
Result<ValueId> min_reduce(Ctx& c) {
  const ReduceAttrs& a = c.rec.attrs_as<ReduceAttrs>();
  const Shape in_shape = c.s.shape_of(c.in[0]);
  OM_ASSIGN_OR_RETURN(ValueId neg, c.s.emit("Neg", {c.in[0]}, {}, DType::f32, in_shape, c.s.sym_of(c.in[0])));
  SymShape sym = c.s.sym_of(c.in[0]);
  std::vector<ValueId> ins = {neg};
  if (a.all) {
    sym.clear();
  } else {
    if (a.keepdim) sym[size_t(a.axis)] = Extent::fixed(1);
    else sym.erase(sym.begin() + a.axis);
    OM_ASSIGN_OR_RETURN(ValueId axes, c.s.const_i64({a.axis}));
    ins.push_back(axes);
  }
  OM_ASSIGN_OR_RETURN(ValueId m, c.emit("ReduceMax", ins, {AttrSpec::of_int("keepdims", !a.all && a.keepdim ? 1 : 0)}, sym));
  return c.emit("Neg", {m}, {}, sym);
}
// ArgMax / ArgMin: over the flattened tensor (a Reshape to [-1] first) or along an axis.
Result<ValueId> arg_extreme(Ctx& c, const char* op) {
  const ReduceAttrs& a = c.rec.attrs_as<ReduceAttrs>();
  if (a.all) {
    const Shape in_shape = c.s.shape_of(c.in[0]);
    const int64_t n = shape_numel(in_shape);
    OM_ASSIGN_OR_RETURN(ValueId shape, c.s.const_i64({-1}));
    OM_ASSIGN_OR_RETURN(ValueId flat, c.s.emit("Reshape", {c.in[0], shape}, {}, DType::f32, {n}, {Extent::fixed(n)}));
    return c.emit(op, {flat}, {AttrSpec::of_int("axis", 0), AttrSpec::of_int("keepdims", 0)}, {});
  }
  SymShape sym = c.s.sym_of(c.in[0]);
  if (a.keepdim) sym[size_t(a.axis)] = Extent::fixed(1);
  else sym.erase(sym.begin() + a.axis);
  return c.emit(op, c.in, {AttrSpec::of_int("axis", a.axis), AttrSpec::of_int("keepdims", a.keepdim ? 1 : 0)}, sym);
}
// TopK with both outputs; returns values or indices.
Result<ValueId> topk(Ctx& c, bool indices) {
  const TopKAttrs& a = c.rec.attrs_as<TopKAttrs>();
  SymShape sym = c.s.sym_of(c.in[0]);
  sym[size_t(a.axis)] = Extent::fixed(a.k);
  OM_ASSIGN_OR_RETURN(ValueId k, c.s.const_i64({a.k}));
  OM_ASSIGN_OR_RETURN(ValueId values, c.s.emit("TopK", {c.in[0], k}, {AttrSpec::of_int("axis", a.axis), AttrSpec::of_int("largest", a.largest ? 1 : 0),
                                                                          AttrSpec::of_int("sorted", 1)},
                                                DType::f32, c.rec.output_shape, sym));
  OM_ASSIGN_OR_RETURN(ValueId idx, c.s.add_output(values, DType::i64, c.rec.output_shape, sym));
  return indices ? idx : values;
}
}  // namespace
OM_LOWER(MinReduce) { return min_reduce(c); }
OM_LOWER(ArgMax) { return arg_extreme(c, "ArgMax"); }
OM_LOWER(ArgMin) { return arg_extreme(c, "ArgMin"); }
OM_LOWER(TopK) { return topk(c, false); }
OM_LOWER(TopKIndices) { return topk(c, true); }
#include "onemodel/trace/lowering_transformer.inc"
// ---- convolutional family (docs/tracing.md) ----
namespace {
// The output's extents for a spatial operator: batch carries over, channels are static, and a
// symbolic spatial extent becomes a new atom held by the output (or stays the same atom when the
// operator keeps the size for every input size: stride 1 and the pads making up the kernel).
struct SpatialSym {
  SymShape sym;
  bool new_atom[2] = {false, false};
};
SpatialSym spatial_sym(Ctx& c, const bool keeps[2]) {
  const SymShape in = c.s.sym_of(c.in[0]);
  SpatialSym out;
  out.sym = {in[0], Extent::fixed(c.rec.output_shape[1])};
  for (size_t k = 0; k < 2; ++k) {
    if (!in[2 + k].is_static() && keeps[k]) out.sym.push_back(in[2 + k]);
    else out.sym.push_back(Extent::fixed(c.rec.output_shape[2 + k]));
    out.new_atom[k] = !in[2 + k].is_static() && !keeps[k];
  }
  return out;
}
// `offset` / `stride` per spatial axis: out = floor((n + offset) / stride), for naming the new atoms
// (ConvTranspose passes stride 0: no simple name).
Result<ValueId> emit_spatial(Ctx& c, const char* op, const std::vector<ValueId>& inputs, const std::vector<AttrSpec>& attrs,
                             const bool keeps[2], const int64_t offset[2] = nullptr, const int64_t stride[2] = nullptr) {
  SpatialSym ss = spatial_sym(c, keeps);
  OM_ASSIGN_OR_RETURN(ValueId y, c.emit(op, inputs, attrs, ss.sym));
  if (!ss.new_atom[0] && !ss.new_atom[1]) return y;
  const SymShape in = c.s.sym_of(c.in[0]);
  for (size_t k = 0; k < 2; ++k)
    if (ss.new_atom[k]) {
      const std::string internal = msg(op, "_", y, "_", 2 + k);
      const std::string name = offset && stride && stride[k] > 0 ? derived_name(c, in[2 + k], offset[k], stride[k], internal) : internal;
      ss.sym[2 + k] = Extent::atom(c.s.new_atom(name, c.rec.output_shape[2 + k], y, uint32_t(2 + k)));
    }
  OM_TRY(c.s.update_sym(y, ss.sym));
  return y;
}
std::vector<int64_t> ints2(const std::array<int64_t, 2>& a) { return {a[0], a[1]}; }
std::vector<int64_t> ints4(const std::array<int64_t, 4>& a) { return {a[0], a[1], a[2], a[3]}; }
}  // namespace

namespace {
// The 3-D value a 4-D input was unsqueezed from on axis 2 ([N, C, L] -> [N, C, 1, L]: nn::Conv1d and
// the 1-D pools), or kNoValue. Such operators are written as 1-D ONNX nodes on it.
ValueId unsqueezed_1d(Ctx& c) {
  const Node* p = c.s.producer(c.in[0]);
  if (!p || std::string(p->op_type) != "Unsqueeze") return kNoValue;
  const Shape in = c.s.shape_of(p->inputs[0]), x = c.s.shape_of(c.in[0]);
  if (in.size() != 3 || x.size() != 4 || x[2] != 1 || x[0] != in[0] || x[1] != in[1] || x[3] != in[2]) return kNoValue;
  return p->inputs[0];
}

// A 1-D spatial node on `x3` for a height-1 2-D record: the width's extent as emit_spatial gives it,
// then an Unsqueeze back to the record's 4-D shape (which a following squeeze(2) skips).
Result<ValueId> emit_spatial_1d(Ctx& c, const char* op, ValueId x3, std::vector<ValueId> rest, const std::vector<AttrSpec>& attrs, bool keeps,
                                int64_t offset, int64_t stride) {
  const SymShape in = c.s.sym_of(x3);
  const Shape& o4 = c.rec.output_shape;
  const Shape o3{o4[0], o4[1], o4[3]};
  SymShape sym{in[0], Extent::fixed(o4[1]), !in[2].is_static() && keeps ? in[2] : Extent::fixed(o4[3])};
  rest.insert(rest.begin(), x3);
  OM_ASSIGN_OR_RETURN(ValueId y, c.s.emit(op, rest, attrs, c.rec.output_dtype, o3, sym));
  if (!in[2].is_static() && !keeps) {
    const std::string internal = msg(op, "_", y, "_", 2);
    const std::string name = stride > 0 ? derived_name(c, in[2], offset, stride, internal) : internal;
    sym[2] = Extent::atom(c.s.new_atom(name, o4[3], y, 2));
    OM_TRY(c.s.update_sym(y, sym));
  }
  OM_ASSIGN_OR_RETURN(ValueId ax, c.s.const_i64({2}));
  return c.emit("Unsqueeze", {y, ax}, {}, {sym[0], sym[1], Extent::fixed(1), sym[2]});
}
}  // namespace

OM_LOWER(Conv2d) {
  const Conv2dAttrs& a = c.rec.attrs_of<OpId::Conv2d>();
  const Shape w = c.rec.inputs[1].shape();
  bool keeps[2];
  int64_t offset[2], stride[2];
  for (size_t k = 0; k < 2; ++k) {
    keeps[k] = a.stride[k] == 1 && a.pads[k] + a.pads[2 + k] == (w[2 + k] - 1) * a.dilation[k];
    // out = floor((n + pads - dilation * (kernel - 1) - 1) / stride) + 1
    stride[k] = a.stride[k];
    offset[k] = a.pads[k] + a.pads[2 + k] - a.dilation[k] * (w[2 + k] - 1) - 1 + a.stride[k];
  }
  const ValueId x3 = unsqueezed_1d(c);
  const Tensor& w4 = c.rec.inputs[1];
  if (x3 != kNoValue && w[2] == 1 && a.stride[0] == 1 && a.pads[0] == 0 && a.pads[2] == 0 && !c.s.is_traced(*w4.impl())) {
    // nn::Conv1d: one 1-D Conv on [N, C, L] with the [O, I, K] weight (a view of the 4-D one,
    // so a named parameter keeps its name).
    const Tensor w3 = detail::make_view(w4, {w[0], w[1], w[3]}, {w4.strides()[0], w4.strides()[1], w4.strides()[3]}, w4.storage_offset());
    OM_ASSIGN_OR_RETURN(ValueId wv, c.s.value_of(w3));
    std::vector<ValueId> rest{wv};
    for (size_t i = 2; i < c.in.size(); ++i) rest.push_back(c.in[i]);
    return emit_spatial_1d(c, "Conv", x3, rest,
                           {AttrSpec::of_ints("kernel_shape", {w[3]}), AttrSpec::of_ints("strides", {a.stride[1]}),
                            AttrSpec::of_ints("pads", {a.pads[1], a.pads[3]}), AttrSpec::of_ints("dilations", {a.dilation[1]}),
                            AttrSpec::of_int("group", a.groups)},
                           keeps[1], offset[1], stride[1]);
  }
  return emit_spatial(c, "Conv", c.in,
                      {AttrSpec::of_ints("kernel_shape", {w[2], w[3]}), AttrSpec::of_ints("strides", ints2(a.stride)),
                       AttrSpec::of_ints("pads", ints4(a.pads)), AttrSpec::of_ints("dilations", ints2(a.dilation)),
                       AttrSpec::of_int("group", a.groups)},
                      keeps, offset, stride);
}

OM_LOWER(ConvTranspose2d) {
  const Conv2dAttrs& a = c.rec.attrs_of<OpId::ConvTranspose2d>();
  const Shape x = c.rec.inputs[0].shape(), w = c.rec.inputs[1].shape();
  std::vector<int64_t> out_pad(2);
  bool keeps[2];
  for (size_t k = 0; k < 2; ++k) {  // recovered from the shapes: what the strided extent leaves over
    const int64_t full = (x[2 + k] - 1) * a.stride[k] + (w[2 + k] - 1) * a.dilation[k] + 1 - a.pads[k] - a.pads[2 + k];
    out_pad[k] = c.rec.output_shape[2 + k] - full;
    keeps[k] = a.stride[k] == 1 && a.pads[k] + a.pads[2 + k] == (w[2 + k] - 1) * a.dilation[k] + out_pad[k];
  }
  return emit_spatial(c, "ConvTranspose", c.in,
                      {AttrSpec::of_ints("kernel_shape", {w[2], w[3]}), AttrSpec::of_ints("strides", ints2(a.stride)),
                       AttrSpec::of_ints("pads", ints4(a.pads)), AttrSpec::of_ints("dilations", ints2(a.dilation)),
                       AttrSpec::of_int("group", a.groups), AttrSpec::of_ints("output_padding", out_pad)},
                      keeps);
}

OM_LOWER(BatchNorm2d) {
  const BatchNormAttrs& a = c.rec.attrs_of<OpId::BatchNorm2d>();
  if (a.training)
    return Status::trace(TraceErrorKind::UnsupportedOperation,
                         msg(c.s.where(c.call()), ": batch normalisation in training mode cannot be traced (it uses the batch's statistics "
                                                  "and updates the running buffers); call eval() on the model before tracing"));
  return c.emit("BatchNormalization", c.in, {AttrSpec::of_float("epsilon", float(a.eps))}, c.s.sym_of(c.in[0]));
}

namespace {
Result<ValueId> pool(Ctx& c, const char* op, const Pool2dAttrs& a, bool average) {
  bool keeps[2];
  int64_t offset[2], stride[2];
  for (size_t k = 0; k < 2; ++k) {
    keeps[k] = !a.ceil_mode && a.stride[k] == 1 && a.pads[k] + a.pads[2 + k] == (a.kernel[k] - 1) * a.dilation[k];
    stride[k] = a.ceil_mode ? 0 : a.stride[k];  // ceil mode: no simple name
    offset[k] = a.pads[k] + a.pads[2 + k] - a.dilation[k] * (a.kernel[k] - 1) - 1 + a.stride[k];
  }
  std::vector<AttrSpec> attrs{AttrSpec::of_ints("kernel_shape", ints2(a.kernel)), AttrSpec::of_ints("strides", ints2(a.stride)),
                              AttrSpec::of_ints("pads", ints4(a.pads)), AttrSpec::of_int("ceil_mode", a.ceil_mode ? 1 : 0)};
  const ValueId x3 = unsqueezed_1d(c);
  if (x3 != kNoValue && a.kernel[0] == 1 && a.stride[0] == 1 && a.pads[0] == 0 && a.pads[2] == 0) {
    // MaxPool1d / AvgPool1d: one 1-D node on [N, C, L].
    std::vector<AttrSpec> attrs1{AttrSpec::of_ints("kernel_shape", {a.kernel[1]}), AttrSpec::of_ints("strides", {a.stride[1]}),
                                 AttrSpec::of_ints("pads", {a.pads[1], a.pads[3]}), AttrSpec::of_int("ceil_mode", a.ceil_mode ? 1 : 0)};
    if (average) attrs1.push_back(AttrSpec::of_int("count_include_pad", a.count_include_pad ? 1 : 0));
    else attrs1.push_back(AttrSpec::of_ints("dilations", {a.dilation[1]}));
    return emit_spatial_1d(c, op, x3, {}, attrs1, keeps[1], offset[1], stride[1]);
  }
  if (average) attrs.push_back(AttrSpec::of_int("count_include_pad", a.count_include_pad ? 1 : 0));
  else attrs.push_back(AttrSpec::of_ints("dilations", ints2(a.dilation)));
  return emit_spatial(c, op, c.in, attrs, keeps, offset, stride);
}
}  // namespace

OM_LOWER(MaxPool2d) { return pool(c, "MaxPool", c.rec.attrs_of<OpId::MaxPool2d>(), false); }
OM_LOWER(AvgPool2d) { return pool(c, "AveragePool", c.rec.attrs_of<OpId::AvgPool2d>(), true); }

OM_LOWER(GlobalAvgPool2d) {
  const SymShape in = c.s.sym_of(c.in[0]);
  return c.emit("GlobalAveragePool", c.in, {}, {in[0], in[1], Extent::fixed(1), Extent::fixed(1)});
}

OM_LOWER(Resize2d) {
  const Resize2dAttrs& a = c.rec.attrs_of<OpId::Resize2d>();
  const SymShape in = c.s.sym_of(c.in[0]);
  const bool by_scale = a.scale_h > 0;
  if (!by_scale && (!in[2].is_static() || !in[3].is_static()))
    return Status::trace(TraceErrorKind::SymbolicShape,
                         msg(c.s.where(c.call()), ": a symbolic spatial axis reaches resize2d, whose output size is fixed; resize by a "
                                                  "scale factor (om::interpolate, nn::Upsample::with_scale), trace with a static height "
                                                  "and width, or resize to a size computed outside the model"));
  std::vector<AttrSpec> attrs;
  if (a.bilinear) {
    attrs = {AttrSpec::of_string("mode", "linear"),
             AttrSpec::of_string("coordinate_transformation_mode", a.align_corners ? "align_corners" : "half_pixel")};
  } else {
    attrs = {AttrSpec::of_string("mode", "nearest"), AttrSpec::of_string("coordinate_transformation_mode", "asymmetric"),
             AttrSpec::of_string("nearest_mode", "floor")};
  }
  OM_ASSIGN_OR_RETURN(Tensor none, detail::make_tensor({0}, DType::f32));
  OM_ASSIGN_OR_RETURN(ValueId empty, c.s.value_of(none));
  if (!by_scale) {
    const SymShape out{in[0], in[1], Extent::fixed(a.out_h), Extent::fixed(a.out_w)};
    OM_ASSIGN_OR_RETURN(ValueId sizes, c.s.shape_operand(out, false));
    return c.emit("Resize", {c.in[0], empty, empty, sizes}, attrs, out);
  }
  // Resize with `scales`: floor(in * scale) at every size. An integer scale multiplies the
  // extent (h becomes 2*h); another scale gives a new atom held by the output.
  OM_ASSIGN_OR_RETURN(Tensor scales, detail::make_tensor({4}, DType::f32));
  float* sv = detail::raw_as<float>(scales);
  sv[0] = sv[1] = 1.0f;
  sv[2] = a.scale_h;
  sv[3] = a.scale_w;
  OM_ASSIGN_OR_RETURN(ValueId scales_v, c.s.value_of(scales));
  SymShape out{in[0], in[1], Extent::fixed(c.rec.output_shape[2]), Extent::fixed(c.rec.output_shape[3])};
  bool fresh[2] = {false, false};
  for (size_t k = 0; k < 2; ++k) {
    const float sc = k == 0 ? a.scale_h : a.scale_w;
    if (in[2 + k].is_static()) continue;
    if (sc >= 1 && sc == std::floor(sc)) out[2 + k] = multiply(in[2 + k], Extent::fixed(int64_t(sc)));
    else fresh[k] = true;
  }
  OM_ASSIGN_OR_RETURN(ValueId y, c.emit("Resize", {c.in[0], empty, scales_v}, attrs, out));
  if (fresh[0] || fresh[1]) {
    for (size_t k = 0; k < 2; ++k)
      if (fresh[k]) out[2 + k] = Extent::atom(c.s.new_atom(msg("Resize_", y, "_", 2 + k), c.rec.output_shape[2 + k], y, uint32_t(2 + k)));
    OM_TRY(c.s.update_sym(y, out));
  }
  return y;
}

namespace {
struct Entry {
  bool available;
  Result<ValueId> (*run)(Ctx&);
};
const Entry kTable[] = {
#define OM_OP(id, name, arity, traceable, attrs) {Lowering<OpId::id>::available, &Lowering<OpId::id>::run},
#include "onemodel/ops/ops.def"
#undef OM_OP
};
}  // namespace

}  // namespace lowering_impl

bool has_lowering(OpId op) { return lowering_impl::kTable[int(op)].available; }

Result<ValueId> lower(TraceState& s, const BackwardRecord& rec, const std::vector<ValueId>& inputs) {
  lowering_impl::Ctx c{s, rec, inputs};
  return lowering_impl::kTable[int(rec.op)].run(c);
}

}  // namespace om::trace
