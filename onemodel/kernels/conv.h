// Convolution, transposed convolution, pooling, batch normalisation (inference form) and 2-D
// resizing over NCHW f32 tensors: the kernels the graph's Conv family (graph/ops/conv.cpp,
// graph/ops/pool.cpp) and the eager operators (ops/conv.cpp, ops/pool.cpp, ...) share, so a
// traced model's Exact session gives the eager bits (docs/exactness.md).
//
// 1-D convolutions are the 2-D ones with H = 1 and kH = 1. Geometry is checked by the callers
// (graph inference, eager argument checks) with the checked helpers of core/shape.h; these
// functions trust it.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "onemodel/kernels/kernels.h"

namespace om::kernels {

// One 2-D convolution: X [N, C, H, W], W [M, C/group, kH, kW], Y [N, M, OH, OW].
// For a transposed convolution X is [N, C, H, W], W [C, M/group, kH, kW], Y [N, M, OH, OW] and
// the pads are the ones cropped from the full output.
struct ConvGeom {
  int64_t N = 1, C = 1, H = 1, W = 1;  // input
  int64_t M = 1, OH = 1, OW = 1;       // output channels and extent
  int64_t group = 1;
  int64_t kH = 1, kW = 1;
  int64_t sH = 1, sW = 1;
  int64_t dH = 1, dW = 1;
  int64_t pad_t = 0, pad_l = 0;  // begin pads (end pads follow from OH/OW)
};

// Output extent of a convolution / pool along one axis (floor, or ceil for ceil_mode pools
// where the last window must start inside the input or the begin padding); -1 when the dilated
// kernel does not fit in the padded input.
int64_t conv_out_extent(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pad_begin, int64_t pad_end, bool ceil_mode);

// Convolution. Exact mode: every output is the fma chain over (input channel of its group, kh,
// kw) in that order, starting from +0, padded positions contributing fma(0, w, acc); then the
// bias (one rounding), then the activation. This is an exact GEMM over the im2col matrix with K
// ordered (c, kh, kw) (materialised as a tile, or packed straight from the image: the same k
// order), and the depthwise plane kernel computes the same chain directly (each output's chain
// in registers, lanes along the output row), so the bits do not depend on ISA, tiling or path.
// The weights are the GEMM's left operand, packed per call unless `packed_w` (conv_pack_weights,
// or null) holds them packed. `scratch` holds conv_scratch_floats(g) floats, or, when packed_w is
// a Winograd buffer and mode is Fast, max(conv_scratch_floats(g), conv_winograd_scratch_floats(g)).
//
// Fast mode with a Winograd buffer and a geometry conv_winograd_fits takes the Winograd
// F(2x2, 3x3) form (conv_winograd.cpp): 16 products per channel pair and 2x2 outputs instead of
// 36, rounding differently from the chain above (within about 1e-6 of it, relative to the
// outputs' scale), so Exact mode never takes it.
//
// `norm` (optional): inference batch normalisation between the bias and the activation, as an
// Exact session's FusedConv absorbs a following BatchNormalization node: y = (x - mean[m]) *
// s[m] + bias[m] with s = batch_norm_scale(scale[m], var[m], eps), each step one rounding: the
// bits of the separate node (f32_batch_norm_inference). The Winograd form is not taken with it.
//
// `residual` (optional, Y's shape [N, M, OH, OW]): added to each output after the bias and the
// normalisation, before the activation (one rounding), as FusedConv absorbs a following Add of
// another activation (a residual block's shortcut): the bits of the separate Add, in every form
// (in the GEMM's registers for the GEMM forms, on each row just written for the others).
struct ConvNorm {
  const float *scale, *bias, *mean, *var;
  float eps;
};

// The activation after the epilogue: `op` (Relu may run in the GEMM's registers), then, when
// given, `chain`'s steps (a FusedConv's chain of elementwise nodes, docs/graph-passes.md) on each
// output row just written, while it is still in cache, by `run_chain` (f32_chain: the caller
// passes it, so the convolution kernels do not link the chain kernel into programs that have no
// chains). The chain computes what the separate FusedElementwise node computes, element by
// element, so the bits do not change.
using ChainFn = void (*)(const ChainProgram&, const float*, float*, size_t);
struct ConvActivation {
  UnaryOp op = UnaryOp::Identity;
  const ChainProgram* chain = nullptr;
  ChainFn run_chain = nullptr;
  ConvActivation(UnaryOp o = UnaryOp::Identity, const ChainProgram* c = nullptr, ChainFn f = nullptr)  // NOLINT: from UnaryOp
      : op(o), chain(c), run_chain(f) {}
  void chain_rows(float* y, size_t rows, size_t stride, size_t n) const {
    if (chain)
      for (size_t r = 0; r < rows; ++r) run_chain(*chain, y + r * stride, y + r * stride, n);
  }
};
inline float batch_norm_scale(float scale, float var, float eps) { return scale / std::sqrt(var + eps); }
size_t conv_scratch_floats(const ConvGeom& g);
void f32_conv2d(const ConvGeom& g, const float* x, const float* w, const float* bias, ConvActivation act, float* y, float* scratch,
                const float* packed_w, ArithmeticMode mode, const ConvNorm* norm = nullptr, const float* residual = nullptr);

// The algorithm f32_conv2d takes for a geometry, chosen once (a Session's prepare step records
// it): depthwise planes; the Winograd form (Fast mode, no normalisation, a fitting geometry; taken
// when the weights were packed for it, else the GEMM form below); one GEMM on the input
// (pointwise); an implicit GEMM from padded planes; or a GEMM over im2col tiles. The choice does
// not depend on the batch size, so a range of images takes the whole batch's algorithm.
enum class ConvAlgo : uint8_t { Depthwise, Winograd, Pointwise, ImplicitGemm, TileGemm };
ConvAlgo conv_algorithm(const ConvGeom& g, ArithmeticMode mode, bool norm);
const char* conv_algorithm_name(ConvAlgo a);
// f32_conv2d with the algorithm given (conv_algorithm of the same geometry, mode and norm).
void f32_conv2d_with(ConvAlgo algo, const ConvGeom& g, const float* x, const float* w, const float* bias, ConvActivation act, float* y,
                     float* scratch, const float* packed_w, ArithmeticMode mode, const ConvNorm* norm = nullptr,
                     const float* residual = nullptr);

// Constant weights packed once for f32_conv2d (a Session does it when planning), group-1
// convolutions only: W [M, K = C*kH*kW] as the GEMM's packed left operand, or, with `winograd`
// (K = C, a 3x3 kernel: conv_winograd_fits), the Winograd transform of each 3x3 kernel packed
// as 16 left operands. Packed for the ISA active when packing: f32_conv2d checks that and uses W
// itself when they do not fit (the same bits for the GEMM form: packing is a copy). With too
// little memory for the transform the buffer is left without a header and is ignored.
//
// With `transposed`, W^T [K, M] is packed as the GEMM's right-hand operand instead (gemm_pack_b):
// for convolutions with few output positions (conv_prefers_transposed: a 1-D STFT over a few
// frames, a late small feature map), f32_conv2d then runs the product transposed, Y^T[p, m] =
// col^T[p, k] W^T[k, m], in blocks of kConvTransposedTile positions, so the micro-kernels'
// columns run over output channels rather than mostly empty pixel panels. Each output is still
// the fma chain over k in order, then the bias and the activation: the bits of the other GEMM
// forms, in both modes. It serves any later input size (the blocks bound its scratch).
struct ConvWeightPack {
  int64_t M = 0, K = 0;
  bool winograd = false;
  bool transposed = false;
};
// Below this many output positions (and from kConvTransposedMinChannels output channels up,
// group 1, not depthwise) the transposed form pays: at 16 positions the direct form fills at most
// half of a 32-column panel, while the transposed one fills every column (measured on the
// melspectrogram STFT, docs/performance.md).
constexpr int64_t kConvTransposedMaxPositions = 16, kConvTransposedMinChannels = 32, kConvTransposedTile = 64;
bool conv_prefers_transposed(const ConvGeom& g);
size_t conv_packed_weights_floats(const ConvWeightPack& p);
void conv_pack_weights(const ConvWeightPack& p, const float* w, float* packed);
// Whether the Winograd form applies: group 1, a 3x3 kernel, strides and dilations 1, and at
// least kConvWinogradMinChannels input and output channels (below that the GEMMs are too short
// to gain); any pads and extents.
constexpr int64_t kConvWinogradMinChannels = 16;
bool conv_winograd_fits(const ConvGeom& g);
size_t conv_winograd_scratch_floats(const ConvGeom& g);  // 0 when it does not fit
// The Winograd form when `packed` is a Winograd buffer fitting g and the active ISA (else false,
// nothing written); `scratch` holds conv_winograd_scratch_floats(g).
bool conv_winograd(const ConvGeom& g, const float* x, const float* packed, const float* bias, ConvActivation act, float* y,
                   float* scratch, const float* residual = nullptr);
// The GEMM-form packed weights inside `packed` when it holds them for g, else null.
const float* conv_packed_gemm_weights(const ConvGeom& g, const float* packed);
// The transposed form's packed W^T inside `packed` when it holds them for g, else null.
const float* conv_packed_transposed_weights(const ConvGeom& g, const float* packed);

// Transposed convolution (the gradient of conv2d with respect to its input, plus a bias).
// Exact mode: for every input pixel p (row-major) the GEMM gives t[p, m, kh, kw] as the fma
// chain over the group's input channels in order; Y starts at +0 and receives the terms in the
// order (p, kh, kw), each one addition; then the bias. `packed_w` is gemm_pack_b of W viewed as
// [C, M*kH*kW] (rs M*kH*kW, cs 1), group == 1 only.
size_t conv_transpose_scratch_floats(const ConvGeom& g);
void f32_conv_transpose2d(const ConvGeom& g, const float* x, const float* w, const float* bias, float* y, float* scratch,
                          const float* packed_w, ArithmeticMode mode);

// dW for a convolution: dW[m, c, kh, kw] = sum over (n, output pixel) of dY * X(im2col), as an
// fma chain in the order (n, output pixel); dW is overwritten. `scratch`:
// conv_weight_grad_scratch_floats(g).
size_t conv_weight_grad_scratch_floats(const ConvGeom& g);
void f32_conv2d_weight_grad(const ConvGeom& g, const float* x, const float* dy, float* dw, float* scratch, ArithmeticMode mode);

// Pools over [N, C, H, W] -> [N, C, OH, OW] (g.M == g.C, group ignored). Max: NaN propagates,
// windows without an input element give -inf. Average: the window's elements summed in (kh, kw)
// order then divided by the count (the in-input elements, or, with count_include_pad, the
// elements inside the padded input: pad_b / pad_r are the end pads). Same bits in both modes and
// on every ISA (pool_window.h: the interior of each row runs vectorised, the same steps per
// output); with `argmax` (the tap each maximum came from) the element loop runs throughout.
void f32_max_pool2d(const ConvGeom& g, const float* x, float* y, int64_t* argmax);
void f32_avg_pool2d(const ConvGeom& g, int64_t pad_b, int64_t pad_r, bool count_include_pad, const float* x, float* y);
// What a pool applies over its window: max, or the average with its end pads and count rule.
struct PoolWindow {
  bool max = true;
  int64_t pad_b = 0, pad_r = 0;
  bool count_include_pad = false;
};
// The element count of output (oh, ow)'s window for avg_pool2d: the product of the counts along
// each axis (avg_pool_axis_count: output o's taps inside [0, in), or with count_include_pad
// inside [-pad_begin, in + pad_end)).
int64_t avg_pool_axis_count(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pad_begin, int64_t pad_end,
                            bool count_include_pad, int64_t o);
int64_t avg_pool_count(const ConvGeom& g, int64_t pad_b, int64_t pad_r, bool count_include_pad, int64_t oh, int64_t ow);

// Inference batch normalisation of [N, C, inner]: y = (x - mean[c]) * s[c] + bias[c] with
// s[c] = batch_norm_scale(scale[c], var[c], eps), each operation one rounding (no fma).
void f32_batch_norm_inference(const float* x, const float* scale, const float* bias, const float* mean, const float* var,
                              float eps, int64_t N, int64_t C, int64_t inner, float* y);

// 2-D resize of [N*C, H, W] -> [N*C, OH, OW] (one spatial plane per row of NC).
enum class ResizeMode { Nearest, Linear };
enum class ResizeCoord { HalfPixel, PytorchHalfPixel, AlignCorners, Asymmetric };
enum class ResizeNearest { Floor, RoundPreferFloor, RoundPreferCeil, Ceil };
struct ResizeGeom {
  int64_t NC = 1, H = 1, W = 1, OH = 1, OW = 1;
  double scale_h = 1, scale_w = 1;  // output / input, as the coordinate transform uses them
  // Scales given (not sizes): align_corners and pytorch_half_pixel then use the unrounded
  // resized length in * scale, as the ONNX definition does, not the integer output size.
  bool from_scales = false;
  ResizeMode mode = ResizeMode::Nearest;
  ResizeCoord coord = ResizeCoord::HalfPixel;
  ResizeNearest nearest = ResizeNearest::RoundPreferFloor;
};
// Source coordinate of output index o (in float64, as ONNX states it); `resized` is the resized
// length (the output size, or in * scale when scales were given).
double resize_source_coord(ResizeCoord c, int64_t o, double scale, int64_t in, double resized);
inline double resized_length(const ResizeGeom& g, bool height) {
  if (!g.from_scales) return double(height ? g.OH : g.OW);
  return height ? double(g.H) * g.scale_h : double(g.W) * g.scale_w;
}
// Nearest: y = x at (nearest row, nearest column). Linear: top = w0 * x[y0][x0] + w1 * x[y0][x1],
// bottom the same on row y1, y = h0 * top + h1 * bottom, each product and sum one rounding. Each
// input row's interpolated values (top or bottom) are computed once per plane and serve every
// output row that reads that row (two rows of `scratch`); the taps of the columns and rows come
// from tables built once per call: the same operations per output either way.
size_t resize2d_scratch_floats(const ResizeGeom& g);
void f32_resize2d(const ResizeGeom& g, const float* x, float* y, float* scratch);
// The taps f32_resize2d uses (for the eager gradient): the nearest source index, clamped to
// [0, in), and the two linear taps with their weights (w0 for i0) after clamping v to [0, in-1].
int64_t resize_nearest_index(ResizeNearest m, double v, int64_t in);
void resize_linear_taps(double v, int64_t in, int64_t* i0, int64_t* i1, float* w0, float* w1);

}  // namespace om::kernels
