// quantize_static (onemodel/quant/quantize.h): choose the nodes, calibrate the values they read
// and write, then rewrite a copy of the graph into QDQ form through the passes' def-use view.
#include "onemodel/quant/quantize.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include "onemodel/graph/passes/pass.h"
#include "onemodel/quant/calibration.h"
#include "onemodel/quant/qparams.h"

namespace om::quant {
namespace {

using graph::Node;
using graph::TensorData;
using graph::passes::DefUse;

constexpr const char* kCall = "om::quant::quantize_static";
const char* const kQuantizableOps[] = {"Conv", "Gemm", "MatMul"};

bool is_quantizable_op(const std::string& op) {
  return std::any_of(std::begin(kQuantizableOps), std::end(kQuantizableOps), [&](const char* q) { return op == q; });
}

// What quantization does to one Conv, Gemm or MatMul node.
struct Target {
  size_t node = 0;
  std::vector<size_t> activations;  // input slots fed through Q -> DQ
  int weight_slot = -1;             // input slot of a constant weight quantized to int8, or -1
  int64_t weight_axis = -1;         // its per-channel axis, or -1 for one scale
  std::string output;               // the value quantized after it (quantize_outputs): its output, or its Relu's
};

// The value whose Q -> DQ follows node n's output: the output itself or, where a MatMul's one
// reader is an Add of a constant bias and where the output's (or that Add's) one reader is a
// Relu, the last of them. Quantizing between the product and its bias or Relu would round twice
// (once to a range with the negatives, then the Relu's); after them a Fast session fuses product,
// bias, Relu and QuantizeLinear into one integer kernel whose saturation is the Relu
// (fuse_qdq_conv, fuse_qdq_matmul; ONNX Runtime's quantizer places the pair after the Relu too).
std::string quantized_output(const graph::Graph& g, const DefUse& u, const Node& n) {
  auto only_reader = [&](const std::string& v, const char* op) -> const Node* {
    if (!u.single_internal_use(v)) return nullptr;
    const Node& r = g.nodes[u.reader(v)];
    return graph::is_default_domain(r.domain) && r.op_type == op && r.outputs.size() == 1 ? &r : nullptr;
  };
  std::string y = n.outputs[0];
  if (n.op_type == "MatMul")
    if (const Node* add = only_reader(y, "Add")) {
      const std::string& other = add->inputs.size() == 2 ? add->inputs[add->inputs[0] == y ? 1 : 0] : y;
      const TensorData* b = u.initializer(other);
      if (b && b->dtype == DType::f32 && b->dims.size() == 1) y = add->outputs[0];
    }
  if (const Node* relu = only_reader(y, "Relu")) y = relu->outputs[0];
  return y;
}

// The names users give in messages: the node's own name, or its label when it has none.
std::string node_names(const graph::Graph& g) {
  std::string names;
  size_t listed = 0;
  for (const Node& n : g.nodes) {
    if (!graph::is_default_domain(n.domain) || !is_quantizable_op(n.op_type) || n.name.empty()) continue;
    if (listed++ == 12) {
      names += ", ...";
      break;
    }
    names += (names.empty() ? "" : ", ") + n.name;
  }
  return names.empty() ? "(none has a name)" : names;
}

Status check_options(const graph::Graph& g, const QuantOptions& o) {
  if (o.activation_dtype != DType::u8 && o.activation_dtype != DType::i8)
    return Status::error(ErrorKind::Unsupported, msg(kCall, ": QuantOptions::activation_dtype is ", dtype_name(o.activation_dtype),
                                                     "; activations are quantized to u8 (the default) or i8"));
  if (o.range_method == RangeMethod::Percentile && !(o.percentile > 50.0 && o.percentile <= 100.0))
    return Status::error(ErrorKind::InvalidArgument, msg(kCall, ": QuantOptions::percentile is ", o.percentile,
                                                         "; give a percentile in (50, 100], e.g. 99.99 (100 is the min-max range)"));
  if (o.range_method != RangeMethod::MinMax && o.range_method != RangeMethod::Percentile)
    return Status::error(ErrorKind::Unsupported, msg(kCall, ": QuantOptions::range_method ", int(o.range_method),
                                                     " is not a RangeMethod; use MinMax or Percentile"));
  if (o.threads < 0)
    return Status::error(ErrorKind::InvalidArgument, msg(kCall, ": QuantOptions::threads is ", o.threads,
                                                         "; give 0 (every core), 1 (single-threaded) or a thread count"));
  for (const std::string& name : o.keep_nodes) {
    const bool found = std::any_of(g.nodes.begin(), g.nodes.end(), [&](const Node& n) { return n.name == name; });
    if (!found)
      return Status::error(ErrorKind::InvalidArgument, msg(kCall, ": QuantOptions::keep_nodes names '", name,
                                                           "', which is no node of the model; its Conv, Gemm and MatMul nodes are: ",
                                                           node_names(g)));
  }
  for (const std::string& op : o.keep_op_types)
    if (!is_quantizable_op(op))
      return Status::error(ErrorKind::InvalidArgument, msg(kCall, ": QuantOptions::keep_op_types names '", op,
                                                           "'; only Conv, Gemm and MatMul are quantized, so only they can be kept"));
  return Status::ok();
}

bool kept(const Node& n, const QuantOptions& o) {
  const bool by_name = !n.name.empty() && std::find(o.keep_nodes.begin(), o.keep_nodes.end(), n.name) != o.keep_nodes.end();
  return by_name || std::find(o.keep_op_types.begin(), o.keep_op_types.end(), n.op_type) != o.keep_op_types.end();
}

// The output-channel axis of a node's weight: Conv's W [M, C/g, k...] is 0, Gemm's B is 0 when
// transB (B is [N, K]) else 1, MatMul's B [..., K, N] is its last. -2: the weight's rank does
// not fit the node (left for the Session to report); -1: one scale for the tensor.
int64_t weight_axis(const Node& n, const TensorData& w, bool per_channel) {
  const int64_t rank = int64_t(w.dims.size());
  int64_t axis = -2;
  if (n.op_type == "Conv") axis = rank >= 3 ? 0 : -2;
  else if (n.op_type == "Gemm") axis = rank == 2 ? (n.attr_int("transB", 0) ? 0 : 1) : -2;
  else if (n.op_type == "MatMul") axis = rank >= 2 ? rank - 1 : rank == 1 ? -1 : -2;
  return axis >= 0 && !per_channel ? -1 : axis;
}

std::vector<Target> choose_targets(const graph::Graph& g, const DefUse& u, const QuantOptions& o) {
  std::vector<Target> targets;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (!graph::is_default_domain(n.domain) || !is_quantizable_op(n.op_type) || kept(n, o) || n.inputs.size() < 2 ||
        n.outputs.empty())
      continue;
    Target t;
    t.node = i;
    bool fits = true;
    for (size_t slot = 0; slot < 2; ++slot) {
      const std::string& v = n.inputs[slot];
      const Node* p = u.producer_node(v);
      // A node that already reads a DequantizeLinear output was quantized before: left as it is.
      if (v.empty() || (p && p->op_type == "DequantizeLinear")) fits = false;
      else if (const TensorData* w = u.initializer(v)) {
        if (slot != 1) continue;  // a constant A stays as it is
        t.weight_axis = weight_axis(n, *w, o.per_channel);
        fits = fits && w->dtype == DType::f32 && t.weight_axis != -2;
        t.weight_slot = 1;
      } else {
        t.activations.push_back(slot);
      }
    }
    t.output = quantized_output(g, u, n);
    if (fits) targets.push_back(t);
  }
  return targets;
}

const char* slot_role(const Node& n, size_t slot) {
  if (n.op_type == "Conv") return slot == 0 ? "X" : "W";
  return slot == 0 ? "A" : "B";
}

// New value and initializer names next to an existing one ("x" -> "x_scale").
struct Namer {
  DefUse& u;
  std::string operator()(const std::string& base, const char* suffix) { return u.fresh_name(base + suffix); }
};

TensorData scalar_param(std::string name, float scale) { return TensorData::from_vector<float>(std::move(name), {}, {scale}); }

TensorData zero_point_param(std::string name, DType dtype, int32_t zp) {
  if (dtype == DType::i8) return TensorData::from_vector<int8_t>(std::move(name), {}, {int8_t(zp)});
  return TensorData::from_vector<uint8_t>(std::move(name), {}, {uint8_t(zp)});
}

Node qdq_node(const char* op, std::string name, std::vector<std::string> inputs, std::string output) {
  Node n;
  n.op_type = op;
  n.name = std::move(name);
  n.inputs = std::move(inputs);
  n.outputs = {std::move(output)};
  return n;
}

}  // namespace

