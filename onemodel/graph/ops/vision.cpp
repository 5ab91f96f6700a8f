// Vision graph operators that detection and spatial-transformer models end with: GridSample
// (opset 16), RoiAlign (opset 16) and NonMaxSuppression (opset 11). GridSample and RoiAlign are
// scalar code with a fixed order (this library compiles without fp contraction), so one kernel
// serves Fast and Exact. NonMaxSuppression's output length depends on its inputs' values: like
// Unique, its inputs must be known when the session plans (constants or value inputs, whose
// values join the plan key; docs/memory.md), and it is evaluated then.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "onemodel/graph/ops/op_util.h"

namespace om::graph::ops {
namespace {

Status require_f32(const InferContext& ctx, size_t i, const char* name, size_t rank) {
  const ValueDesc* v = ctx.input(i);
  if (!v) return ctx.error(ErrorKind::InvalidArgument, msg("input ", name, " is required"));
  if (v->dtype != DType::f32) return ctx.error(ErrorKind::DTypeMismatch, msg(name, " must be f32, got ", dtype_name(v->dtype)));
  if (v->shape.size() != rank)
    return ctx.error(ErrorKind::ShapeMismatch, msg(name, " must be ", rank, "-D, got ", shape_str(v->shape)));
  return Status::ok();
}

// ---- GridSample ----

enum class Pad { Zeros, Border, Reflection };
enum class Sample { Bilinear, Nearest, Bicubic };

// Normalised [-1, 1] to pixel coordinates: the corner pixels' centres (align_corners) or their
// outer edges.
float denormalize(float n, int64_t size, bool align) {
  return align ? (n + 1.0f) / 2.0f * float(size - 1) : ((n + 1.0f) * float(size) - 1.0f) / 2.0f;
}

// Folds x into [lo, hi] by reflecting at the ends as often as needed. The position within one
// period of two spans is an exact fmod, so no flip count is converted to an integer (a large
// finite grid value would overflow it). x is finite (grid_sample_one).
float reflect(float x, float lo, float hi) {
  if (hi <= lo) return lo;
  const float span = hi - lo;
  const float d = std::fabs(x - lo);
  const float r = std::fmod(d, 2.0f * span);
  return r < span ? lo + r : hi - (r - span);
}

// The coordinate the padding mode reads for x (zeros: x itself; reads outside give 0).
float padded(float x, int64_t size, Pad pad, bool align) {
  if (pad == Pad::Zeros) return x;
  if (pad == Pad::Reflection)
    x = align ? reflect(x, 0.0f, float(size - 1)) : reflect(x, -0.5f, float(size) - 0.5f);
  return std::min(std::max(x, 0.0f), float(size - 1));
}

float pixel(const float* plane, int64_t H, int64_t W, int64_t y, int64_t x) {
  return (y < 0 || y >= H || x < 0 || x >= W) ? 0.0f : plane[y * W + x];
}

// An integral coordinate as an index; anything far outside (or infinite) becomes -1, which
// reads as outside, so no float-to-integer conversion overflows on hostile grids.
int64_t index_of(float v) { return v > -1e9f && v < 1e9f ? int64_t(v) : -1; }

// Cubic convolution weights (a = -0.75) for the four taps around t in [0, 1).
void cubic_weights(float t, float w[4]) {
  const float a = -0.75f;
  auto near = [&](float d) { return ((a + 2.0f) * d - (a + 3.0f)) * d * d + 1.0f; };
  auto far = [&](float d) { return ((a * d - 5.0f * a) * d + 8.0f * a) * d - 4.0f * a; };
  w[0] = far(t + 1.0f);
  w[1] = near(t);
  w[2] = near(1.0f - t);
  w[3] = far(2.0f - t);
}

struct GridMode {
  Sample sample = Sample::Bilinear;
  Pad pad = Pad::Zeros;
  bool align = false;
};

// The modes from the attributes; the reason when one is unknown, else empty.
std::string grid_mode_of(const Node& node, GridMode* m) {
  const Attribute* mode = node.attr("mode");
  const Attribute* pad = node.attr("padding_mode");
  m->align = node.attr_int("align_corners", 0) != 0;
  if (!mode || mode->s == "bilinear" || mode->s == "linear") m->sample = Sample::Bilinear;
  else if (mode->s == "nearest") m->sample = Sample::Nearest;
  else if (mode->s == "bicubic" || mode->s == "cubic") m->sample = Sample::Bicubic;
  else return msg("mode '", mode->s, "' is not one of bilinear, nearest, bicubic");
  if (!pad || pad->s == "zeros") m->pad = Pad::Zeros;
  else if (pad->s == "border") m->pad = Pad::Border;
  else if (pad->s == "reflection") m->pad = Pad::Reflection;
  else return msg("padding_mode '", pad->s, "' is not one of zeros, border, reflection");
  return {};
}

Status infer_grid_sample(InferContext& ctx) {
  OM_TRY(require_f32(ctx, 0, "X", 4));
  OM_TRY(require_f32(ctx, 1, "grid", 4));
  const auto& x = ctx.input(0)->shape;
  const auto& g = ctx.input(1)->shape;
  if (g[0] != x[0] || g[3] != 2)
    return ctx.error(ErrorKind::ShapeMismatch, msg("grid must be [N, H_out, W_out, 2] with N = ", x[0], ", got ", shape_str(g)));
  GridMode m;
  const std::string bad = grid_mode_of(ctx.node, &m);
  if (!bad.empty()) return ctx.error(ErrorKind::InvalidArgument, bad);
  std::vector<int64_t> y{x[0], x[1], g[1], g[2]};
  OM_TRY(check_shape(ctx.node.label() + " output", y.data(), y.size()));
  ctx.set_output(0, DType::f32, std::move(y));
  return Status::ok();
}

// A finite grid value whose pixel coordinate overflows float: the largest float of its sign, so
// every padding mode and the bicubic taps see a finite coordinate (inf - floor(inf) is NaN).
float finite_coordinate(float v) { return std::isfinite(v) ? v : std::copysign(std::numeric_limits<float>::max(), v); }

float grid_sample_one(const float* plane, int64_t H, int64_t W, float gx, float gy, const GridMode& m) {
  float x = finite_coordinate(denormalize(gx, W, m.align)), y = finite_coordinate(denormalize(gy, H, m.align));
  if (m.sample == Sample::Bicubic) {  // padding applies to each of the 16 taps, not the point
    const float fx = std::floor(x), fy = std::floor(y);
    float wx[4], wy[4];
    cubic_weights(x - fx, wx);
    cubic_weights(y - fy, wy);
    float acc = 0.0f;
    for (int i = 0; i < 4; ++i) {
      float row = 0.0f;
      for (int j = 0; j < 4; ++j) {
        const float px = padded(fx - 1.0f + float(j), W, m.pad, m.align), py = padded(fy - 1.0f + float(i), H, m.pad, m.align);
        row = row + wx[j] * pixel(plane, H, W, index_of(py), index_of(px));
      }
      acc = acc + wy[i] * row;
    }
    return acc;
  }
  x = padded(x, W, m.pad, m.align);
  y = padded(y, H, m.pad, m.align);
  if (m.sample == Sample::Nearest) return pixel(plane, H, W, index_of(std::nearbyint(y)), index_of(std::nearbyint(x)));
  const float x0 = std::floor(x), y0 = std::floor(y);
  // Outside by a pixel or more (zeros padding): no neighbour is inside.
  if (x0 < -1.0f || x0 > float(W) || y0 < -1.0f || y0 > float(H)) return 0.0f;
  const float lx = x - x0, ly = y - y0;
  const int64_t ix = int64_t(x0), iy = int64_t(y0);
  const float top = (1.0f - lx) * pixel(plane, H, W, iy, ix) + lx * pixel(plane, H, W, iy, ix + 1);
  const float bottom = (1.0f - lx) * pixel(plane, H, W, iy + 1, ix) + lx * pixel(plane, H, W, iy + 1, ix + 1);
  return (1.0f - ly) * top + ly * bottom;
}

// GridSample's record: the sampling and padding modes. Work: the N x C x H_out output rows.
struct GridParams {
  GridMode m;
};

Status prepare_grid_sample(const InferContext& ctx, Prepared& out) {
  GridParams& p = out.record<GridParams>();
  const std::string bad = grid_mode_of(ctx.node, &p.m);
  if (!bad.empty()) return ctx.error(ErrorKind::InvalidArgument, bad);
  const std::vector<int64_t>& y = ctx.outputs[0].shape;
  out.work = y[0] * y[1] * y[2];
  return Status::ok();
}

Status grid_sample_kernel(const KernelContext& k) {
  const GridMode& m = k.params<GridParams>().m;
  const TensorArg& X = k.in(0);
  const TensorArg& G = k.in(1);
  const int64_t C = X.dim(1), H = X.dim(2), W = X.dim(3), OH = G.dim(1), OW = G.dim(2);
  const float* x = X.as<const float>();
  const float* grid = G.as<const float>();
  float* y = k.out(0).as<float>();
  for (int64_t row = k.begin; row < k.end; ++row) {
    const int64_t nc = row / OH, n = nc / C;
    const float* plane = x + nc * H * W;
    float* out = y + nc * OH * OW;
    const float* gn = grid + n * OH * OW * 2;
    for (int64_t p = (row % OH) * OW, end = p + OW; p < end; ++p) {
      const float gx = gn[2 * p], gy = gn[2 * p + 1];
      // A NaN coordinate reads nothing (the integer conversion would be undefined).
      out[p] = (!std::isfinite(gx) || !std::isfinite(gy) || H == 0 || W == 0) ? 0.0f : grid_sample_one(plane, H, W, gx, gy, m);
    }
  }
  return Status::ok();
}

// ---- RoiAlign ----

// sampling_ratio sizes the loop of every output bin (ratio^2 reads): bounded so the loop stays
// finite and the count cannot overflow. 1024 is far beyond what detection models use (0..4).
constexpr int64_t kMaxSamplingRatio = 1024;

Status infer_roi_align(InferContext& ctx) {
  OM_TRY(require_f32(ctx, 0, "X", 4));
  OM_TRY(require_f32(ctx, 1, "rois", 2));
  const ValueDesc* idx = ctx.input(2);
  const auto& r = ctx.input(1)->shape;
  if (r[1] != 4) return ctx.error(ErrorKind::ShapeMismatch, msg("rois must be [num_rois, 4], got ", shape_str(r)));
  if (!idx || (idx->dtype != DType::i64 && idx->dtype != DType::i32) || idx->shape != std::vector<int64_t>{r[0]})
    return ctx.error(ErrorKind::ShapeMismatch, msg("batch_indices must be i64 [", r[0], "]"));
  const Attribute* mode = ctx.node.attr("mode");
  if (mode && mode->s != "avg")
    return ctx.error(ErrorKind::Unsupported, msg("mode '", mode->s, "' is not supported; only avg (the default) is"));
  const Attribute* ct = ctx.node.attr("coordinate_transformation_mode");
  if (ct && ct->s != "half_pixel" && ct->s != "output_half_pixel")
    return ctx.error(ErrorKind::InvalidArgument, msg("coordinate_transformation_mode '", ct->s, "' is not half_pixel or output_half_pixel"));
  const int64_t oh = ctx.node.attr_int("output_height", 1), ow = ctx.node.attr_int("output_width", 1);
  const int64_t ratio = ctx.node.attr_int("sampling_ratio", 0);
  if (ratio < 0 || ratio > kMaxSamplingRatio)
    return ctx.error(ErrorKind::InvalidArgument, msg("sampling_ratio is ", ratio, "; it must be in [0, ", kMaxSamplingRatio,
                                                     "] (0: adaptive), points per bin and axis"));
  if (oh < 1 || ow < 1)
    return ctx.error(ErrorKind::InvalidArgument, msg("output_height ", oh, " and output_width ", ow, " must be >= 1"));
  std::vector<int64_t> y{r[0], ctx.input(0)->shape[1], oh, ow};
  OM_TRY(check_shape(ctx.node.label() + " output", y.data(), y.size()));
  ctx.set_output(0, DType::f32, std::move(y));
  return Status::ok();
}

// Bilinear read at (y, x) with RoiAlign's edge rule: points more than one pixel outside give 0,
// points just outside are clamped to the edge.
float roi_bilinear(const float* plane, int64_t H, int64_t W, float y, float x) {
  // An empty plane has no edge to clamp to (the clamp would read index -1).
  if (H == 0 || W == 0 || y < -1.0f || y > float(H) || x < -1.0f || x > float(W)) return 0.0f;
  y = std::max(y, 0.0f);
  x = std::max(x, 0.0f);
  int64_t y0 = int64_t(y), x0 = int64_t(x), y1 = y0 + 1, x1 = x0 + 1;
  if (y0 >= H - 1) y0 = y1 = H - 1, y = float(y0);
  if (x0 >= W - 1) x0 = x1 = W - 1, x = float(x0);
  const float ly = y - float(y0), lx = x - float(x0), hy = 1.0f - ly, hx = 1.0f - lx;
  return hy * hx * plane[y0 * W + x0] + hy * lx * plane[y0 * W + x1] + ly * hx * plane[y1 * W + x0] + ly * lx * plane[y1 * W + x1];
}

// RoiAlign's record. Work: the num_rois x C output planes.
struct RoiAlignParams {
  int64_t OH = 1, OW = 1, ratio = 0;
  float scale = 1.0f;
  bool half_pixel = true;
};

Status prepare_roi_align(const InferContext& ctx, Prepared& out) {
  const Node& node = ctx.node;
  RoiAlignParams& p = out.record<RoiAlignParams>();
  p.OH = node.attr_int("output_height", 1);
  p.OW = node.attr_int("output_width", 1);
  p.ratio = node.attr_int("sampling_ratio", 0);
  p.scale = node.attr_float("spatial_scale", 1.0f);
  p.half_pixel = !node.attr_is("coordinate_transformation_mode", "output_half_pixel");
  out.work = ctx.outputs[0].shape[0] * ctx.outputs[0].shape[1];
  return Status::ok();
}

Status roi_align_kernel(const KernelContext& k) {
  const RoiAlignParams& p = k.params<RoiAlignParams>();
  const TensorArg& X = k.in(0);
  const int64_t N = X.dim(0), C = X.dim(1), H = X.dim(2), W = X.dim(3);
  const int64_t OH = p.OH, OW = p.OW;
  const int64_t ratio = p.ratio;
  const float scale = p.scale;
  const bool half_pixel = p.half_pixel;
  const float offset = half_pixel ? 0.5f : 0.0f;
  const float* rois = k.in(1).as<const float>();
  const TensorArg& I = k.in(2);
  float* y = k.out(0).as<float>();
  for (int64_t r = k.begin / C; r * C < k.end; ++r) {
    const int64_t b = I.dtype == DType::i64 ? I.as<const int64_t>()[r] : I.as<const int32_t>()[r];
    if (b < 0 || b >= N)
      return k.error(ErrorKind::InvalidArgument, msg("batch_indices[", r, "] = ", b, " is outside [0, ", N, ")"));
    const float* roi = rois + 4 * r;
    const float x0 = roi[0] * scale - offset, y0 = roi[1] * scale - offset;
    float rw = roi[2] * scale - offset - x0, rh = roi[3] * scale - offset - y0;
    if (!half_pixel) rw = std::max(rw, 1.0f), rh = std::max(rh, 1.0f);  // the legacy form's minimum size
    const float bh = rh / float(OH), bw = rw / float(OW);
    // The adaptive sampling grid is ceil(bin size) points per axis: bounded so a hostile roi
    // cannot ask for an unbounded loop or an overflowing conversion.
    constexpr float kMaxGrid = 65536.0f;
    if (!(std::fabs(bh) < kMaxGrid && std::fabs(bw) < kMaxGrid && std::isfinite(x0) && std::isfinite(y0)))
      return k.error(ErrorKind::InvalidArgument, msg("roi ", r, " (", roi[0], ", ", roi[1], ", ", roi[2], ", ", roi[3],
                                                     ") is not finite or its bins exceed ", kMaxGrid, " pixels"));
    const int64_t gh = ratio > 0 ? ratio : int64_t(std::ceil(rh / float(OH)));
    const int64_t gw = ratio > 0 ? ratio : int64_t(std::ceil(rw / float(OW)));
    const float count = float(std::max<int64_t>(gh * gw, 1));
    // This call's channels of roi r.
    const int64_t c_end = std::min(C, k.end - r * C);
    for (int64_t c = std::max<int64_t>(0, k.begin - r * C); c < c_end; ++c) {
      const float* plane = X.as<const float>() + (b * C + c) * H * W;
      float* out = y + (r * C + c) * OH * OW;
      for (int64_t ph = 0; ph < OH; ++ph)
        for (int64_t pw = 0; pw < OW; ++pw) {
          float acc = 0.0f;
          for (int64_t iy = 0; iy < gh; ++iy) {
            const float sy = y0 + float(ph) * bh + (float(iy) + 0.5f) * bh / float(gh);
            for (int64_t ix = 0; ix < gw; ++ix) {
              const float sx = x0 + float(pw) * bw + (float(ix) + 0.5f) * bw / float(gw);
              acc = acc + roi_bilinear(plane, H, W, sy, sx);
            }
          }
          out[ph * OW + pw] = acc / count;
        }
    }
  }
  return Status::ok();
}

// ---- NonMaxSuppression ----

struct Box {
  float y0, x0, y1, x1;
};

Box box_at(const float* b, bool center) {
  if (center) return {b[1] - b[3] / 2.0f, b[0] - b[2] / 2.0f, b[1] + b[3] / 2.0f, b[0] + b[2] / 2.0f};
  return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
}

float iou(const Box& a, const Box& b) {
  const float ih = std::min(a.y1, b.y1) - std::max(a.y0, b.y0), iw = std::min(a.x1, b.x1) - std::max(a.x0, b.x0);
  if (ih <= 0.0f || iw <= 0.0f) return 0.0f;
  const float inter = ih * iw;
  const float uni = (a.y1 - a.y0) * (a.x1 - a.x0) + (b.y1 - b.y0) * (b.x1 - b.x0) - inter;
  return uni <= 0.0f ? 0.0f : inter / uni;
}

// Scalars of the optional inputs 2..4 (absent: 0 boxes, IoU 0, no score threshold).
struct NmsParams {
  int64_t max_boxes = 0;
  float iou_threshold = 0.0f;
  bool has_score_threshold = false;
  float score_threshold = 0.0f;
};

// The selected (batch, class, box) triples, per batch and class in order of selection: boxes by
// descending score (ties: the lower index first), each kept unless its IoU with a kept box of
// the same class exceeds the threshold.
std::vector<int64_t> nms(const float* boxes, const float* scores, int64_t B, int64_t S, int64_t K, bool center, const NmsParams& p) {
  std::vector<int64_t> out;
  std::vector<int64_t> order;
  std::vector<Box> kept;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < K; ++c) {
      const float* sc = scores + (b * K + c) * S;
      order.clear();
      for (int64_t i = 0; i < S; ++i)
        if (!p.has_score_threshold || sc[i] > p.score_threshold) order.push_back(i);
      std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return sc[i] > sc[j]; });
      kept.clear();
      for (int64_t i : order) {
        if (int64_t(kept.size()) >= p.max_boxes) break;
        const Box bx = box_at(boxes + (b * S + i) * 4, center);
        bool keep = true;
        for (const Box& q : kept) keep = keep && !(iou(bx, q) > p.iou_threshold);
        if (!keep) continue;
        kept.push_back(bx);
        out.insert(out.end(), {b, c, i});
      }
    }
  return out;
}

