// The convolution family in a Session against straightforward double-precision loops: Conv and
// ConvTranspose (1-D, 2-D, 3-D, groups, depthwise, dilations, strides, pads, auto_pad, output_padding,
// output_shape), the pools, BatchNormalization, Resize and Pad. Fast within 1e-5 of the
// reference scaled by the sum of |terms|; Exact bit-equal across every ISA this machine runs;
// malformed nodes refused with an om::Error naming the node when the Session plans.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <functional>

#include "onemodel/kernels/kernels.h"
#include "runtime/runtime_helpers.h"

namespace {

using namespace rt;
using g::Attribute;
using g::TensorData;
using om::ArithmeticMode;
using om::kernels::Isa;

struct Case {
  std::string op = "Conv";
  std::vector<int64_t> x, w;  // w empty: no weights
  bool bias = false;
  std::vector<Attribute> attrs;
};

struct Geo {
  int64_t k[2] = {1, 1}, s[2] = {1, 1}, d[2] = {1, 1}, pb[2] = {0, 0}, pe[2] = {0, 0}, op[2] = {0, 0}, group = 1;
};

std::vector<int64_t> ints_of(const Case& c, const char* name, std::vector<int64_t> fallback) {
  for (const auto& a : c.attrs)
    if (a.name == name) return a.ints;
  return fallback;
}

g::Graph graph_of(const Case& c, const std::vector<float>& w, const std::vector<float>& b) {
  g::Graph gr;
  gr.inputs.push_back(value("x", DType::f32, c.x));
  std::vector<std::string> ins{"x"};
  if (!c.w.empty()) {
    gr.initializers.push_back(TensorData::from_vector("w", c.w, w));
    ins.push_back("w");
  }
  if (c.bias) {
    gr.initializers.push_back(TensorData::from_vector("b", {int64_t(b.size())}, b));
    ins.push_back("b");
  }
  gr.nodes.push_back(node(c.op, ins, {"y"}, c.attrs));
  gr.outputs.push_back(value("y", DType::f32, {}));
  return gr;
}

size_t count(const std::vector<int64_t>& d) {
  size_t n = 1;
  for (int64_t v : d) n *= size_t(v);
  return n;
}

// Reference convolution / transposed convolution (2-D; 1-D as H = 1) in double: value and the
// sum of |terms| for the tolerance.
void reference(const Case& c, const std::vector<int64_t>& ydims, const std::vector<float>& x, const std::vector<float>& w,
               const std::vector<float>& b, std::vector<double>* y, std::vector<double>* mag) {
  const bool one = c.x.size() == 3;
  const int64_t N = c.x[0], C = c.x[1], H = one ? 1 : c.x[2], W = c.x.back();
  const int64_t M = ydims[1], OH = one ? 1 : ydims[2], OW = ydims.back();
  const int64_t kH = one ? 1 : c.w[2], kW = c.w.back();
  auto pick = [&](const char* n, int64_t def, int idx2) {
    auto v = ints_of(c, n, {});
    if (v.empty()) return def;
    return one ? (idx2 == 0 ? def : v[0]) : v[size_t(idx2)];
  };
  const int64_t sH = pick("strides", 1, 0), sW = pick("strides", 1, 1), dH = pick("dilations", 1, 0), dW = pick("dilations", 1, 1);
  auto pads = ints_of(c, "pads", {});
  int64_t pt = 0, pl = 0;
  if (!pads.empty()) {
    pt = one ? 0 : pads[0];
    pl = one ? pads[0] : pads[1];
  }
  int64_t group = 1;
  for (const auto& a : c.attrs) {
    if (a.name == "group") group = a.i;
    if (a.name == "auto_pad" && a.s == "SAME_UPPER") {  // total pad split with the extra one at the end
      pt = std::max<int64_t>(0, (OH - 1) * sH + (kH - 1) * dH + 1 - H) / 2;
      pl = std::max<int64_t>(0, (OW - 1) * sW + (kW - 1) * dW + 1 - W) / 2;
    }
  }
  y->assign(size_t(N * M * OH * OW), 0.0);
  mag->assign(y->size(), 0.0);
  const bool tr = c.op == "ConvTranspose";
  const int64_t Cg = C / group, Mg = M / group;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t gi = 0; gi < group; ++gi)
      for (int64_t ci = 0; ci < Cg; ++ci)
        for (int64_t mi = 0; mi < Mg; ++mi)
          for (int64_t kh = 0; kh < kH; ++kh)
            for (int64_t kw = 0; kw < kW; ++kw) {
              const int64_t cc = gi * Cg + ci, m = gi * Mg + mi;
              const double wv = tr ? w[size_t(((cc * Mg + mi) * kH + kh) * kW + kw)] : w[size_t(((m * Cg + ci) * kH + kh) * kW + kw)];
              if (!tr) {
                for (int64_t oh = 0; oh < OH; ++oh)
                  for (int64_t ow = 0; ow < OW; ++ow) {
                    const int64_t ih = oh * sH - pt + kh * dH, iw = ow * sW - pl + kw * dW;
                    if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                    const double t = wv * x[size_t(((n * C + cc) * H + ih) * W + iw)];
                    (*y)[size_t(((n * M + m) * OH + oh) * OW + ow)] += t;
                    (*mag)[size_t(((n * M + m) * OH + oh) * OW + ow)] += std::fabs(t);
                  }
              } else {
                for (int64_t ih = 0; ih < H; ++ih)
                  for (int64_t iw = 0; iw < W; ++iw) {
                    const int64_t oh = ih * sH - pt + kh * dH, ow = iw * sW - pl + kw * dW;
                    if (oh < 0 || oh >= OH || ow < 0 || ow >= OW) continue;
                    const double t = wv * x[size_t(((n * C + cc) * H + ih) * W + iw)];
                    (*y)[size_t(((n * M + m) * OH + oh) * OW + ow)] += t;
                    (*mag)[size_t(((n * M + m) * OH + oh) * OW + ow)] += std::fabs(t);
                  }
              }
            }
  if (!b.empty())
    for (size_t i = 0; i < y->size(); ++i) {
      (*y)[i] += b[(i / size_t(OH * OW)) % size_t(M)];
      (*mag)[i] += std::fabs(b[(i / size_t(OH * OW)) % size_t(M)]);
    }
}

