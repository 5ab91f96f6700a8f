// The window pools (conv.h f32_max_pool2d / f32_avg_pool2d, pool_window.h) against a plain
// element loop written here, bit for bit, on every ISA this machine runs: geometries sweep row
// lengths around every vector width (tails), strides 1 to 3 (the compile-time forms and the
// general one), dilations, pads up to the kernel size (windows with no input element), end pads
// for ceil_mode, count_include_pad; the inputs hold NaNs, infinities and signed zeros.
#include <doctest/doctest.h>

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/kernel_test_util.h"
#include "onemodel/kernels/conv.h"

using namespace om::kernels;
using namespace om::kernels::test;

namespace {

struct PoolCase {
  ConvGeom g;
  int64_t pad_b, pad_r;
};

// The reference: each output's window walked in (kh, kw) order over its in-bounds taps.
// Max: the first tap, then a larger value or the first NaN replaces it (-inf when empty).
// Average: +0, plus each tap, over the count (0 when empty).
// Besides the awkward values (a few NaNs and infinities), inputs of a few levels with both zeros
// make ties in nearly every window: which tap a tie takes shows in the sign of a zero.
std::vector<float> tie_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  static const float kLevels[] = {0.0f, -0.0f, 0.0f, -0.0f, -1.0f, -INFINITY, 1.0f, -0.0f};
  std::vector<float> v(n);
  for (float& e : v) e = kLevels[rng() % 8];
  return v;
}
std::vector<float> reference(const PoolCase& c, const std::vector<float>& x, bool max, bool include_pad) {
  const ConvGeom& g = c.g;
  std::vector<float> y(size_t(g.N * g.C * g.OH * g.OW));
  size_t o = 0;
  for (int64_t p = 0; p < g.N * g.C; ++p)
    for (int64_t oh = 0; oh < g.OH; ++oh)
      for (int64_t ow = 0; ow < g.OW; ++ow) {
        float m = -std::numeric_limits<float>::infinity(), s = 0.0f;
        bool any = false;
        int64_t ch = 0, cw = 0;
        for (int64_t kh = 0; kh < g.kH; ++kh) {
          const int64_t ih = oh * g.sH - g.pad_t + kh * g.dH;
          ch += include_pad ? (ih < g.H + c.pad_b) : (ih >= 0 && ih < g.H);
          for (int64_t kw = 0; kw < g.kW; ++kw) {
            const int64_t iw = ow * g.sW - g.pad_l + kw * g.dW;
            if (kh == 0) cw += include_pad ? (iw < g.W + c.pad_r) : (iw >= 0 && iw < g.W);
            if (ih < 0 || ih >= g.H || iw < 0 || iw >= g.W) continue;
            const float v = x[size_t((p * g.H + ih) * g.W + iw)];
            if (!any || v > m || (std::isnan(v) && !std::isnan(m))) m = v;
            s = s + v;
            any = true;
          }
        }
        const int64_t cnt = ch * cw;
        y[o++] = max ? m : (cnt > 0 ? s / float(cnt) : 0.0f);
      }
  return y;
}

