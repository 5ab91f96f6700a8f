// Quantization parameters for quantize_static (library-internal): an activation's scale and zero
// point from its calibrated range, and a weight tensor quantized to int8 (docs/quantization.md).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "onemodel/core/dtype.h"
#include "onemodel/core/status.h"
#include "onemodel/graph/ir.h"

namespace om::quant::detail {

struct ActivationParams {
  float scale = 1;
  int32_t zero_point = 0;
};

// Asymmetric u8 or i8 over [min(lo, 0), max(hi, 0)]: scale = (hi - lo) / 255, zero point
// qmin - lo / scale rounded half to even (0 is then exactly a level). A range too narrow for a
// normal float scale (all zeros) gets scale 1. lo and hi must be finite (the caller refuses
// others, naming the value).
ActivationParams activation_params(double lo, double hi, DType dtype);

struct QuantizedWeight {
  std::vector<int8_t> values;  // the weight's layout
  std::vector<float> scales;   // one per channel along `axis`, or one (axis < 0)
};

// Symmetric int8 in [-127, 127], zero point 0: scale = max|w| / 127 per channel along `axis`
// (per tensor when axis < 0), q = round_half_even(w / scale) as QuantizeLinear computes it. An
// all-zero channel gets scale 1. `w` must be f32; a NaN or infinite element is refused naming
// the tensor, the channel and the element.
Status quantize_weight(const graph::TensorData& w, int64_t axis, QuantizedWeight* out);

}  // namespace om::quant::detail
