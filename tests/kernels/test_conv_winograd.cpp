// Weights packed for f32_conv2d (conv_pack_weights), on every ISA this machine runs: the GEMM form
// gives exactly the unpacked bits in both modes; the Winograd F(2x2, 3x3) form (Fast only) stays
// within 1e-5 of the outputs' scale of the exact chain over odd extents, asymmetric pads, several
// images, several tile blocks, more than one GEMM K block and with bias and activation; a buffer
// packed for another ISA's tile, or a geometry the form does not fit, falls back to the direct
// form instead of reading the wrong layout.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/kernel_test_util.h"
#include "onemodel/kernels/conv.h"

using namespace om::kernels;
using namespace om::kernels::test;
using om::ArithmeticMode;

namespace {

struct Case {
  int64_t N, C, H, W, M, pt, pl, pb, pr;
};

ConvGeom geom_of(const Case& c) {
  ConvGeom g;
  g.N = c.N, g.C = c.C, g.H = c.H, g.W = c.W, g.M = c.M, g.kH = 3, g.kW = 3, g.pad_t = c.pt, g.pad_l = c.pl;
  g.OH = conv_out_extent(c.H, 3, 1, 1, c.pt, c.pb, false);
  g.OW = conv_out_extent(c.W, 3, 1, 1, c.pl, c.pr, false);
  return g;
}

// The direct form in double: the reference both packed forms are measured against.
std::vector<double> reference(const ConvGeom& g, const std::vector<float>& x, const std::vector<float>& w, const float* bias) {
  std::vector<double> y(size_t(g.N * g.M * g.OH * g.OW));
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t m = 0; m < g.M; ++m)
      for (int64_t oh = 0; oh < g.OH; ++oh)
        for (int64_t ow = 0; ow < g.OW; ++ow) {
          double acc = bias ? bias[m] : 0.0;
          for (int64_t c = 0; c < g.C; ++c)
            for (int64_t kh = 0; kh < 3; ++kh)
              for (int64_t kw = 0; kw < 3; ++kw) {
                const int64_t ih = oh - g.pad_t + kh, iw = ow - g.pad_l + kw;
                if (ih < 0 || ih >= g.H || iw < 0 || iw >= g.W) continue;
                acc += double(x[size_t(((n * g.C + c) * g.H + ih) * g.W + iw)]) * double(w[size_t(((m * g.C + c) * 3 + kh) * 3 + kw)]);
              }
          y[size_t(((n * g.M + m) * g.OH + oh) * g.OW + ow)] = acc;
        }
  return y;
}

std::vector<float> packed(const ConvGeom& g, const std::vector<float>& w, bool winograd) {
  ConvWeightPack p;
  p.M = g.M;
  p.K = winograd ? g.C : g.C * 9;
  p.winograd = winograd;
  std::vector<float> buf(conv_packed_weights_floats(p), NAN);
  conv_pack_weights(p, w.data(), buf.data());
  return buf;
}

std::vector<float> run(const ConvGeom& g, const std::vector<float>& x, const std::vector<float>& w, const float* bias,
                       UnaryOp act, const float* pack, ArithmeticMode mode) {
  std::vector<float> y(size_t(g.N * g.M * g.OH * g.OW), NAN);
  std::vector<float> scratch(std::max(conv_scratch_floats(g), conv_winograd_scratch_floats(g)) + 1, NAN);
  f32_conv2d(g, x.data(), w.data(), bias, act, y.data(), scratch.data(), pack, mode);
  return y;
}

// Largest |y - want| over the largest |want|.
double scaled_error(const std::vector<float>& y, const std::vector<double>& want) {
  double err = 0, scale = 1e-30;
  for (size_t i = 0; i < y.size(); ++i) {
    err = std::max(err, std::fabs(double(y[i]) - want[i]));
    scale = std::max(scale, std::fabs(want[i]));
  }
  return err / scale;
}

const Case kCases[] = {
    {1, 16, 7, 9, 16, 1, 1, 1, 1},      // odd output extents: cropped tiles
    {3, 20, 13, 11, 33, 0, 2, 2, 0},    // asymmetric pads, tiles running across images
    {1, 16, 70, 66, 24, 1, 1, 1, 1},    // several tile blocks, blocks splitting tile rows
    {2, 300, 5, 6, 17, 1, 1, 1, 1},     // C 300: two GEMM K blocks
    {1, 32, 3, 3, 16, 0, 0, 0, 0},      // one tile, half of it cropped
};

}  // namespace

