// BackwardRecord: what an operator leaves behind for the reverse pass (and for the tracer).
#pragma once
#include <cstdint>
#include <vector>

#include "onemodel/core/tensor.h"
#include "onemodel/ops/op_id.h"

namespace om::autograd {

struct BackwardRecord {
  OpId op;
  std::vector<Tensor> inputs;
  std::vector<int64_t> ints;    // integer attributes (axes, dims, flags), per operator
  std::vector<double> floats;   // float attributes
  Tensor saved;                 // an op-specific saved value (e.g. the output of sigmoid), untracked
  Shape output_shape;
  DType output_dtype = DType::f32;
};

// Builds the record for `output` when grad mode is on and some input requires gradients, and
// hands it to the trace hook when one is active. Every operator calls this once.
Status record(OpId op, std::vector<Tensor> inputs, Tensor& output, std::vector<int64_t> ints = {},
              std::vector<double> floats = {}, Tensor saved = {});

// Gradient functions, one per operator in ops.def (grad_<Enum>), each in grad_<family>.cpp:
// given the record and the gradient of the output, produce one gradient per input (undefined
// for inputs that need none).
using GradFn = Status (*)(const BackwardRecord& rec, const Tensor& grad_out, std::vector<Tensor>* grad_in);
#define OM_OP(id, name, arity, traceable) \
  Status grad_##id(const BackwardRecord& rec, const Tensor& grad_out, std::vector<Tensor>* grad_in);
#include "onemodel/ops/ops.def"
#undef OM_OP
GradFn grad_fn(OpId op);

// Runs the reverse pass from `root` with initial gradient `seed`.
Status backward(const Tensor& root, const Tensor& seed);

}  // namespace om::autograd