// Runs Fast against the reference (computed by `ref` from the Fast output's shape) and Exact on
// every ISA, bit-equal.
void check_case(const Case& c, const std::vector<int64_t>& want_dims,
                const std::function<void(const std::vector<int64_t>&, const std::vector<float>&, const std::vector<float>&,
                                         const std::vector<float>&, std::vector<double>*, std::vector<double>*)>& ref) {
  const std::vector<float> x = random_floats(count(c.x), 11);
  const std::vector<float> w = c.w.empty() ? std::vector<float>{} : random_floats(count(c.w), 12);
  int64_t M = 0;
  if (c.bias) {
    int64_t group = 1;
    for (const auto& a : c.attrs)
      if (a.name == "group") group = a.i;
    M = c.op == "ConvTranspose" ? c.w[1] * group : c.w[0];
  }
  const std::vector<float> b = c.bias ? random_floats(size_t(M), 13) : std::vector<float>{};
  const g::Graph gr = graph_of(c, w, b);
  const std::vector<Feed> feeds{Feed::of("x", c.x, x)};
  const auto fast = run_graph(gr, feeds, {ArithmeticMode::Fast});
  REQUIRE(fast[0].dims == want_dims);
  std::vector<double> yr, mag;
  ref(fast[0].dims, x, w, b, &yr, &mag);
  const auto yf = fast[0].as<float>();
  REQUIRE(yf.size() == yr.size());
  for (size_t i = 0; i < yf.size(); ++i) {
    CAPTURE(i);
    CHECK(std::fabs(double(yf[i]) - yr[i]) <= 1e-5 * std::max(1.0, mag[i]));
  }
  const Isa original = om::kernels::active_isa();
  std::vector<uint8_t> first;
  for (Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512, Isa::Neon}) {
    if (!om::kernels::isa_supported(isa)) continue;
    CAPTURE(om::kernels::isa_name(isa));
    REQUIRE(om::kernels::force_isa(isa));
    for (bool prepack : {true, false}) {
      om::SessionOptions o{ArithmeticMode::Exact};
      o.prepack_weights = prepack;
      const auto ye = run_graph(gr, feeds, o);
      if (first.empty()) first = ye[0].bytes;
      CHECK(ye[0].bytes == first);
      const auto v = ye[0].as<float>();
      for (size_t i = 0; i < v.size(); ++i) CHECK(std::fabs(double(v[i]) - yr[i]) <= 1e-5 * std::max(1.0, mag[i]));
    }
  }
  om::kernels::force_isa(original);
}

void check_conv(const Case& c, const std::vector<int64_t>& want) {
  check_case(c, want, [&](const std::vector<int64_t>& yd, const std::vector<float>& x, const std::vector<float>& w,
                          const std::vector<float>& b, std::vector<double>* y, std::vector<double>* m) { reference(c, yd, x, w, b, y, m); });
}

Attribute ints(const char* n, std::vector<int64_t> v) { return Attribute::of_ints(n, std::move(v)); }

}  // namespace

