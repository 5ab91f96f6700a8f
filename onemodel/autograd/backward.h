// The reverse pass with PyTorch's retain_graph rule: a pass releases the graph it ran through
// unless retain_graph is set; running backward again through a released graph is an error.
#pragma once
#include "onemodel/core/status.h"
#include "onemodel/core/tensor.h"

namespace om::autograd {

Status backward(const Tensor& root, const Tensor& seed, bool retain_graph);

}  // namespace om::autograd
