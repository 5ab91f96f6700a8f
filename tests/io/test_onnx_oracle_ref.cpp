// Hand-built one-operator graphs checked by ONNX Runtime, for the operators whose eager
// versions are not in the tree yet (norms, convolutions, pools, resize, embedding, RNNs) and
// the graph-only ones (Shape, Constant). Expected values come from the straightforward
// double-precision references below, written from the ONNX operator definitions.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "oracle_graphs.h"

using namespace octest;

namespace {

std::vector<double> dvec(const TensorData& t) { return std::vector<double>(t.data<float>(), t.data<float>() + t.numel()); }
double sigm(double x) { return 1.0 / (1.0 + std::exp(-x)); }

struct Conv {
  int64_t stride = 1, pad = 0, dil = 1, group = 1, out_pad = 0;
};

// NCHW convolution; w is [M, C/group, kh, kw].
std::vector<double> conv2d(const std::vector<double>& x, const std::vector<int64_t>& xd, const std::vector<double>& w,
                           const std::vector<int64_t>& wd, const std::vector<double>& b, const Conv& p, std::vector<int64_t>* od) {
  const int64_t N = xd[0], C = xd[1], H = xd[2], W = xd[3], M = wd[0], Cg = wd[1], KH = wd[2], KW = wd[3];
  const int64_t OH = (H + 2 * p.pad - p.dil * (KH - 1) - 1) / p.stride + 1, OW = (W + 2 * p.pad - p.dil * (KW - 1) - 1) / p.stride + 1;
  *od = {N, M, OH, OW};
  const int64_t Mg = M / p.group;
  std::vector<double> y(size_t(N * M * OH * OW));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = b.empty() ? 0 : b[size_t(m)];
          const int64_t g = m / Mg;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t i = 0; i < KH; ++i)
              for (int64_t j = 0; j < KW; ++j) {
                const int64_t ih = oh * p.stride - p.pad + i * p.dil, iw = ow * p.stride - p.pad + j * p.dil;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc += x[size_t(((n * C + g * Cg + c) * H + ih) * W + iw)] * w[size_t(((m * Cg + c) * KH + i) * KW + j)];
              }
          y[size_t(((n * M + m) * OH + oh) * OW + ow)] = acc;
        }
  return y;
}

// NCHW transposed convolution; w is [C, M/group, kh, kw].
std::vector<double> conv_transpose2d(const std::vector<double>& x, const std::vector<int64_t>& xd, const std::vector<double>& w,
                                     const std::vector<int64_t>& wd, const std::vector<double>& b, const Conv& p,
                                     std::vector<int64_t>* od) {
  const int64_t N = xd[0], C = xd[1], H = xd[2], W = xd[3], Mg = wd[1], KH = wd[2], KW = wd[3];
  const int64_t M = Mg * p.group, Cg = C / p.group;
  const int64_t OH = p.stride * (H - 1) + p.out_pad + p.dil * (KH - 1) + 1 - 2 * p.pad;
  const int64_t OW = p.stride * (W - 1) + p.out_pad + p.dil * (KW - 1) + 1 - 2 * p.pad;
  *od = {N, M, OH, OW};
  std::vector<double> y(size_t(N * M * OH * OW));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (size_t k = 0; k < size_t(OH * OW); ++k) y[size_t((n * M + m) * OH * OW) + k] = b.empty() ? 0 : b[size_t(m)];
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t ih = 0; ih < H; ++ih)
        for (int64_t iw = 0; iw < W; ++iw) {
          const int64_t g = c / Cg;
          for (int64_t m = 0; m < Mg; ++m)
            for (int64_t i = 0; i < KH; ++i)
              for (int64_t j = 0; j < KW; ++j) {
                const int64_t oh = ih * p.stride - p.pad + i * p.dil, ow = iw * p.stride - p.pad + j * p.dil;
                if (oh < 0 || oh >= OH || ow < 0 || ow >= OW) continue;
                y[size_t(((n * M + g * Mg + m) * OH + oh) * OW + ow)] +=
                    x[size_t(((n * C + c) * H + ih) * W + iw)] * w[size_t(((c * Mg + m) * KH + i) * KW + j)];
              }
        }
  return y;
}