TEST_CASE("Conv matches the double reference in Fast and is bit-equal across ISAs in Exact") {
  check_conv({"Conv", {2, 3, 7, 6}, {4, 3, 3, 3}, true, {ints("pads", {1, 1, 1, 1})}}, {2, 4, 7, 6});
  check_conv({"Conv", {1, 4, 9, 8}, {6, 2, 3, 2}, true, {ints("strides", {2, 1}), ints("pads", {1, 0, 2, 1}), Attribute::of_int("group", 2)}},
             {1, 6, 5, 8});
  check_conv({"Conv", {1, 3, 11, 10}, {5, 3, 3, 3}, false, {ints("dilations", {2, 3}), ints("pads", {2, 1, 0, 1})}}, {1, 5, 9, 6});
  check_conv({"Conv", {2, 8, 5, 5}, {16, 8, 1, 1}, true, {}}, {2, 16, 5, 5});                                   // pointwise GEMM
  check_conv({"Conv", {1, 6, 7, 7}, {6, 1, 3, 3}, true, {Attribute::of_int("group", 6), ints("pads", {1, 1, 1, 1})}}, {1, 6, 7, 7});  // depthwise
  check_conv({"Conv", {1, 4, 8, 8}, {8, 1, 3, 3}, false, {Attribute::of_int("group", 4), ints("strides", {2, 2})}}, {1, 8, 3, 3});   // multiplier 2
  // Depthwise with a huge stride and pad: the padded buffer would be far larger than the planes,
  // so the direct chain runs (same rule).
  check_conv({"Conv", {1, 2, 4, 4}, {2, 1, 1, 3}, true,
              {Attribute::of_int("group", 2), ints("strides", {1, int64_t(1) << 22}), ints("pads", {0, 1, 0, int64_t(1) << 22})}},
             {1, 2, 4, 2});
  check_conv({"Conv", {2, 3, 9}, {4, 3, 3}, true, {ints("pads", {1, 2}), ints("strides", {2})}}, {2, 4, 5});  // 1-D
  check_conv({"Conv", {1, 2, 7, 5}, {3, 2, 3, 3}, false, {Attribute::of_string("auto_pad", "SAME_UPPER"), ints("strides", {2, 2})}},
             {1, 3, 4, 3});
  check_conv({"Conv", {1, 2, 7, 5}, {3, 2, 3, 3}, false, {Attribute::of_string("auto_pad", "VALID")}}, {1, 3, 5, 3});
  check_conv({"Conv", {1, 64, 12, 12}, {32, 64, 3, 3}, true, {ints("pads", {1, 1, 1, 1})}}, {1, 32, 12, 12});  // long chains, tiles
}

TEST_CASE("ConvTranspose matches the double reference") {
  check_conv({"ConvTranspose", {1, 2, 3, 4}, {2, 3, 3, 3}, true, {ints("strides", {2, 2})}}, {1, 3, 7, 9});
  check_conv({"ConvTranspose", {2, 4, 3, 3}, {4, 2, 3, 3}, false,
              {ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1}), ints("output_padding", {1, 1}), Attribute::of_int("group", 2)}},
             {2, 4, 6, 6});
  check_conv({"ConvTranspose", {1, 3, 4, 4}, {3, 2, 2, 3}, true, {ints("dilations", {2, 1}), ints("pads", {0, 1, 1, 0})}}, {1, 2, 5, 5});
  check_conv({"ConvTranspose", {1, 2, 5}, {2, 3, 4}, false, {ints("strides", {3})}}, {1, 3, 16});
  // output_shape: pads derived (NOTSET puts the extra one at the beginning).
  check_conv({"ConvTranspose", {1, 2, 3, 3}, {2, 2, 3, 3}, false, {ints("strides", {2, 2}), ints("output_shape", {6, 6}),
                                                                   ints("pads", {1, 1, 0, 0})}},
             {1, 2, 6, 6});
  // output_shape beyond the full output (7 x 7): the extra rows and columns hold the bias only.
  check_conv({"ConvTranspose", {1, 2, 3, 3}, {2, 2, 3, 3}, true, {ints("strides", {2, 2}), ints("output_shape", {8, 8})}},
             {1, 2, 8, 8});
}