Status nms_params(const InferContext& ctx, NmsParams* p) {
  const char* names[3] = {"max_output_boxes_per_class", "iou_threshold", "score_threshold"};
  for (size_t i = 2; i < 5; ++i) {
    const ValueDesc* v = ctx.input(i);
    if (!v) continue;
    if (v->numel() != 1 || v->dtype != (i == 2 ? DType::i64 : DType::f32))
      return ctx.error(ErrorKind::ShapeMismatch, msg(names[i - 2], " must be one ", i == 2 ? "i64" : "f32", " value"));
    if (!v->data) return ctx.error(ErrorKind::Unsupported, msg(names[i - 2], " must be known when the session plans"));
  }
  if (const ValueDesc* v = ctx.input(2)) p->max_boxes = std::max<int64_t>(0, *static_cast<const int64_t*>(v->data));
  if (const ValueDesc* v = ctx.input(3)) p->iou_threshold = *static_cast<const float*>(v->data);
  if (const ValueDesc* v = ctx.input(4)) p->has_score_threshold = true, p->score_threshold = *static_cast<const float*>(v->data);
  if (p->iou_threshold < 0.0f || p->iou_threshold > 1.0f)
    return ctx.error(ErrorKind::InvalidArgument, msg("iou_threshold ", p->iou_threshold, " is outside [0, 1]"));
  return Status::ok();
}