std::vector<double> pool2d(const std::vector<double>& x, const std::vector<int64_t>& xd, int64_t k, int64_t s, int64_t pad, bool max,
                           bool count_include_pad, std::vector<int64_t>* od) {
  const int64_t N = xd[0], C = xd[1], H = xd[2], W = xd[3];
  const int64_t OH = (H + 2 * pad - k) / s + 1, OW = (W + 2 * pad - k) / s + 1;
  *od = {N, C, OH, OW};
  std::vector<double> y;
  for (int64_t nc = 0; nc < N * C; ++nc)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double acc = max ? -INFINITY : 0;
        int64_t count = 0;
        for (int64_t i = 0; i < k; ++i)
          for (int64_t j = 0; j < k; ++j) {
            const int64_t ih = oh * s - pad + i, iw = ow * s - pad + j;
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
            const double v = x[size_t((nc * H + ih) * W + iw)];
            acc = max ? std::max(acc, v) : acc + v;
            ++count;
          }
        y.push_back(max ? acc : acc / double(count_include_pad ? k * k : count));
      }
  return y;
}

// Resize of the two spatial axes of NCHW to (OH, OW).
std::vector<double> resize2d(const std::vector<double>& x, const std::vector<int64_t>& xd, int64_t OH, int64_t OW,
                             const std::string& mode, const std::string& ctm) {
  const int64_t NC = xd[0] * xd[1], H = xd[2], W = xd[3];
  auto src = [&](int64_t o, int64_t in, int64_t out) {
    if (ctm == "align_corners") return out == 1 ? 0.0 : double(o) * double(in - 1) / double(out - 1);
    const double scale = double(out) / double(in);
    if (ctm == "half_pixel") return (double(o) + 0.5) / scale - 0.5;
    return double(o) / scale;  // asymmetric
  };
  std::vector<double> y;
  for (int64_t nc = 0; nc < NC; ++nc)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        const double sy = src(oh, H, OH), sx = src(ow, W, OW);
        auto at = [&](int64_t i, int64_t j) { return x[size_t((nc * H + i) * W + j)]; };
        if (mode == "nearest") {
          y.push_back(at(std::min<int64_t>(int64_t(std::floor(sy)), H - 1), std::min<int64_t>(int64_t(std::floor(sx)), W - 1)));
          continue;
        }
        const double cy = std::clamp(sy, 0.0, double(H - 1)), cx = std::clamp(sx, 0.0, double(W - 1));
        const int64_t y0 = int64_t(std::floor(cy)), x0 = int64_t(std::floor(cx));
        const int64_t y1 = std::min(y0 + 1, H - 1), x1 = std::min(x0 + 1, W - 1);
        const double fy = cy - double(y0), fx = cx - double(x0);
        y.push_back((1 - fy) * ((1 - fx) * at(y0, x0) + fx * at(y0, x1)) + fy * ((1 - fx) * at(y1, x0) + fx * at(y1, x1)));
      }
  return y;
}

// gates[g] = x W_g^T + h R_g^T + Wb_g + Rb_g for gate g of `ngates`, one batch row.
std::vector<double> gate(const std::vector<double>& x, const std::vector<double>& h, const std::vector<double>& W,
                         const std::vector<double>& R, const std::vector<double>& B, int64_t g, int64_t H, int64_t I, int64_t ngates,
                         bool with_recurrent = true) {
  std::vector<double> out(static_cast<size_t>(H));
  for (int64_t k = 0; k < H; ++k) {
    const int64_t row = g * H + k;
    double acc = B[size_t(row)] + (with_recurrent ? B[size_t(ngates * H + row)] : 0.0);
    for (int64_t i = 0; i < I; ++i) acc += x[size_t(i)] * W[size_t(row * I + i)];
    if (with_recurrent)
      for (int64_t j = 0; j < H; ++j) acc += h[size_t(j)] * R[size_t(row * H + j)];
    out[size_t(k)] = acc;
  }
  return out;
}

}  // namespace