TEST_CASE("conv_pack_weights: the GEMM form gives the unpacked bits; the Winograd form is within 1e-5") {
  for (Isa isa : available_isas()) {
    IsaScope scope(isa);
    for (const Case& c : kCases) {
      const ConvGeom g = geom_of(c);
      REQUIRE(g.OH > 0);
      REQUIRE(g.OW > 0);
      REQUIRE(conv_winograd_fits(g));
      const auto x = awkward_values(size_t(g.N * g.C * g.H * g.W), uint32_t(g.C * 13 + g.W), 2.0f, false);
      const auto w = awkward_values(size_t(g.M * g.C * 9), uint32_t(g.M * 5 + g.H), 1.0f, false);
      const auto b = awkward_values(size_t(g.M), uint32_t(g.M + 3), 1.0f, false);
      const auto gemm_form = packed(g, w, false), wino = packed(g, w, true);
      INFO("isa " << isa_name(isa) << ", N " << c.N << " C " << c.C << " M " << c.M << " " << c.H << "x" << c.W);
      for (ArithmeticMode mode : {ArithmeticMode::Exact, ArithmeticMode::Fast}) {
        const auto plain = run(g, x, w, b.data(), UnaryOp::Identity, nullptr, mode);
        const auto with = run(g, x, w, b.data(), UnaryOp::Identity, gemm_form.data(), mode);
        CHECK(first_mismatch(with.data(), plain.data(), plain.size()) == plain.size());
      }
      const auto want = reference(g, x, w, b.data());
      const auto fast = run(g, x, w, b.data(), UnaryOp::Identity, wino.data(), ArithmeticMode::Fast);
      const double err = scaled_error(fast, want);
      INFO("Winograd scaled error " << err);
      CHECK(err < 1e-5);
      CHECK(err > 0);  // it did take the other rounding (the exact chain lands elsewhere)
      // Exact mode ignores the Winograd buffer: the documented chain's bits.
      const auto exact = run(g, x, w, b.data(), UnaryOp::Identity, wino.data(), ArithmeticMode::Exact);
      const auto exact_plain = run(g, x, w, b.data(), UnaryOp::Identity, nullptr, ArithmeticMode::Exact);
      CHECK(first_mismatch(exact.data(), exact_plain.data(), exact.size()) == exact.size());
      // Bias then the activation, as in the direct form.
      const auto relu = run(g, x, w, b.data(), UnaryOp::Relu, wino.data(), ArithmeticMode::Fast);
      size_t bad = 0;
      for (size_t i = 0; i < relu.size(); ++i) bad += relu[i] != std::max(fast[i], 0.0f);
      CHECK(bad == 0);
      const auto sigmoid = run(g, x, w, b.data(), UnaryOp::Sigmoid, wino.data(), ArithmeticMode::Fast);
      std::vector<float> want_sigmoid(fast.size());
      f32_unary(UnaryOp::Sigmoid, fast.data(), want_sigmoid.data(), fast.size());
      CHECK(first_mismatch(sigmoid.data(), want_sigmoid.data(), fast.size()) == fast.size());
    }
  }
}

TEST_CASE("conv_pack_weights: a buffer from another ISA's tile or a geometry outside the form runs the direct form") {
  const Case c{1, 16, 9, 8, 24, 1, 1, 1, 1};
  ConvGeom g = geom_of(c);
  const auto x = awkward_values(size_t(g.C * g.H * g.W), 7, 2.0f, false);
  const auto w = awkward_values(size_t(g.M * g.C * 9), 8, 1.0f, false);
  const auto isas = available_isas();
  for (Isa packer : isas)
    for (Isa runner : isas) {
      std::vector<float> wino, gemm_form;
      {
        IsaScope scope(packer);
        wino = packed(g, w, true);
        gemm_form = packed(g, w, false);
      }
      IsaScope scope(runner);
      INFO("packed on " << isa_name(packer) << ", run on " << isa_name(runner));
      const auto plain = run(g, x, w, nullptr, UnaryOp::Identity, nullptr, ArithmeticMode::Fast);
      const auto with = run(g, x, w, nullptr, UnaryOp::Identity, gemm_form.data(), ArithmeticMode::Fast);
      CHECK(first_mismatch(with.data(), plain.data(), plain.size()) == plain.size());
      std::vector<float> y(plain.size()), scratch(conv_winograd_scratch_floats(g));
      const bool took = conv_winograd(g, x.data(), wino.data(), nullptr, UnaryOp::Identity, y.data(), scratch.data());
      CHECK(took == (packer == runner));  // every ISA's tile has its own MR
      if (!took) {
        const auto fallback = run(g, x, w, nullptr, UnaryOp::Identity, wino.data(), ArithmeticMode::Fast);
        CHECK(first_mismatch(fallback.data(), plain.data(), plain.size()) == plain.size());
      }
    }
  // Strided: the form does not fit, so the Winograd buffer is ignored.
  ConvGeom s = g;
  s.sH = s.sW = 2;
  s.OH = conv_out_extent(g.H, 3, 2, 1, 1, 1, false);
  s.OW = conv_out_extent(g.W, 3, 2, 1, 1, 1, false);
  CHECK_FALSE(conv_winograd_fits(s));
  const auto wino = packed(g, w, true);
  const auto plain = run(s, x, w, nullptr, UnaryOp::Identity, nullptr, ArithmeticMode::Fast);
  const auto with = run(s, x, w, nullptr, UnaryOp::Identity, wino.data(), ArithmeticMode::Fast);
  CHECK(first_mismatch(with.data(), plain.data(), plain.size()) == plain.size());
}

