// Convolutions: Conv and ConvTranspose over 1-D, 2-D and 3-D spatial NCHW f32 tensors (auto_pad,
// groups, dilations, strides, pads, output_padding / output_shape), and the spatial geometry the
// pools share (conv_geom.h). Kernels are kernels::f32_conv2d / f32_conv_transpose2d, which the
// eager operators call too: 1x1 as a GEMM on the input, general convolution as an implicit GEMM
// (panels packed from padded planes in the plan's scratch), depthwise directly; Exact mode fixes
// each output's fma chain over (input channel, kh, kw) (docs/exactness.md). Fast plans take the
// Winograd form for 3x3 stride-1 convolutions from weights packed at plan time (conv_packable).
// 3-D convolutions run as 2-D ones per output depth (depth_unit_geom).
#include <algorithm>

#include "onemodel/graph/ops/conv_geom.h"
#include "onemodel/graph/ops/epilogue.h"
#include "onemodel/graph/ops/epilogue_chain.h"
#include "onemodel/graph/ops/op_util.h"
#include "onemodel/graph/passes/pass.h"

namespace om::graph::ops {

bool read_ints(const Node& node, const char* name, size_t n, int64_t fallback, int64_t lo, int64_t* out) {
  const Attribute* a = node.attr(name);
  if (!a || a->ints.empty()) {
    for (size_t i = 0; i < n; ++i) out[i] = fallback;
    return true;
  }
  if (a->ints.size() != n) return false;
  for (size_t i = 0; i < n; ++i) {
    if (a->ints[i] < lo || a->ints[i] > kMaxNumel) return false;
    out[i] = a->ints[i];
  }
  return true;
}

const char* spatial_geom(const Node& node, GeomKind kind, const int64_t* x, size_t xrank, const int64_t* w, size_t wrank,
                         SpatialGeom* out) {
  if (xrank != 3 && xrank != 4 && xrank != 5) return "the input must be 3-D [N, C, W], 4-D [N, C, H, W] or 5-D [N, C, D, H, W]";
  const size_t sp = xrank - 2;
  out->spatial = sp;
  if (kind != GeomKind::Pool && wrank != xrank) return "the weights must have the input's rank";
  int64_t k[3], s[3], d[3], pads[6], op[3] = {0, 0, 0};
  const int64_t* wk = w ? w + 2 : nullptr;
  if (kind == GeomKind::Pool) {
    const Attribute* ks = node.attr("kernel_shape");
    if (!ks || ks->ints.size() != sp) return "kernel_shape must be given with one value per spatial axis";
  }
  if (!read_ints(node, "kernel_shape", sp, 0, 1, k)) return "kernel_shape must have one value >= 1 per spatial axis";
  if (wk) {
    for (size_t i = 0; i < sp; ++i) {
      if (node.attr("kernel_shape") && k[i] != wk[i]) return "kernel_shape differs from the weights' spatial dims";
      k[i] = wk[i];
      if (k[i] < 1) return "the weights' spatial dims must be >= 1";
    }
  }
  if (!read_ints(node, "strides", sp, 1, 1, s)) return "strides must have one value >= 1 per spatial axis";
  if (!read_ints(node, "dilations", sp, 1, 1, d)) return "dilations must have one value >= 1 per spatial axis";
  if (!read_ints(node, "pads", 2 * sp, 0, 0, pads)) return "pads must have two values >= 0 per spatial axis";
  const int64_t group = node.attr_int("group", 1);
  if (kind != GeomKind::Pool && group < 1) return "group must be >= 1";
  const Attribute* ap = node.attr("auto_pad");
  const std::string* auto_pad = ap && !ap->s.empty() ? &ap->s : nullptr;
  const bool same_upper = auto_pad && *auto_pad == "SAME_UPPER", same_lower = auto_pad && *auto_pad == "SAME_LOWER";
  const bool valid = auto_pad && *auto_pad == "VALID";
  if (auto_pad && !same_upper && !same_lower && !valid && *auto_pad != "NOTSET")
    return "auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID";
  const bool ceil_mode = kind == GeomKind::Pool && node.attr_int("ceil_mode", 0) != 0;

  kernels::ConvGeom& g = out->g;
  g = kernels::ConvGeom{};
  g.N = x[0];
  g.C = x[1];
  g.group = kind == GeomKind::Pool ? 1 : group;
  if (kind == GeomKind::Conv) {
    if (g.C % group != 0) return "group does not divide the input channels";
    int64_t channels = 0;  // checked: a huge group must not overflow into a match
    if (!checked_mul(w[1], group, &channels) || channels != g.C) return "the weights' dim 1 times group must equal the input channels";
    if (w[0] % group != 0) return "group does not divide the output channels (weights' dim 0)";
    g.M = w[0];
  } else if (kind == GeomKind::ConvTranspose) {
    if (g.C % group != 0) return "group does not divide the input channels";
    if (w[0] != g.C) return "the weights' dim 0 must equal the input channels";
    if (!checked_mul(w[1], group, &g.M)) return "output channels overflow";
    if (!read_ints(node, "output_padding", sp, 0, 0, op)) return "output_padding must have one value >= 0 per spatial axis";
  } else {
    g.M = g.C;
  }
  int64_t oe[3], pb[3], pe[3];
  const Attribute* oshape = kind == GeomKind::ConvTranspose ? node.attr("output_shape") : nullptr;
  if (oshape && !oshape->ints.empty() && oshape->ints.size() != sp && oshape->ints.size() != xrank)
    return "output_shape must have one value per spatial axis";
  for (size_t i = 0; i < sp; ++i) {
    const int64_t in = x[2 + i];
    int64_t eff;
    if (!checked_mul(k[i] - 1, d[i], &eff) || eff + 1 > kMaxNumel) return "the dilated kernel is too large";
    eff += 1;
    pb[i] = pads[i];
    pe[i] = pads[sp + i];
    if (kind == GeomKind::ConvTranspose) {
      int64_t full;
      if (!checked_mul(s[i], in > 0 ? in - 1 : 0, &full) || full + op[i] + eff > kMaxNumel) return "the output is too large";
      full += op[i] + eff;
      if (oshape && !oshape->ints.empty()) {
        const int64_t want = oshape->ints[oshape->ints.size() - sp + i];
        if (want < 1 || want > kMaxNumel) return "output_shape must be between 1 and 2^48";
        // Negative when output_shape exceeds the full transposed output: the pads become negative
        // and the rows and columns they add get only the bias (as output_padding's do). The halves
        // round down (ONNX's definition), so by default the extra row lands at the end.
        const int64_t total = full - want;
        const int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);
        pb[i] = same_upper ? half : total - half;
        pe[i] = total - pb[i];
      } else if (same_upper || same_lower) {
        int64_t want;
        if (!checked_mul(in, s[i], &want)) return "the output is too large";
        const int64_t total = std::max<int64_t>(0, full - want);
        pb[i] = same_upper ? total / 2 : total - total / 2;
        pe[i] = total - pb[i];
      } else if (valid) {
        pb[i] = pe[i] = 0;
      }
      oe[i] = full - pb[i] - pe[i];
      if (oe[i] < 1) return "the pads remove the whole output";
      if (op[i] >= std::max(s[i], d[i])) return "output_padding must be smaller than the stride or the dilation";
    } else {
      if (same_upper || same_lower) {
        const int64_t o = (in + s[i] - 1) / s[i];
        const int64_t total = std::max<int64_t>(0, (o - 1) * s[i] + eff - in);
        pb[i] = same_upper ? total / 2 : total - total / 2;
        pe[i] = total - pb[i];
      } else if (valid) {
        pb[i] = pe[i] = 0;
      }
      if (pb[i] >= eff || pe[i] >= eff) {
        if (kind == GeomKind::Pool) return "a pad is not smaller than the (dilated) kernel";
      }
      oe[i] = kernels::conv_out_extent(in, k[i], s[i], d[i], pb[i], pe[i], ceil_mode);
      if (oe[i] < 1) return "the (dilated) kernel is larger than the padded input";
    }
  }
  // The per-axis arrays hold [D,] [H,] W: W is the last, H the one before it.
  const size_t wi = sp - 1;
  const bool has_h = sp >= 2;
  const size_t hi = has_h ? sp - 2 : 0;
  g.H = has_h ? x[2 + hi] : 1;
  g.W = x[1 + sp];
  g.kH = has_h ? k[hi] : 1;
  g.kW = k[wi];
  g.sH = has_h ? s[hi] : 1;
  g.sW = s[wi];
  g.dH = has_h ? d[hi] : 1;
  g.dW = d[wi];
  g.pad_t = has_h ? pb[hi] : 0;
  g.pad_l = pb[wi];
  out->pad_b = has_h ? pe[hi] : 0;
  out->pad_r = pe[wi];
  g.OH = has_h ? oe[hi] : 1;
  g.OW = oe[wi];
  out->depth = DepthGeom{};
  if (sp == 3) {
    out->depth = DepthGeom{x[2], oe[0], k[0], s[0], d[0], pb[0], pe[0]};
    // A 3-D convolution runs as 2-D ones over C*kD input (or M*kD output) channels
    // (depth_unit_geom): bound those planes so no size overflows.
    int64_t planes = 0, n = 0;
    if (kind == GeomKind::Conv && (!checked_mul(g.C, k[0], &planes) || !checked_mul(planes, count_mul(g.H, g.W), &n) || n > kMaxNumel))
      return "the input channels times the kernel depth, times the plane, are too large";
    if (kind == GeomKind::ConvTranspose &&
        (!checked_mul(g.M, k[0], &planes) || !checked_mul(planes, count_mul(g.OH, g.OW), &n) || n > kMaxNumel))
      return "the output channels times the kernel depth, times the output plane, are too large";
  }
  return nullptr;
}

