// Gradient functions, one per operator in ops.def (grad_<Enum>), each in grad_<family>.cpp:
// given the record and the gradient of the output, produce one gradient per input (undefined
// for inputs that need none). The records themselves are built by the operators
// (onemodel/ops/record.h).
#pragma once
#include <vector>

#include "onemodel/ops/record.h"

namespace om::autograd {

using GradFn = Status (*)(const BackwardRecord& rec, const Tensor& grad_out, std::vector<Tensor>* grad_in);
#define OM_OP(id, name, arity, traceable, attrs) \
  Status grad_##id(const BackwardRecord& rec, const Tensor& grad_out, std::vector<Tensor>* grad_in);
#include "onemodel/ops/ops.def"
#undef OM_OP
GradFn grad_fn(OpId op);

// Runs the reverse pass from `root` with initial gradient `seed`.
Status backward(const Tensor& root, const Tensor& seed);

}  // namespace om::autograd