namespace {

// 3-D convolution / transposed convolution in double (explicit pads and strides), and for Conv
// the Exact chain in float: fma over (c, kd, kh, kw) from +0, padded taps fma(0, w, acc), then
// the bias.
struct Conv3dRef {
  std::vector<double> y, mag;
  std::vector<float> chain;
};
Conv3dRef reference3d(const Case& c, const std::vector<int64_t>& yd, const std::vector<float>& x, const std::vector<float>& w,
                      const std::vector<float>& b) {
  const bool tr = c.op == "ConvTranspose";
  const int64_t N = c.x[0], C = c.x[1], in[3] = {c.x[2], c.x[3], c.x[4]}, M = yd[1], out[3] = {yd[2], yd[3], yd[4]};
  const int64_t k[3] = {c.w[2], c.w[3], c.w[4]};
  const auto s = ints_of(c, "strides", {1, 1, 1}), d = ints_of(c, "dilations", {1, 1, 1}), p = ints_of(c, "pads", {0, 0, 0, 0, 0, 0});
  int64_t group = 1;
  for (const auto& a : c.attrs)
    if (a.name == "group") group = a.i;
  const int64_t Cg = C / group, Mg = M / group, O = out[0] * out[1] * out[2];
  Conv3dRef r;
  r.y.assign(size_t(N * M * O), 0.0);
  r.mag.assign(r.y.size(), 0.0);
  r.chain.assign(r.y.size(), 0.0f);
  auto xi = [&](int64_t n, int64_t cc, const int64_t* i) { return size_t(((((n * C + cc) * in[0] + i[0]) * in[1] + i[1]) * in[2] + i[2])); };
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m) {
      const int64_t gi = m / Mg, mi = m % Mg;
      for (int64_t ci = 0; ci < Cg; ++ci)
        for (int64_t kd = 0; kd < k[0]; ++kd)
          for (int64_t kh = 0; kh < k[1]; ++kh)
            for (int64_t kw = 0; kw < k[2]; ++kw) {
              const int64_t cc = gi * Cg + ci, kk[3] = {kd, kh, kw};
              const float wv = tr ? w[size_t((((cc * Mg + mi) * k[0] + kd) * k[1] + kh) * k[2] + kw)]
                                  : w[size_t((((m * Cg + ci) * k[0] + kd) * k[1] + kh) * k[2] + kw)];
              if (!tr) {
                for (int64_t o = 0; o < O; ++o) {
                  const int64_t oo[3] = {o / (out[1] * out[2]), o / out[2] % out[1], o % out[2]};
                  int64_t i[3];
                  bool inside = true;
                  for (int a = 0; a < 3; ++a) {
                    i[a] = oo[a] * s[size_t(a)] - p[size_t(a)] + kk[a] * d[size_t(a)];
                    inside = inside && i[a] >= 0 && i[a] < in[a];
                  }
                  const size_t yi = size_t((n * M + m) * O + o);
                  const float xv = inside ? x[xi(n, cc, i)] : 0.0f;
                  r.chain[yi] = std::fma(xv, wv, r.chain[yi]);
                  r.y[yi] += double(wv) * xv;
                  r.mag[yi] += std::fabs(double(wv) * xv);
                }
              } else {
                for (int64_t ii = 0; ii < in[0] * in[1] * in[2]; ++ii) {
                  const int64_t i[3] = {ii / (in[1] * in[2]), ii / in[2] % in[1], ii % in[2]};
                  int64_t oo[3];
                  bool inside = true;
                  for (int a = 0; a < 3; ++a) {
                    oo[a] = i[a] * s[size_t(a)] - p[size_t(a)] + kk[a] * d[size_t(a)];
                    inside = inside && oo[a] >= 0 && oo[a] < out[a];
                  }
                  if (!inside) continue;
                  const size_t yi = size_t((n * M + m) * O + (oo[0] * out[1] + oo[1]) * out[2] + oo[2]);
                  r.y[yi] += double(wv) * x[xi(n, cc, i)];
                  r.mag[yi] += std::fabs(double(wv) * x[xi(n, cc, i)]);
                }
              }
            }
    }
  if (!b.empty())
    for (size_t i = 0; i < r.y.size(); ++i) {
      const float bv = b[(i / size_t(O)) % size_t(M)];
      r.y[i] += bv;
      r.mag[i] += std::fabs(bv);
      r.chain[i] += bv;
    }
  return r;
}

void check_conv3d(const Case& c, const std::vector<int64_t>& want) {
  check_case(c, want, [&](const std::vector<int64_t>& yd, const std::vector<float>& x, const std::vector<float>& w,
                          const std::vector<float>& b, std::vector<double>* y, std::vector<double>* m) {
    Conv3dRef r = reference3d(c, yd, x, w, b);
    *y = std::move(r.y);
    *m = std::move(r.mag);
  });
  if (c.op != "Conv") return;
  // Exact: every output is the (c, kd, kh, kw) chain, then the bias, on every ISA.
  const std::vector<float> x = random_floats(count(c.x), 11), w = random_floats(count(c.w), 12);
  const std::vector<float> b = c.bias ? random_floats(size_t(c.w[0]), 13) : std::vector<float>{};
  const auto ye = run_graph(graph_of(c, w, b), {Feed::of("x", c.x, x)}, {ArithmeticMode::Exact});
  const std::vector<float> chain = reference3d(c, ye[0].dims, x, w, b).chain;
  const auto v = ye[0].as<float>();
  REQUIRE(v.size() == chain.size());
  size_t differ = 0;
  for (size_t i = 0; i < v.size(); ++i) differ += std::memcmp(&v[i], &chain[i], sizeof(float)) != 0;
  CHECK(differ == 0);
}

