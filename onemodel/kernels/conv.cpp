// Convolution family kernels (see conv.h). Convolutions run through f32_gemm per group and tile
// of output pixels: Y[m, p] = W[m, k] x col[k, p], the weights as the left operand and the output
// written in place (NCHW). col, the im2col matrix with k ordered (c, kh, kw), is normally not
// materialised: its packed panels are written straight from zero-padded copies of the group's
// planes (implicit GEMM, GemmArgs::pack_b); only groups of at most four output channels (whose
// small-M GEMM reads B in place) and huge pads use im2col tiles (conv_b below). The GEMM's exact
// contract (fma chain over k in order; here the bias and activation follow) is the convolution's
// exact rule; the depthwise plane kernel (depthwise_plane.h, one per ISA) computes the same chain
// directly. Everything else here is copies or scalar code with a fixed order, compiled without
// fp contraction, so the bits are the same on every ISA.
#include "onemodel/kernels/conv.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "onemodel/kernels/checked.h"
#include "onemodel/kernels/conv_panels.h"
#include "onemodel/kernels/kernels_internal.h"
#include "onemodel/kernels/pool_window.h"

namespace om::kernels {
namespace {

constexpr size_t round16(size_t n) { return (n + 15) / 16 * 16; }

// Output pixels per GEMM tile: about 128K floats of im2col, at least 64 rows.
int64_t pixel_tile(int64_t P, int64_t K) {
  const int64_t t = std::max<int64_t>(64, 131072 / std::max<int64_t>(K, 1));
  return std::max<int64_t>(1, std::min(P, t));
}

bool is_depthwise(const ConvGeom& g) { return g.group == g.C && g.group > 1; }
bool is_pointwise(const ConvGeom& g) {
  return g.kH == 1 && g.kW == 1 && g.sH == 1 && g.sW == 1 && g.pad_t == 0 && g.pad_l == 0 && g.OH == g.H && g.OW == g.W;
}

void run_gemm(const GemmArgs& a, const float* packed, ArithmeticMode mode) {
  if (packed) f32_gemm_prepacked(a, packed, mode);
  else f32_gemm(a, mode);
}

// After the complete chains of n outputs of channel m: + bias (when given, one rounding), the
// inference batch normalisation (when given: f32_batch_norm_inference's steps), + the residual's
// n elements (when given, one rounding), the activation. (The GEMM applies a bias, the residual
// and Relu itself: GemmArgs::row_bias, GemmArgs::addend.)
void epilogue_row(float* row, size_t n, const float* bias, const ConvNorm* norm, int64_t m, ConvActivation act,
                  const float* residual) {
  if (bias) f32_binary(BinaryOp::Add, row, 1, bias, 0, row, n);
  if (norm) {
    const float s = batch_norm_scale(norm->scale[m], norm->var[m], norm->eps), mu = norm->mean[m], b = norm->bias[m];
    for (size_t i = 0; i < n; ++i) {
      const float t = (row[i] - mu) * s;
      row[i] = t + b;
    }
  }
  if (residual) f32_binary(BinaryOp::Add, row, 1, residual, 1, row, n);
  if (act.op != UnaryOp::Identity) f32_unary(act.op, row, row, n);
  act.chain_rows(row, 1, n, n);
}

// One row of the im2col matrix over a run of output pixels: out[j] = the input under tap
// (kh, kw) of output pixel (oh, ow0) + j, j < n, running on across output rows (0 where the tap
// falls in the padding). Built one output-row segment at a time, so stride-1 rows are plain
// copies between zero-filled edges.
void im2col_run(const ConvGeom& g, const float* plane, int64_t kh, int64_t kw, int64_t oh, int64_t ow0, int64_t n,
                float* out) {
  const int64_t shift = kw * g.dW - g.pad_l;  // iw = ow * sW + shift
  while (n > 0) {
    const int64_t len = std::min(g.OW - ow0, n);
    const int64_t ih = oh * g.sH - g.pad_t + kh * g.dH;
    if (ih < 0 || ih >= g.H) {
      for (int64_t j = 0; j < len; ++j) out[j] = 0.0f;
    } else if (g.sW == 1) {
      // iw = ow0 + j + shift in [0, W)  <=>  j in [lo, hi)
      const int64_t lo = std::min(len, std::max<int64_t>(0, -(ow0 + shift)));
      const int64_t hi = std::max(lo, std::min(len, g.W - (ow0 + shift)));
      // Short rows: plain loops (vectorised) beat library calls here.
      const float* from = plane + ih * g.W + ow0 + shift;
      for (int64_t j = 0; j < lo; ++j) out[j] = 0.0f;
      for (int64_t j = lo; j < hi; ++j) out[j] = from[j];
      for (int64_t j = hi; j < len; ++j) out[j] = 0.0f;
    } else {
      const float* src = plane + ih * g.W;
      for (int64_t j = 0; j < len; ++j) {
        const int64_t iw = (ow0 + j) * g.sW + shift;
        out[j] = (iw >= 0 && iw < g.W) ? src[iw] : 0.0f;
      }
    }
    out += len;
    n -= len;
    ++oh;
    ow0 = 0;
  }
}

// The im2col tile, transposed: col[k * pt + pp] for k = (c, kh, kw) of channels
// [c0, c0 + Cg) and output pixels p0 + pp, pp < pt, of image `xn`; the GEMM reads it as B
// (row stride pt) and packs it like any strided operand.
void im2col_tile(const ConvGeom& g, const float* xn, int64_t c0, int64_t Cg, int64_t p0, int64_t pt, float* col) {
  float* dst = col;
  for (int64_t c = 0; c < Cg; ++c) {
    const float* plane = xn + (c0 + c) * g.H * g.W;
    for (int64_t kh = 0; kh < g.kH; ++kh)
      for (int64_t kw = 0; kw < g.kW; ++kw, dst += pt) im2col_run(g, plane, kh, kw, p0 / g.OW, p0 % g.OW, pt, dst);
  }
}

// Implicit GEMM: the convolution's B = im2col[k, p] (k = (c, kh, kw) of one group's channels,
// p an output pixel from p0 on) written straight into the GEMM's packed panels (GemmArgs::pack_b),
// one pass instead of materialising an im2col tile and packing it again. The group's planes are
// first copied into zero-padded, column-phase-split buffers (the depthwise kernel's layout,
// below), where tap t of output pixel (oh, ow) is at tap_off[t] + oh * sH * Wq + ow: every
// panel row is then one or a few contiguous copies, without bounds checks (ConvImage and the
// table's conv_pack_panels, conv_panels.h).

// Whether the buffer's rows continue each other as the output's do (stride 1, buffer rows as
// wide as output rows: a kernel one column wide without column pads, such as the 3x1 layers of
// audio models): then the NR pixels from any pixel lie in one run of every buffer, whatever
// output rows they span.
bool rows_continuous(const ConvGeom& g) { return g.sH == 1 && g.sW == 1 && phase_cols(g) == g.OW; }

// Whether the padded buffer of a plane would be the plane itself (no pads, stride 1 across, the
// windows covering whole rows): then the GEMM reads the input planes and nothing is copied.
bool planes_unpadded(const ConvGeom& g) {
  return g.pad_t == 0 && g.pad_l == 0 && g.sW == 1 && padded_cols(g) == g.W && padded_rows(g) <= g.H;
}

// Where the NR pixels from column j of the tile start in every padded buffer, when they lie in
// one output row, or in one run of continuous rows (the GEMM then reads them in place:
// gemm_image_rows); else -1 (packed).
ptrdiff_t image_panel_offset(const void* ctx, size_t j, size_t nr) {
  const ConvImage& s = *static_cast<const ConvImage*>(ctx);
  const ConvGeom& g = *s.g;
  const int64_t p = s.p0 + int64_t(j), oh = p / g.OW, ow = p % g.OW;
  if (rows_continuous(g)) return p;
  if (ow + int64_t(nr) > g.OW) return -1;
  return oh * g.sH * phase_cols(g) + ow;
}

void pack_image_panels(const void* ctx, size_t k0, size_t kc, size_t j0, size_t nc, size_t nr, float* dst) {
  f32_conv_pack_panels(*static_cast<const ConvImage*>(ctx), k0, kc, j0, nc, nr, dst);
}

// Depthwise (groups == channels): each plane is copied once into a zero-padded buffer, then the
// table's plane kernel (depthwise_plane.h) keeps each output's chain in registers over the taps
// in (kh, kw) order: every output is exactly the chain the rule fixes (padded taps contribute
// fma(0, w, acc)), in both modes and on every ISA. With a column stride s the buffer is split by
// column phase (phase_cols, conv_panels.h), so every tap still reads a contiguous run.

// Floats of the padded-plane buffer, or -1 when it would be much larger than the input and the
// output planes together (huge pads or strides): then the direct per-output chain runs instead.
int64_t padded_floats(const ConvGeom& g) {
  int64_t rows = 0, cols = 0, n = 0;
  if (!checked_mul(g.OH - 1, g.sH, &rows) || !checked_mul(g.OW - 1, g.sW, &cols)) return -1;
  rows = padded_rows(g);
  cols = phase_cols(g);
  if (!checked_mul(rows, cols, &n) || !checked_mul(n, g.sW, &n)) return -1;
  const int64_t limit = std::max<int64_t>(int64_t(1) << 20, 4 * (g.H * g.W + g.OH * g.OW));
  return n <= limit ? n : -1;
}

// The same chain per output, taps read one by one (padded positions as 0): no buffer.
void depthwise_direct(const ConvGeom& g, const float* x, const float* w, const float* bias, ConvActivation act, float* y,
                      const ConvNorm* norm, const float* residual) {
  const int64_t mult = g.M / g.C, kk = g.kH * g.kW, P = g.OH * g.OW;
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t m = 0; m < g.M; ++m) {
      const float* plane = x + (n * g.C + m / mult) * g.H * g.W;
      float* out = y + (n * g.M + m) * P;
      for (int64_t oh = 0; oh < g.OH; ++oh)
        for (int64_t ow = 0; ow < g.OW; ++ow) {
          float acc = 0.0f;
          for (int64_t kh = 0; kh < g.kH; ++kh) {
            const int64_t ih = oh * g.sH - g.pad_t + kh * g.dH;
            for (int64_t kw = 0; kw < g.kW; ++kw) {
              const int64_t iw = ow * g.sW - g.pad_l + kw * g.dW;
              const bool in = ih >= 0 && ih < g.H && iw >= 0 && iw < g.W;
              acc = std::fma(in ? plane[ih * g.W + iw] : 0.0f, w[m * kk + kh * g.kW + kw], acc);
            }
          }
          out[oh * g.OW + ow] = bias ? acc + bias[m] : acc;
        }
      epilogue_row(out, size_t(P), nullptr, norm, m, act, residual ? residual + (n * g.M + m) * P : nullptr);
    }
}

// Floats before the padded buffer in the depthwise scratch: the taps' offsets.
size_t tap_table_floats(const ConvGeom& g) { return round16(size_t(g.kH * g.kW) * sizeof(ptrdiff_t) / sizeof(float)); }

// Where tap (kh, kw) of output (0, 0) lies in a padded buffer; output (oh, ow) reads
// tap_off + oh * sH * Wq + ow.
void fill_tap_offsets(const ConvGeom& g, ptrdiff_t* tap_off) {
  const int64_t Hp = padded_rows(g), Wq = phase_cols(g), S = g.sW;
  for (int64_t kh = 0; kh < g.kH; ++kh)
    for (int64_t kw = 0; kw < g.kW; ++kw) {
      const int64_t col = kw * g.dW;  // padded column of output 0's tap; output ow reads col + ow * S
      tap_off[kh * g.kW + kw] = ((col % S) * Hp + kh * g.dH) * Wq + col / S;
    }
}

// 3x3 stride-1 undilated layers with one pad on every side ("same") read each plane in place
// (DepthwisePlane::same_3x3) on planes at most kDepthwiseInPlaceNarrow or at least
// kDepthwiseInPlaceWide columns wide: no padded copy, the vectors at the left and right edges load
// only the lanes inside the row. Narrow planes gain most (the copy is a large part of a small
// plane's work): 8 to 32 columns, one layer alone, in place took 0.55-0.84 of the padded form's
// time on AVX-512 and 0.54-1.00 on AVX2; from 40 columns to 80 it was as fast or slower. On wide
// planes the result depends on the CPU and on where the input and output planes lie relative to
// each other (loads that follow stores 4 KB apart wait on them): 8-31% faster on an AVX2-only CPU,
// 0.87-1.28 of the padded time on an AVX-512 one (docs/performance.md, "Depthwise layers read in
// place: masked edges and narrow planes").
constexpr int64_t kDepthwiseInPlaceNarrow = 32, kDepthwiseInPlaceWide = 96;
bool depthwise_in_place(const ConvGeom& g) {
  return g.kH == 3 && g.kW == 3 && g.sH == 1 && g.sW == 1 && g.dH == 1 && g.dW == 1 && g.pad_t == 1 && g.pad_l == 1 &&
         g.OH == g.H && g.OW == g.W && (g.W <= kDepthwiseInPlaceNarrow || g.W >= kDepthwiseInPlaceWide);
}

// Whether the depthwise kernels apply the Relu themselves: only with no normalisation or
// residual, which precede the activation (then plane_epilogue runs them all).
bool kernel_relu(ConvActivation act, const ConvNorm* norm, const float* residual) {
  return !norm && !residual && act.op == UnaryOp::Relu;
}

// What follows output plane m of image n once the kernel wrote it: the normalisation, the
// residual and the activation (epilogue_row), or only the activation's chain when the kernel
// applied Relu (kernel_relu).
void plane_epilogue(const ConvGeom& g, int64_t n, int64_t m, float* y, bool relu, ConvActivation act,
                    const ConvNorm* norm, const float* residual) {
  const int64_t P = g.OH * g.OW, at = (n * g.M + m) * P;
  if (!relu) epilogue_row(y + at, size_t(P), nullptr, norm, m, act, residual ? residual + at : nullptr);
  else act.chain_rows(y + at, 1, size_t(P), size_t(P));
}

// The channel-blocked form (depthwise_channels.h) on small strided planes: its buffer holds
// padded_rows x padded_cols pixels of kDepthwiseChannelsMax floats (at most 64 x 64 of them);
// depth multiplier 1 only. One layer alone, it took 0.38-0.94 of the plane kernel's time on
// output rows of at most 8 columns with a stride of 2 (measured on both axes; a stride above 1
// on either axis takes it) and on planes of at most 4 columns, on AVX-512 and AVX2; on stride-1
// planes of 8 or more columns and on wider strided ones the transposes cost more than the plane
// kernel's partly filled vectors (docs/performance.md, "Small depthwise planes: channels as
// lanes").
// Only builds with a vector table have the form (the microcontroller's scalar-only build links
// none of it: its flash is tight).
#if defined(ONEMODEL_HAVE_AVX2) || defined(ONEMODEL_HAVE_AVX512) || defined(ONEMODEL_HAVE_NEON)
constexpr bool kDepthwiseChannelsBuilt = true;
#else
constexpr bool kDepthwiseChannelsBuilt = false;
#endif
constexpr int64_t kDepthwiseChannelsMaxPixels = 64 * 64;
bool depthwise_channels(const ConvGeom& g) {
  if (!kDepthwiseChannelsBuilt) return false;
  const bool narrow = g.OW <= 4 || (g.OW <= 8 && (g.sH > 1 || g.sW > 1));
  return g.M == g.C && narrow && padded_floats(g) >= 0 &&
         padded_rows(g) * padded_cols(g) <= kDepthwiseChannelsMaxPixels;
}
size_t depthwise_channels_floats(const ConvGeom& g) {
  return round16(size_t(g.kH * g.kW) * kDepthwiseChannelsMax) +
         size_t(padded_rows(g) * padded_cols(g)) * kDepthwiseChannelsMax;
}

// The table's channel-blocked kernel over the images and channels, when it takes them (the
// scalar table's does not: false, nothing written).
bool depthwise_by_channels(const ConvGeom& g, const float* x, const float* w, const float* bias, ConvActivation act,
                           float* y, float* scratch, const ConvNorm* norm, const float* residual) {
  DepthwiseChannels d{};
  d.g = &g;
  d.Hp = padded_rows(g);
  d.Wp = padded_cols(g);
  d.wt = scratch;
  d.buf = scratch + round16(size_t(g.kH * g.kW) * kDepthwiseChannelsMax);
  d.relu = kernel_relu(act, norm, residual);
  const int64_t P = g.OH * g.OW, HW = g.H * g.W, kk = g.kH * g.kW;
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t c = 0; c < g.C;) {
      d.x = x + (n * g.C + c) * HW;
      d.w = w + c * kk;
      d.bias = bias ? bias + c : nullptr;
      d.y = y + (n * g.C + c) * P;
      d.channels = size_t(g.C - c);
      const int64_t done = int64_t(f32_depthwise_channels(d));
      if (done == 0) return false;  // the first call: nothing written yet
      for (int64_t m = c; m < c + done; ++m) plane_epilogue(g, n, m, y, d.relu, act, norm, residual);
      c += done;
    }
  return true;
}

