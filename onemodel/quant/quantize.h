// Post-training static quantization (docs/quantization.md): a float graph and a few batches of
// representative inputs in, a QDQ graph out. The weights of Conv, Gemm and MatMul become int8
// initializers read through DequantizeLinear (per output channel by default); the activations
// those nodes read and write pass through a QuantizeLinear -> DequantizeLinear pair whose scale
// and zero point come from the ranges the calibration batches reach. The result is an ordinary
// graph: it runs in a Session, saves as ONNX (any QDQ-aware consumer can fuse it into integer
// kernels) or as a library-format file with one byte per weight.
//
// The throwing form raises om::Error; try_quantize_static is the Status form for builds without
// exceptions. Neither changes `model`.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "onemodel/core/dtype.h"
#include "onemodel/core/status.h"
#include "onemodel/core/tensor.h"
#include "onemodel/graph/ir.h"

namespace om::quant {

// One calibration batch: a tensor for every input the model needs, by input name.
using CalibrationBatch = std::vector<std::pair<std::string, Tensor>>;
using CalibrationSet = std::vector<CalibrationBatch>;

enum class RangeMethod {
  MinMax,      // the smallest and largest value seen over every batch
  Percentile,  // the `percentile`-th and (100 - percentile)-th percentiles of every value seen
};

struct QuantOptions {
  // Weights: one scale per output channel (true) or one for the whole tensor (false). Either way
  // symmetric int8 in [-127, 127] with zero point 0 and scale max|w| / 127.
  bool per_channel = true;
  // Activations: u8 or i8, both asymmetric (the zero point places 0 exactly on a level).
  DType activation_dtype = DType::u8;
  RangeMethod range_method = RangeMethod::MinMax;
  double percentile = 99.99;  // RangeMethod::Percentile only; in (50, 100]
  // Also quantize the outputs of the quantized nodes (true, as QDQ consumers expect in order to
  // fuse a node with its Q/DQ neighbours), or only their inputs (false).
  bool quantize_outputs = true;
  // Nodes left in float: by node name, and by op type (Conv, Gemm or MatMul).
  std::vector<std::string> keep_nodes;
  std::vector<std::string> keep_op_types;
  // Threads of the calibration Session (SessionOptions::threads: 0 = every core).
  int threads = 0;
};

graph::Graph quantize_static(const graph::Graph& model, const std::vector<std::vector<std::pair<std::string, Tensor>>>& calibration,
                             const QuantOptions& options = {});
// The same without exceptions: the QDQ graph goes to *out (unchanged on failure).
Status try_quantize_static(const graph::Graph& model, const std::vector<std::vector<std::pair<std::string, Tensor>>>& calibration,
                           const QuantOptions& options, graph::Graph* out);

}  // namespace om::quant
