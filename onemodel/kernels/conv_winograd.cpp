// Winograd F(2x2, 3x3) convolution for Fast sessions (docs/performance.md, "Convolution"). A 3x3,
// stride-1, group-1 convolution computes every 2x2 block of outputs (a "tile") from the 4x4 input
// patch under it: the patch is transformed (V = Bt d B), the kernel too (U = G g Gt, once, when
// the weights are packed), the 16 positions are multiplied and summed over the input channels --
// 16 GEMMs U_xi [M x C] times V_xi [C x tiles], 16 products per channel pair and tile where the
// direct form needs 36 -- and the 4x4 sums are transformed back (Y = At m A). The transforms add
// and subtract only; the result rounds differently from the direct chain, so Exact sessions never
// take this path (conv.h).
//
// Tiles are numbered over (image, tile row, tile column) and processed in blocks small enough for
// the block's V and products to stay in the L2 cache. The input transform writes V straight into
// the GEMM's packed B panels (the active tile's NR columns), so B is never packed again; the
// weights were packed as the GEMM's left operand at plan time.
#include <algorithm>
#include <cstring>
#include <memory>
#include <new>

#include "onemodel/kernels/conv.h"
#include "onemodel/kernels/kernels_internal.h"
#include "onemodel/kernels/conv_rows.h"