std::vector<PoolCase> cases() {
  std::vector<PoolCase> out;
  std::mt19937 rng(23);
  auto pick = [&](int64_t lo, int64_t hi) { return lo + int64_t(rng() % uint32_t(hi - lo + 1)); };
  for (int i = 0; i < 400; ++i) {
    PoolCase c;
    ConvGeom& g = c.g;
    g.N = pick(1, 2);
    g.C = g.M = pick(1, 3);
    g.kH = pick(1, 4);
    g.kW = pick(1, 4);
    g.sH = pick(1, 3);
    g.sW = i % 4 == 0 ? 1 : i % 4 == 1 ? 2 : pick(1, 3);
    g.dH = pick(1, 2);
    g.dW = i % 5 == 0 ? 2 : 1;
    g.H = pick(1, 12);
    g.W = i < 40 ? pick(30, 70) : pick(1, 40);  // rows around 16, 32 and 64 lanes of output
    g.pad_t = pick(0, g.kH);
    g.pad_l = pick(0, g.kW);
    c.pad_b = pick(0, g.kH);
    c.pad_r = pick(0, g.kW);
    const bool ceil = rng() % 2 == 0;
    g.OH = conv_out_extent(g.H, g.kH, g.sH, g.dH, g.pad_t, c.pad_b, ceil);
    g.OW = conv_out_extent(g.W, g.kW, g.sW, g.dW, g.pad_l, c.pad_r, ceil);
    if (g.OH <= 0 || g.OW <= 0) continue;
    out.push_back(c);
  }
  // The shapes real models pool with: 2x2 stride 2, 3x3 stride 2 pad 1 and 3x3 stride 1 pad 1 on
  // wide planes.
  for (int64_t k : {2, 3, 4}) {
    PoolCase c;
    ConvGeom& g = c.g;
    g.C = g.M = 2;
    g.H = 9;
    g.W = 67;
    g.kH = g.kW = k == 4 ? 3 : k;
    g.sH = g.sW = k == 4 ? 1 : 2;
    g.pad_t = g.pad_l = c.pad_b = c.pad_r = k == 4 ? 1 : k - 2;
    g.OH = conv_out_extent(g.H, g.kH, g.sH, 1, g.pad_t, c.pad_b, false);
    g.OW = conv_out_extent(g.W, g.kW, g.sW, 1, g.pad_l, c.pad_r, false);
    out.push_back(c);
  }
  // Stride-1 max pools go by row maxima over bands of padded lines (pool_window.h,
  // row_max_band): 5x5 pad 2 (YOLO's SPPF), and planes tall enough for several bands, one with
  // dilated rows.
  for (int64_t k : {5, 3, -3}) {
    PoolCase c;
    ConvGeom& g = c.g;
    g.C = g.M = 2;
    g.H = k == 5 ? 9 : 90;
    g.W = k == 5 ? 67 : 130;
    g.kH = g.kW = k < 0 ? -k : k;
    g.dH = k < 0 ? 2 : 1;
    g.pad_t = g.pad_l = c.pad_b = c.pad_r = g.kH / 2;
    g.OH = conv_out_extent(g.H, g.kH, g.sH, g.dH, g.pad_t, c.pad_b, false);
    g.OW = conv_out_extent(g.W, g.kW, g.sW, 1, g.pad_l, c.pad_r, false);
    out.push_back(c);
  }
  return out;
}

}  // namespace

TEST_CASE("f32_max_pool2d / f32_avg_pool2d: the element loop's bits on every ISA, NaNs and empty windows included") {
  const Isa native = native_isa();
  const std::vector<PoolCase> all = cases();
  REQUIRE(all.size() > 300);
  uint64_t hash = kFnvOffset;
  for (Isa isa : available_isas()) {
    IsaScope scope(isa);
    uint64_t h = kFnvOffset;
    for (size_t ci = 0; ci < all.size(); ++ci) {
      const PoolCase& c = all[ci];
      const ConvGeom& g = c.g;
      const size_t in = size_t(g.N * g.C * g.H * g.W);
      const auto awkward = awkward_values(in, uint32_t(ci * 7 + 1), 3.0f, true);
      const auto ties = tie_values(in, uint32_t(ci * 7 + 2));
      const size_t n = size_t(g.N * g.C * g.OH * g.OW);
      for (int form = 0; form < 4; ++form) {
        const bool max = form == 0 || form == 3, include_pad = form == 2;
        const auto& x = form == 3 ? ties : awkward;
        const auto want = reference(c, x, max, include_pad);
        std::vector<float> y(n, 12345.0f);
        if (max) f32_max_pool2d(g, x.data(), y.data(), nullptr);
        else f32_avg_pool2d(g, c.pad_b, c.pad_r, include_pad, x.data(), y.data());
        const size_t at = first_mismatch(y.data(), want.data(), n);
        INFO("isa " << isa_name(isa) << " case " << ci << ": " << g.H << "x" << g.W << " k " << g.kH << "x" << g.kW << " s "
                    << g.sH << "," << g.sW << " d " << g.dH << "," << g.dW << " pads " << g.pad_t << "," << g.pad_l << ","
                    << c.pad_b << "," << c.pad_r << " form " << form << " output " << at);
        CHECK(at == n);
        h = fnv1a(h, y.data(), n);
      }
      // The argmax form takes the element loop throughout: the same maxima.
      std::vector<float> y(n), ym(n);
      std::vector<int64_t> idx(n);
      f32_max_pool2d(g, awkward.data(), y.data(), idx.data());
      f32_max_pool2d(g, awkward.data(), ym.data(), nullptr);
      CHECK(first_mismatch(y.data(), ym.data(), n) == n);
    }
    if (isa == Isa::Scalar) hash = h;
    CHECK(h == hash);
    if (isa == native) std::printf("EXACT_HASH pool2d %s %016" PRIx64 "\n", isa_name(isa), h);
  }
  std::fflush(stdout);
}

