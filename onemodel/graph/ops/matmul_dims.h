// The numpy matrix-product shape rule of MatMul (graph/ops/matmul.cpp), shared with the
// quantized products MatMulInteger and QLinearMatMul (graph/ops/quant.cpp).
#pragma once
#include <cstdint>
#include <vector>

#include "onemodel/graph/op_registry.h"

namespace om::graph::ops {

struct MatMulDims {
  int64_t M = 1, K = 1, N = 1;
  std::vector<int64_t> a_batch, b_batch, out_batch;
};

// M, K, N and the broadcast batch axes of A [..., M, K] times B [..., K, N] (1-D operands as
// numpy: a row or a column that the output drops); `out` is the product's shape. Errors name
// the node.
Status matmul_dims(const InferContext& ctx, const std::vector<int64_t>& a, const std::vector<int64_t>& b, MatMulDims* d,
                   std::vector<int64_t>* out);

}  // namespace om::graph::ops