Status infer_nms(InferContext& ctx) {
  OM_TRY(require_f32(ctx, 0, "boxes", 3));
  OM_TRY(require_f32(ctx, 1, "scores", 3));
  const auto& b = ctx.input(0)->shape;
  const auto& s = ctx.input(1)->shape;
  if (b[2] != 4 || s[0] != b[0] || s[2] != b[1])
    return ctx.error(ErrorKind::ShapeMismatch, msg("boxes must be [batch, boxes, 4] and scores [batch, classes, boxes]; got ",
                                                   shape_str(b), " and ", shape_str(s)));
  const int64_t center = ctx.node.attr_int("center_point_box", 0);
  if (center != 0 && center != 1) return ctx.error(ErrorKind::InvalidArgument, msg("center_point_box must be 0 or 1, got ", center));
  NmsParams p;
  OM_TRY(nms_params(ctx, &p));
  if (!ctx.input(0)->data || !ctx.input(1)->data)
    return ctx.error(ErrorKind::Unsupported, "boxes and scores must be known when the session plans (they decide the output length)");
  const auto sel = nms(static_cast<const float*>(ctx.input(0)->data), static_cast<const float*>(ctx.input(1)->data), b[0], b[1], s[1],
                       center == 1, p);
  ctx.set_output(0, DType::i64, {int64_t(sel.size() / 3), 3});
  return Status::ok();
}

