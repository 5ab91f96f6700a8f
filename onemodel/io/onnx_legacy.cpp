// Opset 1 to 8 forms the registry's records do not read, converted by the reader into forms
// they do (docs/onnx.md, "Opsets 1 to 6"). Exporters of that time (PyTorch's opset-6 export
// among them) wrote these; each conversion below keeps the old semantics exactly, and a form
// whose semantics do not map is refused naming the operator and its ONNX version.
#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "onemodel/io/onnx_reader_internal.h"

namespace om::onnx::detail {
namespace {

using graph::Attribute;
using graph::AttrType;
using graph::Graph;
using graph::Node;
using graph::TensorData;

enum class Family { Arithmetic, Pow, Plain, ConsumedOnly, BatchNorm, PRelu, Gemm, Pad, Upsample };

// One operator's old forms: `versions` are its ONNX versions up to the one the registry reads
// (the version a model of opset v uses is the newest one <= v); `reaches` is the version whose
// semantics the converted node has.
struct Legacy {
  const char* op_type;
  Family family;
  int versions[3];
  int reaches;
};

constexpr Legacy kLegacy[] = {
    {"Add", Family::Arithmetic, {1, 6, 0}, 7},
    {"Sub", Family::Arithmetic, {1, 6, 0}, 7},
    {"Mul", Family::Arithmetic, {1, 6, 0}, 7},
    {"Div", Family::Arithmetic, {1, 6, 0}, 7},
    {"Pow", Family::Pow, {1, 0, 0}, 7},
    // The same attributes and meaning in the first version as in the one the registry reads.
    {"Conv", Family::Plain, {1, 0, 0}, 11},
    {"ConvTranspose", Family::Plain, {1, 0, 0}, 11},
    {"MaxPool", Family::Plain, {1, 0, 0}, 8},        // 8 added the optional Indices output
    {"AveragePool", Family::Plain, {1, 0, 0}, 7},    // 7 added count_include_pad (default 0)
    // Version 1 differs from 6 only by `consumed_inputs`, a memory hint onemodel's planner
    // does not need; 6 to 8 only added numpy broadcasting, a superset of equal shapes.
    {"Max", Family::ConsumedOnly, {1, 6, 0}, 8},
    {"Min", Family::ConsumedOnly, {1, 6, 0}, 8},
    {"Sum", Family::ConsumedOnly, {1, 6, 0}, 6},
    {"Mean", Family::ConsumedOnly, {1, 6, 0}, 6},
    {"Relu", Family::ConsumedOnly, {1, 6, 0}, 6},
    {"Sigmoid", Family::ConsumedOnly, {1, 6, 0}, 6},
    {"Tanh", Family::ConsumedOnly, {1, 6, 0}, 6},
    {"Abs", Family::ConsumedOnly, {1, 6, 0}, 6},
    {"Neg", Family::ConsumedOnly, {1, 6, 0}, 6},
    {"Exp", Family::ConsumedOnly, {1, 6, 0}, 6},
    {"Log", Family::ConsumedOnly, {1, 6, 0}, 6},
    {"Sqrt", Family::ConsumedOnly, {1, 6, 0}, 6},
    {"Reciprocal", Family::ConsumedOnly, {1, 6, 0}, 6},
    {"Floor", Family::ConsumedOnly, {1, 6, 0}, 6},
    {"Ceil", Family::ConsumedOnly, {1, 6, 0}, 6},
    {"Elu", Family::ConsumedOnly, {1, 6, 0}, 6},
    {"Selu", Family::ConsumedOnly, {1, 6, 0}, 6},
    {"LeakyRelu", Family::ConsumedOnly, {1, 6, 0}, 6},
    {"HardSigmoid", Family::ConsumedOnly, {1, 6, 0}, 6},
    {"Clip", Family::ConsumedOnly, {1, 6, 0}, 6},
    {"InstanceNormalization", Family::ConsumedOnly, {1, 6, 0}, 6},
    {"BatchNormalization", Family::BatchNorm, {1, 6, 7}, 9},
    {"PRelu", Family::PRelu, {1, 6, 0}, 7},
    {"Gemm", Family::Gemm, {1, 6, 0}, 7},
    {"Pad", Family::Pad, {1, 2, 0}, 11},
    {"Upsample", Family::Upsample, {1, 0, 0}, 7},
};

const Legacy* find_legacy(const std::string& op_type) {
  for (const Legacy& l : kLegacy)
    if (op_type == l.op_type) return &l;
  return nullptr;
}

// The ONNX version of the operator a model of `opset` uses (0: none of the old ones).
int version_in(const Legacy& l, int64_t opset) {
  int v = 0;
  for (int x : l.versions)
    if (x && x <= opset) v = x;
  return v;
}

Status refuse(const Node& n, int version, const std::string& why) {
  return Status::error(ErrorKind::Unsupported, msg(n.op_type, "-", version, ": ", why,
                                                   ". Export the model again from its framework with a newer opset "
                                                   "(e.g. torch.onnx.export(..., opset_version=17)); docs/onnx.md, \"Opsets 1 to 6\""));
}

void drop(Node& n, const char* name) {
  n.attributes.erase(std::remove_if(n.attributes.begin(), n.attributes.end(), [&](const Attribute& a) { return a.name == name; }),
                     n.attributes.end());
}

// The rank of a value where the file declares it: an initializer's dims, a graph input's or a
// value_info entry's shape. -1 when unknown.
int64_t declared_rank(const Graph& g, const std::string& name) {
  if (const TensorData* t = g.find_initializer(name)) return int64_t(t->dims.size());
  for (const auto* list : {&g.inputs, &g.value_info, &g.outputs})
    for (const graph::ValueInfo& v : *list)
      if (v.name == name && v.has_shape) return int64_t(v.shape.size());
  return -1;
}

// A 1-D i64 initializer (Unsqueeze's axes, Pad's pads).
std::string add_i64s(Graph& g, LegacyContext& ctx, const std::string& base, const std::vector<int64_t>& v) {
  const std::string name = ctx.fresh(base);
  g.initializers.push_back(TensorData::copy_of(name, DType::i64, {int64_t(v.size())}, v.data(), v.size() * 8));
  return name;
}

// Unsqueeze(x, axes) before the node, whose output replaces input `input`.
void unsqueeze_input(Graph& g, Node& n, size_t input, const std::vector<int64_t>& axes, LegacyContext& ctx) {
  const std::string base = (n.outputs.empty() ? n.name : n.outputs[0]) + ".legacy";
  Node u;
  u.op_type = "Unsqueeze";
  u.name = n.name.empty() ? std::string() : n.name + ".unsqueeze";
  u.inputs = {n.inputs[input], add_i64s(g, ctx, base + ".axes", axes)};
  u.outputs = {ctx.fresh(base + ".aligned")};
  n.inputs[input] = u.outputs[0];
  ctx.before.push_back(std::move(u));
}

// `broadcast` = 1 with `axis` aligned B's dims with A's from `axis` on; numpy broadcasting
// aligns trailing dims. Appending rank(A) - axis - rank(B) unit dims to B makes them agree.
// Without `axis` the old rule was suffix matching, which numpy broadcasting already is; with
// `broadcast` = 0 the shapes had to be equal.
Status convert_broadcast(Graph& g, Node& n, int version, LegacyContext& ctx) {
  const Attribute* b = n.attr("broadcast");
  const Attribute* ax = n.attr("axis");
  const bool broadcast = b && b->i != 0;
  if (broadcast && ax) {
    if (n.inputs.size() != 2) return refuse(n, version, msg("takes 2 inputs, the node has ", n.inputs.size()));
    const int64_t ra = declared_rank(g, n.inputs[0]), rb = declared_rank(g, n.inputs[1]);
    if (ra < 0 || rb < 0)
      return refuse(n, version, msg("broadcast with axis = ", ax->i, " needs the ranks of both inputs, and the file does not declare the rank of '",
                                    ra < 0 ? n.inputs[0] : n.inputs[1], "' (a graph input, initializer or value_info shape)"));
    // Before opset 7 axis was >= 0; a negative one counts from A's end, as later forms do.
    const int64_t axis = ax->i < 0 && ax->i >= -ra ? ax->i + ra : ax->i;
    if (axis < 0 || rb > ra || axis > ra - rb)  // no sum: a hostile axis must not overflow
      return refuse(n, version, msg("axis ", ax->i, " does not place B (rank ", rb, ") inside A (rank ", ra, ")"));
    const int64_t trailing = ra - axis - rb;
    if (trailing > 0) {
      std::vector<int64_t> axes;
      for (int64_t k = 0; k < trailing; ++k) axes.push_back(rb + k);
      unsqueeze_input(g, n, 1, axes, ctx);
    }
  }
  drop(n, "broadcast");
  drop(n, "axis");
  drop(n, "consumed_inputs");
  return Status::ok();
}

Status convert_batch_norm(Graph& g, Node& n, int version, LegacyContext& ctx) {
  // is_test = 0 (the default before version 7) normalised with the batch's statistics: the
  // training form, whose outputs 1 and 2 are the running mean and variance as in version 15.
  // Outputs 3 and 4 (saved mean and variance) have no later equivalent.
  // From version 7 the outputs say it: Y alone is inference, Y with the statistics training.
  bool training = version < 7 && n.attr_int("is_test", 0) == 0;
  if (version >= 7)
    for (size_t k = 1; k < n.outputs.size(); ++k) training = training || !n.outputs[k].empty();
  for (size_t k = 3; k < n.outputs.size(); ++k)
    if (!n.outputs[k].empty())
      return refuse(n, version, msg("output ", k, " ('", n.outputs[k], "', the saved statistics of training) has no equivalent in later versions"));
  const bool spatial = n.attr_int("spatial", 1) != 0;
  drop(n, "is_test");
  drop(n, "spatial");
  drop(n, "consumed_inputs");
  if (n.inputs.size() != 5) return refuse(n, version, msg("takes 5 inputs, the node has ", n.inputs.size()));
  if (spatial) {
    if (training) n.attributes.push_back(Attribute::of_int("training_mode", 1));
    else if (n.outputs.size() > 1) {
      for (size_t k = 1; k < n.outputs.size(); ++k)
        if (!n.outputs[k].empty()) return refuse(n, version, msg("in inference mode (is_test = 1) output ", k, " ('", n.outputs[k], "') is undefined"));
      n.outputs.resize(1);
    }
    return Status::ok();
  }
  // spatial = 0: the statistics have shape (C, D1, ..., Dn), one per activation, i.e. X's
  // shape without N; numpy broadcasting over N gives exactly that. Written with the formula of
  // the BatchNormalization kernel, (x - mean) * (scale / sqrt(var + epsilon)) + B.
  if (training) return refuse(n, version, "spatial = 0 with is_test = 0 (per-activation statistics of the batch) has no later equivalent");
  for (size_t k = 1; k < n.outputs.size(); ++k)
    if (!n.outputs[k].empty()) return refuse(n, version, msg("in inference mode (is_test = 1) output ", k, " ('", n.outputs[k], "') is undefined"));
  const float eps = n.attr_float("epsilon", 1e-5f);
  const std::string base = (n.outputs.empty() ? n.name : n.outputs[0]) + ".legacy";
  const std::string eps_name = ctx.fresh(base + ".epsilon");
  g.initializers.push_back(TensorData::copy_of(eps_name, DType::f32, {}, &eps, sizeof(float)));
  auto node = [&](const char* op, std::vector<std::string> in, const std::string& out) {
    Node m;
    m.op_type = op;
    m.name = n.name.empty() ? std::string() : n.name + "." + op;
    m.inputs = std::move(in);
    m.outputs = {out};
    return m;
  };
  const std::string ve = ctx.fresh(base + ".var_eps"), sd = ctx.fresh(base + ".std"), sc = ctx.fresh(base + ".factor"),
                    xc = ctx.fresh(base + ".centered"), xs = ctx.fresh(base + ".scaled");
  ctx.before.push_back(node("Add", {n.inputs[4], eps_name}, ve));
  ctx.before.push_back(node("Sqrt", {ve}, sd));
  ctx.before.push_back(node("Div", {n.inputs[1], sd}, sc));
  ctx.before.push_back(node("Sub", {n.inputs[0], n.inputs[3]}, xc));
  ctx.before.push_back(node("Mul", {xc, sc}, xs));
  Node out = node("Add", {xs, n.inputs[2]}, n.outputs[0]);
  out.name = n.name;
  n = std::move(out);
  ctx.replaced = true;
  return Status::ok();
}

// Before version 7 a 1-D slope of C values applied per channel (axis 1), as the frameworks'
// channel-wise PReLU does; numpy broadcasting would align it with the last axis. Unit dims
// after it restore the channel alignment.
Status convert_prelu(Graph& g, Node& n, int version, LegacyContext& ctx) {
  drop(n, "consumed_inputs");
  if (n.inputs.size() != 2) return refuse(n, version, msg("takes 2 inputs, the node has ", n.inputs.size()));
  const int64_t rx = declared_rank(g, n.inputs[0]), rs = declared_rank(g, n.inputs[1]);
  if (rs < 0) return refuse(n, version, msg("the file does not declare the rank of the slope '", n.inputs[1], "'"));
  if (rs != 1) return Status::ok();  // a scalar or X's own shape: numpy broadcasting agrees
  const TensorData* t = g.find_initializer(n.inputs[1]);
  if (t && t->numel() == 1) return Status::ok();  // shared by every channel
  if (rx < 0) return refuse(n, version, msg("a per-channel slope needs the rank of X, and the file does not declare the rank of '", n.inputs[0], "'"));
  if (rx > 2) {
    std::vector<int64_t> axes;
    for (int64_t k = 1; k < rx - 1; ++k) axes.push_back(k);
    unsqueeze_input(g, n, 1, axes, ctx);
  }
  return Status::ok();
}

Status convert_pad(Graph& g, Node& n, int version, LegacyContext& ctx) {
  const char* pads_name = version == 1 ? "paddings" : "pads";
  const Attribute* p = n.attr(pads_name);
  if (!p || p->type != AttrType::Ints) return refuse(n, version, msg("needs the INTS attribute '", pads_name, "'"));
  const std::string base = (n.outputs.empty() ? n.name : n.outputs[0]) + ".legacy";
  const std::vector<int64_t> pads = p->ints;
  const float value = n.attr_float("value", 0.0f);
  const bool constant = n.attr_text("mode", "constant") == "constant";
  drop(n, pads_name);
  drop(n, "value");
  if (n.inputs.size() != 1) return refuse(n, version, msg("takes 1 input, the node has ", n.inputs.size()));
  n.inputs.push_back(add_i64s(g, ctx, base + ".pads", pads));
  // The value is f32 here; a Pad over f16 or f64 data with a nonzero value then fails planning
  // with the dtype named, never silently.
  if (constant && value != 0.0f) {
    const std::string v = ctx.fresh(base + ".value");
    g.initializers.push_back(TensorData::copy_of(v, DType::f32, {}, &value, sizeof(float)));
    n.inputs.push_back(v);
  }
  return Status::ok();
}

// Version 1 (experimental) scaled the H and W axes of a 4-D input; version 7 says the same
// with one scale per axis, and "linear" for "bilinear".
Status convert_upsample(Node& n, int version) {
  const float h = n.attr_float("height_scale", 0.0f), w = n.attr_float("width_scale", 0.0f);
  if (!n.attr("height_scale") || !n.attr("width_scale")) return refuse(n, version, "needs the attributes height_scale and width_scale");
  if (!(h >= 1.0f) || !(w >= 1.0f)) return refuse(n, version, msg("scales must be >= 1, got height_scale ", h, ", width_scale ", w));
  const std::string mode = n.attr_string("mode", "nearest");
  if (mode != "nearest" && mode != "bilinear") return refuse(n, version, msg("mode '", mode, "' is not nearest or bilinear"));
  drop(n, "height_scale");
  drop(n, "width_scale");
  drop(n, "mode");
  n.attributes.push_back(Attribute::of_string("mode", mode == "bilinear" ? "linear" : "nearest"));
  n.attributes.push_back(Attribute::of_floats("scales", {1.0f, 1.0f, h, w}));
  return Status::ok();
}

}  // namespace

int legacy_version(const std::string& op_type, int64_t opset) {
  const Legacy* l = find_legacy(op_type);
  return l ? version_in(*l, opset) : 0;
}

Status convert_legacy(Graph& g, size_t index, int64_t opset, LegacyContext& ctx) {
  Node& n = g.nodes[index];
  const Legacy* l = find_legacy(n.op_type);
  const int version = l ? version_in(*l, opset) : 0;
  if (!version) return Status::error(ErrorKind::Unsupported, msg(n.op_type, " at opset ", opset, " has no conversion"));
  ctx.reaches = l->reaches;
  switch (l->family) {
    case Family::Arithmetic:
    case Family::Pow: return convert_broadcast(g, n, version, ctx);
    case Family::Plain:
      if (n.attr("consumed_inputs")) drop(n, "consumed_inputs");
      return Status::ok();
    case Family::ConsumedOnly: drop(n, "consumed_inputs"); return Status::ok();
    case Family::BatchNorm: return convert_batch_norm(g, n, version, ctx);
    case Family::PRelu: return convert_prelu(g, n, version, ctx);
    case Family::Gemm:
      // broadcast = 0 required C of shape (M, N), which unidirectional broadcasting accepts too.
      drop(n, "broadcast");
      return Status::ok();
    case Family::Pad: return convert_pad(g, n, version, ctx);
    case Family::Upsample: return convert_upsample(n, version);
  }
  return Status::ok();
}

}  // namespace om::onnx::detail