// Each plane is copied into the padded buffer's interior by the table's conv_fill_padded
// (conv_panels.h): the border was zeroed once, no channel writes it.
void depthwise(const ConvGeom& g, const float* x, const float* w, const float* bias, ConvActivation act, float* y, float* scratch,
               const ConvNorm* norm, const float* residual) {
  if (padded_floats(g) < 0) return depthwise_direct(g, x, w, bias, act, y, norm, residual);
  if (depthwise_channels(g) && depthwise_by_channels(g, x, w, bias, act, y, scratch, norm, residual)) return;
  const int64_t mult = g.M / g.C, kk = g.kH * g.kW, P = g.OH * g.OW;
  const int64_t Wq = phase_cols(g);
  ptrdiff_t* tap_off = reinterpret_cast<ptrdiff_t*>(scratch);
  float* pad = scratch + tap_table_floats(g);  // S phases of Hp x Wq
  fill_tap_offsets(g, tap_off);
  const bool same = depthwise_in_place(g);
  std::memset(pad, 0, size_t(same ? g.W + 2 : padded_floats(g)) * sizeof(float));
  DepthwisePlane dp{};
  dp.same_3x3 = same;
  dp.zeros = pad;
  dp.src = pad;
  dp.tap_off = tap_off;
  dp.taps = size_t(kk);
  dp.row_step = g.sH * Wq;
  dp.rows = size_t(g.OH);
  dp.n = size_t(g.OW);
  // Tap (kh, kw) lies at kh dH Wq + kw (fill_tap_offsets, one column phase), a row step sH Wq.
  dp.unit = g.kH == g.kW && g.sW == 1 && g.dW == 1 && g.dH == g.sH ? size_t(g.kH) : 0;
  dp.relu = kernel_relu(act, norm, residual);
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t c = 0; c < g.C; ++c) {
      if (same) dp.src = x + (n * g.C + c) * g.H * g.W;
      else f32_conv_fill_padded(g, x + (n * g.C + c) * g.H * g.W, pad);
      for (int64_t j = 0; j < mult; ++j) {
        const int64_t m = c * mult + j;
        float* out = y + (n * g.M + m) * P;
        dp.w = w + m * kk;
        dp.bias = bias ? bias + m : nullptr;
        dp.out = out;
        f32_depthwise_plane(dp);
        plane_epilogue(g, n, m, y, dp.relu, act, norm, residual);
      }
    }
}

}  // namespace

