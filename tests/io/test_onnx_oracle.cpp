// Hand-built one-operator graphs for the ops the tracer emits, written to ONNX and checked by
// ONNX Runtime (the CTest test `oracle` runs them). Expected values here come from the eager
// layer (om::add, om::matmul, ...); test_onnx_oracle_ref.cpp covers the operators whose eager
// versions are not in the tree yet with double-precision references.
#include <doctest/doctest.h>

#include "onemodel/ops/ops.h"
#include "oracle_graphs.h"

using namespace octest;
using om::Tensor;

namespace {

Tensor T(const TensorData& t) { return to_tensor(t); }

}  // namespace

TEST_CASE("oracle cases: elementwise and activations (expected from the eager layer)") {
  const TensorData a = rand_f32("a", {2, 3, 4}, 1), b = rand_f32("b", {3, 1}, 2);
  TensorData bpos = f32("b", {3, 1}, values(3, 3, 0.5f, 2.0f));  // no division by ~0
  single_op_case("io_op_add", "Add", {a, b}, {}, {}, from_tensor("y", om::add(T(a), T(b))));
  single_op_case("io_op_sub", "Sub", {a, b}, {}, {}, from_tensor("y", om::sub(T(a), T(b))));
  single_op_case("io_op_mul", "Mul", {a, b}, {}, {}, from_tensor("y", om::mul(T(a), T(b))));
  single_op_case("io_op_div", "Div", {a, bpos}, {}, {}, from_tensor("y", om::div(T(a), T(bpos))));
  single_op_case("io_op_neg", "Neg", {a}, {}, {}, from_tensor("y", om::neg(T(a))));
  single_op_case("io_op_relu", "Relu", {a}, {}, {}, from_tensor("y", om::relu(T(a))));
  single_op_case("io_op_sigmoid", "Sigmoid", {a}, {}, {}, from_tensor("y", om::sigmoid(T(a))));
  single_op_case("io_op_tanh", "Tanh", {a}, {}, {}, from_tensor("y", om::tanh(T(a))));
  single_op_case("io_op_gelu", "Gelu", {a}, {}, {}, from_tensor("y", om::gelu(T(a))));
  single_op_case("io_op_gelu_tanh", "Gelu", {a}, {}, {Attribute::of_string("approximate", "tanh")},
                 from_tensor("y", om::gelu(T(a), om::GeluApproximate::Tanh)));
  // A constant operand as an initializer, as the tracer writes weights.
  const TensorData w = rand_f32("w", {4}, 4);
  single_op_case("io_op_add_init", "Add", {a}, {w}, {}, from_tensor("y", om::add(T(a), T(w))));
}

TEST_CASE("oracle cases: matmul, softmax, reductions, concat (expected from the eager layer)") {
  const TensorData a = rand_f32("a", {2, 3, 5}, 5), b = rand_f32("b", {5, 4}, 6);
  single_op_case("io_op_matmul", "MatMul", {a, b}, {}, {}, from_tensor("y", om::matmul(T(a), T(b))));
  const TensorData v = rand_f32("v", {5}, 7);
  single_op_case("io_op_matmul_1d", "MatMul", {a, v}, {}, {}, from_tensor("y", om::matmul(T(a), T(v))));
  single_op_case("io_op_softmax", "Softmax", {a}, {}, {Attribute::of_int("axis", -1)}, from_tensor("y", om::softmax(T(a), -1)));
  single_op_case("io_op_logsoftmax", "LogSoftmax", {a}, {}, {Attribute::of_int("axis", -1)},
                 from_tensor("y", om::log_softmax(T(a), -1)));
  single_op_case("io_op_reducesum", "ReduceSum", {a}, {i64("axes", {1}, {1})}, {Attribute::of_int("keepdims", 1)},
                 from_tensor("y", om::sum(T(a), 1, true)));
  single_op_case("io_op_reducesum_all", "ReduceSum", {a}, {}, {Attribute::of_int("keepdims", 0)}, from_tensor("y", om::sum(T(a))));
  single_op_case("io_op_reducemean", "ReduceMean", {a}, {i64("axes", {1}, {-1})}, {Attribute::of_int("keepdims", 0)},
                 from_tensor("y", om::mean(T(a), -1, false)));
  const TensorData c = rand_f32("c", {2, 1, 5}, 8);
  single_op_case("io_op_concat", "Concat", {a, c}, {}, {Attribute::of_int("axis", 1)},
                 from_tensor("y", om::cat({T(a), T(c)}, 1)));
}

TEST_CASE("oracle cases: shape operators (expected from eager views)") {
  const TensorData a = rand_f32("a", {2, 3, 4}, 9);
  single_op_case("io_op_transpose", "Transpose", {a}, {}, {Attribute::of_ints("perm", {2, 0, 1})},
                 from_tensor("y", T(a).permute({2, 0, 1})));
  single_op_case("io_op_reshape", "Reshape", {a}, {i64("shape", {2}, {6, -1})}, {}, from_tensor("y", T(a).reshape({6, -1})));
  const TensorData s = rand_f32("s", {3, 1}, 10);
  single_op_case("io_op_expand", "Expand", {s}, {i64("shape", {3}, {2, 3, 4})}, {}, from_tensor("y", T(s).expand({2, 3, 4})));
  single_op_case("io_op_unsqueeze", "Unsqueeze", {a}, {i64("axes", {1}, {1})}, {}, from_tensor("y", T(a).unsqueeze(1)));
  const TensorData q = rand_f32("q", {2, 1, 4}, 11);
  single_op_case("io_op_squeeze", "Squeeze", {q}, {i64("axes", {1}, {1})}, {}, from_tensor("y", T(q).squeeze(1)));
  // Slice(dim 2, 1:4:2), and Slice with step -1 = flip.
  single_op_case("io_op_slice", "Slice", {a},
                 {i64("starts", {1}, {1}), i64("ends", {1}, {4}), i64("axes", {1}, {2}), i64("steps", {1}, {2})}, {},
                 from_tensor("y", T(a).slice(2, 1, 4, 2)));
  single_op_case("io_op_slice_flip", "Slice", {a},
                 {i64("starts", {1}, {-1}), i64("ends", {1}, {INT64_MIN}), i64("axes", {1}, {1}), i64("steps", {1}, {-1})}, {},
                 from_tensor("y", T(a).flip(1)));
  // Gather with a scalar index = select.
  single_op_case("io_op_gather_select", "Gather", {a}, {i64("idx", {}, {2})}, {Attribute::of_int("axis", 1)},
                 from_tensor("y", T(a).select(1, 2)));
  single_op_case("io_op_cast_i64", "Cast", {a}, {}, {Attribute::of_int("to", int64_t(DType::i64))},
                 from_tensor("y", T(a).to(DType::i64)));
  single_op_case("io_op_identity", "Identity", {a}, {}, {}, from_tensor("y", T(a)));
}