namespace om::kernels {
namespace {

constexpr int kPositions = 16;                     // the 4x4 transformed patch
constexpr uint32_t kWinogradMagic = 0x4e495750u;   // header of a Winograd weight buffer
constexpr uint32_t kGemmFormMagic = 0x4d474350u;   // header of a GEMM-form weight buffer
constexpr size_t kHeaderFloats = 16;               // keeps the packed panels 64-byte aligned
struct PackHeader {
  uint32_t magic;
  uint32_t reserved;
  uint64_t M, K;  // K: C for the Winograd form, C*kH*kW for the GEMM form
};
static_assert(sizeof(PackHeader) <= kHeaderFloats * sizeof(float), "header fits");

size_t round16(size_t n) { return (n + 15) / 16 * 16; }
size_t round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }

PackHeader header_of(const float* packed) {
  PackHeader h;
  std::memcpy(&h, packed, sizeof h);
  return h;
}

// Floats of one position's packed left operand (U_xi, M x C) inside a Winograd buffer.
size_t position_floats(int64_t M, int64_t C) { return round16(gemm_packed_a_floats(size_t(M), size_t(C))); }

// u = G g Gt for one 3x3 kernel g, G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1].
void transform_kernel(const float* g, float* u) {
  float t[4][3];
  for (int j = 0; j < 3; ++j) {
    const float a = g[j], b = g[3 + j], c = g[6 + j];
    t[0][j] = a;
    t[1][j] = 0.5f * (a + b + c);
    t[2][j] = 0.5f * (a - b + c);
    t[3][j] = c;
  }
  for (int i = 0; i < 4; ++i) {
    const float a = t[i][0], b = t[i][1], c = t[i][2];
    u[i * 4 + 0] = a;
    u[i * 4 + 1] = 0.5f * (a + b + c);
    u[i * 4 + 2] = 0.5f * (a - b + c);
    u[i * 4 + 3] = c;
  }
}

// Tiles per tile row are rounded up to a multiple of 4 (the extra ones read only zeros and are
// never written out), so every run of tiles the transforms see is whole 4- and 8-wide vectors.
int64_t tile_rows(const ConvGeom& g) { return (g.OH + 1) / 2; }
int64_t tile_cols(const ConvGeom& g) { return ((g.OW + 1) / 2 + 3) / 4 * 4; }

// Tiles per block: the block's V (16 x C) and products (16 x M) stay within about 512 KiB; whole
// 32-column GEMM panels (at least one), at most one GEMM column block.
int64_t block_tiles(const ConvGeom& g) {
  const int64_t total = g.N * tile_rows(g) * tile_cols(g);
  const int64_t fit = 131072 / (kPositions * (g.C + g.M)) / 32 * 32;  // whole panels of every ISA
  return std::min(total, std::max<int64_t>(32, std::min<int64_t>(fit, int64_t(kGemmNC))));
}

// The padded plane the input transform reads: padded rows 0 .. 2*TH + 1 and columns
// 0 .. 2*TW + 1, split by column parity (phase 0 holds the even columns, phase 1 the odd ones,
// each Wq = TW + 1 wide, Hp rows), so each tile's four columns are two contiguous pairs.
size_t plane_rows(const ConvGeom& g) { return size_t(2 * tile_rows(g) + 2); }
size_t plane_cols(const ConvGeom& g) { return size_t(tile_cols(g) + 1); }

constexpr size_t kPieceFloats = 7 * sizeof(int64_t) / sizeof(float);  // one Piece (below)

// The scratch: V panels (16 positions, each C rows of the block's tiles rounded up to whole
// panels), the products (16 x M x block), the padded plane of one channel, two output rows, the
// GEMM workspace, the block's pieces.
struct Piece;
struct Scratch {
  size_t v_stride, m_stride, plane_floats, out_floats, total;
  float *v, *m, *plane, *out, *ws;
  Piece* pieces;
};
size_t max_pieces(const ConvGeom& g);
Scratch layout(const ConvGeom& g, float* base) {
  const size_t tb = size_t(block_tiles(g));
  Scratch s{};
  // One cache line more than whole 64-byte lines: the 16 positions, written and read side by
  // side, would otherwise often sit a multiple of 4 KiB apart and share cache sets.
  s.v_stride = round16(size_t(g.C) * round_up(tb, kGemmNRMultiple)) + 16;
  s.m_stride = round16(size_t(g.M) * tb) + 16;
  s.plane_floats = round16(2 * plane_rows(g) * plane_cols(g) + 8);  // + 8: whole-vector reads at the end
  s.out_floats = round16(2 * size_t(tile_cols(g)));
  const size_t v = 0, m = v + kPositions * s.v_stride, plane = m + kPositions * s.m_stride, out = plane + s.plane_floats,
               ws = out + 2 * s.out_floats;
  const size_t pieces = ws + gemm_workspace_floats(size_t(g.M), tb, size_t(g.C));
  s.total = pieces + round16(max_pieces(g) * kPieceFloats);
  if (base) {
    s.pieces = reinterpret_cast<Piece*>(base + pieces);
    s.v = base + v;
    s.m = base + m;
    s.plane = base + plane;
    s.out = base + out;
    s.ws = base + ws;
  }
  return s;
}

using rows::load;
using rows::store;
using rows::V16;
using rows::V4;
using rows::V8;

// Padded rows [r0, r1) of one channel's plane into the parity-split buffer (conv_winograd
// zeroes it once per call: the padding, which no channel writes, stays 0). 2 * Wq >= pad_l + W
// always holds (OW = W + pads - 2), so every input column has its place.
__attribute__((always_inline)) inline void fill_rows(const ConvGeom& g, const float* plane, int64_t r0, int64_t r1,
                                                     float* pad) {
  const int64_t Hp = int64_t(plane_rows(g)), Wq = int64_t(plane_cols(g));
  for (int64_t r = std::max<int64_t>(r0, g.pad_t); r < std::min<int64_t>(r1, g.pad_t + g.H); ++r)
    rows::split_by_parity(plane + (r - g.pad_t) * g.W, g.W, g.pad_l, pad + r * Wq, pad + (Hp + r) * Wq);
}

// V = Bt d B for one vector of tiles from tile column j, Bt = [1 0 -1 0; 0 1 1 0; 0 -1 1 0;
// 0 1 0 -1]: patch row i's even columns at e + i*rs, its odd ones at o + i*rs; position xi of
// tile k goes to dst[xi * xs + k].
template <class V>
__attribute__((always_inline)) inline void input_group(const float* e, const float* o, size_t rs, int64_t j, float* dst,
                                                       size_t xs) {
  V r[4][4];
  for (int i = 0; i < 4; ++i) {
    const float* ei = e + size_t(i) * rs + j;
    const float* oi = o + size_t(i) * rs + j;
    const V d0 = load<V>(ei), d1 = load<V>(oi), d2 = load<V>(ei + 1), d3 = load<V>(oi + 1);
    r[i][0] = d0 - d2;
    r[i][1] = d1 + d2;
    r[i][2] = d2 - d1;
    r[i][3] = d1 - d3;
  }
  for (int b = 0; b < 4; ++b) {
    store(dst + size_t(0 + b) * xs, r[0][b] - r[2][b]);
    store(dst + size_t(4 + b) * xs, r[1][b] + r[2][b]);
    store(dst + size_t(8 + b) * xs, r[2][b] - r[1][b]);
    store(dst + size_t(12 + b) * xs, r[1][b] - r[3][b]);
  }
}

// n: a multiple of 4 (tile_cols). Wide: sixteen tiles at a time first (for AVX-512, whose 32
// registers hold the 16 sums of 16 lanes; narrower ISAs would spill them).
template <bool Wide>
__attribute__((always_inline)) inline void input_transform(const float* e, const float* o, size_t rs, int64_t j0, int64_t n,
                                                           float* dst, size_t xs) {
  int64_t k = 0;
  if (Wide)
    for (; k + 16 <= n; k += 16) input_group<V16>(e, o, rs, j0 + k, dst + k, xs);
  for (; k + 8 <= n; k += 8) input_group<V8>(e, o, rs, j0 + k, dst + k, xs);
  if (k < n) input_group<V4>(e, o, rs, j0 + k, dst + k, xs);
}

// Y = At m A for one vector of tiles, At = [1 1 1 0; 0 1 -1 -1]: m[xi * ms] is position xi;
// y[0..3] are the outputs (0, 0), (0, 1), (1, 0), (1, 1) plus the bias.
template <class V>
__attribute__((always_inline)) inline void output_group(const float* m, size_t ms, float bias, bool with_relu, V* y) {
  V s0[4], s1[4];
  for (int a = 0; a < 4; ++a) {
    const V m0 = load<V>(m + size_t(4 * a) * ms), m1 = load<V>(m + size_t(4 * a + 1) * ms);
    const V m2 = load<V>(m + size_t(4 * a + 2) * ms), m3 = load<V>(m + size_t(4 * a + 3) * ms);
    s0[a] = m0 + m1 + m2;
    s1[a] = m1 - m2 - m3;
  }
  y[0] = s0[0] + s0[1] + s0[2] + bias;
  y[1] = s1[0] + s1[1] + s1[2] + bias;
  y[2] = s0[1] - s0[2] - s0[3] + bias;
  y[3] = s1[1] - s1[2] - s1[3] + bias;
  if (with_relu)
    for (int i = 0; i < 4; ++i) y[i] = rows::relu(y[i]);
}

// The outputs of n tiles (a multiple of 4) into two output rows, tile k at columns 2k and 2k + 1,
// with the bias and, when with_relu, the ReLU.
template <bool Wide>
__attribute__((always_inline)) inline void output_transform(const float* m, size_t ms, int64_t n, float bias, bool with_relu,
                                                            float* top, float* bottom) {
  int64_t k = 0;
  if (Wide)
    for (; k + 16 <= n; k += 16) {
      V16 y[4];
      output_group<V16>(m + k, ms, bias, with_relu, y);
      store(top + 2 * k, __builtin_shufflevector(y[0], y[1], 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23));
      store(top + 2 * k + 16, __builtin_shufflevector(y[0], y[1], 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31));
      store(bottom + 2 * k, __builtin_shufflevector(y[2], y[3], 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23));
      store(bottom + 2 * k + 16,
            __builtin_shufflevector(y[2], y[3], 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31));
    }
  for (; k + 8 <= n; k += 8) {
    V8 y[4];
    output_group<V8>(m + k, ms, bias, with_relu, y);
    store(top + 2 * k, __builtin_shufflevector(y[0], y[1], 0, 8, 1, 9, 2, 10, 3, 11));
    store(top + 2 * k + 8, __builtin_shufflevector(y[0], y[1], 4, 12, 5, 13, 6, 14, 7, 15));
    store(bottom + 2 * k, __builtin_shufflevector(y[2], y[3], 0, 8, 1, 9, 2, 10, 3, 11));
    store(bottom + 2 * k + 8, __builtin_shufflevector(y[2], y[3], 4, 12, 5, 13, 6, 14, 7, 15));
  }
  if (k < n) {
    V4 y[4];
    output_group<V4>(m + k, ms, bias, with_relu, y);
    store(top + 2 * k, __builtin_shufflevector(y[0], y[1], 0, 4, 1, 5));
    store(top + 2 * k + 4, __builtin_shufflevector(y[0], y[1], 2, 6, 3, 7));
    store(bottom + 2 * k, __builtin_shufflevector(y[2], y[3], 0, 4, 1, 5));
    store(bottom + 2 * k + 4, __builtin_shufflevector(y[2], y[3], 2, 6, 3, 7));
  }
}

// Calls f(n, th, tw0, len, j) for every run of tiles of [t0, t1) within one tile row, j being the
// block-local index of tile (n, th, tw0).
template <class F>
void for_tile_runs(const ConvGeom& g, int64_t t0, int64_t t1, F&& f) {
  const int64_t TW = tile_cols(g), per_image = tile_rows(g) * TW;
  for (int64_t t = t0; t < t1;) {
    const int64_t n = t / per_image, th = (t % per_image) / TW, tw0 = t % TW;
    const int64_t len = std::min(TW - tw0, t1 - t);
    f(n, th, tw0, len, t - t0);
    t += len;
  }
}

// A run of tiles within one tile row and one B panel: where its patch rows start in the padded
// plane, its first tile column, its length, its panel and first lane.
struct Piece {
  int64_t n, th, row_off, col, len, panel, lane;
};
static_assert(sizeof(Piece) == kPieceFloats * sizeof(float), "kPieceFloats is one Piece");

// The pieces of tiles [t0, t1) in order (at most 2 + (t1 - t0) / 2: runs and panels are
// multiples of 4 tiles wide). The divisions happen here, once per block.
size_t block_pieces(const ConvGeom& g, int64_t t0, int64_t t1, size_t NR, Piece* out) {
  const int64_t Wq = int64_t(plane_cols(g));
  size_t count = 0;
  for_tile_runs(g, t0, t1, [&](int64_t n, int64_t th, int64_t tw0, int64_t len, int64_t j) {
    for (int64_t k = 0; k < len;) {
      const size_t col = size_t(j + k), lane = col % NR;
      const int64_t run = std::min<int64_t>(len - k, int64_t(NR - lane));
      out[count++] = Piece{n, th, 2 * th * Wq, tw0 + k, run, int64_t(col / NR), int64_t(lane)};
      k += run;
    }
  });
  return count;
}
size_t max_pieces(const ConvGeom& g) { return 2 + size_t(block_tiles(g)) / 2; }

// V for a block's pieces as packed B panels of the active NR, in the layout of a gemm_pack_b
// buffer's data for K = C and the block's ncr (whole panels) columns: K blocks of kGemmKC rows,
// each a run of NR-column panels. Per image and channel, the padded rows the pieces read are
// split by parity once, then every piece is transformed.
template <bool Wide>
__attribute__((always_inline)) inline void block_in(const ConvGeom& g, const float* x, const Piece* pieces, size_t count,
                                                    size_t ncr, const Scratch& s, size_t NR) {
  const size_t Wq = plane_cols(g), Hp = plane_rows(g);
  for (size_t a = 0; a < count;) {
    size_t z = a;
    while (z < count && pieces[z].n == pieces[a].n) ++z;  // pieces [a, z): one image
    const float* image = x + pieces[a].n * g.C * g.H * g.W;
    for (int64_t c = 0; c < g.C; ++c) {
      fill_rows(g, image + c * g.H * g.W, 2 * pieces[a].th, 2 * pieces[z - 1].th + 4, s.plane);
      const size_t k0 = size_t(c) / kGemmKC * kGemmKC, kc = std::min(kGemmKC, size_t(g.C) - k0);
      float* panels = s.v + k0 * ncr + (size_t(c) - k0) * NR;  // row c of panel 0
      for (size_t i = a; i < z; ++i) {
        const Piece& p = pieces[i];
        const float* e = s.plane + p.row_off;
        input_transform<Wide>(e, e + Hp * Wq, Wq, p.col, p.len, panels + size_t(p.panel) * kc * NR + size_t(p.lane), s.v_stride);
      }
    }
    a = z;
  }
}

// The transforms, compiled for the baseline ISA and on x86 also for AVX2 and AVX-512, taken when
// that ISA is active (Fast mode: only speed depends on the choice).
using BlockInFn = void (*)(const ConvGeom&, const float*, const Piece*, size_t, size_t, const Scratch&, size_t);
struct Transforms {
  BlockInFn in;
  void (*out)(const float*, size_t, int64_t, float, bool, float*, float*);
};
#define OM_WINOGRAD_TRANSFORMS(suffix, attr, wide)                                                              \
  attr void in_##suffix(const ConvGeom& g, const float* x, const Piece* pieces, size_t count, size_t ncr,      \
                        const Scratch& s, size_t NR) {                                                          \
    block_in<wide>(g, x, pieces, count, ncr, s, NR);                                                            \
  }                                                                                                             \
  attr void out_##suffix(const float* m, size_t ms, int64_t n, float b, bool relu, float* t, float* u) {       \
    output_transform<wide>(m, ms, n, b, relu, t, u);                                                            \
  }