std::string geom_error_text(const Node& node, const char* reason, const std::vector<int64_t>& x, const std::vector<int64_t>* w) {
  auto ints = [&](const char* name) {
    const Attribute* a = node.attr(name);
    return a ? shape_str(a->ints) : std::string("(default)");
  };
  std::string s = msg(reason, ": input ", shape_str(x));
  if (w) s += msg(", weights ", shape_str(*w));
  s += msg(", kernel_shape ", ints("kernel_shape"), ", strides ", ints("strides"), ", dilations ", ints("dilations"), ", pads ",
           ints("pads"), ", group ", node.attr_int("group", 1), ", auto_pad ", node.attr_string("auto_pad", "NOTSET"));
  return s + "; fix the attributes or the shapes so every output window fits";
}

namespace {

// [N, M, (OD,) (OH,) OW]: a convolution's output (a transposed convolution's) for its geometry.
std::vector<int64_t> output_dims(const SpatialGeom& sg) {
  std::vector<int64_t> y{sg.g.N, sg.g.M};
  if (sg.spatial == 3) y.push_back(sg.depth.OD);
  if (sg.spatial >= 2) y.push_back(sg.g.OH);
  y.push_back(sg.g.OW);
  return y;
}

Status infer_conv_like(InferContext& ctx, GeomKind kind) {
  OM_TRY(require_f32_input(ctx, 0));
  OM_TRY(require_f32_input(ctx, 1));
  const auto& x = ctx.input(0)->shape;
  const auto& w = ctx.input(1)->shape;
  SpatialGeom sg;
  if (const char* why = spatial_geom(ctx.node, kind, x.data(), x.size(), w.data(), w.size(), &sg))
    return ctx.error(ErrorKind::ShapeMismatch, geom_error_text(ctx.node, why, x, &w));
  if (const ValueDesc* b = ctx.input(2)) {
    OM_TRY(require_f32_input(ctx, 2));
    if (b->shape.size() != 1 || b->shape[0] != sg.g.M)
      return ctx.error(ErrorKind::ShapeMismatch, msg("bias must be [", sg.g.M, "] (the output channels), got ", shape_str(b->shape)));
  }
  std::vector<int64_t> y = output_dims(sg);
  OM_TRY(check_shape(msg(ctx.node.op_type, " node '", ctx.node.name, "'"), y));
  ctx.set_output(0, DType::f32, std::move(y));
  return Status::ok();
}

Status infer_conv(InferContext& ctx) { return infer_conv_like(ctx, GeomKind::Conv); }

// FusedConv's activation (graph/ops/epilogue.h's list), Identity when absent.
bool conv_activation(const Node& node, kernels::UnaryOp* op) {
  const Attribute* a = node.attr("activation");
  if (!a || a->s.empty() || a->s == "Identity") {
    *op = kernels::UnaryOp::Identity;
    return true;
  }
  const EpilogueActivation* e = find_epilogue_activation(a->s);
  if (e) *op = e->op;
  return e != nullptr;
}

// FusedConv's optional inputs 3..6: a BatchNormalization's scale, B, mean and var, each [M];
// input 7: a residual added after them, before the activation (broadcast against the output).
constexpr const char* kNormInputs[] = {"scale", "B", "mean", "var"};
constexpr size_t kResidualInput = 7;

Status infer_fused_conv(InferContext& ctx) {
  OM_TRY(infer_conv_like(ctx, GeomKind::Conv));
  kernels::UnaryOp op;
  if (!conv_activation(ctx.node, &op))
    return ctx.error(ErrorKind::InvalidArgument, msg("unknown activation '", ctx.node.attr("activation")->s, "' (",
                                                     epilogue_activation_names(), ")"));
  if (ctx.input(3) || ctx.input(4) || ctx.input(5) || ctx.input(6)) {
    const int64_t M = ctx.outputs[0].shape[1];
    for (size_t i = 3; i < 7; ++i) {
      const ValueDesc* v = ctx.input(i);
      if (!v || v->dtype != DType::f32 || v->shape.size() != 1 || v->shape[0] != M)
        return ctx.error(ErrorKind::ShapeMismatch,
                         msg("the batch normalisation's ", kNormInputs[i - 3], " (input ", i, ") must be f32 [", M,
                             "] (the output channels)", v ? msg(", got ", dtype_name(v->dtype), " ", shape_str(v->shape)) : std::string()));
    }
  }
  kernels::ChainProgram chain;  // after the activation (the pass fuse_conv_chain)
  bool has_chain = false;
  OM_TRY(epilogue_chain(ctx, &chain, &has_chain));
  if (const ValueDesc* r = ctx.input(kResidualInput)) {  // Y = act(conv + R): the Add's broadcast
    OM_TRY(require_f32_input(ctx, kResidualInput));
    const std::vector<int64_t> conv = ctx.outputs[0].shape;
    std::vector<int64_t> y;
    OM_TRY(broadcast_shapes(ctx, {&conv, &r->shape}, &y));
    OM_TRY(check_shape(msg(ctx.node.op_type, " node '", ctx.node.name, "'"), y));
    ctx.set_output(0, DType::f32, std::move(y));
  }
  return Status::ok();
}
Status infer_conv_transpose(InferContext& ctx) { return infer_conv_like(ctx, GeomKind::ConvTranspose); }

SpatialGeom geom_of(const InferContext& ctx, GeomKind kind) {
  SpatialGeom sg;
  const auto& x = ctx.input(0)->shape;
  const auto& w = ctx.input(1)->shape;
  spatial_geom(ctx.node, kind, x.data(), x.size(), w.data(), w.size(), &sg);
  return sg;
}

// A 3-D convolution runs per (image, output depth) as a 2-D one over C*kD channels: channel
// c*kD + kd is the input's depth slice od*sD - pad_front + kd*dD of channel c (zeros outside the
// input), and the weights [M, C/group, kD, kH, kW] read as [M, C/group*kD, kH, kW] are the same
// memory, the channels of a group still adjacent. Each output's fma chain then runs over
// (c, kd, kh, kw): the 3-D order, in every 2-D form (and packing, Winograd, groups) unchanged.
// A 3-D transposed convolution runs per (image, input depth) as a 2-D one with M*kD output
// channels (W [C, M/group, kD, kH, kW] read as [C, M/group*kD, kH, kW]): channel m*kD + kd goes to
// the output depth id*sD + kd*dD - pad_front. One image's geometry; 1-D and 2-D: sg.g itself.
kernels::ConvGeom depth_unit_geom(const SpatialGeom& sg, GeomKind kind) {
  kernels::ConvGeom g = sg.g;
  if (sg.spatial != 3) return g;
  g.N = 1;
  if (kind == GeomKind::Conv) g.C *= sg.depth.kD;  // spatial_geom bounded C*kD*H*W
  else g.M *= sg.depth.kD;                         // and M*kD*OH*OW
  return g;
}

// A 3-D convolution's unit buffers after the 2-D scratch (each 64-byte aligned): the gathered
// input planes [C, H, W] and the unit's 2-D output [M, OH, OW] of depth_unit_geom's geometry.
size_t round16(size_t floats) { return (floats + 15) / 16 * 16; }
size_t depth_unit_floats(const kernels::ConvGeom& u) { return round16(size_t(u.C * u.H * u.W)) + round16(size_t(u.M * u.OH * u.OW)); }

// Fast plans may run the Winograd form when the weights were packed for it (conv_packable): room
// for either.
size_t conv2d_scratch_floats(const kernels::ConvGeom& g, ArithmeticMode mode) {
  size_t floats = kernels::conv_scratch_floats(g);
  if (mode == ArithmeticMode::Fast) floats = std::max(floats, kernels::conv_winograd_scratch_floats(g));
  return floats;
}
// A 3-D convolution's unit buffers follow (depth_unit_floats).
size_t conv_scratch(const InferContext& ctx) {
  const SpatialGeom sg = geom_of(ctx, GeomKind::Conv);
  const kernels::ConvGeom g = depth_unit_geom(sg, GeomKind::Conv);
  size_t floats = conv2d_scratch_floats(g, ctx.mode);
  if (sg.spatial == 3) floats = round16(floats) + depth_unit_floats(g);
  return floats * sizeof(float);
}

// The convolution's own output shape [N, M, (OH,) OW] (before a FusedConv's residual broadcast).
std::vector<int64_t> conv_output_shape(const InferContext& ctx) { return output_dims(geom_of(ctx, GeomKind::Conv)); }

// Whether a FusedConv's residual has the output's shape and the output is the convolution's: the
// residual is then added in the kernel's epilogue. Else it broadcasts, and the convolution's
// output goes to the scratch first.
bool residual_in_place(const InferContext& ctx) {
  const ValueDesc* r = ctx.input(kResidualInput);
  return r && r->shape == ctx.outputs[0].shape && r->shape == conv_output_shape(ctx);
}

// Bytes before a broadcast residual's convolution output in the scratch.
size_t conv_output_offset(const InferContext& ctx) { return (conv_scratch(ctx) + 63) / 64 * 64; }

size_t fused_conv_scratch(const InferContext& ctx) {
  if (!ctx.input(kResidualInput) || residual_in_place(ctx)) return conv_scratch(ctx);
  int64_t n = 1;
  for (int64_t d : conv_output_shape(ctx)) n *= d;  // inference bounded it (check_shape)
  return conv_output_offset(ctx) + size_t(n) * sizeof(float);
}
size_t conv_transpose_scratch(const InferContext& ctx) {
  const SpatialGeom sg = geom_of(ctx, GeomKind::ConvTranspose);
  const kernels::ConvGeom g = depth_unit_geom(sg, GeomKind::ConvTranspose);
  size_t floats = kernels::conv_transpose_scratch_floats(g);
  if (sg.spatial == 3) floats = round16(floats) + depth_unit_floats(g);
  return floats * sizeof(float);
}

// The convolutions' record: the geometry, built once per plan (infer validated it), and
// FusedConv's epilogue. Work: the N images (an image's outputs read only that image; a sub-range
// runs the same per-image chains with a smaller N, so the bits do not change).
struct ConvParams {
  kernels::ConvGeom g;  // a 3-D convolution's: one unit's 2-D geometry (depth_unit_geom)
  bool depth3 = false;  // 3-D: units are (image, output depth) planes, or transposed (image)s
  DepthGeom depth;
  size_t cols_offset = 0, unit_offset = 0;  // 3-D: the unit buffers in the scratch (floats)
  int64_t units = 0;                        // the work units (a broadcast residual runs them as one)
  kernels::ConvAlgo algo = kernels::ConvAlgo::TileGemm;  // Conv and FusedConv
  kernels::UnaryOp act = kernels::UnaryOp::Identity;
  bool has_chain = false;  // FusedConv's chain after the activation
  kernels::ChainProgram chain;
  float epsilon = 1e-5f;  // FusedConv's batch normalisation
  // FusedConv's residual: none, in the epilogue (its shape is the output's), or broadcast: the
  // convolution's output, of shape `conv_dims`, at `conv_offset` in the scratch, then
  // Y = act(C + R) (one unit).
  enum class Residual : uint8_t { None, InPlace, Broadcast } residual = Residual::None;
  size_t conv_offset = 0, conv_rank = 0;
  int64_t conv_dims[5] = {};
};

template <GeomKind kind>
Status prepare_conv(const InferContext& ctx, Prepared& out) {
  ConvParams& p = out.record<ConvParams>();
  const SpatialGeom sg = geom_of(ctx, kind);
  p.g = depth_unit_geom(sg, kind);
  conv_activation(ctx.node, &p.act);
  OM_TRY(epilogue_chain(ctx, &p.chain, &p.has_chain));
  p.epsilon = ctx.node.attr_float("epsilon", 1e-5f);
  p.algo = kernels::conv_algorithm(p.g, ctx.mode, ctx.input(3) != nullptr);
  // Work units: images; a depthwise convolution's channels are independent too, so its unit is
  // one (image, channel) plane (a batch-1 depthwise layer splits over threads by channels).
  // A 3-D convolution's unit is one (image, output depth), a transposed one's an image.
  const bool planes = kind == GeomKind::Conv && p.algo == kernels::ConvAlgo::Depthwise;
  out.work = planes ? count_mul(p.g.N, p.g.C) : p.g.N;
  if (sg.spatial == 3) {
    p.depth3 = true;
    p.depth = sg.depth;
    const size_t floats = round16(kind == GeomKind::Conv ? conv2d_scratch_floats(p.g, ctx.mode)
                                                         : kernels::conv_transpose_scratch_floats(p.g));
    p.cols_offset = floats;
    p.unit_offset = floats + round16(size_t(p.g.C * p.g.H * p.g.W));
    out.work = kind == GeomKind::Conv ? count_mul(sg.g.N, sg.depth.OD) : sg.g.N;
  }
  const int64_t depth_taps = kind == GeomKind::Conv || sg.spatial != 3 ? 1 : sg.depth.kD;  // p.g.C has Conv's kD
  out.cost = product_cost(count_mul(count_mul(sg.g.N, sg.g.M), sg.spatial == 3 ? sg.depth.OD : 1), count_mul(p.g.OH, p.g.OW),
                          count_mul(count_mul(p.g.C / std::max<int64_t>(p.g.group, 1), count_mul(p.g.kH, p.g.kW)), depth_taps));
  // A depthwise multiply-add costs about 2.5 of a GEMM's (one load each, no operand reused from a
  // register), so its work counts twice: measured on one 3x3 layer alone, two threads gave
  // 1.31-1.48x at 36,864 units of product cost (32x32x32, 128x16x16: 6-11 us), and at 18,000 to
  // 21,000 won and lost (docs/threads.md, "The threshold").
  if (planes) out.cost = count_mul(out.cost, 2);
  p.units = out.work;
  if (kind != GeomKind::Conv || !ctx.input(kResidualInput)) return Status::ok();
  if (residual_in_place(ctx)) {
    p.residual = ConvParams::Residual::InPlace;
    return Status::ok();
  }
  p.residual = ConvParams::Residual::Broadcast;
  p.conv_offset = conv_output_offset(ctx);
  const std::vector<int64_t> conv = conv_output_shape(ctx);  // rank 3, 4 or 5
  p.conv_rank = conv.size();
  std::copy(conv.begin(), conv.end(), p.conv_dims);
  out.work = 1;
  return Status::ok();
}

// Images [begin, end) of x and y (and of a residual shaped like y), as a geometry of end - begin
// images.
kernels::ConvGeom image_range(kernels::ConvGeom g, int64_t begin, int64_t end, const float** x, float** y,
                              const float** residual = nullptr) {
  *x += begin * g.C * g.H * g.W;
  *y += begin * g.M * g.OH * g.OW;
  if (residual && *residual) *residual += begin * g.M * g.OH * g.OW;
  g.N = end - begin;
  return g;
}

// The operands of one run of a convolution's units (conv_kernel's inputs as one call sees them).
struct ConvOperands {
  const float *x, *w, *bias;
  const kernels::ConvNorm* norm;
  const float* residual;  // shaped like y, or null
  kernels::ConvActivation act;
  float* y;
  float* scratch;
};

// A 3-D convolution's units [begin, end): (image, output depth) planes. Each gathers its C*kD
// input depth slices (depth_unit_geom), runs the 2-D convolution into the unit buffer and writes
// the M output planes; a residual is added there (one rounding, as the Add), then the activation.
void conv_depth_units(const ConvParams& p, const KernelContext& k, int64_t begin, int64_t end, const ConvOperands& o) {
  const DepthGeom& d = p.depth;
  const int64_t C = p.g.C / d.kD, plane = p.g.H * p.g.W, P = p.g.OH * p.g.OW;
  float* cols = o.scratch + p.cols_offset;
  float* t = o.scratch + p.unit_offset;
  for (int64_t u = begin; u < end; ++u) {
    const int64_t n = u / d.OD, od = u % d.OD;
    for (int64_t c = 0; c < C; ++c) {
      for (int64_t kd = 0; kd < d.kD; ++kd) {
        const int64_t id = od * d.sD - d.pad_front + kd * d.dD;
        float* dst = cols + (c * d.kD + kd) * plane;
        if (id >= 0 && id < d.D) std::copy_n(o.x + ((n * C + c) * d.D + id) * plane, plane, dst);
        else std::fill_n(dst, plane, 0.0f);  // a padded slice: fma(0, w, acc), as 2-D pads
      }
    }
    kernels::f32_conv2d_with(p.algo, p.g, cols, o.w, o.bias, o.residual ? kernels::ConvActivation() : o.act, t, o.scratch,
                             k.packed_b, k.mode, o.norm, nullptr);
    for (int64_t m = 0; m < p.g.M; ++m) {
      const int64_t at = ((n * p.g.M + m) * d.OD + od) * P;
      float* y = o.y + at;
      if (!o.residual) {
        std::copy_n(t + m * P, P, y);
        continue;
      }
      const float* r = o.residual + at;
      for (int64_t i = 0; i < P; ++i) y[i] = t[m * P + i] + r[i];
      if (o.act.op != kernels::UnaryOp::Identity) kernels::f32_unary(o.act.op, y, y, size_t(P));
      o.act.chain_rows(y, 1, size_t(P), size_t(P));
    }
  }
}

// Units [begin, end): images, or for a depthwise convolution (image, channel) planes, as runs of
// channels within one image: each run is the depthwise convolution of those channels (their
// weights, biases, statistics and residual planes).
void conv_units(const ConvParams& p, const KernelContext& k, int64_t begin, int64_t end, const ConvOperands& o) {
  if (p.depth3) return conv_depth_units(p, k, begin, end, o);
  const float* x = o.x;
  float* y = o.y;
  if (p.algo != kernels::ConvAlgo::Depthwise) {
    const float* residual = o.residual;
    const kernels::ConvGeom g = image_range(p.g, begin, end, &x, &y, &residual);
    kernels::f32_conv2d_with(p.algo, g, x, o.w, o.bias, o.act, y, o.scratch, k.packed_b, k.mode, o.norm, residual);
    return;
  }
  const int64_t C = p.g.C, mult = p.g.M / C, kk = p.g.kH * p.g.kW, P = p.g.OH * p.g.OW;
  for (int64_t u = begin; u < end;) {
    const int64_t n = u / C, c0 = u % C, c1 = std::min(C, c0 + (end - u));
    kernels::ConvGeom g = p.g;
    g.N = 1;
    g.C = g.group = c1 - c0;
    g.M = g.C * mult;
    const int64_t m0 = c0 * mult, out0 = (n * p.g.M + m0) * P;
    kernels::ConvNorm part{};
    if (o.norm) part = {o.norm->scale + m0, o.norm->bias + m0, o.norm->mean + m0, o.norm->var + m0, o.norm->eps};
    kernels::f32_conv2d_with(p.algo, g, x + (n * C + c0) * p.g.H * p.g.W, o.w + m0 * kk, o.bias ? o.bias + m0 : nullptr, o.act,
                             y + out0, o.scratch, k.packed_b, k.mode, o.norm ? &part : nullptr,
                             o.residual ? o.residual + out0 : nullptr);
    u += c1 - c0;
  }
}

// Conv, and FusedConv (bias, normalisation, residual, then the activation after each output's
// complete chain).
Status conv_kernel(const KernelContext& k) {
  const ConvParams& p = k.params<ConvParams>();
  kernels::ConvNorm norm{};
  const bool has_norm = k.has_input(3);
  if (has_norm)
    norm = {k.in(3).as<const float>(), k.in(4).as<const float>(), k.in(5).as<const float>(), k.in(6).as<const float>(), p.epsilon};
  ConvOperands o{k.in(0).as<const float>(), k.in(1).as<const float>(), k.has_input(2) ? k.in(2).as<const float>() : nullptr,
                 has_norm ? &norm : nullptr, nullptr, kernels::ConvActivation(p.act, p.has_chain ? &p.chain : nullptr, kernels::f32_chain),
                 k.out(0).as<float>(), static_cast<float*>(k.scratch)};
  if (p.residual == ConvParams::Residual::InPlace) o.residual = k.in(kResidualInput).as<const float>();
  if (p.residual != ConvParams::Residual::Broadcast) {
    conv_units(p, k, k.begin, k.end, o);
    return Status::ok();
  }
  // The whole convolution into the scratch (one unit), then Y = act(C + R) as the Add and the
  // activation nodes compute it, then the chain.
  const kernels::ConvActivation act = o.act;
  o.y = reinterpret_cast<float*>(static_cast<uint8_t*>(k.scratch) + p.conv_offset);
  o.act = kernels::ConvActivation();
  conv_units(p, k, 0, p.units, o);
  const TensorArg& Y = k.out(0);
  add_broadcast(o.y, p.conv_dims, p.conv_rank, k.in(kResidualInput), Y);
  if (act.op != kernels::UnaryOp::Identity) kernels::f32_unary(act.op, Y.as<float>(), Y.as<float>(), size_t(Y.numel));
  act.chain_rows(Y.as<float>(), 1, size_t(Y.numel), size_t(Y.numel));
  return Status::ok();
}

// A 3-D transposed convolution's units [begin, end): images. For each input depth slice (in
// order) the 2-D transposed convolution of its C planes gives M*kD planes (depth_unit_geom);
// plane m*kD + kd is added to output depth id*sD + kd*dD - pad_front when inside. Exact mode: each
// output starts at +0 and receives those planes' values in the order (id, kd), each one
// addition, each plane the 2-D chain; then the bias.
void conv_transpose_depth_units(const ConvParams& p, const KernelContext& k, int64_t begin, int64_t end, const float* bias) {
  const DepthGeom& d = p.depth;
  const int64_t C = p.g.C, M = p.g.M / d.kD, plane = p.g.H * p.g.W, P = p.g.OH * p.g.OW;
  float* scratch = static_cast<float*>(k.scratch);
  float* cols = scratch + p.cols_offset;
  float* t = scratch + p.unit_offset;
  const float* x = k.in(0).as<const float>();
  for (int64_t n = begin; n < end; ++n) {
    float* y = k.out(0).as<float>() + n * M * d.OD * P;
    std::fill_n(y, M * d.OD * P, 0.0f);
    for (int64_t id = 0; id < d.D; ++id) {
      for (int64_t c = 0; c < C; ++c) std::copy_n(x + ((n * C + c) * d.D + id) * plane, plane, cols + c * plane);
      kernels::f32_conv_transpose2d(p.g, cols, k.in(1).as<const float>(), nullptr, t, scratch, k.packed_b, k.mode);
      for (int64_t m = 0; m < M; ++m) {
        for (int64_t kd = 0; kd < d.kD; ++kd) {
          const int64_t od = id * d.sD + kd * d.dD - d.pad_front;
          if (od < 0 || od >= d.OD) continue;
          float* yo = y + (m * d.OD + od) * P;
          const float* src = t + (m * d.kD + kd) * P;
          for (int64_t i = 0; i < P; ++i) yo[i] += src[i];
        }
      }
    }
    if (!bias) continue;
    for (int64_t m = 0; m < M; ++m) {
      float* yo = y + m * d.OD * P;
      for (int64_t i = 0; i < d.OD * P; ++i) yo[i] += bias[m];
    }
  }
}

Status conv_transpose_kernel(const KernelContext& k) {
  const ConvParams& p = k.params<ConvParams>();
  const float* bias = k.has_input(2) ? k.in(2).as<const float>() : nullptr;
  if (p.depth3) {
    conv_transpose_depth_units(p, k, k.begin, k.end, bias);
    return Status::ok();
  }
  const float* x = k.in(0).as<const float>();
  float* y = k.out(0).as<float>();
  const kernels::ConvGeom g = image_range(p.g, k.begin, k.end, &x, &y);
  kernels::f32_conv_transpose2d(g, x, k.in(1).as<const float>(), bias, y, static_cast<float*>(k.scratch), k.packed_b, k.mode);
  return Status::ok();
}

void pack_conv_weights(const int64_t* params, const void* w, float* dst) {
  kernels::ConvWeightPack p;
  p.M = params[0];
  p.K = params[1];
  p.winograd = params[2] == 1;
  p.transposed = params[2] == 2;
  kernels::conv_pack_weights(p, static_cast<const float*>(w), dst);
}

// Conv's weights (group 1) as the GEMM's packed left operand, or in Fast plans their Winograd
// transform when the geometry takes that form, or transposed as the right-hand operand when the
// first plan has few output positions (kernels/conv.h). Every form serves every later plan of
// other input sizes (the transposed one in blocks of positions), with the same bits.
bool conv_packable_weights(const Node& node, const std::vector<const ValueDesc*>& inputs, PackableB* out) {
  SpatialGeom sg;
  const auto& x = inputs[0]->shape;
  const auto& w = inputs[1]->shape;
  if (spatial_geom(node, GeomKind::Conv, x.data(), x.size(), w.data(), w.size(), &sg) != nullptr) return false;
  const kernels::ConvGeom g = depth_unit_geom(sg, GeomKind::Conv);  // a 3-D one's 2-D units
  kernels::ConvWeightPack p;
  p.M = g.M;
  p.winograd = out->mode == ArithmeticMode::Fast && kernels::conv_winograd_fits(g);
  p.transposed = !p.winograd && kernels::conv_prefers_transposed(g);
  if (!checked_mul(g.C, g.kH * g.kW, &p.K) || p.M <= 0 || p.K <= 0) return false;
  if (p.winograd) p.K = g.C;
  out->K = size_t(p.K);
  out->N = size_t(p.M);
  out->floats = kernels::conv_packed_weights_floats(p);
  out->pack = pack_conv_weights;
  out->params[0] = p.M;
  out->params[1] = p.K;
  out->params[2] = p.winograd ? 1 : p.transposed ? 2 : 0;
  return true;
}

// ConvTranspose's weights as the GEMM's right-hand operand when one GEMM shape covers the node
// (group 1); Conv's as its left operand (conv_packable_weights).
bool conv_packable(const Node& node, const std::vector<const ValueDesc*>& inputs, PackableB* out) {
  if (inputs.size() < 2 || !inputs[0] || !inputs[1] || inputs[1]->dtype != DType::f32) return false;
  if (node.attr_int("group", 1) != 1) return false;
  out->input = 1;
  if (node.op_type != "ConvTranspose") return conv_packable_weights(node, inputs, out);
  const auto& w = inputs[1]->shape;
  if (w.size() < 3) return false;
  int64_t kk = 1;
  for (size_t i = 2; i < w.size(); ++i)
    if (!checked_mul(kk, w[i], &kk)) return false;
  out->input = 1;
  if (is_default_domain(node.domain) && node.op_type == "ConvTranspose") {
    int64_t Nc;
    if (!checked_mul(w[1], kk, &Nc)) return false;
    out->K = size_t(w[0]);
    out->N = size_t(Nc);
    out->rs = Nc;
    out->cs = 1;
    return true;
  }
  return false;
}

constexpr AttrSpec kConvAttrs[] = {{"auto_pad", AttrKind::String},      {"dilations", AttrKind::PositiveInts},
                                   {"group", AttrKind::PositiveInt},    {"kernel_shape", AttrKind::PositiveInts},
                                   {"pads", AttrKind::Ints},            {"strides", AttrKind::PositiveInts}};
constexpr AttrSpec kFusedConvAttrs[] = {{"activation", AttrKind::String},   {"auto_pad", AttrKind::String},
                                        {"epsilon", AttrKind::Float},
                                        {"ops", AttrKind::Ints}, {"operands", AttrKind::Ints}, {"consts", AttrKind::Floats},
                                        {"dilations", AttrKind::PositiveInts}, {"group", AttrKind::PositiveInt},
                                        {"kernel_shape", AttrKind::PositiveInts}, {"pads", AttrKind::Ints},
                                        {"strides", AttrKind::PositiveInts}};
constexpr AttrSpec kConvTransposeAttrs[] = {
    {"auto_pad", AttrKind::String},      {"dilations", AttrKind::PositiveInts}, {"group", AttrKind::PositiveInt},
    {"kernel_shape", AttrKind::PositiveInts}, {"output_padding", AttrKind::Ints}, {"output_shape", AttrKind::Ints},
    {"pads", AttrKind::Ints},            {"strides", AttrKind::PositiveInts}};

constexpr OpDef kOps[] = {
    op("Conv").upgrades_from(7).per_item(BatchRule::Items).written_by_passes(writers<passes::fold_conv_batchnorm>).inputs(2, 3).attributes(kConvAttrs).shapes(infer_conv).prepared(prepare_conv<GeomKind::Conv>).kernel(conv_kernel).with_scratch(conv_scratch)
        .with_prepack(conv_packable)
        .doc("f32, 1-D, 2-D and 3-D spatial; auto_pad, groups, dilations, strides, pads; weights packed when planning; 1x1 as one GEMM on the input, implicit-GEMM panels, direct depthwise, Winograd F(2x2, 3x3) for 3x3 stride-1 in Fast sessions; 3-D as 2-D per output depth over (c, kd) channels; exact: fma chain over (c, [kd,] kh, kw), then bias").with_flags(kOpF16InF32),
    op("ConvTranspose").upgrades_from(7).per_item(BatchRule::Items).inputs(2, 3).attributes(kConvTransposeAttrs).shapes(infer_conv_transpose)
        .prepared(prepare_conv<GeomKind::ConvTranspose>).kernel(conv_transpose_kernel)
        .with_scratch(conv_transpose_scratch).with_prepack(conv_packable)
        .doc("f32, 1-D, 2-D and 3-D spatial; auto_pad, groups, dilations, strides, pads, output_padding, output_shape; exact: fixed GEMM chain then scatter order (3-D: the 2-D result of each (input depth, kd) added in that order), then bias").with_flags(kOpF16InF32),
    op("FusedConv").in_domain(kOnemodelDomain).per_item(BatchRule::Items).written_by_passes(writers<passes::fuse_conv_epilogue, passes::fuse_conv_chain>).inputs(2, 8).attributes(kFusedConvAttrs).shapes(infer_fused_conv).prepared(prepare_conv<GeomKind::Conv>).kernel(conv_kernel)
        .with_scratch(fused_conv_scratch).with_prepack(conv_packable)
        .doc("written by the conv fusion passes: chain(act(BN(Conv(X, W) + bias) + R)), the optional inference batch normalisation (inputs 3-6: scale, B, mean, var; epsilon), the optional residual R (input 7, broadcast), the activation after each output's complete fma chain, then the optional chain of elementwise steps (ops, operands, consts: FusedElementwise's) on each output row just written, each step rounded as the separate nodes"),
};

}  // namespace

}  // namespace om::graph::ops

// The family's operators, one symbol each (onemodel/op_list.h).
#define OM_CONV_OPS(X) X(Conv) X(ConvTranspose) X(FusedConv)
OM_OP_FAMILY_TABLE(conv, OM_CONV_OPS)