int64_t conv_out_extent(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pad_begin, int64_t pad_end, bool ceil_mode) {
  int64_t eff;
  if (k < 1 || s < 1 || !checked_mul(k - 1, d, &eff) || pad_begin > kMaxNumel || pad_end > kMaxNumel) return -1;
  eff += 1;
  const int64_t num = in + pad_begin + pad_end - eff;
  if (num < 0) return -1;
  int64_t out = (ceil_mode ? (num + s - 1) / s : num / s) + 1;
  if (ceil_mode && (out - 1) * s >= in + pad_begin) --out;
  return out;
}

namespace {

// The GEMM's B is the input itself for pointwise convolutions, the image written straight into
// the GEMM's panels (implicit im2col) when the weights have more rows than the small-M kernel
// takes, else (or when padded buffers would be huge) a materialised im2col tile (the small-M
// kernel reads B in place).
enum class ConvB { Input, Implicit, Tile };
ConvB conv_b(const ConvGeom& g) {
  if (is_pointwise(g)) return ConvB::Input;
  return size_t(g.M / g.group) > kGemmSmallM && padded_floats(g) >= 0 ? ConvB::Implicit : ConvB::Tile;
}

// Floats of the implicit path's table of B's rows (one pointer per k: a padded buffer and a tap),
// which follows the tap table.
size_t row_table_floats(const ConvGeom& g) {
  return round16(size_t((g.C / g.group) * g.kH * g.kW) * sizeof(const float*) / sizeof(float));
}

// Floats of the implicit path's padded buffers (one per channel of a group), before the GEMM
// workspace; the tap and row tables precede them.
size_t implicit_planes_floats(const ConvGeom& g) { return size_t(g.C / g.group) * round16(size_t(padded_floats(g))); }

// Pixels per GEMM: the whole image for pointwise convolutions; one GEMM column block (so an
// epilogue pass, when one is needed, finds the tile in cache) for implicit ones; else a tile of about
// 128K im2col floats, rounded down to whole 32-column panels when that leaves some.
int64_t conv_pixel_tile(const ConvGeom& g, int64_t P, int64_t K) {
  switch (conv_b(g)) {
    case ConvB::Input: return std::max<int64_t>(P, 1);
    case ConvB::Implicit: return std::max<int64_t>(1, std::min<int64_t>(P, 512));
    case ConvB::Tile: break;
  }
  const int64_t t = pixel_tile(P, K);
  return t >= 64 && t < P ? t / 32 * 32 : t;
}

// Floats of the weights packed once per group for the GEMM (GemmArgs::packed_a) when the
// blocked GEMM runs more than once per group (several images or pixel tiles) or reads the image
// in place, and the copy is not huge; else 0 and every GEMM packs them itself.
size_t conv_packed_a_floats(const ConvGeom& g) {
  const int64_t Mg = g.M / g.group, K = (g.C / g.group) * g.kH * g.kW, P = g.OH * g.OW;
  if (conv_b(g) == ConvB::Tile || size_t(Mg) <= kGemmSmallM) return 0;
  // The implicit path reads the image in place only from packed weights (gemm_image_rows).
  if (conv_b(g) != ConvB::Implicit && g.N == 1 && conv_pixel_tile(g, P, K) >= P) return 0;
  const size_t n = round16(gemm_packed_a_floats(size_t(Mg), size_t(K)));
  return n <= (size_t(1) << 20) ? n : 0;
}

// The transposed form (conv.h) may run on any geometry its weights were packed for: group 1, not
// depthwise, enough output channels. Its scratch: a block of the im2col tile, the block's
// transposed product, the GEMM's workspace.
bool may_run_transposed(const ConvGeom& g) {
  return g.group == 1 && !is_depthwise(g) && g.M >= kConvTransposedMinChannels;
}
int64_t transposed_tile(const ConvGeom& g) { return std::max<int64_t>(1, std::min(g.OH * g.OW, kConvTransposedTile)); }
size_t transposed_scratch_floats(const ConvGeom& g) {
  const int64_t K = g.C * g.kH * g.kW, pt = transposed_tile(g);
  return round16(size_t(pt * K)) + round16(size_t(pt * g.M)) + gemm_workspace_floats(size_t(pt), size_t(g.M), size_t(K));
}

// Y^T[p, m] = col^T[p, k] W^T[k, m] per image and block of positions, into the scratch, then
// transposed into Y; the bias and Relu in the GEMM's registers (a column bias here), else the
// epilogue pass on Y's rows as in the direct form.
void conv_transposed_gemm(const ConvGeom& g, const float* x, const float* wt, const float* bias, ConvActivation act, float* y,
                          float* scratch, ArithmeticMode mode, const ConvNorm* norm, const float* residual) {
  const int64_t K = g.C * g.kH * g.kW, P = g.OH * g.OW, M = g.M, pt = transposed_tile(g);
  float* col = scratch;
  float* ct = col + round16(size_t(pt * K));
  const bool gemm_epilogue = !norm && !residual && (act.op == UnaryOp::Identity || act.op == UnaryOp::Relu);
  GemmArgs a;
  a.N = size_t(M);
  a.K = size_t(K);
  a.a = col;
  a.a_rs = 1;
  a.c = ct;
  a.ldc = size_t(M);
  a.workspace = ct + round16(size_t(pt * M));
  if (gemm_epilogue) {
    a.bias = bias;
    a.activation = act.op;
  }
  for (int64_t n = 0; n < g.N; ++n) {
    const float* xn = x + n * g.C * g.H * g.W;
    float* yn = y + n * M * P;
    for (int64_t p0 = 0; p0 < P; p0 += pt) {
      const int64_t cur = std::min(pt, P - p0);
      im2col_tile(g, xn, 0, g.C, p0, cur, col);  // col[k * cur + p]: A^T with row stride cur
      a.M = size_t(cur);
      a.a_cs = cur;
      f32_gemm_prepacked(a, wt, mode);
      for (int64_t m = 0; m < M; ++m) {
        float* row = yn + m * P + p0;
        for (int64_t p = 0; p < cur; ++p) row[p] = ct[p * M + m];
        if (!gemm_epilogue)
          epilogue_row(row, size_t(cur), bias ? bias + m : nullptr, norm, m, act,
                       residual ? residual + (n * M + m) * P + p0 : nullptr);
        else
          act.chain_rows(row, 1, size_t(cur), size_t(cur));
      }
    }
  }
}

}  // namespace