TEST_CASE("f32_resize2d: every output is the documented formula on its taps, up, down and odd scales, every mode") {
  // The reference: per output, the taps and weights from resize_source_coord and the tap
  // functions, then w0 * a + w1 * b per row and h0 * top + h1 * bottom (or the nearest element).
  auto reference = [](const ResizeGeom& g, const std::vector<float>& x) {
    std::vector<float> y(size_t(g.NC * g.OH * g.OW));
    for (int64_t nc = 0; nc < g.NC; ++nc)
      for (int64_t oh = 0; oh < g.OH; ++oh)
        for (int64_t ow = 0; ow < g.OW; ++ow) {
          const double sy = resize_source_coord(g.coord, oh, g.scale_h, g.H, resized_length(g, true));
          const double sx = resize_source_coord(g.coord, ow, g.scale_w, g.W, resized_length(g, false));
          const float* p = x.data() + nc * g.H * g.W;
          float& o = y[size_t((nc * g.OH + oh) * g.OW + ow)];
          if (g.mode == ResizeMode::Nearest) {
            o = p[resize_nearest_index(g.nearest, sy, g.H) * g.W + resize_nearest_index(g.nearest, sx, g.W)];
            continue;
          }
          int64_t y0, y1, x0, x1;
          float h0, h1, w0, w1;
          resize_linear_taps(sy, g.H, &y0, &y1, &h0, &h1);
          resize_linear_taps(sx, g.W, &x0, &x1, &w0, &w1);
          const float top = w0 * p[y0 * g.W + x0] + w1 * p[y0 * g.W + x1];
          const float bot = w0 * p[y1 * g.W + x0] + w1 * p[y1 * g.W + x1];
          o = h0 * top + h1 * bot;
        }
    return y;
  };
  struct Size {
    int64_t H, W, OH, OW;
  };
  const Size sizes[] = {{4, 5, 8, 10}, {7, 3, 15, 4}, {9, 8, 4, 3}, {1, 1, 3, 5}, {6, 6, 6, 6}, {5, 9, 13, 2}, {2, 7, 1, 1}};
  for (const Size& s : sizes)
    for (ResizeMode mode : {ResizeMode::Nearest, ResizeMode::Linear})
      for (ResizeCoord coord : {ResizeCoord::HalfPixel, ResizeCoord::AlignCorners, ResizeCoord::Asymmetric,
                                ResizeCoord::PytorchHalfPixel}) {
        CAPTURE(s.H);
        CAPTURE(s.OH);
        CAPTURE(s.OW);
        CAPTURE(int(mode));
        CAPTURE(int(coord));
        ResizeGeom g;
        g.NC = 3;
        g.H = s.H;
        g.W = s.W;
        g.OH = s.OH;
        g.OW = s.OW;
        g.scale_h = double(s.OH) / double(s.H);
        g.scale_w = double(s.OW) / double(s.W);
        g.mode = mode;
        g.coord = coord;
        std::vector<float> x(size_t(g.NC * g.H * g.W));
        for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(float(i) * 0.7f) * 3.0f;
        std::vector<float> y(size_t(g.NC * g.OH * g.OW)), scratch(resize2d_scratch_floats(g));
        f32_resize2d(g, x.data(), y.data(), scratch.data());
        const std::vector<float> want = reference(g, x);
        CHECK(std::memcmp(y.data(), want.data(), y.size() * sizeof(float)) == 0);
      }
}