TEST_CASE("oracle cases: LayerNormalization and BatchNormalization (double reference)") {
  const TensorData x = rand_f32("x", {2, 3, 8}, 21), scale = rand_f32("scale", {8}, 22), bias = rand_f32("bias", {8}, 23);
  const double eps = 1e-5;
  std::vector<double> xv = dvec(x), y(xv.size());
  for (size_t r = 0; r < 6; ++r) {
    double mean = 0, var = 0;
    for (size_t i = 0; i < 8; ++i) mean += xv[r * 8 + i];
    mean /= 8;
    for (size_t i = 0; i < 8; ++i) var += (xv[r * 8 + i] - mean) * (xv[r * 8 + i] - mean);
    var /= 8;
    for (size_t i = 0; i < 8; ++i)
      y[r * 8 + i] = (xv[r * 8 + i] - mean) / std::sqrt(var + eps) * scale.data<float>()[i] + bias.data<float>()[i];
  }
  single_op_case("io_op_layernorm", "LayerNormalization", {x}, {scale, bias},
                 {Attribute::of_int("axis", -1), Attribute::of_float("epsilon", float(eps))}, from_double("y", x.dims, y));

  const TensorData xb = rand_f32("x", {2, 3, 4, 5}, 24), g = rand_f32("g", {3}, 25), b = rand_f32("b", {3}, 26);
  const TensorData mean = rand_f32("mean", {3}, 27), var = f32("var", {3}, values(3, 28, 0.5f, 2.0f));
  std::vector<double> xbv = dvec(xb), yb(xbv.size());
  for (size_t i = 0; i < xbv.size(); ++i) {
    const size_t c = (i / 20) % 3;
    yb[i] = (xbv[i] - mean.data<float>()[c]) / std::sqrt(double(var.data<float>()[c]) + 1e-5) * g.data<float>()[c] + b.data<float>()[c];
  }
  single_op_case("io_op_batchnorm", "BatchNormalization", {xb}, {g, b, mean, var}, {Attribute::of_float("epsilon", 1e-5f)},
                 from_double("y", xb.dims, yb));
}

TEST_CASE("oracle cases: Conv and ConvTranspose (double reference)") {
  struct C { const char* name; std::vector<int64_t> xd, wd; Conv p; };
  for (const C& c : {C{"io_op_conv", {2, 4, 7, 6}, {6, 4, 3, 3}, {1, 1, 1, 1, 0}},
                     C{"io_op_conv_s2_d2_g2", {1, 4, 9, 8}, {6, 2, 3, 2}, {2, 2, 2, 2, 0}}}) {
    const TensorData x = rand_f32("x", c.xd, 31), w = rand_f32("w", c.wd, 32), b = rand_f32("b", {c.wd[0]}, 33);
    std::vector<int64_t> od;
    const std::vector<double> y = conv2d(dvec(x), c.xd, dvec(w), c.wd, dvec(b), c.p, &od);
    single_op_case(c.name, "Conv", {x}, {w, b},
                   {Attribute::of_ints("kernel_shape", {c.wd[2], c.wd[3]}), Attribute::of_ints("strides", {c.p.stride, c.p.stride}),
                    Attribute::of_ints("pads", {c.p.pad, c.p.pad, c.p.pad, c.p.pad}),
                    Attribute::of_ints("dilations", {c.p.dil, c.p.dil}), Attribute::of_int("group", c.p.group)},
                   from_double("y", od, y));
  }
  for (const C& c : {C{"io_op_convtranspose", {1, 4, 5, 4}, {4, 3, 3, 3}, {2, 1, 1, 1, 1}},
                     C{"io_op_convtranspose_g2", {2, 4, 3, 3}, {4, 2, 2, 3}, {1, 0, 2, 2, 0}}}) {
    const TensorData x = rand_f32("x", c.xd, 34), w = rand_f32("w", c.wd, 35), b = rand_f32("b", {c.wd[1] * c.p.group}, 36);
    std::vector<int64_t> od;
    const std::vector<double> y = conv_transpose2d(dvec(x), c.xd, dvec(w), c.wd, dvec(b), c.p, &od);
    single_op_case(c.name, "ConvTranspose", {x}, {w, b},
                   {Attribute::of_ints("kernel_shape", {c.wd[2], c.wd[3]}), Attribute::of_ints("strides", {c.p.stride, c.p.stride}),
                    Attribute::of_ints("pads", {c.p.pad, c.p.pad, c.p.pad, c.p.pad}),
                    Attribute::of_ints("dilations", {c.p.dil, c.p.dil}), Attribute::of_int("group", c.p.group),
                    Attribute::of_ints("output_padding", {c.p.out_pad, c.p.out_pad})},
                   from_double("y", od, y));
  }
}

TEST_CASE("oracle cases: MaxPool and AveragePool (double reference)") {
  const TensorData x = rand_f32("x", {2, 3, 7, 6}, 41);
  std::vector<int64_t> od;
  auto attrs = [](int64_t k, int64_t s, int64_t p) {
    return std::vector<Attribute>{Attribute::of_ints("kernel_shape", {k, k}), Attribute::of_ints("strides", {s, s}),
                                  Attribute::of_ints("pads", {p, p, p, p})};
  };
  std::vector<double> y = pool2d(dvec(x), x.dims, 3, 2, 1, true, false, &od);
  single_op_case("io_op_maxpool", "MaxPool", {x}, {}, attrs(3, 2, 1), from_double("y", od, y));
  for (int include : {0, 1}) {
    y = pool2d(dvec(x), x.dims, 3, 2, 1, false, include != 0, &od);
    std::vector<Attribute> a = attrs(3, 2, 1);
    a.push_back(Attribute::of_int("count_include_pad", include));
    single_op_case(include ? "io_op_avgpool_incl" : "io_op_avgpool", "AveragePool", {x}, {}, a, from_double("y", od, y));
  }
}