// Pools: reference in double for max / average.
void check_pool(const Case& c, const std::vector<int64_t>& want, bool include_pad) {
  check_case(c, want, [&](const std::vector<int64_t>& yd, const std::vector<float>& x, const std::vector<float>&, const std::vector<float>&,
                          std::vector<double>* y, std::vector<double>* m) {
    const int64_t NC = c.x[0] * c.x[1], H = c.x[2], W = c.x[3], OH = yd[2], OW = yd[3];
    auto k = ints_of(c, "kernel_shape", {}), s = ints_of(c, "strides", {1, 1}), d = ints_of(c, "dilations", {1, 1}),
         p = ints_of(c, "pads", {0, 0, 0, 0});
    y->assign(size_t(NC * OH * OW), 0.0);
    m->assign(y->size(), 1.0);
    for (int64_t nc = 0; nc < NC; ++nc)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double best = -INFINITY, sum = 0;
          int64_t cnt = 0;
          for (int64_t kh = 0; kh < k[0]; ++kh)
            for (int64_t kw = 0; kw < k[1]; ++kw) {
              const int64_t ih = oh * s[0] - p[0] + kh * d[0], iw = ow * s[1] - p[1] + kw * d[1];
              const bool in = ih >= 0 && ih < H && iw >= 0 && iw < W;
              if (include_pad ? (ih < H + p[2] && iw < W + p[3]) : in) ++cnt;
              if (!in) continue;
              const double v = x[size_t((nc * H + ih) * W + iw)];
              best = std::max(best, v);
              sum += v;
            }
          (*y)[size_t((nc * OH + oh) * OW + ow)] = c.op == "MaxPool" ? best : sum / double(cnt);
        }
  });
}

// 3-D pools: the window over (kd, kh, kw) in double.
void check_pool3d(const Case& c, const std::vector<int64_t>& want, bool include_pad) {
  check_case(c, want, [&](const std::vector<int64_t>& yd, const std::vector<float>& x, const std::vector<float>&, const std::vector<float>&,
                          std::vector<double>* y, std::vector<double>* m) {
    const int64_t NC = c.x[0] * c.x[1], in[3] = {c.x[2], c.x[3], c.x[4]}, out[3] = {yd[2], yd[3], yd[4]};
    auto k = ints_of(c, "kernel_shape", {}), s = ints_of(c, "strides", {1, 1, 1}), d = ints_of(c, "dilations", {1, 1, 1}),
         p = ints_of(c, "pads", {0, 0, 0, 0, 0, 0});
    y->assign(size_t(NC * out[0] * out[1] * out[2]), 0.0);
    m->assign(y->size(), 1.0);
    size_t o = 0;
    for (int64_t nc = 0; nc < NC; ++nc)
      for (int64_t od = 0; od < out[0]; ++od)
        for (int64_t oh = 0; oh < out[1]; ++oh)
          for (int64_t ow = 0; ow < out[2]; ++ow, ++o) {
            double best = -INFINITY, sum = 0;
            int64_t cnt = 0;
            for (int64_t kd = 0; kd < k[0]; ++kd)
              for (int64_t kh = 0; kh < k[1]; ++kh)
                for (int64_t kw = 0; kw < k[2]; ++kw) {
                  const int64_t i[3] = {od * s[0] - p[0] + kd * d[0], oh * s[1] - p[1] + kh * d[1], ow * s[2] - p[2] + kw * d[2]};
                  bool inside = true, padded = true;
                  for (int a = 0; a < 3; ++a) {
                    inside = inside && i[a] >= 0 && i[a] < in[a];
                    padded = padded && i[a] < in[a] + p[3 + a];
                  }
                  if (include_pad ? padded : inside) ++cnt;
                  if (!inside) continue;
                  const double v = x[size_t(((nc * in[0] + i[0]) * in[1] + i[1]) * in[2] + i[2])];
                  best = std::max(best, v);
                  sum += v;
                }
            (*y)[o] = c.op == "MaxPool" ? best : sum / double(cnt);
          }
  });
}

}  // namespace

TEST_CASE("3-D Conv and ConvTranspose match the double reference; Exact Conv is the (c, kd, kh, kw) chain") {
  check_conv3d({"Conv", {2, 3, 5, 6, 5}, {4, 3, 3, 3, 2}, true, {ints("pads", {1, 1, 0, 1, 0, 1})}}, {2, 4, 5, 5, 5});
  check_conv3d({"Conv", {1, 4, 7, 5, 6}, {6, 2, 2, 3, 3}, false,
                {ints("strides", {2, 1, 2}), ints("dilations", {2, 1, 1}), ints("pads", {1, 1, 1, 2, 0, 0}), Attribute::of_int("group", 2)}},
               {1, 6, 4, 4, 3});
  check_conv3d({"Conv", {1, 8, 4, 6, 6}, {16, 8, 1, 1, 1}, true, {}}, {1, 16, 4, 6, 6});                             // pointwise
  check_conv3d({"Conv", {1, 6, 4, 6, 6}, {6, 1, 1, 3, 3}, true, {Attribute::of_int("group", 6), ints("pads", {0, 1, 1, 0, 1, 1})}},
               {1, 6, 4, 6, 6});                                                                                    // depthwise, kD = 1
  check_conv3d({"Conv", {1, 8, 3, 10, 10}, {24, 8, 2, 3, 3}, true, {ints("pads", {0, 1, 1, 0, 1, 1})}}, {1, 24, 2, 10, 10});  // Winograd-sized
  check_conv3d({"ConvTranspose", {1, 2, 3, 4, 3}, {2, 3, 2, 3, 3}, true, {ints("strides", {2, 2, 1})}}, {1, 3, 6, 9, 5});
  check_conv3d({"ConvTranspose", {2, 4, 3, 3, 2}, {4, 2, 3, 2, 3}, false,
                {ints("strides", {2, 1, 2}), ints("pads", {1, 0, 1, 1, 0, 0}), ints("dilations", {1, 2, 1}), Attribute::of_int("group", 2)}},
               {2, 4, 5, 5, 4});
  check_conv3d({"ConvTranspose", {1, 2, 2, 3, 3}, {2, 2, 3, 3, 3}, true, {ints("strides", {2, 2, 2}), ints("output_padding", {1, 1, 0})}},
               {1, 2, 6, 8, 7});
}