// NonMaxSuppression's record. One work unit: boxes are selected one after another.
struct NmsRecord {
  bool center = false;  // center_point_box 1
};

Status prepare_nms(const InferContext& ctx, Prepared& out) {
  out.record<NmsRecord>().center = ctx.node.attr_int("center_point_box", 0) == 1;
  return Status::ok();
}

Status nms_kernel(const KernelContext& k) {
  NmsParams p;
  if (k.has_input(2)) p.max_boxes = std::max<int64_t>(0, k.in(2).as<const int64_t>()[0]);
  if (k.has_input(3)) p.iou_threshold = k.in(3).as<const float>()[0];
  if (k.has_input(4)) p.has_score_threshold = true, p.score_threshold = k.in(4).as<const float>()[0];
  const TensorArg& B = k.in(0);
  const auto sel = nms(B.as<const float>(), k.in(1).as<const float>(), B.dim(0), B.dim(1), k.in(1).dim(1),
                       k.params<NmsRecord>().center, p);
  if (!sel.empty()) std::memcpy(k.out(0).data, sel.data(), sel.size() * sizeof(int64_t));
  return Status::ok();
}

constexpr AttrSpec kGridSampleAttrs[] = {{"align_corners", AttrKind::Int}, {"mode", AttrKind::String}, {"padding_mode", AttrKind::String}};
constexpr AttrSpec kRoiAlignAttrs[] = {{"coordinate_transformation_mode", AttrKind::String}, {"mode", AttrKind::String},
                                       {"output_height", AttrKind::PositiveInt},              {"output_width", AttrKind::PositiveInt},
                                       {"sampling_ratio", AttrKind::Int},                     {"spatial_scale", AttrKind::Float}};
