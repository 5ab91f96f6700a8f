// Signal windows: HannWindow, HammingWindow and BlackmanWindow (opset 17) as
// w[i] = a0 - a1 cos(t_i) + a2 cos(2 t_i), t_i = i x (2 pi / N) with N = size (periodic) or
// size - 1 (symmetric), each step one float operation in the order of the operators' ONNX
// function bodies, and cos the library's own (graph/ops/trig.h): exact kernels. MelWeightMatrix
// (opset 17) maps frequency bins to triangular mel filters; its bin edges use the C library's
// log10 and pow, so it is fast only. DFT and STFT (opset 17) are direct O(n^2) sums in double
// over C-library twiddle factors, one rounding to float per output: fast only.
#include <cmath>
#include <cstdint>

#include "onemodel/graph/ops/op_util.h"
#include "onemodel/graph/ops/trig.h"

namespace om::graph::ops {
namespace {

// The f32 output of output_datatype (ONNX code; 1 is float, the default). Other dtypes are
// refused: a Cast after the operator gives them.
Status need_f32_output(const InferContext& ctx) {
  const int64_t dt = ctx.node.attr_int("output_datatype", 1);
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

// The windows' record. Work: the output elements.
struct WindowParams {
  float increment = 0;  // 2 pi / N
};

Status prepare_window(const InferContext& ctx, Prepared& out) {
  const int64_t size = ctx.outputs[0].shape[0];
  const bool periodic = ctx.node.attr_int("periodic", 1) != 0;
  const float n = periodic ? float(size) : float(size) - 1.0f;
  out.record<WindowParams>().increment = 6.28318530717958647692f / n;  // 2 pi rounded to float, then one division
  out.work = size;
  return Status::ok();
}

template <const WindowCoeffs& C>
Status window_kernel(const KernelContext& k) {
  const float increment = k.params<WindowParams>().increment;
  float* y = k.out(0).as<float>();
  for (int64_t i = k.begin; i < k.end; ++i) {
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

// MelWeightMatrix's record: the sizes known at plan time. Work: the num_mel_bins filters (output
// columns; each unit also zeroes its columns).
struct MelParams {
  int64_t bins = 0, dft = 0;
};

Status prepare_mel(const InferContext& ctx, Prepared& out) {
  MelParams& p = out.record<MelParams>();
  OM_TRY(plan_time_scalar(ctx, 1, "dft_length", 1, &p.dft));
  p.bins = ctx.outputs[0].shape[1];
  out.work = p.bins;
  return Status::ok();
}

// num_mel_bins + 2 edges evenly spaced in mel between the edge frequencies, each mapped to the
// spectrogram bin floor((dft_length + 1) f / sample_rate); filter j rises linearly from edge j to
// edge j+1 (value 1 there; a filter whose rise is empty is 1 at its center) and falls to edge j+2.
Status mel_kernel(const KernelContext& k) {
  const MelParams& p = k.params<MelParams>();
  const int64_t bins = p.bins, dft = p.dft, rate = scalar_int(k.in(2));
  const float lo_hz = *k.in(3).as<const float>(), hi_hz = *k.in(4).as<const float>();
  if (rate <= 0 || !(lo_hz >= 0.0f) || !(hi_hz >= lo_hz) || !std::isfinite(hi_hz))
    return k.error(ErrorKind::InvalidArgument, msg("needs sample_rate (", rate, ") > 0 and finite edges with 0 <= ",
                                                   "lower_edge_hertz (", lo_hz, ") <= upper_edge_hertz (", hi_hz, ")"));
  const int64_t rows = dft / 2 + 1;
  float* y = k.out(0).as<float>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = k.begin; j < k.end; ++j) y[r * bins + j] = 0.0f;
  const double lo_mel = hz_to_mel(lo_hz), hi_mel = hz_to_mel(hi_hz);
  const double step = (hi_mel - lo_mel) / double(bins + 2);
  // Edges far beyond the spectrum are refused before they become integers (no overflow).
  const double limit = double(kMaxNumel);
  if (double(dft + 1) * mel_to_hz(double(bins + 1) * step + lo_mel) / double(rate) > limit)
    return k.error(ErrorKind::InvalidArgument, msg("upper_edge_hertz ", hi_hz, " is far above sample_rate ", rate,
                                                   "; give an edge within the spectrum"));
  auto edge = [&](int64_t j) {
    const double hz = mel_to_hz(double(j) * step + lo_mel);
    return int64_t(std::floor(double(dft + 1) * hz / double(rate)));
  };
  // Rows of [from, to] that exist in the output (the edges may lie beyond it).
  auto first = [](int64_t from) { return from < 0 ? int64_t(0) : from; };
  auto last = [rows](int64_t to) { return to >= rows ? rows - 1 : to; };
  for (int64_t j = k.begin; j < k.end; ++j) {
    const int64_t lo = edge(j), center = edge(j + 1), hi = edge(j + 2);
    if (center == lo) {
      if (center >= 0 && center < rows) y[center * bins + j] = 1.0f;
    } else {
      for (int64_t r = first(lo); r <= last(center); ++r) y[r * bins + j] = float(r - lo) / float(center - lo);
    }
    for (int64_t r = first(center); r <= last(hi - 1); ++r) y[r * bins + j] = float(hi - r) / float(hi - center);
  }
  return Status::ok();
}

// ---- DFT and STFT: direct O(n^2) transforms in double, one rounding to float per output ----

// One transform of length n over `count_in` input samples (the rest are zeros; extra ones are
// cut): out[k] = sum_j x[j] e^(-+2 pi i jk/n) (/ n for the inverse) for k < out_count. x is real
// (im null) or complex; samples and outputs are strided (in floats). tw holds cos and sin of
// 2 pi m / n for m < n (twiddles()), so every angle is reduced exactly (jk mod n).
void dft_1d(const float* re, const float* im, ptrdiff_t in_stride, int64_t count_in, int64_t n, bool inverse, const double* tw,
            int64_t out_count, float* out, ptrdiff_t out_stride) {
  const int64_t used = count_in < n ? count_in : n;
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t k = 0; k < out_count; ++k) {
    double sr = 0.0, si = 0.0;
    int64_t m = 0;  // j k mod n, stepped by k
    for (int64_t j = 0; j < used; ++j) {
      const double c = tw[2 * m], sn = sign * tw[2 * m + 1];
      const double xr = re[j * in_stride], xi = im ? double(im[j * in_stride]) : 0.0;
      sr += xr * c - xi * sn;
      si += xr * sn + xi * c;
      m += k % n;
      if (m >= n) m -= n;
    }
    if (inverse) {
      sr /= double(n);
      si /= double(n);
    }
    out[k * out_stride] = float(sr);
    out[k * out_stride + 1] = float(si);
  }
}

void twiddles(int64_t n, double* tw) {
  const double two_pi = 6.283185307179586476925286766559;
  for (int64_t m = 0; m < n; ++m) {
    tw[2 * m] = std::cos(two_pi * double(m) / double(n));
    tw[2 * m + 1] = std::sin(two_pi * double(m) / double(n));
  }
}

// Whether the node asks for a one-sided spectrum; the default differs (DFT 0, STFT 1).
bool onesided_of(const Node& node, int64_t fallback) { return node.attr_int("onesided", fallback) != 0; }

// The complex (last dim 2) or real (last dim 1) f32 signal of input 0, rank >= min_rank. One rule
// for DFT and STFT (ONNX defines onesided for real input only): a complex signal needs
// onesided = 0, given explicitly to STFT, whose default is 1.
Status need_signal(const InferContext& ctx, size_t min_rank, int64_t onesided_default) {
  const ValueDesc* x = ctx.input(0);
  if (!x || x->dtype != DType::f32 || x->shape.size() < min_rank || (x->shape.back() != 1 && x->shape.back() != 2))
    return ctx.error(ErrorKind::ShapeMismatch, msg("input 0 (the signal) must be f32 of rank >= ", min_rank,
                                                   " with a last dim of 1 (real) or 2 (complex), got ",
                                                   x ? msg(dtype_name(x->dtype), " ", shape_str(x->shape)) : std::string("nothing")));
  if (onesided_of(ctx.node, onesided_default) && x->shape.back() == 2)
    return ctx.error(ErrorKind::InvalidArgument,
                     msg("onesided = 1", ctx.node.attr("onesided") ? "" : " (the default)",
                         " needs a real signal (last dim 1): a complex signal's spectrum is not symmetric; set onesided = 0"));
  return Status::ok();
}

struct DftPlan {
  int64_t axis = 1, n = 0, out_n = 0;
};

Status dft_plan(const InferContext& ctx, DftPlan* p) {
  OM_TRY(need_signal(ctx, 3, 0));
  const std::vector<int64_t>& x = ctx.input(0)->shape;
  const int64_t a = ctx.node.attr_int("axis", 1);
  const int64_t r = int64_t(x.size());
  // The transformed axis is a signal axis: not the batch axis 0, not the last (real/imaginary).
  if (!normalize_axis(a, r, &p->axis) || p->axis == 0 || p->axis == r - 1)
    return ctx.error(ErrorKind::InvalidArgument, msg("axis ", a, " must name a signal axis of ", shape_str(x), " (1 .. ", r - 2, ")"));
  p->n = x[size_t(p->axis)];
  if (ctx.input(1)) {
    std::vector<int64_t> v;
    OM_TRY(const_ints(ctx, 1, &v));
    if (v.size() != 1 || v[0] < 1 || v[0] > kMaxNumel)
      return ctx.error(ErrorKind::InvalidArgument, msg("dft_length must be one integer >= 1, got ", shape_str(v)));
    p->n = v[0];
  }
  if (p->n < 1)
    return ctx.error(ErrorKind::ShapeMismatch, msg("the transform length is 0 (axis ", p->axis, " of ", shape_str(x),
                                                   "); give a dft_length >= 1 or a non-empty axis"));
  const bool onesided = onesided_of(ctx.node, 0);
  if (onesided && ctx.node.attr_int("inverse", 0) != 0)
    return ctx.error(ErrorKind::Unsupported, "onesided = 1 with inverse = 1 is not supported: give the full spectrum");
  p->out_n = onesided ? p->n / 2 + 1 : p->n;
  return Status::ok();
}

Status infer_dft(InferContext& ctx) {
  DftPlan p;
  OM_TRY(dft_plan(ctx, &p));
  std::vector<int64_t> y = ctx.input(0)->shape;
  y[size_t(p.axis)] = p.out_n;
  y.back() = 2;
  ctx.set_output(0, DType::f32, std::move(y));
  return Status::ok();
}

size_t dft_scratch(const InferContext& ctx) {
  DftPlan p;
  if (!dft_plan(ctx, &p).is_ok()) return 0;
  return size_t(p.n) * 2 * sizeof(double);
}

// DFT's record: the transform and the lines it runs along. One work unit: every line reads the
// twiddle table the kernel fills in the scratch.
struct DftParams {
  int64_t n = 0, out_n = 0, nin = 0, outer = 1, inner = 1, ch = 1;
  bool inverse = false;
};

Status prepare_dft(const InferContext& ctx, Prepared& out) {
  DftPlan plan;
  OM_TRY(dft_plan(ctx, &plan));
  const std::vector<int64_t>& x = ctx.input(0)->shape;
  DftParams& p = out.record<DftParams>();
  p.n = plan.n;
  p.out_n = plan.out_n;
  p.nin = x[size_t(plan.axis)];
  p.ch = x.back();
  for (int64_t d = 0; d < plan.axis; ++d) p.outer = count_mul(p.outer, x[size_t(d)]);
  for (size_t d = size_t(plan.axis) + 1; d + 1 < x.size(); ++d) p.inner = count_mul(p.inner, x[d]);
  p.inverse = ctx.node.attr_int("inverse", 0) != 0;
  return Status::ok();
}

Status dft_kernel(const KernelContext& k) {
  const DftParams& p = k.params<DftParams>();
  const int64_t n = p.n, out_n = p.out_n, outer = p.outer, inner = p.inner, nin = p.nin, ch = p.ch;
  double* tw = static_cast<double*>(k.scratch);
  twiddles(n, tw);
  const float* x = k.in(0).as<const float>();
  float* y = k.out(0).as<float>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const float* px = x + (o * nin * inner + i) * ch;
      dft_1d(px, ch == 2 ? px + 1 : nullptr, inner * ch, nin, n, p.inverse, tw, out_n, y + (o * out_n * inner + i) * 2, inner * 2);
    }
  return Status::ok();
}

// STFT inputs: signal [batch, length, 1 or 2], frame_step, window [frame_length] (optional),
// frame_length (optional). Output [batch, frames, bins, 2].
struct StftPlan {
  int64_t step = 0, length = 0, frames = 0, bins = 0;
};

Status stft_plan(const InferContext& ctx, StftPlan* p) {
  OM_TRY(need_signal(ctx, 3, 1));
  const std::vector<int64_t>& x = ctx.input(0)->shape;
  if (x.size() != 3)
    return ctx.error(ErrorKind::ShapeMismatch, msg("the signal must be [batch, length, 1 or 2], got ", shape_str(x)));
  OM_TRY(plan_time_scalar(ctx, 1, "frame_step", 1, &p->step));
  const ValueDesc* w = ctx.input(2);
  if (w && (w->dtype != DType::f32 || w->shape.size() != 1))
    return ctx.error(ErrorKind::ShapeMismatch, msg("input 2 (window) must be 1-D f32, got ", dtype_name(w->dtype), " ", shape_str(w->shape)));
  if (ctx.input(3)) {
    OM_TRY(plan_time_scalar(ctx, 3, "frame_length", 1, &p->length));
    if (w && w->shape[0] != p->length)
      return ctx.error(ErrorKind::ShapeMismatch, msg("frame_length ", p->length, " differs from the window's length ", w->shape[0]));
  } else if (w) {
    p->length = w->shape[0];
  } else {
    return ctx.error(ErrorKind::InvalidArgument, "needs a window (input 2) or a frame_length (input 3)");
  }
  if (p->length < 1 || p->length > x[1])
    return ctx.error(ErrorKind::ShapeMismatch, msg("the frame length ", p->length, " must be in [1, the signal length ", x[1], "]"));
  p->frames = (x[1] - p->length) / p->step + 1;
  p->bins = onesided_of(ctx.node, 1) ? p->length / 2 + 1 : p->length;
  return Status::ok();
}

Status infer_stft(InferContext& ctx) {
  StftPlan p;
  OM_TRY(stft_plan(ctx, &p));
  ctx.set_output(0, DType::f32, {ctx.input(0)->shape[0], p.frames, p.bins, 2});
  return Status::ok();
}

// Twiddles, then one windowed frame (real and imaginary parts) of frame_length floats each.
size_t stft_scratch(const InferContext& ctx) {
  StftPlan p;
  if (!stft_plan(ctx, &p).is_ok()) return 0;
  return size_t(p.length) * 2 * sizeof(double) + size_t(p.length) * 2 * sizeof(float);
}

// STFT's record: the frame step and length. One work unit: every frame goes through the
// twiddle table and the frame buffer in the scratch.
struct StftParams {
  int64_t step = 0, length = 0;
};

Status prepare_stft(const InferContext& ctx, Prepared& out) {
  StftPlan plan;
  OM_TRY(stft_plan(ctx, &plan));
  StftParams& p = out.record<StftParams>();
  p.step = plan.step;
  p.length = plan.length;
  return Status::ok();
}

Status stft_kernel(const KernelContext& k) {
  const StftParams& p = k.params<StftParams>();
  const TensorArg& X = k.in(0);
  const TensorArg& Y = k.out(0);
  const int64_t batch = X.dims[0], len = X.dims[1], ch = X.dims[2];
  const int64_t step = p.step;
  const int64_t frames = Y.dims[1], bins = Y.dims[2];
  const float* win = k.has_input(2) ? k.in(2).as<const float>() : nullptr;
  const int64_t flen = p.length;
  double* tw = static_cast<double*>(k.scratch);
  float* fre = reinterpret_cast<float*>(tw + 2 * flen);
  float* fim = fre + flen;
  twiddles(flen, tw);
  const float* x = X.as<const float>();
  float* y = Y.as<float>();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t f = 0; f < frames; ++f) {
      const float* px = x + (b * len + f * step) * ch;
      for (int64_t j = 0; j < flen; ++j) {  // the window multiplies in f32, as the operator's types say
        const float wj = win ? win[j] : 1.0f;
        fre[j] = px[j * ch] * wj;
        fim[j] = ch == 2 ? px[j * ch + 1] * wj : 0.0f;
      }
      dft_1d(fre, ch == 2 ? fim : nullptr, 1, flen, flen, false, tw, bins, y + (b * frames + f) * bins * 2, 2);
    }
  return Status::ok();
}

constexpr AttrSpec kWindowAttrs[] = {{"output_datatype", AttrKind::Int}, {"periodic", AttrKind::Int}};
constexpr AttrSpec kMelAttrs[] = {{"output_datatype", AttrKind::Int}};
constexpr AttrSpec kDftAttrs[] = {{"axis", AttrKind::Int}, {"inverse", AttrKind::Int}, {"onesided", AttrKind::Int}};
constexpr AttrSpec kStftAttrs[] = {{"onesided", AttrKind::Int}};

constexpr OpDef kOps[] = {
    op("HannWindow").since_opset(17).inputs(1).attributes(kWindowAttrs).shapes(infer_window).kernel(window_kernel<kHann>)
        .prepared(prepare_window).plan_time_inputs_mask(1u)
        .doc("f32; size known at plan time; periodic; 0.5 - 0.5 cos(t), library cos"),
    op("HammingWindow").since_opset(17).inputs(1).attributes(kWindowAttrs).shapes(infer_window).kernel(window_kernel<kHamming>)
        .prepared(prepare_window).plan_time_inputs_mask(1u)
        .doc("f32; size known at plan time; periodic; 25/46 - 21/46 cos(t), library cos"),
    op("BlackmanWindow").since_opset(17).inputs(1).attributes(kWindowAttrs).shapes(infer_window).kernel(window_kernel<kBlackman>)
        .prepared(prepare_window).plan_time_inputs_mask(1u)
        .doc("f32; size known at plan time; periodic; 0.42 - 0.5 cos(t) + 0.08 cos(2t), library cos"),
    op("MelWeightMatrix").since_opset(17).inputs(5).attributes(kMelAttrs).shapes(infer_mel).fast_only(mel_kernel)
        .prepared(prepare_mel).plan_time_inputs_mask(0x3u)
        .doc("f32 [dft_length/2 + 1, num_mel_bins], both known at plan time; triangular filters; C library log10 and pow: fast only"),
    op("DFT").since_opset(17).inputs(1, 2).attributes(kDftAttrs).shapes(infer_dft).fast_only(dft_kernel).with_scratch(dft_scratch)
        .prepared(prepare_dft).plan_time_inputs_mask(0x2u)
        .doc("f32 real or complex [batch, ..., 1 or 2]; axis, inverse, onesided, dft_length known at plan time; direct sums in double with C library twiddles: fast only"),
    op("STFT").since_opset(17).inputs(2, 4).attributes(kStftAttrs).shapes(infer_stft).fast_only(stft_kernel).with_scratch(stft_scratch)
        .prepared(prepare_stft).plan_time_inputs_mask(0xAu)
        .doc("f32 [batch, length, 1 or 2]; frame_step and frame_length known at plan time, optional window; onesided; direct sums in double: fast only"),
};

}  // namespace

}  // namespace om::graph::ops

// The family's operators, one symbol each (onemodel/op_list.h).
#define OM_SIGNAL_OPS(X) X(HannWindow) X(HammingWindow) X(BlackmanWindow) X(MelWeightMatrix) X(DFT) X(STFT)
OM_OP_FAMILY_TABLE(signal, OM_SIGNAL_OPS)