OM_WINOGRAD_TRANSFORMS(generic, , false)
#if defined(__x86_64__)
OM_WINOGRAD_TRANSFORMS(avx512, __attribute__((target("avx512f"))), true)
OM_WINOGRAD_TRANSFORMS(avx2, __attribute__((target("avx2"))), false)
#endif
#undef OM_WINOGRAD_TRANSFORMS
Transforms transforms() {
#if defined(__x86_64__)
  if (active_isa() == Isa::Avx512) return {in_avx512, out_avx512};
  if (active_isa() == Isa::Avx2) return {in_avx2, out_avx2};
#endif
  return {in_generic, out_generic};
}

// V for tiles [t0, t1) (block_in), with the lanes past the last tile zeroed.
void transform_block(const ConvGeom& g, const float* x, int64_t t0, int64_t t1, const Scratch& s, size_t NR,
                     const Transforms& tf) {
  const size_t nc = size_t(t1 - t0), ncr = round_up(nc, NR);
  const size_t count = block_pieces(g, t0, t1, NR, s.pieces);
  tf.in(g, x, s.pieces, count, ncr, s, NR);
  // Lanes past the last tile of the last panel: zero, so the GEMM reads defined values.
  if (ncr > nc)
    for (int xi = 0; xi < kPositions; ++xi)
      for (size_t k0 = 0; k0 < size_t(g.C); k0 += kGemmKC) {
        const size_t kc = std::min(kGemmKC, size_t(g.C) - k0);
        float* last = s.v + size_t(xi) * s.v_stride + k0 * ncr + (nc / NR) * kc * NR;
        for (size_t r = 0; r < kc; ++r) std::memset(last + r * NR + nc % NR, 0, (NR - nc % NR) * sizeof(float));
      }
}

