// Convolution family kernels (see conv.h). Convolutions run through f32_gemm on tiles of output
// pixels: col[P_tile, K] (im2col, K ordered (c, kh, kw)) times the weights viewed as K x M, into
// a [P_tile, M] tile that is transposed into NCHW. The GEMM's exact contract (fma chain over k in
// order, bias then activation after it) is the convolution's exact rule; the depthwise kernel
// computes the same chain directly. Everything else here is scalar code with a fixed order,
// compiled without fp contraction, so its bits are the same on every ISA.
#include "onemodel/kernels/conv.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "onemodel/kernels/checked.h"

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

// The im2col tile, transposed: col[k * pt + pp] for k = (c, kh, kw) of channels
// [c0, c0 + Cg) and output pixels p0 + pp, pp < pt, of image `xn`. Built one (k, output row)
// segment at a time, so stride-1 rows are plain copies between zero-filled edges; the GEMM reads
// it as A[pp, k] (row stride 1, column stride pt) and packs it like any strided operand.
void im2col_tile(const ConvGeom& g, const float* xn, int64_t c0, int64_t Cg, int64_t p0, int64_t pt, float* col) {
  float* dst = col;
  const int64_t oh_first = p0 / g.OW, ow_first = p0 % g.OW;  // no division per row segment
  for (int64_t c = 0; c < Cg; ++c) {
    const float* plane = xn + (c0 + c) * g.H * g.W;
    for (int64_t kh = 0; kh < g.kH; ++kh)
      for (int64_t kw = 0; kw < g.kW; ++kw, dst += pt) {
        const int64_t shift = kw * g.dW - g.pad_l;  // iw = ow * sW + shift
        int64_t oh = oh_first, ow0 = ow_first;
        for (int64_t p = p0; p < p0 + pt; ++oh, ow0 = 0) {
          const int64_t n = std::min(g.OW - ow0, p0 + pt - p);
          float* out = dst + (p - p0);
          const int64_t ih = oh * g.sH - g.pad_t + kh * g.dH;
          if (ih < 0 || ih >= g.H) {
            for (int64_t j = 0; j < n; ++j) out[j] = 0.0f;
          } else if (g.sW == 1) {
            const float* src = plane + ih * g.W;
            // iw = ow0 + j + shift in [0, W)  <=>  j in [lo, hi)
            const int64_t lo = std::min(n, std::max<int64_t>(0, -(ow0 + shift)));
            const int64_t hi = std::max(lo, std::min(n, g.W - (ow0 + shift)));
            // Short rows: plain loops (vectorised) beat library calls here.
            const float* from = src + ow0 + shift;
            for (int64_t j = 0; j < lo; ++j) out[j] = 0.0f;
            for (int64_t j = lo; j < hi; ++j) out[j] = from[j];
            for (int64_t j = hi; j < n; ++j) out[j] = 0.0f;
          } else {
            const float* src = plane + ih * g.W;
            for (int64_t j = 0; j < n; ++j) {
              const int64_t iw = (ow0 + j) * g.sW + shift;
              out[j] = (iw >= 0 && iw < g.W) ? src[iw] : 0.0f;
            }
          }
          p += n;
        }
      }
  }
}

#if defined(__x86_64__)
// acc[i] = fma(x[i], w, acc[i]): 8 lanes at a time, each lane the same correctly rounded fma
// as the scalar form, so the bits equal std::fma's on every ISA.
__attribute__((target("avx2,fma"))) void axpy_fma_avx2(const float* x, float w, float* acc, int64_t n) {
  const __m256 wv = _mm256_set1_ps(w);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(acc + i, _mm256_fmadd_ps(_mm256_loadu_ps(x + i), wv, _mm256_loadu_ps(acc + i)));
  for (; i < n; ++i) acc[i] = std::fma(x[i], w, acc[i]);
}
#endif

void axpy_fma(const float* x, float w, float* acc, int64_t n) {
#if defined(__x86_64__)
  const Isa isa = active_isa();
  if (isa == Isa::Avx2 || isa == Isa::Avx512) return axpy_fma_avx2(x, w, acc, n);
#endif
  for (int64_t i = 0; i < n; ++i) acc[i] = std::fma(x[i], w, acc[i]);
}

// The rows and columns of the zero-padded input plane the windows touch.
int64_t padded_rows(const ConvGeom& g) { return (g.OH - 1) * g.sH + (g.kH - 1) * g.dH + 1; }
int64_t padded_cols(const ConvGeom& g) { return (g.OW - 1) * g.sW + (g.kW - 1) * g.dW + 1; }