TEST_CASE("MaxPool and AveragePool match the double reference, ceil_mode and dilations included") {
  check_pool({"MaxPool", {2, 3, 7, 7}, {}, false, {ints("kernel_shape", {3, 3}), ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1})}},
             {2, 3, 4, 4}, false);
  check_pool({"MaxPool", {1, 2, 8, 8}, {}, false, {ints("kernel_shape", {2, 2}), ints("strides", {3, 3}), Attribute::of_int("ceil_mode", 1)}},
             {1, 2, 3, 3}, false);
  check_pool({"MaxPool", {1, 2, 9, 9}, {}, false, {ints("kernel_shape", {3, 2}), ints("dilations", {2, 3})}}, {1, 2, 5, 6}, false);
  check_pool({"AveragePool", {1, 2, 7, 7}, {}, false, {ints("kernel_shape", {3, 3}), ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1})}},
             {1, 2, 4, 4}, false);
  check_pool({"AveragePool", {1, 2, 7, 7}, {}, false,
              {ints("kernel_shape", {3, 3}), ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1}), Attribute::of_int("count_include_pad", 1)}},
             {1, 2, 4, 4}, true);
  check_pool({"AveragePool", {1, 2, 8, 8}, {}, false,
              {ints("kernel_shape", {3, 3}), ints("strides", {2, 2}), Attribute::of_int("ceil_mode", 1), Attribute::of_int("count_include_pad", 1)}},
             {1, 2, 4, 4}, true);
}

TEST_CASE("3-D MaxPool and AveragePool (two 2-D passes) match the double reference") {
  const std::vector<Attribute> geo{ints("kernel_shape", {2, 3, 2}), ints("strides", {2, 1, 2}), ints("pads", {1, 1, 0, 0, 1, 1}),
                                   ints("dilations", {1, 2, 1})};
  check_pool3d({"MaxPool", {2, 2, 5, 6, 5}, {}, false, geo}, {2, 2, 3, 4, 3}, false);
  check_pool3d({"AveragePool", {2, 2, 5, 6, 5}, {}, false, geo}, {2, 2, 3, 4, 3}, false);
  std::vector<Attribute> incl = geo;
  incl.push_back(Attribute::of_int("count_include_pad", 1));
  check_pool3d({"AveragePool", {1, 2, 5, 6, 5}, {}, false, incl}, {1, 2, 3, 4, 3}, true);
  check_pool3d({"AveragePool", {1, 1, 6, 5, 6}, {}, false,
                {ints("kernel_shape", {3, 2, 3}), ints("strides", {2, 2, 2}), Attribute::of_int("ceil_mode", 1), Attribute::of_int("count_include_pad", 1)}},
               {1, 1, 3, 3, 3}, true);
}

