// A double-precision reference of ONNX LSTM / GRU / RNN (default activations): direction,
// layout, sequence_lens, initial states, linear_before_reset. Written from the ONNX operator
// definitions, independently of the kernel (no shared code).
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace rnnref {

struct Case {
  std::string op = "LSTM";  // LSTM, GRU, RNN
  int64_t T = 3, B = 2, I = 3, H = 4;
  int dirs = 1;             // 1 or 2
  bool reverse = false;     // one direction, reversed
  int layout = 0;
  int lbr = 0;
  std::vector<float> x, W, R, Bias, h0, c0;  // Bias, h0, c0 may be empty
  std::vector<int32_t> lens;                 // empty: all T
};

struct Result {
  std::vector<double> Y, Yh, Yc;
};

inline double sg(double v) { return 1.0 / (1.0 + std::exp(-v)); }

inline int64_t gates(const std::string& op) { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }

inline Result run(const Case& c) {
  const int64_t T = c.T, B = c.B, I = c.I, H = c.H, G = gates(c.op), D = c.dirs;
  Result r;
  r.Y.assign(size_t(T * D * B * H), 0.0);
  r.Yh.assign(size_t(D * B * H), 0.0);
  r.Yc.assign(size_t(D * B * H), 0.0);
  auto xat = [&](int64_t t, int64_t b, int64_t i) {
    return double(c.x[size_t(c.layout ? (b * T + t) * I + i : (t * B + b) * I + i)]);
  };
  auto st = [&](int64_t d, int64_t b, int64_t j) { return size_t(c.layout ? (b * D + d) * H + j : (d * B + b) * H + j); };
  auto yat = [&](int64_t t, int64_t d, int64_t b, int64_t j) {
    return size_t(c.layout ? ((b * T + t) * D + d) * H + j : ((t * D + d) * B + b) * H + j);
  };
  for (int64_t d = 0; d < D; ++d) {
    const bool rev = D == 2 ? d == 1 : c.reverse;
    const float* W = c.W.data() + d * G * H * I;
    const float* R = c.R.data() + d * G * H * H;
    const float* Wb = c.Bias.empty() ? nullptr : c.Bias.data() + d * 2 * G * H;
    auto wb = [&](int64_t n) { return Wb ? double(Wb[n]) : 0.0; };
    auto rb = [&](int64_t n) { return Wb ? double(Wb[G * H + n]) : 0.0; };
    for (int64_t b = 0; b < B; ++b) {
      std::vector<double> h(size_t(H), 0.0), cc(size_t(H), 0.0);
      for (int64_t j = 0; j < H; ++j) {
        if (!c.h0.empty()) h[size_t(j)] = c.h0[st(d, b, j)];
        if (!c.c0.empty()) cc[size_t(j)] = c.c0[st(d, b, j)];
      }
      const int64_t len = c.lens.empty() ? T : c.lens[size_t(b)];
      for (int64_t s = 0; s < len; ++s) {
        const int64_t t = rev ? len - 1 - s : s;
        auto xw = [&](int64_t n) {
          double a = 0;
          for (int64_t i = 0; i < I; ++i) a += xat(t, b, i) * W[n * I + i];
          return a;
        };
        auto hr = [&](const std::vector<double>& v, int64_t n) {
          double a = 0;
          for (int64_t k = 0; k < H; ++k) a += v[size_t(k)] * R[n * H + k];
          return a;
        };
        std::vector<double> hn(static_cast<size_t>(H));
        for (int64_t j = 0; j < H; ++j) {
          if (c.op == "LSTM") {
            auto pre = [&](int64_t g) { const int64_t n = g * H + j; return xw(n) + hr(h, n) + wb(n) + rb(n); };
            const double ig = sg(pre(0)), og = sg(pre(1)), fg = sg(pre(2)), gg = std::tanh(pre(3));
            cc[size_t(j)] = fg * cc[size_t(j)] + ig * gg;
            hn[size_t(j)] = og * std::tanh(cc[size_t(j)]);
          } else if (c.op == "GRU") {
            auto pre = [&](int64_t g) { const int64_t n = g * H + j; return xw(n) + hr(h, n) + wb(n) + rb(n); };
            const double z = sg(pre(0));
            double n;
            if (c.lbr) {
              const double rg = sg(pre(1));
              n = std::tanh(xw(2 * H + j) + wb(2 * H + j) + rg * (hr(h, 2 * H + j) + rb(2 * H + j)));
            } else {
              std::vector<double> rh(static_cast<size_t>(H));
              for (int64_t k = 0; k < H; ++k) {
                const int64_t nk = H + k;
                rh[size_t(k)] = sg(xw(nk) + hr(h, nk) + wb(nk) + rb(nk)) * h[size_t(k)];
              }
              n = std::tanh(xw(2 * H + j) + hr(rh, 2 * H + j) + wb(2 * H + j) + rb(2 * H + j));
            }
            hn[size_t(j)] = (1 - z) * n + z * h[size_t(j)];
          } else {
            hn[size_t(j)] = std::tanh(xw(j) + hr(h, j) + wb(j) + rb(j));
          }
        }
        h = hn;
        for (int64_t j = 0; j < H; ++j) r.Y[yat(t, d, b, j)] = h[size_t(j)];
      }
      // A sequence of length 0 has final states 0 (ONNX Runtime's reading of the operator).
      for (int64_t j = 0; j < H; ++j) {
        r.Yh[st(d, b, j)] = len == 0 ? 0.0 : h[size_t(j)];
        r.Yc[st(d, b, j)] = len == 0 ? 0.0 : cc[size_t(j)];
      }
    }
  }
  return r;
}

}  // namespace rnnref