Status try_quantize_static(const graph::Graph& model, const CalibrationSet& calibration, const QuantOptions& options, graph::Graph* out) {
  if (!out) return Status::error(ErrorKind::InvalidArgument, msg(kCall, ": the output graph pointer is null"));
  OM_TRY(graph::verify(model).with_context(kCall));
  OM_TRY(check_options(model, options));

  graph::Graph g = model;
  DefUse u(g);
  std::vector<Target> targets = choose_targets(g, u, options);

  // The values to calibrate, each once, with the first node and slot that reads or writes it
  // (for messages).
  std::vector<std::string> values;
  std::unordered_map<std::string, size_t> index;
  std::vector<std::string> where;
  auto observe = [&](const std::string& v, const std::string& role) {
    if (index.emplace(v, values.size()).second) {
      values.push_back(v);
      where.push_back(role);
    }
  };
  for (const Target& t : targets) {
    const Node& n = g.nodes[t.node];
    for (size_t slot : t.activations) observe(n.inputs[slot], msg("input ", slot, " (", slot_role(n, slot), ") of ", n.label()));
    if (options.quantize_outputs)
      observe(t.output, t.output == n.outputs[0] ? msg("output of ", n.label()) : msg("output of the Relu after ", n.label()));
  }
  // The weights first: a NaN weight is named as such, not as the NaN activations it causes.
  std::map<std::pair<std::string, int64_t>, detail::QuantizedWeight> weights;
  for (const Target& t : targets) {
    if (t.weight_slot < 0) continue;
    const Node& n = g.nodes[t.node];
    const std::string& w_name = n.inputs[size_t(t.weight_slot)];
    auto key = std::make_pair(w_name, t.weight_axis);
    if (weights.count(key)) continue;
    OM_TRY(detail::quantize_weight(*u.initializer(w_name), t.weight_axis, &weights[key])
               .with_context(msg(kCall, ": ", n.label(), ", input 1 (", slot_role(n, 1), ")")));
  }
  std::vector<detail::ObservedRange> ranges;
  OM_TRY(detail::calibrate(model, values, calibration, options, &ranges));

  // Values the batches showed as another dtype than f32 (an integer MatMul) leave their nodes
  // in float; values with NaN or infinities are refused: no scale describes them.
  auto usable = [&](const std::string& v) {
    const detail::ObservedRange& r = ranges[index.at(v)];
    return r.seen && r.dtype == DType::f32;
  };
  targets.erase(std::remove_if(targets.begin(), targets.end(),
                               [&](const Target& t) {
                                 const Node& n = g.nodes[t.node];
                                 for (size_t slot : t.activations)
                                   if (!usable(n.inputs[slot])) return true;
                                 return options.quantize_outputs && !usable(t.output);
                               }),
                targets.end());
  std::set<std::string> used;
  for (const Target& t : targets) {
    const Node& n = g.nodes[t.node];
    for (size_t slot : t.activations) used.insert(n.inputs[slot]);
    if (options.quantize_outputs) used.insert(t.output);
  }
  for (size_t k = 0; k < values.size(); ++k) {
    const detail::ObservedRange& r = ranges[k];
    if (!used.count(values[k]) || r.nonfinite == 0) continue;
    return Status::error(ErrorKind::InvalidArgument,
                         msg(kCall, ": value '", values[k], "' (", where[k], ") holds ", r.saw_nan ? "NaN" : "infinite",
                             " values in calibration batch ", r.first_nonfinite_batch, " (", r.nonfinite,
                             " non-finite elements over all batches), so its scale and zero point would not be finite; remove "
                             "non-finite values from the calibration data, or keep the node in float (QuantOptions::keep_nodes)"));
  }

  Namer name{u};
  // Front nodes: DequantizeLinear of the weights and Q/DQ of graph inputs, placed before every
  // node once the view is finished (the view inserts only after existing nodes).
  std::vector<Node> front;
  std::map<std::pair<std::string, int64_t>, std::string> dequantized_weights;
  std::set<std::string> quantized_weights;
  for (const Target& t : targets) {
    if (t.weight_slot < 0) continue;
    const Node& n = g.nodes[t.node];
    const std::string w_name = n.inputs[size_t(t.weight_slot)];
    auto key = std::make_pair(w_name, t.weight_axis);
    auto it = dequantized_weights.find(key);
    if (it == dequantized_weights.end()) {
      const TensorData& w = *u.initializer(w_name);
      const detail::QuantizedWeight& q = weights.at(key);
      const std::string qn = name(w_name, "_quantized"), sn = name(w_name, "_scale"), zn = name(w_name, "_zero_point");
      const std::vector<int64_t> pdims = t.weight_axis >= 0 ? std::vector<int64_t>{int64_t(q.scales.size())} : std::vector<int64_t>{};
      u.add_initializer(TensorData::from_vector<int8_t>(qn, w.dims, q.values));
      u.add_initializer(TensorData::from_vector<float>(sn, pdims, q.scales));
      u.add_initializer(TensorData::from_vector<int8_t>(zn, pdims, std::vector<int8_t>(q.scales.size(), 0)));
      const std::string dq = name(w_name, "_dequantized");
      Node d = qdq_node("DequantizeLinear", name(w_name, "_DequantizeLinear"), {qn, sn, zn}, dq);
      if (t.weight_axis >= 0) d.attributes.push_back(graph::Attribute::of_int("axis", t.weight_axis));
      front.push_back(std::move(d));
      it = dequantized_weights.emplace(key, dq).first;
      quantized_weights.insert(w_name);
    }
    u.set_input(t.node, size_t(t.weight_slot), it->second);
  }

  // Q -> DQ of value v; returns the dequantized name. `in_place`: the producer writes v_float
  // and the DQ writes v itself, so every reader (and a graph output) sees the quantized value.
  // v is taken by value: renaming the producer's output rewrites the string it may refer to.
  auto fake_quantize = [&](std::string v, bool in_place) {
    const detail::ObservedRange& r = ranges[index.at(v)];
    const detail::ActivationParams p = detail::activation_params(r.lo, r.hi, options.activation_dtype);
    const std::string sn = name(v, "_scale"), zn = name(v, "_zero_point"), qn = name(v, "_quantized");
    u.add_initializer(scalar_param(sn, p.scale));
    u.add_initializer(zero_point_param(zn, options.activation_dtype, p.zero_point));
    const size_t producer = u.producer(v);
    std::string source = v, dq = v;
    if (in_place) {
      source = name(v, "_float");
      const Node& pn = g.nodes[producer];
      const size_t slot = size_t(std::find(pn.outputs.begin(), pn.outputs.end(), v) - pn.outputs.begin());
      u.set_output(producer, slot, source);
    } else {
      dq = name(v, "_dequantized");
    }
    Node qn_node = qdq_node("QuantizeLinear", name(v, "_QuantizeLinear"), {source, sn, zn}, qn);
    Node dq_node = qdq_node("DequantizeLinear", name(v, "_DequantizeLinear"), {qn, sn, zn}, dq);
    if (producer == DefUse::kNone) {
      front.push_back(std::move(qn_node));
      front.push_back(std::move(dq_node));
    } else {
      u.insert_after(producer, std::move(qn_node));
      u.insert_after(producer, std::move(dq_node));
    }
    return dq;
  };
  std::set<std::string> outputs_done;
  if (options.quantize_outputs)
    for (const Target& t : targets)
      if (outputs_done.insert(t.output).second) fake_quantize(t.output, true);
  std::map<std::string, std::string> inputs_done;
  for (const Target& t : targets) {
    for (size_t slot : t.activations) {
      const std::string v = g.nodes[t.node].inputs[slot];
      if (outputs_done.count(v)) continue;  // already quantized where it is written
      auto it = inputs_done.find(v);
      if (it == inputs_done.end()) it = inputs_done.emplace(v, fake_quantize(v, false)).first;
      u.set_input(t.node, slot, it->second);
    }
  }
  u.finish();
  g.nodes.insert(g.nodes.begin(), std::make_move_iterator(front.begin()), std::make_move_iterator(front.end()));

  // A float weight no node reads any more leaves the graph (and the inputs, when an old-style
  // model listed it there: it can no longer be overridden).
  std::set<std::string> still_read;
  for (const Node& n : g.nodes) still_read.insert(n.inputs.begin(), n.inputs.end());
  for (const auto& o : g.outputs) still_read.insert(o.name);
  auto gone = [&](const std::string& v) { return quantized_weights.count(v) && !still_read.count(v); };
  g.initializers.erase(std::remove_if(g.initializers.begin(), g.initializers.end(), [&](const TensorData& t) { return gone(t.name); }),
                       g.initializers.end());
  g.inputs.erase(std::remove_if(g.inputs.begin(), g.inputs.end(), [&](const graph::ValueInfo& v) { return gone(v.name); }), g.inputs.end());
  OM_TRY(graph::verify(g).with_context(msg(kCall, ": the quantized graph (an internal error; please report it)")));
  *out = std::move(g);
  return Status::ok();
}

graph::Graph quantize_static(const graph::Graph& model, const std::vector<std::vector<std::pair<std::string, Tensor>>>& calibration,
                             const QuantOptions& options) {
  graph::Graph g;
  check(try_quantize_static(model, calibration, options, &g));
  return g;
}

}  // namespace om::quant
