// f32_conv2d's exact rule (conv.h) checked directly, on every ISA this machine runs: every output
// is the fma chain over (input channel of its group, kh, kw) from +0, padded taps fma(0, w, acc),
// then + bias. The geometries reach every path: the implicit GEMM (B panels packed from padded
// phase buffers; strides, dilations, groups, rows crossing panels), the materialised im2col tile
// (at most four output channels per group), the pointwise GEMM on the input, the implicit GEMM on
// the input planes themselves (windows covering whole rows without pads), and the depthwise
// kernels (rows shorter and longer than a vector, strides 1 to 3, channel multipliers; column
// stride 1 reads the input in place, with pads narrower and far wider than the plane; 3x3 "same"
// layers on narrow and wide planes read the planes themselves; 3x3 and 5x5 stride-1 layers share
// input rows across output rows).
#include <doctest/doctest.h>

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/kernel_test_util.h"
#include "onemodel/kernels/conv.h"

using namespace om::kernels;
using namespace om::kernels::test;
using om::ArithmeticMode;

namespace {

struct Case {
  int64_t N, C, H, W, M, group, kH, kW, sH, sW, dH, dW, pt, pl, pb, pr;
};

ConvGeom geom_of(const Case& c) {
  ConvGeom g;
  g.N = c.N, g.C = c.C, g.H = c.H, g.W = c.W, g.M = c.M, g.group = c.group;
  g.kH = c.kH, g.kW = c.kW, g.sH = c.sH, g.sW = c.sW, g.dH = c.dH, g.dW = c.dW, g.pad_t = c.pt, g.pad_l = c.pl;
  g.OH = conv_out_extent(c.H, c.kH, c.sH, c.dH, c.pt, c.pb, false);
  g.OW = conv_out_extent(c.W, c.kW, c.sW, c.dW, c.pl, c.pr, false);
  return g;
}

// The rule, written out.
std::vector<float> reference(const ConvGeom& g, const std::vector<float>& x, const std::vector<float>& w, const float* bias) {
  const int64_t Cg = g.C / g.group, Mg = g.M / g.group;
  std::vector<float> y(size_t(g.N * g.M * g.OH * g.OW));
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t m = 0; m < g.M; ++m)
      for (int64_t oh = 0; oh < g.OH; ++oh)
        for (int64_t ow = 0; ow < g.OW; ++ow) {
          float acc = 0.0f;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t kh = 0; kh < g.kH; ++kh)
              for (int64_t kw = 0; kw < g.kW; ++kw) {
                const int64_t ih = oh * g.sH - g.pad_t + kh * g.dH, iw = ow * g.sW - g.pad_l + kw * g.dW;
                const int64_t ci = (m / Mg) * Cg + c;
                const bool in = ih >= 0 && ih < g.H && iw >= 0 && iw < g.W;
                const float xv = in ? x[size_t(((n * g.C + ci) * g.H + ih) * g.W + iw)] : 0.0f;
                acc = std::fma(xv, w[size_t(((m * Cg + c) * g.kH + kh) * g.kW + kw)], acc);
              }
          y[size_t(((n * g.M + m) * g.OH + oh) * g.OW + ow)] = bias ? acc + bias[m] : acc;
        }
  return y;
}

// UnaryOp::Relu's rule after the chain (and the bias): x < 0 ? 0 : x, NaN and -0 kept.
std::vector<float> with_activation(std::vector<float> y, UnaryOp act) {
  if (act == UnaryOp::Relu)
    for (float& v : y) v = v < 0.0f ? 0.0f : v;
  return y;
}