// Y for tiles [t0, t1): runs whose outputs all lie inside the image are written in place, the
// others (the last run of a row, and the bottom row of an odd output height) through the two
// output rows of the scratch. The bias and a ReLU go with the transform, other activations after.
void untransform_block(const ConvGeom& g, int64_t t0, int64_t t1, const Scratch& s, const float* bias, UnaryOp act,
                       float* y, const Transforms& tf) {
  const size_t tb = size_t(t1 - t0);
  const int64_t P = g.OH * g.OW;
  const bool fused = act == UnaryOp::Relu;
  float* top_tmp = s.out;
  float* bottom_tmp = s.out + s.out_floats;
  for_tile_runs(g, t0, t1, [&](int64_t n, int64_t th, int64_t tw0, int64_t len, int64_t j) {
    const int64_t ow0 = 2 * tw0, cols = std::min(g.OW - ow0, 2 * len), oh = 2 * th;
    if (cols <= 0) return;  // only the padding tiles of the row
    const bool whole = cols == 2 * len, two_rows = oh + 1 < g.OH;
    for (int64_t m = 0; m < g.M; ++m) {
      float* dst = y + (n * g.M + m) * P + oh * g.OW + ow0;
      float* top = whole ? dst : top_tmp;
      float* bottom = whole && two_rows ? dst + g.OW : bottom_tmp;
      tf.out(s.m + size_t(m) * tb + size_t(j), s.m_stride, len, bias ? bias[m] : 0.0f, fused, top, bottom);
      if (!whole) {
        std::memcpy(dst, top, size_t(cols) * sizeof(float));
        if (two_rows) std::memcpy(dst + g.OW, bottom, size_t(cols) * sizeof(float));
      }
      if (!fused && act != UnaryOp::Identity) {
        f32_unary(act, dst, dst, size_t(cols));
        if (two_rows) f32_unary(act, dst + g.OW, dst + g.OW, size_t(cols));
      }
    }
  });
}

}  // namespace