bool conv_prefers_transposed(const ConvGeom& g) {
  return may_run_transposed(g) && g.OH * g.OW <= kConvTransposedMaxPositions;
}

size_t conv_scratch_floats(const ConvGeom& g) {
  if (is_depthwise(g)) {
    if (padded_floats(g) < 0) return 0;
    const size_t planes = tap_table_floats(g) + round16(size_t(padded_floats(g)));
    return depthwise_channels(g) ? std::max(planes, depthwise_channels_floats(g)) : planes;
  }
  const int64_t Cg = g.C / g.group, Mg = g.M / g.group, K = Cg * g.kH * g.kW, P = g.OH * g.OW;
  const int64_t pt = conv_pixel_tile(g, P, K);
  size_t before = 0;  // the im2col tile, or the implicit path's tap table and padded planes
  if (conv_b(g) == ConvB::Tile) before = round16(size_t(pt * K));
  if (conv_b(g) == ConvB::Implicit) before = tap_table_floats(g) + row_table_floats(g) + implicit_planes_floats(g);
  const size_t direct = before + conv_packed_a_floats(g) + gemm_workspace_floats(size_t(Mg) + 8, size_t(pt) + 16, size_t(K));
  return may_run_transposed(g) ? std::max(direct, transposed_scratch_floats(g)) : direct;
}