namespace {

// A geometry of any kernel size and stride (the cases above are 3x3 stride 1).
ConvGeom general_geom(int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t kH, int64_t kW, int64_t s, int64_t pad) {
  ConvGeom g;
  g.N = N, g.C = C, g.H = H, g.W = W, g.M = M, g.kH = kH, g.kW = kW, g.sH = H == 1 ? 1 : s, g.sW = s;
  g.pad_t = H == 1 ? 0 : pad, g.pad_l = pad;
  g.OH = conv_out_extent(H, kH, g.sH, 1, g.pad_t, g.pad_t, false);
  g.OW = conv_out_extent(W, kW, s, 1, pad, pad, false);
  return g;
}

std::vector<float> packed_transposed(const ConvGeom& g, const std::vector<float>& w) {
  ConvWeightPack p;
  p.M = g.M;
  p.K = g.C * g.kH * g.kW;
  p.transposed = true;
  std::vector<float> buf(conv_packed_weights_floats(p), NAN);
  conv_pack_weights(p, w.data(), buf.data());
  return buf;
}

}  // namespace

TEST_CASE("conv_pack_weights, transposed form: the unpacked bits in both modes, on every ISA, at any later size") {
  // The melspectrogram's STFT (1-D, kernel 512, stride 160, 5 frames), a late 4x4 feature map,
  // a strided padded one with two images, and sizes beyond the choice (150 and 70 positions:
  // several blocks of kConvTransposedTile) that a plan of another input size would run.
  const ConvGeom cases[] = {general_geom(1, 1, 1, 1280, 257, 1, 512, 160, 0), general_geom(1, 64, 4, 4, 48, 3, 3, 1, 1),
                            general_geom(2, 8, 7, 6, 40, 3, 3, 2, 1), general_geom(1, 1, 1, 24352, 257, 1, 512, 160, 0),
                            general_geom(2, 5, 1, 75, 33, 1, 6, 1, 0)};
  CHECK(conv_prefers_transposed(cases[0]));
  CHECK(conv_prefers_transposed(cases[1]));
  CHECK_FALSE(conv_prefers_transposed(cases[3]));  // 150 positions: the direct form is chosen
  CHECK_FALSE(conv_prefers_transposed(general_geom(1, 64, 4, 4, 16, 3, 3, 1, 1)));  // too few channels
  for (const ConvGeom& g : cases) {
    REQUIRE(g.OW > 0);
    const auto x = awkward_values(size_t(g.N * g.C * g.H * g.W), uint32_t(g.C * 7 + g.W), 2.0f, false);
    const auto w = awkward_values(size_t(g.M * g.C * g.kH * g.kW), uint32_t(g.M * 3 + g.kW), 1.0f, false);
    const auto b = awkward_values(size_t(g.M), uint32_t(g.M + 5), 1.0f, false);
    const std::vector<float> scale(size_t(g.M), 1.5f), mean(size_t(g.M), 0.25f), var(size_t(g.M), 2.0f), shift(size_t(g.M), -0.5f);
    const ConvNorm norm{scale.data(), shift.data(), mean.data(), var.data(), 1e-5f};
    for (Isa packer : available_isas())
      for (Isa runner : available_isas()) {
        std::vector<float> wt;
        {
          IsaScope scope(packer);
          wt = packed_transposed(g, w);
        }
        IsaScope scope(runner);
        REQUIRE(conv_packed_transposed_weights(g, wt.data()) != nullptr);
        CHECK(conv_packed_gemm_weights(g, wt.data()) == nullptr);
        INFO("packed on " << isa_name(packer) << ", run on " << isa_name(runner) << "; M " << g.M << " K " << g.C * g.kH * g.kW
                          << " positions " << g.OH * g.OW << " images " << g.N);
        for (ArithmeticMode mode : {ArithmeticMode::Exact, ArithmeticMode::Fast})
          for (UnaryOp act : {UnaryOp::Identity, UnaryOp::Relu, UnaryOp::Sigmoid}) {
            const auto plain = run(g, x, w, b.data(), act, nullptr, mode);
            const auto with = run(g, x, w, b.data(), act, wt.data(), mode);
            CHECK(first_mismatch(with.data(), plain.data(), plain.size()) == plain.size());
          }
        // With an inference batch normalisation (an Exact FusedConv): the epilogue pass.
        std::vector<float> y0(size_t(g.N * g.M * g.OH * g.OW)), y1(y0.size());
        std::vector<float> scratch(conv_scratch_floats(g) + 1, NAN);
        f32_conv2d(g, x.data(), w.data(), b.data(), UnaryOp::Relu, y0.data(), scratch.data(), nullptr, ArithmeticMode::Exact, &norm);
        f32_conv2d(g, x.data(), w.data(), b.data(), UnaryOp::Relu, y1.data(), scratch.data(), wt.data(), ArithmeticMode::Exact, &norm);
        CHECK(first_mismatch(y1.data(), y0.data(), y0.size()) == y0.size());
      }
  }
}