bool conv_winograd_fits(const ConvGeom& g) {
  // Channel counts and extents far beyond any real network are left to the direct form: with
  // these bounds every size in layout() stays far below 2^62 bytes without checked arithmetic.
  constexpr int64_t kMaxChannels = int64_t(1) << 20, kMaxExtent = int64_t(1) << 20;
  if (g.C > kMaxChannels || g.M > kMaxChannels || g.OH > kMaxExtent || g.OW > kMaxExtent || g.N > kMaxExtent) return false;
  return g.group == 1 && g.kH == 3 && g.kW == 3 && g.sH == 1 && g.sW == 1 && g.dH == 1 && g.dW == 1 &&
         g.C >= kConvWinogradMinChannels && g.M >= kConvWinogradMinChannels;
}

size_t conv_winograd_scratch_floats(const ConvGeom& g) {
  if (!conv_winograd_fits(g)) return 0;
  return layout(g, nullptr).total;
}

size_t conv_packed_weights_floats(const ConvWeightPack& p) {
  if (p.winograd) return kHeaderFloats + kPositions * position_floats(p.M, p.K);
  return kHeaderFloats + round16(gemm_packed_a_floats(size_t(p.M), size_t(p.K)));
}

void conv_pack_weights(const ConvWeightPack& p, const float* w, float* packed) {
  std::memset(packed, 0, kHeaderFloats * sizeof(float));
  GemmArgs a;
  a.M = size_t(p.M);
  a.K = size_t(p.K);
  a.a_rs = p.K;
  a.a_cs = 1;
  if (!p.winograd) {
    a.a = w;
    gemm_pack_a(a, packed + kHeaderFloats);
  } else {
    // U_xi[m, c] for every position, then each packed as a left operand.
    const size_t plane = size_t(p.M) * size_t(p.K);
    std::unique_ptr<float[]> u(new (std::nothrow) float[kPositions * plane]);
    if (!u) return;  // no header: f32_conv2d then runs the direct form
    float t[kPositions];
    for (size_t mc = 0; mc < plane; ++mc) {
      transform_kernel(w + mc * 9, t);
      for (int xi = 0; xi < kPositions; ++xi) u[size_t(xi) * plane + mc] = t[xi];
    }
    for (int xi = 0; xi < kPositions; ++xi) {
      a.a = u.get() + size_t(xi) * plane;
      gemm_pack_a(a, packed + kHeaderFloats + size_t(xi) * position_floats(p.M, p.K));
    }
  }
  const PackHeader h{p.winograd ? kWinogradMagic : kGemmFormMagic, 0, uint64_t(p.M), uint64_t(p.K)};
  std::memcpy(packed, &h, sizeof h);
}