// Y[m, p] (NCHW, row stride P) = W[m, k] x col[k, p] per group and pixel tile: the weights are
// the GEMM's A, the im2col matrix (implicit, a tile, or for pointwise convolutions the input
// itself) its B, so the product lands in place. The bias and the activation follow each tile's
// complete chains: in the GEMM's registers for a bias and Relu, else as a pass per pixel tile.
ConvAlgo conv_algorithm(const ConvGeom& g, ArithmeticMode mode, bool norm) {
  if (is_depthwise(g)) return ConvAlgo::Depthwise;
  if (mode == ArithmeticMode::Fast && !norm && conv_winograd_fits(g)) return ConvAlgo::Winograd;
  switch (conv_b(g)) {
    case ConvB::Input: return ConvAlgo::Pointwise;
    case ConvB::Implicit: return ConvAlgo::ImplicitGemm;
    case ConvB::Tile: break;
  }
  return ConvAlgo::TileGemm;
}

const char* conv_algorithm_name(ConvAlgo a) {
  switch (a) {
    case ConvAlgo::Depthwise: return "depthwise";
    case ConvAlgo::Winograd: return "winograd";
    case ConvAlgo::Pointwise: return "pointwise";
    case ConvAlgo::ImplicitGemm: return "implicit-gemm";
    case ConvAlgo::TileGemm: return "tile-gemm";
  }
  return "?";
}

void f32_conv2d(const ConvGeom& g, const float* x, const float* w, const float* bias, ConvActivation act, float* y, float* scratch,
                const float* packed_w, ArithmeticMode mode, const ConvNorm* norm, const float* residual) {
  f32_conv2d_with(conv_algorithm(g, mode, norm != nullptr), g, x, w, bias, act, y, scratch, packed_w, mode, norm, residual);
}

void f32_conv2d_with(ConvAlgo algo, const ConvGeom& g, const float* x, const float* w, const float* bias, ConvActivation act, float* y,
                     float* scratch, const float* packed_w, ArithmeticMode mode, const ConvNorm* norm, const float* residual) {
  if (algo == ConvAlgo::Depthwise) return depthwise(g, x, w, bias, act, y, scratch, norm, residual);
  if (algo == ConvAlgo::Winograd && conv_winograd(g, x, packed_w, bias, act, y, scratch, residual)) return;
  if (const float* wt = conv_packed_transposed_weights(g, packed_w))
    return conv_transposed_gemm(g, x, wt, bias, act, y, scratch, mode, norm, residual);
  const float* planned_a = conv_packed_gemm_weights(g, packed_w);  // null unless packed for this node
  const int64_t Cg = g.C / g.group, Mg = g.M / g.group, K = Cg * g.kH * g.kW, P = g.OH * g.OW, HW = g.H * g.W;
  const int64_t pt = conv_pixel_tile(g, P, K);
  // The GEMM forms as chosen; Winograd without transformed weights falls back to the geometry's.
  const ConvB kind = algo == ConvAlgo::Pointwise ? ConvB::Input : algo == ConvAlgo::ImplicitGemm ? ConvB::Implicit
                     : algo == ConvAlgo::TileGemm ? ConvB::Tile : conv_b(g);
  float* col = scratch;
  ConvImage image{&g, nullptr, nullptr, int64_t(round16(size_t(std::max<int64_t>(padded_floats(g), 0)))), 0};
  float* planes = nullptr;
  GemmArgs a;
  a.M = size_t(Mg);
  a.K = size_t(K);
  a.a_rs = K;
  a.a_cs = 1;
  a.b_cs = 1;
  a.ldc = size_t(P);
  a.workspace = scratch + (kind == ConvB::Tile ? round16(size_t(pt * K)) : 0);
  const float** b_rows = nullptr;  // B's row k in place: buffer of channel k / kk, tap k % kk
  if (kind == ConvB::Implicit) {
    ptrdiff_t* tap_off = reinterpret_cast<ptrdiff_t*>(scratch);
    fill_tap_offsets(g, tap_off);
    b_rows = reinterpret_cast<const float**>(scratch + tap_table_floats(g));
    planes = scratch + tap_table_floats(g) + row_table_floats(g);
    const int64_t kk = g.kH * g.kW;
    for (int64_t k = 0; k < K; ++k) b_rows[k] = planes + (k / kk) * image.plane_floats + tap_off[k % kk];
    if (!planes_unpadded(g)) std::memset(planes, 0, implicit_planes_floats(g) * sizeof(float));  // the borders stay zero
    image.planes = planes;
    image.tap_off = tap_off;
    a.workspace = planes + implicit_planes_floats(g);
    a.pack_b = pack_image_panels;
    a.pack_b_ctx = &image;
  }
  // Bias, residual and Relu go to the GEMM (applied in the micro-kernels' registers); a
  // normalisation or another activation follows each pixel tile's complete chains here.
  const bool gemm_epilogue = !norm && (act.op == UnaryOp::Identity || act.op == UnaryOp::Relu);
  if (gemm_epilogue) a.activation = act.op;
  float* packed_a = nullptr;
  if (!planned_a && conv_packed_a_floats(g) > 0) {
    packed_a = a.workspace;
    a.workspace += conv_packed_a_floats(g);
  }
  // Groups outermost, so the packed weights of a group serve all its images and tiles.
  for (int64_t gi = 0; gi < g.group; ++gi) {
    a.a = w + gi * Mg * K;
    a.row_bias = gemm_epilogue && bias ? bias + gi * Mg : nullptr;
    a.packed_a = planned_a;
    if (packed_a) {
      gemm_pack_a(a, packed_a);
      a.packed_a = packed_a;
    }
    for (int64_t n = 0; n < g.N; ++n) {
      const float* xn = x + n * g.C * HW;
      float* yg = y + (n * g.M + gi * Mg) * P;
      if (kind == ConvB::Implicit && planes_unpadded(g)) {  // B's rows read from the input planes
        image.planes = xn + gi * Cg * HW;
        image.plane_floats = HW;
        const int64_t kk = g.kH * g.kW;
        for (int64_t k = 0; k < K; ++k) b_rows[k] = image.planes + (k / kk) * HW + image.tap_off[k % kk];
      } else if (kind == ConvB::Implicit) {
        for (int64_t c = 0; c < Cg; ++c) f32_conv_fill_padded(g, xn + (gi * Cg + c) * HW, planes + c * image.plane_floats);
      }
      for (int64_t p0 = 0; p0 < P; p0 += pt) {
        const int64_t cur = std::min(pt, P - p0);
        switch (kind) {
          case ConvB::Input:
            a.b = xn + gi * Cg * HW + p0;
            a.b_rs = HW;
            break;
          case ConvB::Implicit:
            image.p0 = p0;
            break;
          case ConvB::Tile:
            im2col_tile(g, xn, gi * Cg, Cg, p0, cur, col);
            a.b = col;
            a.b_rs = cur;
            break;
        }
        a.N = size_t(cur);
        a.c = yg + p0;
        const float* rg = residual ? residual + (n * g.M + gi * Mg) * P + p0 : nullptr;
        a.addend = gemm_epilogue ? rg : nullptr;
        if (kind != ConvB::Implicit || !gemm_image_rows(a, b_rows, image_panel_offset, &image)) f32_gemm(a, mode);
        if (!gemm_epilogue)
          for (int64_t m = 0; m < Mg; ++m)
            epilogue_row(yg + m * P + p0, size_t(cur), bias ? bias + gi * Mg + m : nullptr, norm, gi * Mg + m, act,
                         rg ? rg + m * P : nullptr);
        else
          act.chain_rows(yg + p0, size_t(Mg), size_t(P), size_t(cur));
      }
    }
  }
}