const Case kCases[] = {
    // implicit GEMM: 3x3 pad 1, rows crossing panels (OW 13, 56), batch
    {2, 5, 13, 13, 16, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 8, 9, 56, 24, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    // implicit, strided (phase buffers) stem-like, dilated, asymmetric pads, groups
    {1, 3, 17, 19, 12, 1, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
    {1, 4, 15, 14, 9, 1, 3, 2, 3, 3, 1, 1, 2, 0, 1, 2},
    {1, 6, 12, 11, 10, 2, 3, 3, 1, 1, 2, 3, 2, 1, 0, 1},
    {1, 7, 10, 9, 14, 1, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0},  // strided 1x1: implicit, one tap
    {1, 64, 6, 6, 40, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},  // K 576: crosses the K block
    // implicit, windows covering whole rows without pads (the input planes read in place, per
    // image): 3x1 (buffer rows continue each other: panels across output rows read in place),
    // dilated, row stride 2, 3x3 valid; 3x1 with row pads only (continuous padded rows)
    {2, 6, 14, 9, 16, 1, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0},
    {1, 4, 13, 10, 9, 1, 3, 1, 1, 1, 2, 1, 0, 0, 0, 0},
    {1, 4, 12, 9, 8, 1, 3, 1, 2, 1, 1, 1, 0, 0, 0, 0},
    {2, 6, 10, 20, 8, 1, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0},
    {1, 5, 11, 7, 12, 1, 3, 1, 1, 1, 1, 1, 1, 0, 1, 0},
    // im2col tile (4 output channels or fewer per group)
    {1, 5, 8, 7, 3, 1, 3, 3, 1, 2, 1, 1, 1, 0, 1, 1},
    // pointwise GEMM on the input
    {2, 9, 5, 6, 11, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
    // depthwise: short rows, long rows, strides 1-3, multiplier 2, dilation
    {2, 4, 8, 8, 4, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 3, 9, 37, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 3, 33, 34, 3, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
    {1, 2, 11, 20, 4, 2, 5, 3, 3, 3, 1, 2, 2, 1, 0, 2},
    {1, 5, 7, 9, 5, 5, 3, 1, 1, 2, 2, 1, 1, 0, 2, 0},
    // depthwise, column stride 1 (the input read in place): row stride 2 with a dilated 3x5
    // kernel and asymmetric pads; pads far wider than the plane; multiplier 2 with a wide right pad
    {1, 3, 6, 21, 3, 3, 3, 5, 2, 1, 1, 2, 2, 3, 1, 4},
    {1, 2, 5, 7, 2, 2, 3, 3, 1, 1, 1, 1, 20, 18, 20, 19},
    {1, 2, 4, 40, 4, 2, 2, 3, 1, 1, 3, 1, 0, 0, 3, 17},
    // depthwise, 8 output columns (two rows per vector under AVX-512): 19 rows (16 + 2 + 1 left;
    // a second bottom pad, so not the in-place "same" form), and 13 rows from a stride-2 plane
    {1, 3, 18, 8, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 2, 1},
    {1, 2, 26, 16, 2, 2, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
    // depthwise 3x3 stride 1 (input rows shared by four output rows): multiplier 2, 10 rows
    // (4 + 4 + 2 left), 130 columns (a partial last vector); no pads, so 7 rows of 126
    {1, 2, 10, 130, 4, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 3, 9, 128, 3, 3, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0},
    // depthwise 5x5 stride 1 (input rows shared by four output rows, vector ISAs): 9 rows of 37
    // (4 + 4 + 1 left; two whole vectors and a partial one under AVX-512); multiplier 2 without
    // pads, 4 rows of 16
    {1, 3, 9, 37, 3, 3, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2},
    {1, 2, 8, 20, 4, 2, 5, 5, 1, 1, 1, 1, 0, 0, 0, 0},
    // depthwise planes of few rows read as one run of vectors across the rows: 5x5 on 2 rows of
    // 40 (two whole vectors a row and a partial one under AVX-512); 2 rows of 95 (blocks of 8
    // whole vectors crossing rows under AVX-512 and AVX2, a block of 2 starting mid-row, odd
    // rows for the one-lane table's pairs); 5x5 with row stride 2 on 3 rows of 70 (12 whole
    // vectors under AVX-512, crossing rows; not the KxK window form); one row of 150
    {1, 3, 2, 40, 3, 3, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2},
    {1, 2, 2, 95, 2, 2, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2},
    // the KxK window form with the row dilation equal to the row stride (2): 6 output rows
    {1, 2, 11, 40, 2, 2, 3, 3, 2, 1, 2, 1, 2, 1, 2, 1},
    {2, 2, 5, 70, 2, 2, 5, 5, 2, 1, 1, 1, 2, 2, 2, 2},
    {1, 2, 1, 150, 2, 2, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1},
    // depthwise 3x3 "same" on planes at most 32 or at least 96 wide (read in place, edge vectors
    // loading only the lanes inside the row): 96 columns (whole vectors, both edges), 103 (a
    // partial last vector), batch 2 and 7 rows (4 + 3 single rows); multiplier 3 on 3 rows (no
    // block of four); 5 rows of 100; narrow planes: 32 (whole vectors), 31 and 17 (a partial
    // second vector), 8 and 5 (one vector holding both edges, narrower than AVX-512's), 1 column
    {1, 2, 6, 96, 2, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    {2, 3, 7, 103, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 2, 3, 98, 6, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 2, 5, 100, 2, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 2, 9, 31, 2, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    {2, 3, 6, 32, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 2, 5, 17, 4, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 3, 8, 8, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 2, 7, 5, 2, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 2, 4, 1, 2, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    // depthwise with channels as lanes (output rows of at most 8 with a stride above 1, or of
    // at most 4): 20 channels of 8x8 from 16x16 (a partial block of channels under AVX-512 and
    // AVX2; 17 and 18 below give one under NEON); batch 2, 17 channels, 4x5 outputs (a partial
    // block of pixels; 25 outputs give one under NEON); 5x5 dilated 2 on a 9x9 plane; asymmetric
    // pads with column stride 3; 4x4 at stride 1; windows that stop short of the last input row
    // and column (9 of 10 reached)
    {1, 20, 16, 16, 20, 20, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
    {2, 17, 7, 9, 17, 17, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
    {1, 18, 9, 9, 18, 18, 5, 5, 2, 2, 2, 2, 4, 4, 4, 4},
    {1, 9, 10, 11, 9, 9, 3, 3, 2, 3, 1, 1, 0, 1, 2, 0},
    {1, 6, 4, 4, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 5, 10, 10, 5, 5, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0},
    // the plane kernel on the shapes above that now take the channel form, by a depth
    // multiplier of 2: 8 output columns from a stride-2 plane (two rows per vector under
    // AVX-512), a column-stride-2 3x1 kernel, the in-place form on one column
    {1, 2, 26, 16, 4, 2, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
    {1, 5, 7, 9, 10, 5, 3, 1, 1, 2, 2, 1, 1, 0, 2, 0},
    {1, 2, 4, 1, 4, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    // a left pad wider than the columns the windows reach (1x1 at stride 3 on one column): every
    // output of the first column reads the pad
    {1, 5, 3, 1, 5, 5, 1, 1, 1, 3, 1, 1, 0, 5, 0, 0},
};

}  // namespace

TEST_CASE("f32_conv2d: exact mode is the documented fma chain on every path and ISA") {
  const Isa native = native_isa();  // before any ISA is forced
  uint64_t hash = kFnvOffset;
  for (Isa isa : available_isas()) {
    IsaScope scope(isa);
    uint64_t h = kFnvOffset;
    for (const Case& c : kCases) {
      const ConvGeom g = geom_of(c);
      REQUIRE(g.OH > 0);
      REQUIRE(g.OW > 0);
      const auto x = awkward_values(size_t(g.N * g.C * g.H * g.W), uint32_t(g.C * 31 + g.W), 2.0f, false);
      const auto w = awkward_values(size_t(g.M * (g.C / g.group) * g.kH * g.kW), uint32_t(g.M * 7 + g.kW), 1.0f, false);
      const auto b = awkward_values(size_t(g.M), uint32_t(g.M), 1.0f, false);
      for (const float* bias : {static_cast<const float*>(nullptr), b.data()})
        for (UnaryOp act : {UnaryOp::Identity, UnaryOp::Relu}) {
          const auto want = with_activation(reference(g, x, w, bias), act);
          std::vector<float> y(want.size(), NAN), scratch(conv_scratch_floats(g) + 1, NAN);
          f32_conv2d(g, x.data(), w.data(), bias, act, y.data(), scratch.data(), nullptr, ArithmeticMode::Exact);
          const size_t at = first_mismatch(y.data(), want.data(), want.size());
          INFO("isa " << isa_name(isa) << ", case C " << c.C << " M " << c.M << " group " << c.group << " " << c.H << "x"
                      << c.W << " k " << c.kH << "x" << c.kW << " s " << c.sH << "," << c.sW << ", relu "
                      << (act == UnaryOp::Relu) << ", output " << at);
          CHECK(at == want.size());
          h = fnv1a(h, y.data(), y.size());
        }
    }
    if (isa == Isa::Scalar) hash = h;
    CHECK(h == hash);
    if (isa == native) std::printf("EXACT_HASH conv2d %s %016" PRIx64 "\n", isa_name(isa), h);
  }
  std::fflush(stdout);
}

TEST_CASE("f32_conv2d: the depthwise kernel's fused ReLU keeps a NaN, on every ISA") {
  // 8x8 at stride 1 (the plane kernel), and 4x4 (channels as lanes)
  for (int64_t side : {8, 4}) {
    const ConvGeom g = geom_of({1, 3, side, side, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1});
    auto x = awkward_values(size_t(g.C * g.H * g.W), 5, 2.0f, false);
    x[size_t(1 * g.H * g.W + 2 * g.W + 2)] = NAN;  // channel 1: nine outputs around it are NaN
    const auto w = awkward_values(size_t(g.M * g.kH * g.kW), 6, 1.0f, false);
    const auto b = awkward_values(size_t(g.M), 7, 1.0f, false);
    const auto want = with_activation(reference(g, x, w, b.data()), UnaryOp::Relu);
    CHECK(std::isnan(want[size_t(g.OH * g.OW + 2 * g.OW + 2)]));
    for (Isa isa : available_isas()) {
      IsaScope scope(isa);
      for (ArithmeticMode mode : {ArithmeticMode::Exact, ArithmeticMode::Fast}) {
        std::vector<float> y(want.size(), 1.0f), scratch(conv_scratch_floats(g) + 1, NAN);
        f32_conv2d(g, x.data(), w.data(), b.data(), UnaryOp::Relu, y.data(), scratch.data(), nullptr, mode);
        INFO("isa " << isa_name(isa) << ", " << side << "x" << side);
        CHECK(first_mismatch(y.data(), want.data(), want.size()) == want.size());
      }
    }
  }
}

TEST_CASE("f32_conv_transpose2d: windows that tile the output (kernel = stride) give the documented rule's bits on every ISA") {
  // The rule (conv.h): each output starts at +0 and receives its products' chains (the fma chain
  // over the group's input channels from +0) in order, then + bias. When kernel = stride without
  // pads or dilation each output receives one chain, written straight from one GEMM per block of
  // input rows (conv.cpp, tiled_transpose): batch 2, groups, 2x2, 3x3, 2x3 and 1x1, rows past a
  // block (a 2x2 with 24 output channels over 70 columns holds 9 input rows per block).
  struct T {
    int64_t N, C, M, group, H, W, kH, kW;
  };
  const T cases[] = {{2, 5, 7, 1, 6, 9, 2, 2}, {1, 4, 6, 2, 5, 4, 2, 2}, {1, 3, 2, 1, 4, 5, 3, 3},
                     {1, 6, 4, 1, 3, 7, 1, 1}, {1, 3, 5, 1, 4, 6, 2, 3}, {1, 8, 24, 1, 20, 70, 2, 2}};
  for (const T& c : cases) {
    ConvGeom g;
    g.N = c.N, g.C = c.C, g.M = c.M, g.group = c.group, g.H = c.H, g.W = c.W, g.kH = c.kH, g.kW = c.kW;
    g.sH = c.kH, g.sW = c.kW, g.dH = g.dW = 1, g.pad_t = g.pad_l = 0;
    g.OH = c.H * c.kH, g.OW = c.W * c.kW;
    const int64_t Cg = g.C / g.group, Mg = g.M / g.group, OP = g.OH * g.OW;
    const auto x = awkward_values(size_t(g.N * g.C * g.H * g.W), uint32_t(g.C * 13 + g.W), 2.0f, false);
    const auto w = awkward_values(size_t(g.C * Mg * g.kH * g.kW), uint32_t(g.M * 5 + g.kW), 1.0f, false);
    const auto b = awkward_values(size_t(g.M), uint32_t(g.M + 3), 1.0f, false);
    for (const float* bias : {static_cast<const float*>(nullptr), b.data()}) {
      std::vector<float> want(size_t(g.N * g.M * OP), 0.0f);
      for (int64_t n = 0; n < g.N; ++n)
        for (int64_t m = 0; m < g.M; ++m)
          for (int64_t i = 0; i < g.H; ++i)
            for (int64_t j = 0; j < g.W; ++j)
              for (int64_t kh = 0; kh < g.kH; ++kh)
                for (int64_t kw = 0; kw < g.kW; ++kw) {
                  const int64_t gi = m / Mg, ml = m % Mg;
                  float acc = 0.0f;
                  for (int64_t ci = 0; ci < Cg; ++ci) {
                    const int64_t ch = gi * Cg + ci;
                    acc = std::fma(x[size_t(((n * g.C + ch) * g.H + i) * g.W + j)],
                                   w[size_t(((ch * Mg + ml) * g.kH + kh) * g.kW + kw)], acc);
                  }
                  float& o = want[size_t((n * g.M + m) * OP + (i * g.kH + kh) * g.OW + j * g.kW + kw)];
                  o = o + acc;
                }
      if (bias)
        for (int64_t n = 0; n < g.N; ++n)
          for (int64_t m = 0; m < g.M; ++m)
            for (int64_t p = 0; p < OP; ++p) want[size_t((n * g.M + m) * OP + p)] += bias[m];
      for (Isa isa : available_isas()) {
        IsaScope scope(isa);
        std::vector<float> y(want.size(), NAN), scratch(conv_transpose_scratch_floats(g) + 1, NAN);
        f32_conv_transpose2d(g, x.data(), w.data(), bias, y.data(), scratch.data(), nullptr, ArithmeticMode::Exact);
        INFO("isa " << isa_name(isa) << " C " << c.C << " M " << c.M << " group " << c.group << " " << c.H << "x" << c.W
                    << " k " << c.kH << "x" << c.kW << " bias " << (bias != nullptr));
        CHECK(first_mismatch(y.data(), want.data(), want.size()) == want.size());
      }
    }
  }
}
