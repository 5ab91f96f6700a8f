// BackwardRecord: what an operator leaves behind for the reverse pass (onemodel/autograd) and
// for the tracer (onemodel/trace). Operators build it through record(); the record's attributes
// are the typed struct ops.def names for the operator (ops/op_attrs.h).
#pragma once
#include <vector>

#include "onemodel/core/tensor.h"
#include "onemodel/ops/op_attrs.h"

namespace om {

struct BackwardRecord {
  OpId op;
  std::vector<Tensor> inputs;
  OpAttrs attrs;
  Tensor saved;  // an op-specific saved value (e.g. the output of sigmoid), untracked
  Shape output_shape;
  DType output_dtype = DType::f32;

  // The attributes as their struct; record_op checked at creation that `op` holds this kind.
  template <typename T>
  const T& attrs_as() const { return *std::get_if<T>(&attrs); }
  template <OpId id>
  const AttrsOf<id>& attrs_of() const { return attrs_as<AttrsOf<id>>(); }
};

// Builds the record for `output` when grad mode is on and some input requires gradients, and
// hands it to the trace hook when one is active. Every operator calls this once. `attrs` must
// hold the struct ops.def names for `op` (an internal error otherwise).
Status record_op(OpId op, std::vector<Tensor> inputs, Tensor& output, OpAttrs attrs = NoAttrs{}, Tensor saved = {});

// The same with the attribute type checked at compile time.
template <OpId id>
Status record(std::vector<Tensor> inputs, Tensor& output, AttrsOf<id> attrs = {}, Tensor saved = {}) {
  return record_op(id, std::move(inputs), output, OpAttrs(std::move(attrs)), std::move(saved));
}

}  // namespace om