TEST_CASE("global pools, BatchNormalization, Resize and Pad") {
  const std::vector<float> x = random_floats(2 * 3 * 4 * 5, 21);
  const std::vector<Feed> feeds{Feed::of("x", {2, 3, 4, 5}, x)};
  auto one = [&](const std::string& op, std::vector<std::string> ins, std::vector<TensorData> consts, std::vector<Attribute> attrs,
                 ArithmeticMode mode = ArithmeticMode::Fast) {
    g::Graph gr;
    gr.inputs.push_back(value("x", DType::f32, {2, 3, 4, 5}));
    gr.initializers = std::move(consts);
    gr.nodes.push_back(node(op, std::move(ins), {"y"}, std::move(attrs)));
    gr.outputs.push_back(value("y", DType::f32, {}));
    return run_graph(gr, feeds, {mode})[0];
  };
  SUBCASE("GlobalAveragePool / GlobalMaxPool") {
    const Out a = one("GlobalAveragePool", {"x"}, {}, {});
    const Out m = one("GlobalMaxPool", {"x"}, {}, {});
    CHECK(a.dims == std::vector<int64_t>{2, 3, 1, 1});
    for (int64_t p = 0; p < 6; ++p) {
      double s = 0, mx = -INFINITY;
      for (int64_t i = 0; i < 20; ++i) { s += x[size_t(p * 20 + i)]; mx = std::max(mx, double(x[size_t(p * 20 + i)])); }
      CHECK(std::fabs(a.as<float>()[size_t(p)] - s / 20) <= 1e-6);
      CHECK(m.as<float>()[size_t(p)] == float(mx));
    }
  }
  SUBCASE("BatchNormalization") {
    const std::vector<float> sc{0.5f, -1.0f, 2.0f}, bb{0.1f, 0.2f, -0.3f}, mu{0.3f, -0.2f, 0.0f}, var{0.25f, 1.5f, 4.0f};
    const Out y = one("BatchNormalization", {"x", "s", "b", "m", "v"},
                      {TensorData::from_vector("s", {3}, sc), TensorData::from_vector("b", {3}, bb), TensorData::from_vector("m", {3}, mu),
                       TensorData::from_vector("v", {3}, var)},
                      {Attribute::of_float("epsilon", 1e-3f)});
    for (size_t i = 0; i < x.size(); ++i) {
      const size_t c = (i / 20) % 3;
      const double r = (x[i] - mu[c]) / std::sqrt(double(var[c]) + 1e-3) * sc[c] + bb[c];
      CHECK(std::fabs(y.as<float>()[i] - r) <= 1e-5 * std::max(1.0, std::fabs(r)));
    }
  }
  SUBCASE("Resize nearest asymmetric floor, sizes") {
    const Out y = one("Resize", {"x", "", "", "sizes"}, {TensorData::from_vector<int64_t>("sizes", {4}, {2, 3, 8, 7})},
                      {Attribute::of_string("coordinate_transformation_mode", "asymmetric"), Attribute::of_string("nearest_mode", "floor")});
    REQUIRE(y.dims == std::vector<int64_t>{2, 3, 8, 7});
    for (int64_t p = 0; p < 6; ++p)
      for (int64_t oh = 0; oh < 8; ++oh)
        for (int64_t ow = 0; ow < 7; ++ow) {
          const int64_t ih = int64_t(std::floor(oh * 4.0 / 8)), iw = std::min<int64_t>(4, int64_t(std::floor(ow * 5.0 / 7)));
          CHECK(y.as<float>()[size_t((p * 8 + oh) * 7 + ow)] == x[size_t((p * 4 + ih) * 5 + iw)]);
        }
  }
  SUBCASE("Resize linear half_pixel and align_corners, scales") {
    for (const char* ct : {"half_pixel", "align_corners", "pytorch_half_pixel", "asymmetric"}) {
      CAPTURE(ct);
      const Out y = one("Resize", {"x", "", "sc"}, {TensorData::from_vector<float>("sc", {4}, {1, 1, 2, 1.5f})},
                        {Attribute::of_string("mode", "linear"), Attribute::of_string("coordinate_transformation_mode", ct)});
      REQUIRE(y.dims == std::vector<int64_t>{2, 3, 8, 7});
      // With scales, align_corners divides by the unrounded resized length in * scale (the ONNX
      // definition; the node test test_resize_downsample_scales_linear_align_corners checks it).
      auto src = [&](int64_t o, double scale, int64_t in, int64_t) {
        double v = std::string(ct) == "align_corners" ? o * double(in - 1) / (double(in) * scale - 1)
                   : std::string(ct) == "asymmetric" ? o / scale : (o + 0.5) / scale - 0.5;
        return std::min(std::max(v, 0.0), double(in - 1));
      };
      for (int64_t p = 0; p < 6; ++p)
        for (int64_t oh = 0; oh < 8; ++oh)
          for (int64_t ow = 0; ow < 7; ++ow) {
            const double sy = src(oh, 2.0, 4, 8), sx = src(ow, 1.5, 5, 7);
            const int64_t y0 = int64_t(sy), x0 = int64_t(sx), y1 = std::min<int64_t>(y0 + 1, 3), x1 = std::min<int64_t>(x0 + 1, 4);
            const double fy = sy - y0, fx = sx - x0;
            auto at = [&](int64_t i, int64_t j) { return double(x[size_t((p * 4 + i) * 5 + j)]); };
            const double r = (1 - fy) * ((1 - fx) * at(y0, x0) + fx * at(y0, x1)) + fy * ((1 - fx) * at(y1, x0) + fx * at(y1, x1));
            CHECK(std::fabs(y.as<float>()[size_t((p * 8 + oh) * 7 + ow)] - r) <= 1e-5);
          }
    }
  }
  SUBCASE("Pad constant, reflect, edge") {
    for (const char* mode : {"constant", "reflect", "edge"}) {
      CAPTURE(mode);
      const Out y = one("Pad", {"x", "pads", "cv"},
                        {TensorData::from_vector<int64_t>("pads", {8}, {0, 0, 2, 1, 0, 0, 1, 3}), TensorData::from_vector<float>("cv", {}, {7.5f})},
                        {Attribute::of_string("mode", mode)});
      REQUIRE(y.dims == std::vector<int64_t>{2, 3, 7, 9});
      for (int64_t p = 0; p < 6; ++p)
        for (int64_t oh = 0; oh < 7; ++oh)
          for (int64_t ow = 0; ow < 9; ++ow) {
            int64_t ih = oh - 2, iw = ow - 1;
            float want;
            const bool in = ih >= 0 && ih < 4 && iw >= 0 && iw < 5;
            if (std::string(mode) == "constant") want = in ? x[size_t((p * 4 + ih) * 5 + iw)] : 7.5f;
            else {
              if (std::string(mode) == "edge") { ih = std::clamp<int64_t>(ih, 0, 3); iw = std::clamp<int64_t>(iw, 0, 4); }
              else { ih = ih < 0 ? -ih : ih > 3 ? 6 - ih : ih; iw = iw < 0 ? -iw : iw > 4 ? 8 - iw : iw; }
              want = x[size_t((p * 4 + ih) * 5 + iw)];
            }
            CHECK(y.as<float>()[size_t((p * 7 + oh) * 9 + ow)] == want);
          }
    }
    const Out c = one("Pad", {"x", "pads"}, {TensorData::from_vector<int64_t>("pads", {8}, {0, -1, 0, -2, 0, 0, -1, 0})}, {});
    CHECK(c.dims == std::vector<int64_t>{2, 2, 3, 3});
  }
}

