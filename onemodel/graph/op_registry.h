// The graph operator registry: one table entry per (domain, op type) with its shape/dtype
// inference, its fast kernel and its exact kernel (or none). Session validation ("every
// operator known", "every operator has an exact kernel"), plan-time constant evaluation and
// docs/operators.md all come from this one table. Each op family (graph/ops/*.cpp) contributes
// a static array; nothing registers itself at run time.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "onemodel/core/dtype.h"
#include "onemodel/core/mode.h"
#include "onemodel/core/status.h"
#include "onemodel/graph/ir.h"

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
  const void* data = nullptr;
  int64_t numel() const;
  size_t nbytes() const { return size_t(numel()) * dtype_size(dtype); }
};

struct InferContext {
  const Node& node;
  std::vector<const ValueDesc*> inputs;  // nullptr for omitted optional inputs
  std::vector<ValueDesc> outputs;        // one per node output; infer fills dtype and shape

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

struct KernelContext {
  const Node* node = nullptr;
  ArithmeticMode mode = ArithmeticMode::Fast;
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

enum OpFlags : uint32_t {
  kOpNone = 0,
  // Output 0 holds exactly input 0's bytes (Reshape, Squeeze, Identity...): the plan aliases
  // the buffer instead of running a kernel.
  kOpAlias = 1u << 0,
  // Reads only its input's shape (Shape): always evaluated at plan time.
  kOpShapeOnly = 1u << 1,
};

struct OpDef {
  const char* op_type;
  const char* domain;  // "" = ai.onnx
  int min_inputs;
  int max_inputs;
  InferFn infer;
  KernelFn fast;
  KernelFn exact;      // nullptr: no exact kernel (Exact sessions refuse the op)
  ScratchFn scratch;   // nullptr: none
  uint32_t flags;
  const char* notes;   // one line for docs/operators.md
};

// A node whose right-hand GEMM operand (input `input`) the plan may pack once when that input
// is a constant: the K x N view of it the kernel multiplies by (strides in elements). Every GEMM
// call of the node then uses this whole operand, so the kernel can take the packed copy.
struct PackableB {
  size_t input = 1;
  size_t K = 0, N = 0;
  ptrdiff_t rs = 0, cs = 1;
};
bool packable_b(const Node& node, const std::vector<const ValueDesc*>& inputs, PackableB* out);

// nullptr when unknown. "ai.onnx" and "" are the same domain.
const OpDef* find_op(const std::string& domain, const std::string& op_type);
const std::vector<const OpDef*>& all_ops();

// Attribute lookup by a C string: no std::string temporaries, so kernels can read attributes
// while running without touching the heap.
const Attribute* find_attr(const Node& node, const char* name);
int64_t attr_int(const Node& node, const char* name, int64_t fallback);
float attr_float(const Node& node, const char* name, float fallback);

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

std::string shape_str(const std::vector<int64_t>& shape);
std::string shape_str(const int64_t* dims, size_t rank);

}  // namespace om::graph