// Depthwise (groups == channels): each plane is copied once into a zero-padded buffer, then each
// output row accumulates the taps in (kh, kw) order, a whole row per tap, with fma: every output
// is exactly the chain the rule fixes (padded taps contribute fma(0, w, acc)), in both modes.
// With a column stride s the buffer is split by column phase (columns q, q + s, ... of phase
// q % s stored together), so every tap still reads a contiguous run.
int64_t phase_cols(const ConvGeom& g) { return (padded_cols(g) + g.sW - 1) / g.sW; }

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
void depthwise_direct(const ConvGeom& g, const float* x, const float* w, const float* bias, UnaryOp act, float* y) {
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
      if (act != UnaryOp::Identity) f32_unary(act, out, out, size_t(P));
    }
}

void depthwise(const ConvGeom& g, const float* x, const float* w, const float* bias, UnaryOp act, float* y, float* scratch) {
  if (padded_floats(g) < 0) return depthwise_direct(g, x, w, bias, act, y);
  const int64_t mult = g.M / g.C, kk = g.kH * g.kW, P = g.OH * g.OW;
  const int64_t Hp = padded_rows(g), Wp = padded_cols(g), Wq = phase_cols(g), S = g.sW;
  float* pad = scratch;  // S phases of Hp x Wq
  for (int64_t n = 0; n < g.N; ++n) {
    for (int64_t c = 0; c < g.C; ++c) {
      const float* plane = x + (n * g.C + c) * g.H * g.W;
      // Columns [lo, hi) of a padded row come from the input row; the rest are zero.
      const int64_t lo = std::min(Wp, g.pad_l), hi = std::max(lo, std::min(Wp, g.pad_l + g.W));
      for (int64_t r = 0; r < Hp; ++r) {
        const int64_t ih = r - g.pad_t;
        const float* src = plane + ih * g.W - g.pad_l;
        const bool row_in = ih >= 0 && ih < g.H;
        if (S == 1) {
          float* dst = pad + r * Wq;
          if (!row_in) {
            for (int64_t q = 0; q < Wp; ++q) dst[q] = 0.0f;
            continue;
          }
          for (int64_t q = 0; q < lo; ++q) dst[q] = 0.0f;
          for (int64_t q = lo; q < hi; ++q) dst[q] = src[q];
          for (int64_t q = hi; q < Wp; ++q) dst[q] = 0.0f;
        } else {
          for (int64_t ph = 0; ph < S; ++ph) {
            float* dst = pad + (ph * Hp + r) * Wq;
            if (!row_in) {
              for (int64_t j = 0; j < Wq; ++j) dst[j] = 0.0f;
              continue;
            }
            for (int64_t j = 0, q = ph; j < Wq; ++j, q += S) dst[j] = (q >= lo && q < hi) ? src[q] : 0.0f;
          }
        }
      }
      for (int64_t j = 0; j < mult; ++j) {
        const int64_t m = c * mult + j;
        const float* wm = w + m * kk;
        float* out = y + (n * g.M + m) * P;
        for (int64_t oh = 0; oh < g.OH; ++oh) {
          float* acc = out + oh * g.OW;
          for (int64_t ow = 0; ow < g.OW; ++ow) acc[ow] = 0.0f;
          for (int64_t kh = 0; kh < g.kH; ++kh) {
            const int64_t r = oh * g.sH + kh * g.dH;
            for (int64_t kw = 0; kw < g.kW; ++kw) {
              const int64_t col = kw * g.dW;  // padded column of output 0's tap; output ow reads col + ow * S
              const float* src = pad + ((col % S) * Hp + r) * Wq + col / S;
              axpy_fma(src, wm[kh * g.kW + kw], acc, g.OW);
            }
          }
          if (bias)
            for (int64_t ow = 0; ow < g.OW; ++ow) acc[ow] = acc[ow] + bias[m];
        }
        if (act != UnaryOp::Identity) f32_unary(act, out, out, size_t(P));
      }
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

// Pixels per GEMM: the whole image for pointwise convolutions (no im2col), else a tile of about
// 128K im2col floats, rounded down to whole 32-column panels when that leaves some.
int64_t conv_pixel_tile(const ConvGeom& g, int64_t P, int64_t K) {
  if (is_pointwise(g)) return std::max<int64_t>(P, 1);
  const int64_t t = pixel_tile(P, K);
  return t >= 64 && t < P ? t / 32 * 32 : t;
}

size_t conv_scratch_floats(const ConvGeom& g) {
  if (is_depthwise(g)) return padded_floats(g) < 0 ? 0 : round16(size_t(padded_floats(g)));
  const int64_t Cg = g.C / g.group, Mg = g.M / g.group, K = Cg * g.kH * g.kW, P = g.OH * g.OW;
  const int64_t pt = conv_pixel_tile(g, P, K);
  const size_t col = is_pointwise(g) ? 0 : round16(size_t(pt * K));
  return col + gemm_workspace_floats(size_t(Mg) + 8, size_t(pt) + 16, size_t(K));
}

// Y[m, p] (NCHW, row stride P) = W[m, k] x col[k, p] per group and pixel tile: the weights are
// the GEMM's A, the im2col tile (or, for pointwise convolutions, the input itself) its B, so the
// product lands in place. The bias and the activation follow each tile's complete chains.
void f32_conv2d(const ConvGeom& g, const float* x, const float* w, const float* bias, UnaryOp act, float* y, float* scratch,
                const float*, ArithmeticMode mode) {
  if (is_depthwise(g)) return depthwise(g, x, w, bias, act, y, scratch);
  const int64_t Cg = g.C / g.group, Mg = g.M / g.group, K = Cg * g.kH * g.kW, P = g.OH * g.OW, HW = g.H * g.W;
  const int64_t pt = conv_pixel_tile(g, P, K);
  const bool pointwise = is_pointwise(g);
  float* col = scratch;
  GemmArgs a;
  a.M = size_t(Mg);
  a.K = size_t(K);
  a.a_rs = K;
  a.a_cs = 1;
  a.b_cs = 1;
  a.ldc = size_t(P);
  a.workspace = scratch + (pointwise ? 0 : round16(size_t(pt * K)));
  for (int64_t n = 0; n < g.N; ++n) {
    const float* xn = x + n * g.C * HW;
    for (int64_t gi = 0; gi < g.group; ++gi) {
      a.a = w + gi * Mg * K;
      float* yg = y + (n * g.M + gi * Mg) * P;
      for (int64_t p0 = 0; p0 < P; p0 += pt) {
        const int64_t cur = std::min(pt, P - p0);
        if (pointwise) {
          a.b = xn + gi * Cg * HW + p0;
          a.b_rs = HW;
        } else {
          im2col_tile(g, xn, gi * Cg, Cg, p0, cur, col);
          a.b = col;
          a.b_rs = cur;
        }
        a.N = size_t(cur);
        a.c = yg + p0;
        f32_gemm(a, mode);
        for (int64_t m = 0; m < Mg; ++m) {
          float* row = yg + m * P + p0;
          if (bias) {
            const float b = bias[gi * Mg + m];
            for (int64_t pp = 0; pp < cur; ++pp) row[pp] = row[pp] + b;
          }
          if (act != UnaryOp::Identity) f32_unary(act, row, row, size_t(cur));
        }
      }
    }
  }
}

size_t conv_transpose_scratch_floats(const ConvGeom& g) {
  const int64_t Cg = g.C / g.group, Mg = g.M / g.group, Nc = Mg * g.kH * g.kW, P = g.H * g.W;
  const int64_t pt = pixel_tile(P, Nc);
  return round16(size_t(pt * Nc)) + gemm_workspace_floats(size_t(pt) + 8, size_t(Nc) + 16, size_t(Cg));
}

void f32_conv_transpose2d(const ConvGeom& g, const float* x, const float* w, const float* bias, float* y, float* scratch,
                          const float* packed_w, ArithmeticMode mode) {
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
  const int64_t P = g.OH * g.OW, HW = g.H * g.W;
  for (int64_t nc = 0; nc < g.N * g.C; ++nc) {
    const float* plane = x + nc * HW;
    for (int64_t oh = 0; oh < g.OH; ++oh)
      for (int64_t ow = 0; ow < g.OW; ++ow) {
        float m = -std::numeric_limits<float>::infinity();
        int64_t at = -1;
        for (int64_t kh = 0; kh < g.kH; ++kh) {
          const int64_t ih = oh * g.sH - g.pad_t + kh * g.dH;
          if (ih < 0 || ih >= g.H) continue;
          for (int64_t kw = 0; kw < g.kW; ++kw) {
            const int64_t iw = ow * g.sW - g.pad_l + kw * g.dW;
            if (iw < 0 || iw >= g.W) continue;
            const float v = plane[ih * g.W + iw];
            if (at < 0 || v > m || (v != v && m == m)) {
              m = v;
              at = ih * g.W + iw;
            }
          }
        }
        y[nc * P + oh * g.OW + ow] = m;
        if (argmax) argmax[nc * P + oh * g.OW + ow] = at;
      }
  }
}

int64_t avg_pool_count(const ConvGeom& g, int64_t pad_b, int64_t pad_r, bool count_include_pad, int64_t oh, int64_t ow) {
  int64_t ch = 0, cw = 0;
  for (int64_t kh = 0; kh < g.kH; ++kh) {
    const int64_t ih = oh * g.sH - g.pad_t + kh * g.dH;
    ch += count_include_pad ? (ih < g.H + pad_b) : (ih >= 0 && ih < g.H);
  }
  for (int64_t kw = 0; kw < g.kW; ++kw) {
    const int64_t iw = ow * g.sW - g.pad_l + kw * g.dW;
    cw += count_include_pad ? (iw < g.W + pad_r) : (iw >= 0 && iw < g.W);
  }
  return ch * cw;
}

void f32_avg_pool2d(const ConvGeom& g, int64_t pad_b, int64_t pad_r, bool count_include_pad, const float* x, float* y) {
  const int64_t P = g.OH * g.OW, HW = g.H * g.W;
  for (int64_t nc = 0; nc < g.N * g.C; ++nc) {
    const float* plane = x + nc * HW;
    for (int64_t oh = 0; oh < g.OH; ++oh)
      for (int64_t ow = 0; ow < g.OW; ++ow) {
        float s = 0.0f;
        for (int64_t kh = 0; kh < g.kH; ++kh) {
          const int64_t ih = oh * g.sH - g.pad_t + kh * g.dH;
          if (ih < 0 || ih >= g.H) continue;
          for (int64_t kw = 0; kw < g.kW; ++kw) {
            const int64_t iw = ow * g.sW - g.pad_l + kw * g.dW;
            if (iw >= 0 && iw < g.W) s = s + plane[ih * g.W + iw];
          }
        }
        const int64_t cnt = avg_pool_count(g, pad_b, pad_r, count_include_pad, oh, ow);
        y[nc * P + oh * g.OW + ow] = cnt > 0 ? s / float(cnt) : 0.0f;
      }
  }
}

void f32_batch_norm_inference(const float* x, const float* scale, const float* bias, const float* mean, const float* var,
                              float eps, int64_t N, int64_t C, int64_t inner, float* y) {
  for (int64_t c = 0; c < C; ++c) {
    const float s = scale[c] / std::sqrt(var[c] + eps);
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

void f32_resize2d(const ResizeGeom& g, const float* x, float* y) {
  const int64_t HW = g.H * g.W, OP = g.OH * g.OW;
  for (int64_t oh = 0; oh < g.OH; ++oh) {
    const double sy = resize_source_coord(g.coord, oh, g.scale_h, g.H, resized_length(g, true));
    for (int64_t ow = 0; ow < g.OW; ++ow) {
      const double sx = resize_source_coord(g.coord, ow, g.scale_w, g.W, resized_length(g, false));
      if (g.mode == ResizeMode::Nearest) {
        const int64_t src = resize_nearest_index(g.nearest, sy, g.H) * g.W + resize_nearest_index(g.nearest, sx, g.W);
        for (int64_t nc = 0; nc < g.NC; ++nc) y[nc * OP + oh * g.OW + ow] = x[nc * HW + src];
      } else {
        int64_t y0, y1, x0, x1;
        float hy0, hy1, wx0, wx1;
        resize_linear_taps(sy, g.H, &y0, &y1, &hy0, &hy1);
        resize_linear_taps(sx, g.W, &x0, &x1, &wx0, &wx1);
        for (int64_t nc = 0; nc < g.NC; ++nc) {
          const float* p = x + nc * HW;
          const float top = wx0 * p[y0 * g.W + x0] + wx1 * p[y0 * g.W + x1];
          const float bot = wx0 * p[y1 * g.W + x0] + wx1 * p[y1 * g.W + x1];
          y[nc * OP + oh * g.OW + ow] = hy0 * top + hy1 * bot;
        }
      }
    }
  }
}

}  // namespace om::kernels
