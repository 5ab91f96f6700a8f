// Scales, zero points and int8 weights (onemodel/quant/qparams.h).
#include "onemodel/quant/qparams.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace om::quant::detail {
namespace {

// A scale below FLT_MIN (zero, or subnormal: x / scale would overflow for ordinary x) means the
// values are all (nearly) zero; scale 1 quantizes them to the zero point, i.e. to 0.
float usable_scale(double s) { return s >= double(FLT_MIN) && std::isfinite(s) ? float(s) : 1.0f; }

}  // namespace

ActivationParams activation_params(double lo, double hi, DType dtype) {
  const int32_t qmin = dtype == DType::i8 ? -128 : 0;
  const int32_t qmax = dtype == DType::i8 ? 127 : 255;
  lo = std::min(lo, 0.0);
  hi = std::max(hi, 0.0);
  ActivationParams p;
  p.scale = usable_scale((hi - lo) / double(qmax - qmin));
  const double zp = std::nearbyint(double(qmin) - lo / double(p.scale));
  p.zero_point = int32_t(std::min(std::max(zp, double(qmin)), double(qmax)));
  return p;
}

Status quantize_weight(const graph::TensorData& w, int64_t axis, QuantizedWeight* out) {
  if (w.dtype != DType::f32)
    return Status::error(ErrorKind::DTypeMismatch, msg("weight '", w.name, "' is ", dtype_name(w.dtype), "; only f32 weights are quantized"));
  const int64_t n = w.numel();
  int64_t channels = 1, inner = n;
  if (axis >= 0) {
    channels = w.dims[size_t(axis)];
    inner = 1;
    for (size_t d = size_t(axis) + 1; d < w.dims.size(); ++d) inner *= w.dims[d];
  }
  const float* x = w.data<float>();
  // The element of flat index i lies in channel (i / inner) % channels.
  std::vector<float> amax(size_t(channels), 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = channels == 1 ? 0 : (i / inner) % channels;
    if (!std::isfinite(x[i]))
      return Status::error(ErrorKind::InvalidArgument,
                           msg("weight '", w.name, "' holds ", x[i], " at flat index ", i, " (channel ", c,
                               "); only finite weights can be quantized: fix the model, or keep this node in float "
                               "(QuantOptions::keep_nodes)"));
    amax[size_t(c)] = std::max(amax[size_t(c)], std::fabs(x[i]));
  }
  out->scales.resize(size_t(channels));
  for (int64_t c = 0; c < channels; ++c) out->scales[size_t(c)] = usable_scale(double(amax[size_t(c)] / 127.0f));
  out->values.resize(size_t(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = channels == 1 ? 0 : (i / inner) % channels;
    const float q = std::nearbyint(x[i] / out->scales[size_t(c)]);  // halves to even, as QuantizeLinear
    out->values[size_t(i)] = int8_t(std::min(std::max(q, -127.0f), 127.0f));
  }
  return Status::ok();
}

}  // namespace om::quant::detail