namespace {

// A transposed convolution whose windows tile the output (kernel = stride, no dilation, no pads,
// the output exactly stride x the input: the "upsample by 2" layers of segmentation and text
// detection heads): every output receives exactly one product. Then one GEMM per block of input
// rows, Z[(m, kh, kw), p] = W^T x X[., p] over the input pixels in place (as a pointwise
// convolution), gives every tap's products, and the output rows are written once from them: no
// zeroed output, no scattered accumulation (which ran at 5 GFLOP/s on PaddleOCR's detection head).
// The weights are the GEMM's left operand here, packed per call (a few KB); the plan's packed
// right-hand form serves the general form only.
bool transpose_tiles_output(const ConvGeom& g) {
  return g.kH == g.sH && g.kW == g.sW && g.dH == 1 && g.dW == 1 && g.pad_t == 0 && g.pad_l == 0 && g.OH == g.H * g.sH &&
         g.OW == g.W * g.sW;
}

// Input rows per block of the tiled form: its Mg x kH x kW rows of products in about 64K floats.
int64_t tiled_rows(const ConvGeom& g) {
  const int64_t per_row = std::max<int64_t>(1, g.kH * g.kW * (g.M / g.group) * g.W);
  return std::max<int64_t>(1, std::min(g.H, 65536 / per_row));
}

size_t tiled_transpose_scratch_floats(const ConvGeom& g) {
  const int64_t Nc = (g.M / g.group) * g.kH * g.kW, pt = tiled_rows(g) * g.W;
  return round16(size_t(Nc * pt)) + gemm_workspace_floats(size_t(Nc) + 8, size_t(pt) + 16, size_t(g.C / g.group));
}

// Each output is the chain over the input channels (the same GEMM chain as the general form's),
// then + 0 (the general form's zeroed output plus its one product: -0 becomes +0), then + bias.
void tiled_transpose(const ConvGeom& g, const float* x, const float* w, const float* bias, float* y, float* scratch,
                     ArithmeticMode mode) {
  const int64_t Cg = g.C / g.group, Mg = g.M / g.group, kk = g.kH * g.kW, Nc = Mg * kk, P = g.H * g.W, OP = g.OH * g.OW;
  const int64_t rows = tiled_rows(g), pt = rows * g.W;
  float* z = scratch;  // Nc rows (m, kh, kw) of `cur` products
  GemmArgs a;
  a.M = size_t(Nc);
  a.K = size_t(Cg);
  a.a_rs = 1;  // W^T: row (m, kh, kw) at m * kk + kh * kW + kw, column c at c * Nc
  a.a_cs = Nc;
  a.b_rs = P;
  a.b_cs = 1;
  a.c = z;
  a.workspace = scratch + round16(size_t(Nc * pt));
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t gi = 0; gi < g.group; ++gi) {
      float* yg = y + (n * g.M + gi * Mg) * OP;
      a.a = w + gi * Cg * Nc;
      for (int64_t i0 = 0; i0 < g.H; i0 += rows) {
        const int64_t nr = std::min(rows, g.H - i0), cur = nr * g.W;
        a.N = size_t(cur);
        a.ldc = size_t(cur);
        a.b = x + (n * g.C + gi * Cg) * P + i0 * g.W;
        f32_gemm(a, mode);
        for (int64_t m = 0; m < Mg; ++m) {
          const float b = bias ? bias[gi * Mg + m] : 0.0f;
          for (int64_t r = 0; r < nr; ++r)
            for (int64_t kh = 0; kh < g.kH; ++kh) {
              float* out = yg + m * OP + ((i0 + r) * g.sH + kh) * g.OW;
              const float* zr = z + (m * kk + kh * g.kW) * cur + r * g.W;  // tap (kh, 0); kw rows follow
              if (g.kW == 2) {  // the common 2 x 2 form: both taps of a row interleaved in one pass
                for (int64_t j = 0; j < g.W; ++j) {
                  out[2 * j] = bias ? (zr[j] + 0.0f) + b : zr[j] + 0.0f;
                  out[2 * j + 1] = bias ? (zr[cur + j] + 0.0f) + b : zr[cur + j] + 0.0f;
                }
                continue;
              }
              for (int64_t kw = 0; kw < g.kW; ++kw) {
                const float* zt = zr + kw * cur;
                if (bias)
                  for (int64_t j = 0; j < g.W; ++j) out[j * g.sW + kw] = (zt[j] + 0.0f) + b;
                else
                  for (int64_t j = 0; j < g.W; ++j) out[j * g.sW + kw] = zt[j] + 0.0f;
              }
            }
        }
      }
    }
}

}  // namespace

