// Resize (2-D over NCHW f32: nearest with asymmetric / half_pixel / pytorch_half_pixel /
// align_corners and floor / ceil / round_prefer_floor / round_prefer_ceil, linear with the same
// coordinate transforms; `scales` or `sizes` known at plan time) and Pad (constant, reflect,
// edge; any dtype; negative pads crop). Resize runs kernels::f32_resize2d, shared with the eager
// resize2d; cubic and the TF coordinate transforms run resize_taps_f32 (resize_taps.h). Both
// are one fixed sequence of operations per element, so the same bits in both modes
// (docs/exactness.md).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "onemodel/graph/ops/op_util.h"
#include "onemodel/graph/ops/resize_taps.h"
#include "onemodel/kernels/conv.h"

namespace om::graph::ops {
namespace {

using kernels::ResizeCoord;
using kernels::ResizeGeom;
using kernels::ResizeMode;
using kernels::ResizeNearest;

// Resize (opset 11 on) or the older Upsample: which attributes and inputs the node has.
enum class ResizeForm { Resize, Upsample };

// The modes from the attributes; a static reason when one is not supported. Cubic and the TF
// coordinate transforms fill `t` and set *taps: they run resize_taps_f32 (resize_taps.h).
template <ResizeForm F>
const char* resize_modes(const Node& node, TapGeom* t, bool* taps) {
  kernels::ResizeGeom* g = &t->base;
  const std::string_view mode = node.attr_text("mode", "nearest");
  if (F == ResizeForm::Upsample) {  // the opset 7-10 form: asymmetric coordinates, nearest rounds down
    g->coord = ResizeCoord::Asymmetric;
    g->nearest = ResizeNearest::Floor;
    *taps = false;
    if (mode == "nearest") g->mode = ResizeMode::Nearest;
    else if (mode == "linear" || mode == "bilinear") g->mode = ResizeMode::Linear;
    else return "mode must be nearest or linear";
    return nullptr;
  }
  if (mode == "nearest") g->mode = ResizeMode::Nearest;
  else if (mode == "linear") g->mode = ResizeMode::Linear;
  else if (mode == "cubic") t->cubic = true;
  else return "mode must be nearest, linear or cubic";
  t->cubic_a = double(node.attr_float("cubic_coeff_a", -0.75f));
  t->exclude_outside = node.attr_int("exclude_outside", 0) != 0;
  t->extrapolation = node.attr_float("extrapolation_value", 0.0f);
  const std::string_view ct = node.attr_text("coordinate_transformation_mode", "half_pixel");
  if (ct == "half_pixel") g->coord = ResizeCoord::HalfPixel;
  else if (ct == "pytorch_half_pixel") g->coord = ResizeCoord::PytorchHalfPixel;
  else if (ct == "align_corners") g->coord = ResizeCoord::AlignCorners;
  else if (ct == "asymmetric") g->coord = ResizeCoord::Asymmetric;
  else if (ct == "tf_half_pixel_for_nn") t->coord = TapCoord::TfHalfPixelForNN;
  else if (ct == "tf_crop_and_resize") t->coord = TapCoord::TfCropAndResize;
  else return "coordinate_transformation_mode must be half_pixel, pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn or tf_crop_and_resize";
  *taps = t->cubic || t->coord != TapCoord::Kernel;
  const std::string_view nm = node.attr_text("nearest_mode", "round_prefer_floor");
  if (nm == "round_prefer_floor") g->nearest = ResizeNearest::RoundPreferFloor;
  else if (nm == "round_prefer_ceil") g->nearest = ResizeNearest::RoundPreferCeil;
  else if (nm == "floor") g->nearest = ResizeNearest::Floor;
  else if (nm == "ceil") g->nearest = ResizeNearest::Ceil;
  else return "nearest_mode must be round_prefer_floor, round_prefer_ceil, floor or ceil";
  if (node.attr_int("antialias", 0) != 0) return "antialias is not supported";
  if (node.attr("axes")) return "the axes attribute is not supported (give scales or sizes for all 4 axes)";
  if (node.attr_text("keep_aspect_ratio_policy", "stretch") != "stretch") return "keep_aspect_ratio_policy must be stretch";
  return nullptr;
}

// Resize takes (X, roi, scales, sizes); Upsample (X, scales).
template <ResizeForm F>
constexpr size_t scales_input() { return F == ResizeForm::Upsample ? 1 : 2; }

// tf_crop_and_resize's roi (input 1): 8 f32 values, starts then ends of N, C, H, W. N and C
// are not resized, so their roi must be the whole axis (0, 1) unless the axis has one element.
Status read_roi(const InferContext& ctx, const ValueDesc& x, std::vector<float>* roi) {
  const ValueDesc* r = ctx.input(1);
  if (!r || r->dtype != DType::f32 || r->numel() != 8 || !r->data)
    return ctx.error(ErrorKind::InvalidArgument, "tf_crop_and_resize needs roi (input 1): 8 f32 values known when the session plans");
  const float* v = static_cast<const float*>(r->data);
  roi->assign(v, v + 8);
  for (size_t i = 0; i < 2; ++i)
    if (x.shape[i] != 1 && (v[i] != 0.0f || v[4 + i] != 1.0f))
      return ctx.error(ErrorKind::Unsupported, msg("roi on axis ", i, " must be 0 to 1 (N and C are not cropped), got ", v[i], " to ", v[4 + i]));
  return Status::ok();
}

template <ResizeForm F>
Status infer_resize(InferContext& ctx) {
  const ValueDesc* x = ctx.input(0);
  if (!x || x->dtype != DType::f32) return ctx.error(ErrorKind::DTypeMismatch, "X must be f32");
  if (x->shape.size() != 4) return ctx.error(ErrorKind::ShapeMismatch, msg("X must be 4-D NCHW, got ", shape_str(x->shape)));
  TapGeom t;
  bool taps = false;
  if (const char* why = resize_modes<F>(ctx.node, &t, &taps)) return ctx.error(ErrorKind::Unsupported, why);
  std::vector<float> roi = {0, 0, 0, 0, 1, 1, 1, 1};
  if (t.coord == TapCoord::TfCropAndResize) OM_TRY(read_roi(ctx, *x, &roi));
  const ValueDesc* scales = ctx.input(scales_input<F>());
  const ValueDesc* sizes = ctx.input(3);
  if (scales && scales->numel() == 0) scales = nullptr;
  if (sizes && sizes->numel() == 0) sizes = nullptr;
  if (!!scales == !!sizes) return ctx.error(ErrorKind::InvalidArgument, "exactly one of scales and sizes must be given");
  std::vector<int64_t> y(4);
  if (scales) {
    if (scales->dtype != DType::f32 || !scales->data || scales->numel() != 4)
      return ctx.error(ErrorKind::InvalidArgument, "scales must be 4 f32 values known when the session plans (a constant)");
    const float* s = static_cast<const float*>(scales->data);
    if (s[0] != 1.0f || s[1] != 1.0f) return ctx.error(ErrorKind::Unsupported, msg("scales must be 1 on N and C, got ", s[0], ", ", s[1]));
    for (size_t i = 0; i < 4; ++i) {
      // floor(input * (roi end - roi start) * scale); the roi is (0, 1) but for tf_crop_and_resize,
      // and N and C keep their size (scale 1, not cropped).
      const double extent = i < 2 ? 1.0 : double(roi[4 + i]) - double(roi[i]);
      const double len = double(x->shape[i]) * extent * double(s[i]);
      if (!(s[i] > 0.0f) || !(len < double(kMaxNumel)))
        return ctx.error(ErrorKind::InvalidArgument, msg("scale ", i, " = ", s[i], " must be > 0 and give a size below 2^48"));
      y[i] = len > 0 ? int64_t(std::floor(len)) : 0;
    }
  } else {
    std::vector<int64_t> v;
    OM_TRY(const_ints(ctx, 3, &v));
    if (v.size() != 4) return ctx.error(ErrorKind::InvalidArgument, msg("sizes must have 4 values, got ", v.size()));
    if (v[0] != x->shape[0] || v[1] != x->shape[1])
      return ctx.error(ErrorKind::Unsupported, msg("sizes must keep N and C (", x->shape[0], ", ", x->shape[1], "), got ", shape_str(v)));
    y = v;
  }
  for (size_t i = 2; i < 4; ++i)
    if (y[i] < 1 || (x->shape[i] == 0))
      return ctx.error(ErrorKind::InvalidArgument, msg("the output ", shape_str(y), " or input ", shape_str(x->shape), " has an empty spatial axis"));
  OM_TRY(check_shape(msg("Resize node '", ctx.node.name, "'"), y));
  ctx.set_output(0, DType::f32, std::move(y));
  return Status::ok();
}

// Resize's and Upsample's record: the modes and the geometry, scales and roi included. Work:
// the N x C planes.
struct ResizeParams {
  TapGeom t;
  bool taps = false;  // resize_taps_f32, else kernels::f32_resize2d
};

template <ResizeForm F>
Status prepare_resize(const InferContext& ctx, Prepared& out) {
  ResizeParams& p = out.record<ResizeParams>();
  if (const char* why = resize_modes<F>(ctx.node, &p.t, &p.taps)) return ctx.error(ErrorKind::Unsupported, why);
  const std::vector<int64_t>& x = ctx.input(0)->shape;
  const std::vector<int64_t>& y = ctx.outputs[0].shape;
  ResizeGeom& g = p.t.base;
  g.NC = x[0] * x[1];
  g.H = x[2];
  g.W = x[3];
  g.OH = y[2];
  g.OW = y[3];
  const ValueDesc* scales = ctx.input(scales_input<F>());
  if (scales && scales->numel() == 4) {  // known when planning (infer)
    const float* s = static_cast<const float*>(scales->data);
    g.scale_h = s[2];
    g.scale_w = s[3];
    g.from_scales = true;
  } else {
    g.scale_h = double(g.OH) / double(g.H);
    g.scale_w = double(g.OW) / double(g.W);
  }
  if (p.t.coord == TapCoord::TfCropAndResize) {  // roi known when planning (infer)
    const float* roi = static_cast<const float*>(ctx.input(1)->data);
    for (int a = 0; a < 2; ++a) {
      p.t.roi_start[a] = double(roi[2 + a]);
      p.t.roi_end[a] = double(roi[6 + a]);
    }
  }
  out.work = g.NC;
  return Status::ok();
}

// f32_resize2d's tap tables and two rows (the taps form needs none: a few KB either way).
size_t resize_scratch(const InferContext& ctx) {
  const std::vector<int64_t>& y = ctx.outputs[0].shape;
  if (y.size() != 4) return 0;
  ResizeGeom g;
  g.OH = y[2];
  g.OW = y[3];
  return kernels::resize2d_scratch_floats(g) * sizeof(float);
}

Status resize_kernel(const KernelContext& k) {
  const ResizeParams& p = k.params<ResizeParams>();
  const float* x = k.in(0).as<const float>();
  float* y = k.out(0).as<float>();
  if (p.taps) {
    resize_taps_f32(p.t, x, y, k.begin, k.end);
    return Status::ok();
  }
  ResizeGeom g = p.t.base;
  g.NC = k.end - k.begin;
  kernels::f32_resize2d(g, x + k.begin * g.H * g.W, y + k.begin * g.OH * g.OW, static_cast<float*>(k.scratch));
  return Status::ok();
}

// ---- Pad ----

enum class PadMode { Constant, Reflect, Edge };

Status pad_amounts(const InferContext& ctx, std::vector<int64_t>* begin, std::vector<int64_t>* end) {
  const size_t rank = ctx.input(0)->shape.size();
  std::vector<int64_t> pads, axes;
  OM_TRY(const_ints(ctx, 1, &pads));
  if (const ValueDesc* a = ctx.input(3)) {
    (void)a;
    OM_TRY(const_ints(ctx, 3, &axes));
  } else {
    for (size_t i = 0; i < rank; ++i) axes.push_back(int64_t(i));
  }
  if (pads.size() != 2 * axes.size())
    return ctx.error(ErrorKind::InvalidArgument, msg("pads must have 2 values per padded axis (", 2 * axes.size(), "), got ", pads.size()));
  begin->assign(rank, 0);
  end->assign(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t ax;
    if (!normalize_axis(axes[i], int64_t(rank), &ax)) return ctx.error(ErrorKind::InvalidArgument, msg("axis ", axes[i], " is out of range"));
    // Compared without std::abs, which overflows on INT64_MIN.
    auto too_large = [](int64_t v) { return v > kMaxNumel || v < -kMaxNumel; };
    if (too_large(pads[i]) || too_large(pads[axes.size() + i]))
      return ctx.error(ErrorKind::InvalidArgument, msg("pads ", shape_str(pads), " are too large"));
    (*begin)[size_t(ax)] = pads[i];
    (*end)[size_t(ax)] = pads[axes.size() + i];
  }
  return Status::ok();
}

const char* pad_mode_of(const Node& node, PadMode* m) {
  const std::string_view s = node.attr_text("mode", "constant");
  if (s == "constant") *m = PadMode::Constant;
  else if (s == "reflect") *m = PadMode::Reflect;
  else if (s == "edge") *m = PadMode::Edge;
  else return "mode must be constant, reflect or edge (wrap is not supported)";
  return nullptr;
}

Status infer_pad(InferContext& ctx) {
  const ValueDesc* x = ctx.input(0);
  if (!x) return ctx.error(ErrorKind::InvalidArgument, "data is required");
  if (x->shape.size() > kMaxRank) return ctx.error(ErrorKind::Unsupported, msg("rank ", x->shape.size(), " exceeds ", kMaxRank));
  PadMode mode;
  if (const char* why = pad_mode_of(ctx.node, &mode)) return ctx.error(ErrorKind::Unsupported, why);
  if (const ValueDesc* c = ctx.input(2)) {
    if (c->dtype != x->dtype || c->numel() > 1)
      return ctx.error(ErrorKind::InvalidArgument, msg("constant_value must be one ", dtype_name(x->dtype), " value"));
  }
  std::vector<int64_t> b, e, y;
  OM_TRY(pad_amounts(ctx, &b, &e));
  for (size_t i = 0; i < x->shape.size(); ++i) {
    const int64_t d = x->shape[i], o = d + b[i] + e[i];
    if (o < 0) return ctx.error(ErrorKind::InvalidArgument, msg("axis ", i, " of size ", d, " padded by ", b[i], ", ", e[i], " is negative"));
    if (mode == PadMode::Reflect && (b[i] >= d || e[i] >= d) && (b[i] > 0 || e[i] > 0))
      return ctx.error(ErrorKind::InvalidArgument, msg("reflect pads (", b[i], ", ", e[i], ") must be smaller than axis ", i, " (", d, ")"));
    if (mode == PadMode::Edge && d == 0 && o > 0) return ctx.error(ErrorKind::InvalidArgument, msg("edge padding of the empty axis ", i));
    y.push_back(o);
  }
  OM_TRY(check_shape(msg("Pad node '", ctx.node.name, "'"), y));
  ctx.set_output(0, x->dtype, std::move(y));
  return Status::ok();
}

// Pad's record: the mode and the begin pads per axis. Work: the output rows (runs of the last
// axis); a scalar is one unit.
struct PadParams {
  PadMode mode = PadMode::Constant;
  int64_t begin[kMaxRank] = {};
};

Status prepare_pad(const InferContext& ctx, Prepared& out) {
  PadParams& p = out.record<PadParams>();
  if (const char* why = pad_mode_of(ctx.node, &p.mode)) return ctx.error(ErrorKind::Unsupported, why);
  std::vector<int64_t> b, e;
  OM_TRY(pad_amounts(ctx, &b, &e));
  std::copy(b.begin(), b.end(), p.begin);
  const std::vector<int64_t>& y = ctx.outputs[0].shape;
  const int64_t numel = ctx.outputs[0].numel();
  out.work = y.empty() || numel == 0 ? numel : numel / y.back();
  return Status::ok();
}

Status pad_kernel(const KernelContext& k) {
  const PadParams& p = k.params<PadParams>();
  const TensorArg& X = k.in(0);
  const TensorArg& Y = k.out(0);
  const size_t rank = X.rank, es = dtype_size(X.dtype);
  if (rank == 0) {
    std::memcpy(Y.data, X.data, es);
    return Status::ok();
  }
  const PadMode mode = p.mode;
  const int64_t* b = p.begin;
  uint8_t cval[8] = {};
  if (k.has_input(2) && k.in(2).numel == 1) std::memcpy(cval, k.in(2).data, es);
  int64_t xs[kMaxRank];
  contiguous_strides(X.dims, rank, xs);
  const uint8_t* x = static_cast<const uint8_t*>(X.data);
  uint8_t* y = static_cast<uint8_t*>(Y.data);
  const int64_t inner = Y.dims[rank - 1];
  int64_t idx[kMaxRank] = {};  // row k.begin's index over the axes before the last
  int64_t rest = k.begin;
  for (size_t a = rank - 1; a-- > 0;) {
    idx[a] = rest % Y.dims[a];
    rest /= Y.dims[a];
  }
  auto source = [&](size_t ax, int64_t o, int64_t* out) {
    const int64_t d = X.dims[ax];
    int64_t i = o - b[ax];
    if (i >= 0 && i < d) { *out = i; return true; }
    if (mode == PadMode::Constant) return false;
    if (mode == PadMode::Edge) { *out = i < 0 ? 0 : d - 1; return true; }
    if (i < 0) i = -i;
    if (i >= d) i = 2 * (d - 1) - i;
    *out = i;
    return true;
  };
  for (int64_t o = k.begin; o < k.end; ++o) {
    bool inside = true;
    int64_t base = 0;
    for (size_t a = 0; a + 1 < rank; ++a) {
      int64_t s;
      if (!source(a, idx[a], &s)) { inside = false; break; }
      base += s * xs[a];
    }
    uint8_t* dst = y + size_t(o * inner) * es;
    for (int64_t j = 0; j < inner; ++j) {
      int64_t s = 0;
      const bool ok = inside && source(rank - 1, j, &s);
      std::memcpy(dst + size_t(j) * es, ok ? x + size_t(base + s) * es : cval, es);
    }
    for (size_t a = rank - 1; a-- > 0;) {
      if (++idx[a] < Y.dims[a]) break;
      idx[a] = 0;
    }
  }
  return Status::ok();
}

constexpr AttrSpec kResizeAttrs[] = {{"mode", AttrKind::String},
                                     {"coordinate_transformation_mode", AttrKind::String},
                                     {"nearest_mode", AttrKind::String},
                                     {"cubic_coeff_a", AttrKind::Float},
                                     {"exclude_outside", AttrKind::Int},
                                     {"extrapolation_value", AttrKind::Float},
                                     {"antialias", AttrKind::Int},
                                     {"keep_aspect_ratio_policy", AttrKind::String}};
constexpr AttrSpec kPadAttrs[] = {{"mode", AttrKind::String}};
constexpr AttrSpec kUpsampleAttrs[] = {{"mode", AttrKind::String}};

constexpr OpDef kOps[] = {
    op("Resize").upgrades_from(11).per_item(BatchRule::Items).plan_time_inputs_mask((1u << 1) | (1u << 2) | (1u << 3)).inputs(1, 4).attributes(kResizeAttrs)
        .shapes(infer_resize<ResizeForm::Resize>).prepared(prepare_resize<ResizeForm::Resize>).kernel(resize_kernel).with_scratch(resize_scratch)
        .doc("f32 4-D NCHW, spatial axes only; nearest (floor, ceil, round_prefer_floor/ceil), linear or cubic (cubic_coeff_a, exclude_outside); half_pixel, pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn, tf_crop_and_resize (roi known at plan time, extrapolation_value); scales or sizes known at plan time").with_flags(kOpF16InF32),
    // Removed from the default domain after opset 9 (deprecated in 10): what old exporters wrote
    // for interpolation. Opset 7 carried the scales as an attribute; the reader moves it.
    op("Upsample").since_opset(9).per_item(BatchRule::Items).upgrades_from(7).attr_became_input("scales", 1, 9).plan_time_inputs_mask(1u << 1).inputs(2)
        .attributes(kUpsampleAttrs).shapes(infer_resize<ResizeForm::Upsample>).prepared(prepare_resize<ResizeForm::Upsample>)
        .kernel(resize_kernel).with_scratch(resize_scratch)
        .doc("f32 4-D NCHW (opsets 7 to 10); nearest (asymmetric, rounding down) or linear (asymmetric); scales known at plan time, 1 on N and C"),
    op("Pad").upgrades_from(11).per_item(BatchRule::Items).plan_time_inputs_mask((1u << 1) | (1u << 3)).inputs(2, 4).attributes(kPadAttrs).shapes(infer_pad)
        .prepared(prepare_pad).kernel(pad_kernel)
        .doc("any dtype; constant, reflect, edge; pads (and axes) known at plan time; negative pads crop").with_flags(kOpF16InF32),
};

}  // namespace

}  // namespace om::graph::ops

// The family's operators, one symbol each (onemodel/op_list.h).
#define OM_RESIZE_OPS(X) X(Resize) X(Upsample) X(Pad)
OM_OP_FAMILY_TABLE(resize, OM_RESIZE_OPS)
