// Printing tensors with their values, PyTorch-style:
//
//   tensor([[ 1.0000, -2.5000],
//           [ 0.5000,  3.0000]], shape=[2, 2], dtype=f32)
//
// Tensors of more than `threshold` elements are summarised: each axis shows `edge_items`
// entries at either end with "..." between. Floats share one format per tensor (integral values
// as "1.", fixed with `precision` decimals, or scientific when the magnitudes span too much).
// Tensor::to_string() stays the short form used in error messages (dtype and shape only).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>

#include "onemodel/core/tensor.h"

namespace om {

struct PrintOptions {
  int precision = 4;
  int64_t threshold = 1000;  // more elements than this are summarised
  int64_t edge_items = 3;
  int line_width = 80;
};

std::string to_string(const Tensor& t, const PrintOptions& options = {});
std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace om
