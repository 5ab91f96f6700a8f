// The activations a GEMM epilogue applies after the complete fma chain (FusedMatMul's
// `activation` attribute): one list, read by the kernel and by the fusion pass that decides
// which activation nodes fold into the product (docs/graph-passes.md).
#pragma once
#include <cstring>
#include <string>

#include "onemodel/graph/ir.h"
#include "onemodel/kernels/kernels.h"

namespace om::graph {

struct EpilogueActivation {
  const char* name;         // the FusedMatMul `activation` value
  const char* op_type;      // the ONNX node it replaces
  const char* approximate;  // Gelu's `approximate` attribute, or null
  kernels::UnaryOp op;
};

constexpr EpilogueActivation kEpilogueActivations[] = {
    {"Relu", "Relu", nullptr, kernels::UnaryOp::Relu},
    {"Sigmoid", "Sigmoid", nullptr, kernels::UnaryOp::Sigmoid},
    {"Tanh", "Tanh", nullptr, kernels::UnaryOp::Tanh},
    {"Gelu", "Gelu", "none", kernels::UnaryOp::GeluErf},
    {"GeluTanh", "Gelu", "tanh", kernels::UnaryOp::GeluTanh},
};

// The entry named `name` (FusedMatMul's attribute), or null.
inline const EpilogueActivation* find_epilogue_activation(const std::string& name) {
  for (const EpilogueActivation& a : kEpilogueActivations)
    if (name == a.name) return &a;
  return nullptr;
}

// The entry an activation node folds into, or null when it does not fold.
inline const EpilogueActivation* epilogue_activation_of(const Node& n) {
  if (!is_default_domain(n.domain) || n.inputs.size() != 1) return nullptr;
  for (const EpilogueActivation& a : kEpilogueActivations)
    if (n.op_type == a.op_type && (!a.approximate || n.attr_string("approximate", "none") == a.approximate)) return &a;
  return nullptr;
}

// "Identity, Relu, ..." for messages.
inline std::string epilogue_activation_names() {
  std::string s = "Identity";
  for (const EpilogueActivation& a : kEpilogueActivations) s += std::string(", ") + a.name;
  return s;
}

}  // namespace om::graph