size_t conv_transpose_scratch_floats(const ConvGeom& g) {
  const int64_t Cg = g.C / g.group, Mg = g.M / g.group, Nc = Mg * g.kH * g.kW, P = g.H * g.W;
  const int64_t pt = pixel_tile(P, Nc);
  const size_t general = round16(size_t(pt * Nc)) + gemm_workspace_floats(size_t(pt) + 8, size_t(Nc) + 16, size_t(Cg));
  return transpose_tiles_output(g) ? std::max(general, tiled_transpose_scratch_floats(g)) : general;
}

void f32_conv_transpose2d(const ConvGeom& g, const float* x, const float* w, const float* bias, float* y, float* scratch,
                          const float* packed_w, ArithmeticMode mode) {
  if (transpose_tiles_output(g)) return tiled_transpose(g, x, w, bias, y, scratch, mode);
  const int64_t Cg = g.C / g.group, Mg = g.M / g.group, kk = g.kH * g.kW, Nc = Mg * kk, P = g.H * g.W, OP = g.OH * g.OW;
  const int64_t pt = pixel_tile(P, Nc);
  float* tile = scratch;
  if (g.group != 1) packed_w = nullptr;
  GemmArgs a;
  a.K = size_t(Cg);
  a.N = size_t(Nc);
  a.a_rs = 1;
  a.a_cs = P;
  a.b_rs = Nc;
  a.b_cs = 1;
  a.c = tile;
  a.ldc = size_t(Nc);
  a.workspace = scratch + round16(size_t(pt * Nc));
  std::fill(y, y + g.N * g.M * OP, 0.0f);
  for (int64_t n = 0; n < g.N; ++n) {
    for (int64_t gi = 0; gi < g.group; ++gi) {
      a.b = w + gi * Cg * Nc;
      float* yg = y + (n * g.M + gi * Mg) * OP;
      for (int64_t p0 = 0; p0 < P; p0 += pt) {
        const int64_t cur = std::min(pt, P - p0);
        a.a = x + (n * g.C + gi * Cg) * P + p0;
        a.M = size_t(cur);
        run_gemm(a, packed_w, mode);
        for (int64_t pp = 0; pp < cur; ++pp) {
          const int64_t i = (p0 + pp) / g.W, j = (p0 + pp) % g.W;
          const float* t = tile + pp * Nc;
          for (int64_t m = 0; m < Mg; ++m) {
            float* plane = yg + m * OP;
            for (int64_t kh = 0; kh < g.kH; ++kh) {
              const int64_t oh = i * g.sH - g.pad_t + kh * g.dH;
              if (oh < 0 || oh >= g.OH) continue;
              for (int64_t kw = 0; kw < g.kW; ++kw) {
                const int64_t ow = j * g.sW - g.pad_l + kw * g.dW;
                if (ow < 0 || ow >= g.OW) continue;
                plane[oh * g.OW + ow] += t[m * kk + kh * g.kW + kw];
              }
            }
          }
        }
      }
    }
    if (bias)
      for (int64_t m = 0; m < g.M; ++m) {
        float* plane = y + (n * g.M + m) * OP;
        for (int64_t p = 0; p < OP; ++p) plane[p] = plane[p] + bias[m];
      }
  }
}

size_t conv_weight_grad_scratch_floats(const ConvGeom& g) {
  const int64_t Cg = g.C / g.group, Mg = g.M / g.group, K = Cg * g.kH * g.kW, P = g.OH * g.OW;
  const int64_t pt = pixel_tile(P, K);
  return round16(size_t(pt * K)) + gemm_workspace_floats(size_t(Mg) + 8, size_t(K) + 16, size_t(pt));
}

void f32_conv2d_weight_grad(const ConvGeom& g, const float* x, const float* dy, float* dw, float* scratch, ArithmeticMode mode) {
  const int64_t Cg = g.C / g.group, Mg = g.M / g.group, K = Cg * g.kH * g.kW, P = g.OH * g.OW, HW = g.H * g.W;
  const int64_t pt = pixel_tile(P, K);
  float* col = scratch;
  GemmArgs a;
  a.M = size_t(Mg);
  a.N = size_t(K);
  a.a_rs = P;
  a.a_cs = 1;
  a.b = col;
  a.ldc = size_t(K);
  a.workspace = scratch + round16(size_t(pt * K));
  for (int64_t gi = 0; gi < g.group; ++gi) {
    a.c = dw + gi * Mg * K;
    bool first = true;
    for (int64_t n = 0; n < g.N; ++n) {
      for (int64_t p0 = 0; p0 < P; p0 += pt) {
        const int64_t cur = std::min(pt, P - p0);
        im2col_tile(g, x + n * g.C * HW, gi * Cg, Cg, p0, cur, col);
        a.b_rs = 1;
        a.b_cs = cur;
        a.a = dy + (n * g.M + gi * Mg) * P + p0;
        a.K = size_t(cur);
        a.accumulate = !first;
        f32_gemm(a, mode);
        first = false;
      }
    }
    if (first) std::fill(a.c, a.c + Mg * K, 0.0f);
  }
}

void f32_max_pool2d(const ConvGeom& g, const float* x, float* y, int64_t* argmax) {
  if (!argmax) return f32_pool_window(g, PoolWindow{}, x, y);
  const int64_t P = g.OH * g.OW, HW = g.H * g.W;
  for (int64_t nc = 0; nc < g.N * g.C; ++nc)
    for (int64_t oh = 0; oh < g.OH; ++oh)
      for (int64_t ow = 0; ow < g.OW; ++ow) {
        const int64_t o = nc * P + oh * g.OW + ow;
        y[o] = pool::max_at(g, x + nc * HW, oh, ow, argmax + o);
      }
}

