// Signal windows: HannWindow, HammingWindow and BlackmanWindow (opset 17) as
// w[i] = a0 - a1 cos(t_i) + a2 cos(2 t_i), t_i = i x (2 pi / N) with N = size (periodic) or
// size - 1 (symmetric), each step one float operation in the order of the operators' ONNX
// function bodies, and cos the library's own (graph/ops/trig.h): exact kernels. MelWeightMatrix
// (opset 17) maps frequency bins to triangular mel filters; its bin edges use the C library's
// log10 and pow, so it is fast only.
#include <cmath>
#include <cstdint>

#include "onemodel/graph/ops/op_util.h"
#include "onemodel/graph/ops/trig.h"

namespace om::graph::ops {
namespace {

// The f32 output of output_datatype (ONNX code; 1 is float, the default). Other dtypes are
// refused: a Cast after the operator gives them.
Status need_f32_output(const InferContext& ctx) {
  const int64_t dt = attr_int(ctx.node, "output_datatype", 1);
  if (dt != 1)
    return ctx.error(ErrorKind::Unsupported, msg("output_datatype ", dt, " is not supported (only 1, float); leave it at 1 and add a Cast ",
                                                 "after the node for another dtype"));
  return Status::ok();
}

// A scalar integer input known at plan time (it decides the output shape), >= lo.
Status plan_time_scalar(const InferContext& ctx, size_t i, const char* role, int64_t lo, int64_t* out) {
  std::vector<int64_t> v;
  OM_TRY(const_ints(ctx, i, &v));
  if (v.size() != 1)
    return ctx.error(ErrorKind::ShapeMismatch, msg("input ", i, " (", role, ") must be a scalar, got ", shape_str(ctx.input(i)->shape)));
  if (v[0] < lo || v[0] > kMaxNumel)
    return ctx.error(ErrorKind::InvalidArgument, msg("input ", i, " (", role, ") is ", v[0], "; it must be in [", lo, ", 2^48]"));
  *out = v[0];
  return Status::ok();
}

// ---- windows ----

Status infer_window(InferContext& ctx) {
  OM_TRY(need_f32_output(ctx));
  int64_t size = 0;
  OM_TRY(plan_time_scalar(ctx, 0, "size", 0, &size));
  ctx.set_output(0, DType::f32, {size});
  return Status::ok();
}

int64_t scalar_int(const TensorArg& t) { return t.dtype == DType::i64 ? *t.as<const int64_t>() : *t.as<const int32_t>(); }

// The cosine-sum coefficients: Hann 0.5, 0.5; Hamming 25/46, 21/46; Blackman 0.42, 0.5, 0.08.
struct WindowCoeffs {
  float a0, a1, a2;
};
constexpr WindowCoeffs kHann{0.5f, 0.5f, 0.0f};
constexpr WindowCoeffs kHamming{float(25.0 / 46.0), float(21.0 / 46.0), 0.0f};
constexpr WindowCoeffs kBlackman{0.42f, 0.5f, 0.08f};

template <const WindowCoeffs& C>
Status window_kernel(const KernelContext& k) {
  const int64_t size = scalar_int(k.in(0));
  const bool periodic = attr_int(*k.node, "periodic", 1) != 0;
  const float n = periodic ? float(size) : float(size) - 1.0f;
  const float increment = 6.28318530717958647692f / n;  // 2 pi rounded to float, then one division
  float* y = k.out(0).as<float>();
  for (int64_t i = 0; i < size; ++i) {
    const float t = float(i) * increment;
    float w = C.a0 - C.a1 * library_cos_f32(t);
    if (C.a2 != 0.0f) w = w + C.a2 * library_cos_f32(t * 2.0f);
    y[i] = w;
  }
  return Status::ok();
}

// ---- MelWeightMatrix ----

// Inputs: num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz.
Status infer_mel(InferContext& ctx) {
  OM_TRY(need_f32_output(ctx));
  int64_t bins = 0, dft = 0;
  OM_TRY(plan_time_scalar(ctx, 0, "num_mel_bins", 1, &bins));
  OM_TRY(plan_time_scalar(ctx, 1, "dft_length", 1, &dft));
  for (size_t i = 2; i < 5; ++i) {
    const ValueDesc* v = ctx.input(i);
    const bool want_int = i == 2;
    const bool ok = v && v->numel() == 1 && (want_int ? (v->dtype == DType::i64 || v->dtype == DType::i32) : v->dtype == DType::f32);
    if (!ok)
      return ctx.error(ErrorKind::DTypeMismatch, msg("input ", i, want_int ? " (sample_rate) must be an i64 or i32 scalar"
                                                                          : " (an edge frequency in hertz) must be an f32 scalar"));
  }
  ctx.set_output(0, DType::f32, {dft / 2 + 1, bins});
  return Status::ok();
}

// Mel scale: m = 2595 log10(1 + f / 700), f = 700 (10^(m / 2595) - 1); in double.
double hz_to_mel(double f) { return 2595.0 * std::log10(1.0 + f / 700.0); }
double mel_to_hz(double m) { return 700.0 * (std::pow(10.0, m / 2595.0) - 1.0); }

// num_mel_bins + 2 edges evenly spaced in mel between the edge frequencies, each mapped to the
// spectrogram bin floor((dft_length + 1) f / sample_rate); filter j rises linearly from edge j to
// edge j+1 (value 1 there; a filter whose rise is empty is 1 at its center) and falls to edge j+2.
Status mel_kernel(const KernelContext& k) {
  const int64_t bins = scalar_int(k.in(0)), dft = scalar_int(k.in(1)), rate = scalar_int(k.in(2));
  const float lo_hz = *k.in(3).as<const float>(), hi_hz = *k.in(4).as<const float>();
  if (rate <= 0 || !(lo_hz >= 0.0f) || !(hi_hz >= lo_hz) || !std::isfinite(hi_hz))
    return Status::error(ErrorKind::InvalidArgument, msg(k.node->label(), ": needs sample_rate (", rate, ") > 0 and finite edges with 0 <= ",
                                                         "lower_edge_hertz (", lo_hz, ") <= upper_edge_hertz (", hi_hz, ")"));
  const int64_t rows = dft / 2 + 1;
  float* y = k.out(0).as<float>();
  for (int64_t i = 0; i < rows * bins; ++i) y[i] = 0.0f;
  const double lo_mel = hz_to_mel(lo_hz), hi_mel = hz_to_mel(hi_hz);
  const double step = (hi_mel - lo_mel) / double(bins + 2);
  auto edge = [&](int64_t j) {
    const double hz = mel_to_hz(double(j) * step + lo_mel);
    return int64_t(std::floor(double(dft + 1) * hz / double(rate)));
  };
  auto put = [&](int64_t row, int64_t col, float v) {
    if (row >= 0 && row < rows) y[row * bins + col] = v;
  };
  for (int64_t j = 0; j < bins; ++j) {
    const int64_t lo = edge(j), center = edge(j + 1), hi = edge(j + 2);
    if (center == lo) {
      put(center, j, 1.0f);
    } else {
      for (int64_t r = lo; r <= center; ++r) put(r, j, float(r - lo) / float(center - lo));
    }
    for (int64_t r = center; r < hi; ++r) put(r, j, float(hi - r) / float(hi - center));
  }
  return Status::ok();
}

constexpr AttrSpec kWindowAttrs[] = {{"output_datatype", AttrKind::Int}, {"periodic", AttrKind::Int}};
constexpr AttrSpec kMelAttrs[] = {{"output_datatype", AttrKind::Int}};

constexpr OpDef kOps[] = {
    op("HannWindow").since_opset(17).inputs(1).attributes(kWindowAttrs).shapes(infer_window).kernel(window_kernel<kHann>)
        .plan_time_inputs_mask(1u)
        .doc("f32; size known at plan time; periodic; 0.5 - 0.5 cos(t), library cos"),
    op("HammingWindow").since_opset(17).inputs(1).attributes(kWindowAttrs).shapes(infer_window).kernel(window_kernel<kHamming>)
        .plan_time_inputs_mask(1u)
        .doc("f32; size known at plan time; periodic; 25/46 - 21/46 cos(t), library cos"),
    op("BlackmanWindow").since_opset(17).inputs(1).attributes(kWindowAttrs).shapes(infer_window).kernel(window_kernel<kBlackman>)
        .plan_time_inputs_mask(1u)
        .doc("f32; size known at plan time; periodic; 0.42 - 0.5 cos(t) + 0.08 cos(2t), library cos"),
    op("MelWeightMatrix").since_opset(17).inputs(5).attributes(kMelAttrs).shapes(infer_mel).fast_only(mel_kernel)
        .plan_time_inputs_mask(0x3u)
        .doc("f32 [dft_length/2 + 1, num_mel_bins], both known at plan time; triangular filters; C library log10 and pow: fast only"),
};

}  // namespace

OpTable signal_ops() { return table_of(kOps); }

}  // namespace om::graph::ops