constexpr AttrSpec kNmsAttrs[] = {{"center_point_box", AttrKind::Int}};

constexpr OpDef kOps[] = {
    op("GridSample").since_opset(16).inputs(2).attributes(kGridSampleAttrs).shapes(infer_grid_sample).prepared(prepare_grid_sample)
        .kernel(grid_sample_kernel)
        .doc("f32 4-D; bilinear, nearest (halves to even), bicubic (a = -0.75); zeros, border, reflection padding; align_corners"),
    op("RoiAlign").since_opset(16).inputs(3).attributes(kRoiAlignAttrs).shapes(infer_roi_align).prepared(prepare_roi_align)
        .kernel(roi_align_kernel)
        .doc("f32; mode avg (max refused by name); half_pixel and output_half_pixel; sampling_ratio (0: adaptive), spatial_scale"),
    op("NonMaxSuppression").since_opset(11).plan_time_inputs_mask(0x1fu).inputs(2, 5).attributes(kNmsAttrs)
        .shapes(infer_nms).prepared(prepare_nms).kernel(nms_kernel)
        .doc("f32 boxes and scores known at plan time (evaluated when planning: the output length depends on them); "
             "center_point_box 0/1; suppresses IoU > iou_threshold, keeps score > score_threshold"),
};

}  // namespace

}  // namespace om::graph::ops

// The family's operators, one symbol each (onemodel/op_list.h).
#define OM_VISION_OPS(X) X(GridSample) X(RoiAlign) X(NonMaxSuppression)
OM_OP_FAMILY_TABLE(vision, OM_VISION_OPS)
