// Relu, Sigmoid and Tanh: the shared elementwise kernel's maps (kernels::f32_unary), one
// rounding per element with the library's own exp and tanh. A family of their own so that a
// program that registers only these (an MLP's operator list, onemodel/op_list.h) does not link
// the chain kernel that activations.cpp's parametric activations run on.
#include "onemodel/graph/ops/op_util.h"
#include "onemodel/kernels/kernels.h"

namespace om::graph::ops {
namespace {

using kernels::UnaryOp;

// Work units: output elements.
constexpr OpDef kOps[] = {
    f32_unary_op("Relu", unary_kernel<UnaryOp::Relu>, "f32").with_flags(kOpF16InF32),
    f32_unary_op("Sigmoid", unary_kernel<UnaryOp::Sigmoid>, "f32, library sigmoid").with_flags(kOpF16InF32),
    f32_unary_op("Tanh", unary_kernel<UnaryOp::Tanh>, "f32, library tanh").with_flags(kOpF16InF32),
};

}  // namespace
}  // namespace om::graph::ops

// The family's operators, one symbol each (onemodel/op_list.h).
#define OM_ACTIVATION_MAPS_OPS(X) X(Relu) X(Sigmoid) X(Tanh)
OM_OP_FAMILY_TABLE(activation_maps, OM_ACTIVATION_MAPS_OPS)