int64_t avg_pool_axis_count(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pad_begin, int64_t pad_end,
                            bool count_include_pad, int64_t o) {
  int64_t c = 0;
  for (int64_t t = 0; t < k; ++t) {
    const int64_t i = o * s - pad_begin + t * d;
    c += count_include_pad ? (i < in + pad_end) : (i >= 0 && i < in);
  }
  return c;
}

int64_t avg_pool_count(const ConvGeom& g, int64_t pad_b, int64_t pad_r, bool count_include_pad, int64_t oh, int64_t ow) {
  return avg_pool_axis_count(g.H, g.kH, g.sH, g.dH, g.pad_t, pad_b, count_include_pad, oh) *
         avg_pool_axis_count(g.W, g.kW, g.sW, g.dW, g.pad_l, pad_r, count_include_pad, ow);
}

void f32_avg_pool2d(const ConvGeom& g, int64_t pad_b, int64_t pad_r, bool count_include_pad, const float* x, float* y) {
  f32_pool_window(g, PoolWindow{false, pad_b, pad_r, count_include_pad}, x, y);
}

void f32_batch_norm_inference(const float* x, const float* scale, const float* bias, const float* mean, const float* var,
                              float eps, int64_t N, int64_t C, int64_t inner, float* y) {
  for (int64_t c = 0; c < C; ++c) {
    const float s = batch_norm_scale(scale[c], var[c], eps);
    const float mu = mean[c], b = bias[c];
    for (int64_t n = 0; n < N; ++n) {
      const float* xs = x + (n * C + c) * inner;
      float* ys = y + (n * C + c) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        const float t = (xs[i] - mu) * s;
        ys[i] = t + b;
      }
    }
  }
}

double resize_source_coord(ResizeCoord c, int64_t o, double scale, int64_t in, double resized) {
  switch (c) {
    case ResizeCoord::HalfPixel: return (double(o) + 0.5) / scale - 0.5;
    case ResizeCoord::PytorchHalfPixel: return resized > 1 ? (double(o) + 0.5) / scale - 0.5 : 0.0;
    case ResizeCoord::AlignCorners: return resized <= 1 ? 0.0 : double(o) * double(in - 1) / (resized - 1);
    case ResizeCoord::Asymmetric: return double(o) / scale;
  }
  return 0.0;
}

int64_t resize_nearest_index(ResizeNearest m, double v, int64_t in) {
  double r;
  switch (m) {
    case ResizeNearest::Floor: r = std::floor(v); break;
    case ResizeNearest::Ceil: r = std::ceil(v); break;
    case ResizeNearest::RoundPreferCeil: r = std::floor(v + 0.5); break;
    default: r = (v - std::floor(v) == 0.5) ? std::floor(v) : std::round(v); break;
  }
  if (!(r >= 0)) return 0;
  return r >= double(in - 1) ? in - 1 : int64_t(r);
}

void resize_linear_taps(double v, int64_t in, int64_t* i0, int64_t* i1, float* w0, float* w1) {
  if (v < 0) v = 0;
  if (v > double(in - 1)) v = double(in - 1);
  const double f = std::floor(v);
  *i0 = int64_t(f);
  *i1 = std::min(*i0 + 1, in - 1);
  *w1 = float(v - f);
  *w0 = float(1.0 - (v - f));
}

namespace {
// The taps of every output column or row (an axis of `out` outputs), one table entry each.
struct ResizeAxis {
  int64_t *i0, *i1;
  float *w0, *w1;
};
ResizeAxis resize_axis(const ResizeGeom& g, bool height, float* at) {
  const int64_t n = height ? g.OH : g.OW, in = height ? g.H : g.W;
  ResizeAxis a{reinterpret_cast<int64_t*>(at), reinterpret_cast<int64_t*>(at) + n, at + 4 * n, at + 5 * n};
  for (int64_t o = 0; o < n; ++o) {
    const double v = resize_source_coord(g.coord, o, height ? g.scale_h : g.scale_w, in, resized_length(g, height));
    if (g.mode == ResizeMode::Nearest) a.i0[o] = resize_nearest_index(g.nearest, v, in);
    else resize_linear_taps(v, in, &a.i0[o], &a.i1[o], &a.w0[o], &a.w1[o]);
  }
  return a;
}
}  // namespace

size_t resize2d_scratch_floats(const ResizeGeom& g) { return size_t(6 * g.OW + 6 * g.OH + 2 * g.OW); }

void f32_resize2d(const ResizeGeom& g, const float* x, float* y, float* scratch) {
  const int64_t HW = g.H * g.W, OP = g.OH * g.OW, OW = g.OW;
  const ResizeAxis cols = resize_axis(g, false, scratch), rows = resize_axis(g, true, scratch + 6 * OW);
  for (int64_t nc = 0; nc < g.NC; ++nc) {
    const float* p = x + nc * HW;
    float* out = y + nc * OP;
    if (g.mode == ResizeMode::Nearest) {
      for (int64_t oh = 0; oh < g.OH; ++oh) {
        const float* r = p + rows.i0[oh] * g.W;
        for (int64_t ow = 0; ow < OW; ++ow) out[oh * OW + ow] = r[cols.i0[ow]];
      }
      continue;
    }
    // Two interpolated input rows, tagged with the row they hold (-1: none yet in this plane).
    float* line[2] = {scratch + 6 * OW + 6 * g.OH, scratch + 7 * OW + 6 * g.OH};
    int64_t tag[2] = {-1, -1};
    auto row = [&](int64_t r, int keep) -> const float* {  // keep: the slot the other row uses, or -1
      for (int k = 0; k < 2; ++k)
        if (tag[k] == r) return line[k];
      const int k = keep == 0 ? 1 : 0;
      const float* src = p + r * g.W;
      for (int64_t ow = 0; ow < OW; ++ow) line[k][ow] = cols.w0[ow] * src[cols.i0[ow]] + cols.w1[ow] * src[cols.i1[ow]];
      tag[k] = r;
      return line[k];
    };
    for (int64_t oh = 0; oh < g.OH; ++oh) {
      const float* top = row(rows.i0[oh], tag[0] == rows.i1[oh] ? 0 : tag[1] == rows.i1[oh] ? 1 : -1);
      const float* bot = row(rows.i1[oh], top == line[0] ? 0 : 1);
      const float h0 = rows.w0[oh], h1 = rows.w1[oh];
      float* o = out + oh * OW;
      for (int64_t ow = 0; ow < OW; ++ow) o[ow] = h0 * top[ow] + h1 * bot[ow];
    }
  }
}

}  // namespace om::kernels
