#include "onemodel/io/onnx_ops.h"

namespace om::onnx {
namespace {

using K = AttrKind;

const std::vector<AttrSpec> kPoolAttrs = {
    {"auto_pad", K::String},       {"ceil_mode", K::Int},        {"dilations", K::PositiveInts},
    {"kernel_shape", K::PositiveInts}, {"pads", K::Ints},        {"strides", K::PositiveInts},
    {"count_include_pad", K::Int}, {"storage_order", K::Int}};
const std::vector<AttrSpec> kConvAttrs = {
    {"auto_pad", K::String},    {"dilations", K::PositiveInts}, {"group", K::PositiveInt},
    {"kernel_shape", K::PositiveInts}, {"pads", K::Ints},       {"strides", K::PositiveInts},
    {"output_padding", K::Ints}, {"output_shape", K::Ints}};
const std::vector<AttrSpec> kReduceAttrs = {{"keepdims", K::Int}, {"noop_with_empty_axes", K::Int}, {"axes", K::Ints}};
const std::vector<AttrSpec> kRnnAttrs = {
    {"activation_alpha", K::Floats}, {"activation_beta", K::Floats}, {"activations", K::Strings},
    {"clip", K::Float},              {"direction", K::String},       {"hidden_size", K::PositiveInt},
    {"input_forget", K::Int},        {"layout", K::Int},             {"linear_before_reset", K::Int}};

// Opset numbers are the ONNX operator versions: an op whose current signature predates opset 13
// lists 13. `axes_input_since` marks the ops whose `axes` attribute became an input.
const std::vector<OpInfo>& table() {
  static const std::vector<OpInfo> ops = {
      // Emitted by the tracer (SPEC §4).
      {"Add", 13, 0, {}},
      {"Sub", 13, 0, {}},
      {"Mul", 13, 0, {}},
      {"Div", 13, 0, {}},
      {"Neg", 13, 0, {}},
      {"Relu", 13, 0, {}},
      {"Sigmoid", 13, 0, {}},
      {"Tanh", 13, 0, {}},
      {"Gelu", 20, 0, {{"approximate", K::String}}},
      {"MatMul", 13, 0, {}},
      {"Softmax", 13, 0, {{"axis", K::Int}}},
      {"LogSoftmax", 13, 0, {{"axis", K::Int}}},
      {"LayerNormalization", 17, 0, {{"axis", K::Int}, {"epsilon", K::Float}, {"stash_type", K::Int}}},
      {"BatchNormalization", 13, 0, {{"epsilon", K::Float}, {"momentum", K::Float}, {"training_mode", K::Int}}},
      {"Conv", 13, 0, kConvAttrs},
      {"ConvTranspose", 13, 0, kConvAttrs},
      {"MaxPool", 13, 0, kPoolAttrs},
      {"AveragePool", 13, 0, kPoolAttrs},
      {"Resize", 13, 0,
       {{"antialias", K::Int}, {"axes", K::Ints}, {"coordinate_transformation_mode", K::String},
        {"cubic_coeff_a", K::Float}, {"exclude_outside", K::Int}, {"extrapolation_value", K::Float},
        {"keep_aspect_ratio_policy", K::String}, {"mode", K::String}, {"nearest_mode", K::String}}},
      {"Concat", 13, 0, {{"axis", K::Int}}},
      {"Gather", 13, 0, {{"axis", K::Int}}},
      {"Transpose", 13, 0, {{"perm", K::Ints}}},
      {"Reshape", 13, 0, {{"allowzero", K::Int}}},
      {"Expand", 13, 0, {}},
      {"Slice", 13, 0, {}},
      {"Cast", 13, 0, {{"to", K::Int}, {"saturate", K::Int}}},
      {"ReduceSum", 13, 0, kReduceAttrs},  // axes is an input since opset 13
      {"ReduceMean", 13, 18, kReduceAttrs},
      {"Identity", 13, 0, {}},
      {"Unsqueeze", 13, 0, {}},  // axes is an input since opset 13
      {"Squeeze", 13, 0, {}},
      {"LSTM", 13, 0, kRnnAttrs},
      {"GRU", 13, 0, kRnnAttrs},
      {"Shape", 13, 0, {{"start", K::Int}, {"end", K::Int}}},
      {"Constant", 13, 0,
       {{"value", K::Tensor}, {"value_float", K::Float}, {"value_floats", K::Floats}, {"value_int", K::Int},
        {"value_ints", K::Ints}, {"value_string", K::String}, {"value_strings", K::Strings}}},
      // Common in exported models.
      {"Gemm", 13, 0, {{"alpha", K::Float}, {"beta", K::Float}, {"transA", K::Int}, {"transB", K::Int}}},
      {"Flatten", 13, 0, {{"axis", K::Int}}},
      {"GlobalAveragePool", 13, 0, {}},
      {"Sqrt", 13, 0, {}},
      {"Pow", 13, 0, {}},
      {"Erf", 13, 0, {}},
      {"Exp", 13, 0, {}},
      {"Log", 13, 0, {}},
      {"ReduceMax", 13, 18, kReduceAttrs},
      {"Where", 13, 0, {}},
      {"Equal", 13, 0, {}},
      {"Less", 13, 0, {}},
      {"Greater", 13, 0, {}},
      {"Clip", 13, 0, {}},
      {"LeakyRelu", 13, 0, {{"alpha", K::Float}}},
      {"HardSigmoid", 13, 0, {{"alpha", K::Float}, {"beta", K::Float}}},
      {"Pad", 13, 0, {{"mode", K::String}}},
  };
  return ops;
}

const char* kind_name(AttrKind k) {
  switch (k) {
    case K::Int: case K::PositiveInt: return "int";
    case K::Float: return "float";
    case K::String: return "string";
    case K::Ints: case K::PositiveInts: return "ints";
    case K::Floats: return "floats";
    case K::Strings: return "strings";
    case K::Tensor: return "tensor";
  }
  return "?";
}

graph::AttrType attr_type_of(AttrKind k) {
  switch (k) {
    case K::Int: case K::PositiveInt: return graph::AttrType::Int;
    case K::Float: return graph::AttrType::Float;
    case K::String: return graph::AttrType::String;
    case K::Ints: case K::PositiveInts: return graph::AttrType::Ints;
    case K::Floats: return graph::AttrType::Floats;
    case K::Strings: return graph::AttrType::Strings;
    case K::Tensor: return graph::AttrType::Tensor;
  }
  return graph::AttrType::Int;
}

}  // namespace

const OpInfo* find_onnx_op(const std::string& op_type) {
  for (const OpInfo& op : table())
    if (op_type == op.op_type) return &op;
  return nullptr;
}

bool onnx_op_supported(const std::string& op_type) { return find_onnx_op(op_type) != nullptr; }

std::vector<std::string> supported_onnx_ops() {
  std::vector<std::string> out;
  for (const OpInfo& op : table()) out.emplace_back(op.op_type);
  return out;
}

Status check_attribute_types(const OpInfo& op, const graph::Node& node) {
  for (const graph::Attribute& a : node.attributes) {
    for (const AttrSpec& spec : op.attrs) {
      if (a.name != spec.name) continue;
      if (a.type != attr_type_of(spec.kind))
        return Status::error(ErrorKind::Format,
                             msg("node '", node.name, "' (", node.op_type, "): attribute '", a.name, "' must be of type ",
                                 kind_name(spec.kind), ", the file gives type code ", int(a.type)));
      if (spec.kind == K::PositiveInt && a.i < 1)
        return Status::error(ErrorKind::Format, msg("node '", node.name, "' (", node.op_type, "): attribute '", a.name,
                                                    "' is ", a.i, "; it must be at least 1"));
      if (spec.kind == K::PositiveInts)
        for (int64_t v : a.ints)
          if (v < 1)
            return Status::error(ErrorKind::Format, msg("node '", node.name, "' (", node.op_type, "): attribute '", a.name,
                                                        "' holds ", v, "; every value must be at least 1"));
    }
  }
  return Status::ok();
}

}  // namespace om::onnx