TEST_CASE("oracle cases: Resize with explicit sizes (double reference)") {
  const TensorData x = rand_f32("x", {1, 2, 4, 5}, 51);
  struct R { const char* name; const char* mode; const char* ctm; int64_t oh, ow; };
  for (const R& r : {R{"io_op_resize_nearest", "nearest", "asymmetric", 8, 7}, R{"io_op_resize_nearest_down", "nearest", "asymmetric", 3, 2},
                     R{"io_op_resize_bilinear_hp", "linear", "half_pixel", 7, 9},
                     R{"io_op_resize_bilinear_ac", "linear", "align_corners", 6, 8}}) {
    const std::vector<double> y = resize2d(dvec(x), x.dims, r.oh, r.ow, r.mode, r.ctm);
    std::vector<Attribute> a = {Attribute::of_string("mode", r.mode), Attribute::of_string("coordinate_transformation_mode", r.ctm)};
    if (std::string(r.mode) == "nearest") a.push_back(Attribute::of_string("nearest_mode", "floor"));
    single_op_case(r.name, "Resize", {x}, {i64("sizes", {4}, {1, 2, r.oh, r.ow})}, a, from_double("y", {1, 2, r.oh, r.ow}, y),
                   {"x", "", "", "sizes"});
  }
}

TEST_CASE("oracle cases: Gather (embedding), Shape, Constant (reference)") {
  const TensorData table = rand_f32("table", {6, 4}, 61), idx = i64("idx", {2, 3}, {0, 5, 2, 2, 1, 4});
  std::vector<double> y;
  for (int64_t i : std::vector<int64_t>{0, 5, 2, 2, 1, 4})
    for (int64_t d = 0; d < 4; ++d) y.push_back(table.data<float>()[i * 4 + d]);
  single_op_case("io_op_gather_embedding", "Gather", {idx}, {table}, {Attribute::of_int("axis", 0)}, from_double("y", {2, 3, 4}, y),
                 {"table", "idx"});

  const TensorData x = rand_f32("x", {2, 3, 5, 7}, 62);
  single_op_case("io_op_shape", "Shape", {x}, {}, {Attribute::of_int("start", 1), Attribute::of_int("end", -1)},
                 i64("y", {2}, {3, 5}));

  // y = x + Constant(value)
  const TensorData a = rand_f32("a", {3, 2}, 63), k = rand_f32("", {2}, 64);
  std::vector<double> sum;
  for (int64_t i = 0; i < 6; ++i) sum.push_back(double(a.data<float>()[i]) + double(k.data<float>()[i % 2]));
  GraphBuilder b;
  b.input(a).node("Constant", {}, {"k"}, {Attribute::of_tensor("value", k)}).node("Add", {"a", "k"}, {"y"}).output("y", DType::f32, {3, 2});
  write_oracle_case("io_op_constant", b.g, {a}, {from_double("y", {3, 2}, sum)});
}