const float* conv_packed_gemm_weights(const ConvGeom& g, const float* packed) {
  if (!packed || g.group != 1) return nullptr;
  const PackHeader h = header_of(packed);
  const int64_t K = g.C * g.kH * g.kW;
  if (h.magic != kGemmFormMagic || h.M != uint64_t(g.M) || h.K != uint64_t(K)) return nullptr;
  return packed + kHeaderFloats;  // the GEMM checks that it fits the active tile
}

bool conv_winograd(const ConvGeom& g, const float* x, const float* packed, const float* bias, UnaryOp act, float* y,
                   float* scratch) {
  if (!packed || !conv_winograd_fits(g)) return false;
  const PackHeader h = header_of(packed);
  if (h.magic != kWinogradMagic || h.M != uint64_t(g.M) || h.K != uint64_t(g.C)) return false;
  const float* u = packed + kHeaderFloats;
  const size_t ustride = position_floats(g.M, g.C);
  for (int xi = 0; xi < kPositions; ++xi)
    if (!gemm_packed_a_fits(u + size_t(xi) * ustride, size_t(g.M), size_t(g.C))) return false;  // another ISA's tile
  const Scratch s = layout(g, scratch);
  std::memset(s.plane, 0, s.plane_floats * sizeof(float));  // the padding stays 0 (fill_rows)
  const Transforms tf = transforms();
  const size_t NR = gemm_active_nr();
  const int64_t total = g.N * tile_rows(g) * tile_cols(g), tb = block_tiles(g);
  GemmArgs a;
  a.M = size_t(g.M);
  a.K = size_t(g.C);
  a.workspace = s.ws;
  for (int64_t t0 = 0; t0 < total; t0 += tb) {
    const int64_t t1 = std::min(total, t0 + tb);
    transform_block(g, x, t0, t1, s, NR, tf);
    a.N = size_t(t1 - t0);
    a.ldc = size_t(t1 - t0);
    for (int xi = 0; xi < kPositions; ++xi) {
      a.packed_a = u + size_t(xi) * ustride;
      a.c = s.m + size_t(xi) * s.m_stride;
      gemm_from_panels(a, s.v + size_t(xi) * s.v_stride);
    }
    untransform_block(g, t0, t1, s, bias, act, y, tf);
  }
  return true;
}

}  // namespace om::kernels