TEST_CASE("malformed convolutions and pools are refused when the Session plans, naming the node") {
  auto refused = [](const Case& c, const char* needle) {
    CAPTURE(needle);
    const std::vector<float> w = c.w.empty() ? std::vector<float>{} : random_floats(count(c.w), 1);
    g::Graph gr = graph_of(c, w, c.bias ? random_floats(size_t(c.w[0]), 2) : std::vector<float>{});
    gr.inputs[0] = value("x", DType::f32, c.x);
    try {
      om::Session s(gr, {ArithmeticMode::Fast});
      run(s, {Feed::of("x", c.x, random_floats(count(c.x), 3))});
      FAIL("accepted");
    } catch (const om::Error& e) {
      const std::string m = e.what();
      CHECK(m.find("node '" + c.op + "_y'") != std::string::npos);
      CHECK(m.find(needle) != std::string::npos);
    }
  };
  refused({"Conv", {1, 3, 4, 4}, {2, 3, 5, 5}, false, {}}, "larger than the padded input");
  refused({"Conv", {1, 3, 4, 4}, {2, 1, 3, 3}, false, {Attribute::of_int("group", 2)}}, "group does not divide");
  refused({"Conv", {1, 3, 4, 4}, {2, 3, 3}, false, {}}, "rank");
  refused({"Conv", {1, 3, 4, 4}, {2, 3, 3, 3}, false, {ints("pads", {-1, 0, 0, 0})}}, "pads");
  refused({"Conv", {1, 3, 4, 4}, {2, 3, 3, 3}, false, {ints("strides", {0, 1})}}, "strides");
  refused({"MaxPool", {1, 3, 4, 4}, {}, false, {ints("kernel_shape", {6, 6})}}, "larger than the padded input");
  refused({"AveragePool", {1, 3, 4, 4}, {}, false, {}}, "kernel_shape");
  refused({"ConvTranspose", {1, 3, 4, 4}, {2, 3, 3, 3}, false, {}}, "dim 0");
  refused({"Conv", {1, 3, 4, 4, 4, 4}, {2, 3, 3, 3, 3, 3}, false, {}}, "5-D [N, C, D, H, W]");
  // The integer convolutions stay 1-D and 2-D: a 3-D ConvInteger is refused with the fix.
  g::Graph q;
  q.inputs.push_back(value("x", DType::u8, {1, 2, 3, 3, 3}));
  q.initializers.push_back(TensorData::from_vector("w", {2, 2, 2, 2, 2}, std::vector<uint8_t>(32, 1)));
  q.nodes.push_back(node("ConvInteger", {"x", "w"}, {"y"}));
  q.outputs.push_back(value("y", DType::i32, {}));
  try {
    om::Session s(q, {ArithmeticMode::Fast});
    run(s, {Feed::of("x", {1, 2, 3, 3, 3}, std::vector<uint8_t>(54, 2))});
    FAIL("accepted");
  } catch (const om::Error& e) {
    CHECK(std::string(e.what()).find("1-D and 2-D inputs") != std::string::npos);
    CHECK(std::string(e.what()).find("DequantizeLinear") != std::string::npos);
  }
}