TEST_CASE("oracle cases: LSTM and GRU, one direction (double reference)") {
  const int64_t S = 4, B = 2, I = 3, H = 5;
  const TensorData x = rand_f32("x", {S, B, I}, 71);
  const std::vector<double> xv = dvec(x);
  {
    const TensorData W = f32("W", {1, 4 * H, I}, values(size_t(4 * H * I), 72, -0.5f, 0.5f));
    const TensorData R = f32("R", {1, 4 * H, H}, values(size_t(4 * H * H), 73, -0.5f, 0.5f));
    const TensorData Bb = f32("B", {1, 8 * H}, values(size_t(8 * H), 74, -0.5f, 0.5f));
    const TensorData h0 = rand_f32("h0", {1, B, H}, 75), c0 = rand_f32("c0", {1, B, H}, 76);
    const std::vector<double> w = dvec(W), r = dvec(R), bb = dvec(Bb);
    std::vector<double> Y, Yh;
    std::vector<std::vector<double>> h(static_cast<size_t>(B)), c(static_cast<size_t>(B));
    for (int64_t n = 0; n < B; ++n) {
      h[size_t(n)] = std::vector<double>(h0.data<float>() + n * H, h0.data<float>() + (n + 1) * H);
      c[size_t(n)] = std::vector<double>(c0.data<float>() + n * H, c0.data<float>() + (n + 1) * H);
    }
    for (int64_t t = 0; t < S; ++t)
      for (int64_t n = 0; n < B; ++n) {
        const std::vector<double> xt(xv.begin() + (t * B + n) * I, xv.begin() + (t * B + n + 1) * I);
        // ONNX gate order: input, output, forget, cell.
        const auto gi = gate(xt, h[size_t(n)], w, r, bb, 0, H, I, 4), go = gate(xt, h[size_t(n)], w, r, bb, 1, H, I, 4);
        const auto gf = gate(xt, h[size_t(n)], w, r, bb, 2, H, I, 4), gc = gate(xt, h[size_t(n)], w, r, bb, 3, H, I, 4);
        for (int64_t k = 0; k < H; ++k) {
          const size_t kk = size_t(k);
          c[size_t(n)][kk] = sigm(gf[kk]) * c[size_t(n)][kk] + sigm(gi[kk]) * std::tanh(gc[kk]);
          h[size_t(n)][kk] = sigm(go[kk]) * std::tanh(c[size_t(n)][kk]);
        }
        Y.insert(Y.end(), h[size_t(n)].begin(), h[size_t(n)].end());
      }
    for (int64_t n = 0; n < B; ++n) Yh.insert(Yh.end(), h[size_t(n)].begin(), h[size_t(n)].end());
    GraphBuilder g;
    g.input(x).input(h0).input(c0).init(W).init(R).init(Bb);
    g.node("LSTM", {"x", "W", "R", "B", "", "h0", "c0"}, {"Y", "Y_h"}, {Attribute::of_int("hidden_size", H)});
    g.output("Y", DType::f32, {S, 1, B, H}).output("Y_h", DType::f32, {1, B, H});
    write_oracle_case("io_op_lstm", g.g, {x, h0, c0}, {from_double("Y", {S, 1, B, H}, Y), from_double("Y_h", {1, B, H}, Yh)});
  }
  {
    const TensorData W = f32("W", {1, 3 * H, I}, values(size_t(3 * H * I), 77, -0.5f, 0.5f));
    const TensorData R = f32("R", {1, 3 * H, H}, values(size_t(3 * H * H), 78, -0.5f, 0.5f));
    const TensorData Bb = f32("B", {1, 6 * H}, values(size_t(6 * H), 79, -0.5f, 0.5f));
    const std::vector<double> w = dvec(W), r = dvec(R), bb = dvec(Bb);
    std::vector<double> Y;
    std::vector<std::vector<double>> h(size_t(B), std::vector<double>(size_t(H), 0.0));
    for (int64_t t = 0; t < S; ++t)
      for (int64_t n = 0; n < B; ++n) {
        const std::vector<double> xt(xv.begin() + (t * B + n) * I, xv.begin() + (t * B + n + 1) * I);
        std::vector<double>& hp = h[size_t(n)];
        // ONNX gate order z, r, h; linear_before_reset = 1: r multiplies (h R_h^T + Rb_h).
        const auto z = gate(xt, hp, w, r, bb, 0, H, I, 3), rr = gate(xt, hp, w, r, bb, 1, H, I, 3);
        const auto xh = gate(xt, hp, w, r, bb, 2, H, I, 3, false);
        std::vector<double> hn(static_cast<size_t>(H));
        for (int64_t k = 0; k < H; ++k) {
          double rh = bb[size_t(3 * H + 2 * H + k)];
          for (int64_t j = 0; j < H; ++j) rh += hp[size_t(j)] * r[size_t((2 * H + k) * H + j)];
          const double cand = std::tanh(xh[size_t(k)] + sigm(rr[size_t(k)]) * rh);
          hn[size_t(k)] = (1 - sigm(z[size_t(k)])) * cand + sigm(z[size_t(k)]) * hp[size_t(k)];
        }
        hp = hn;
        Y.insert(Y.end(), hp.begin(), hp.end());
      }
    GraphBuilder g;
    g.input(x).init(W).init(R).init(Bb);
    g.node("GRU", {"x", "W", "R", "B"}, {"Y"}, {Attribute::of_int("hidden_size", H), Attribute::of_int("linear_before_reset", 1)});
    g.output("Y", DType::f32, {S, 1, B, H});
    write_oracle_case("io_op_gru", g.g, {x}, {from_double("Y", {S, 1, B, H}, Y)});
  }
}
