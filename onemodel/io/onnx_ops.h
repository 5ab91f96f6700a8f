// The ONNX operators the reader accepts, in one table: for each op type the first opset (within
// the accepted 13..20) where it exists in the form onemodel runs, the attributes whose types
// are checked, and the attribute-to-input moves that the reader undoes so the IR is always in
// opset-20 form. The Session's operator registry may later replace onnx_op_supported().
#pragma once
#include <string>
#include <vector>

#include "onemodel/graph/ir.h"

namespace om::onnx {

constexpr int64_t kMinOpset = 13;  // the oldest default-domain opset the reader accepts
constexpr int64_t kMaxOpset = 20;  // the opset the writer emits and the IR is normalised to
constexpr int64_t kIrVersion = 9;  // the ONNX IR version the writer emits

// Expected type of one attribute. PositiveInts / PositiveInt: every value must be >= 1
// (kernel sizes, strides, dilations, group, hidden sizes): a 0 or negative one is a Format error.
enum class AttrKind { Int, PositiveInt, Float, String, Ints, PositiveInts, Floats, Strings, Tensor };

struct AttrSpec {
  const char* name;
  AttrKind kind;
};

struct OpInfo {
  const char* op_type;
  int64_t since;            // first opset in which the op exists (ops older than 13 say 13)
  int64_t axes_input_since;  // > 0: before this opset `axes` is an attribute, from it input #1
  std::vector<AttrSpec> attrs;
};

// nullptr when the op type (default ONNX domain) is not in the table.
const OpInfo* find_onnx_op(const std::string& op_type);
bool onnx_op_supported(const std::string& op_type);
// All supported op types, in table order (for docs and tests).
std::vector<std::string> supported_onnx_ops();

// Checks the attributes of `node` against the table entry's types; unknown names are allowed.
Status check_attribute_types(const OpInfo& op, const graph::Node& node);

}  // namespace om::onnx
