// The transforms of the Winograd convolution (conv_winograd.cpp), written once and instantiated
// by every ISA file (f32_winograd_input__<isa>, f32_winograd_output__<isa>) with that file's
// flags, so the vectors below become the ISA's registers. Additions and subtractions in a fixed
// order per lane, whatever the vector width: every ISA's entry gives the same bits. Everything
// here is always_inline: the ISA files are compiled with different flags, so no out-of-line copy
// of a helper may be shared between them (the linker would keep any one).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "onemodel/kernels/conv.h"
#include "onemodel/kernels/conv_rows.h"
#include "onemodel/kernels/kernels_internal.h"

namespace om::kernels {

// A run of tiles within one tile row and one B panel: where its patch rows start in the padded
// plane, its first tile column, its length, its panel and first lane.
struct WinogradPiece {
  int64_t n, th, row_off, col, len, panel, lane;
};

// What the input transform of one block reads and writes (conv_winograd.cpp's scratch).
struct WinogradInput {
  const ConvGeom* g;
  const float* x;
  const WinogradPiece* pieces;  // the block's, in order
  size_t count;                 // pieces
  size_t ncr, nr;               // the block's columns in whole panels, the panels' width
  float* plane;                 // one channel's padded plane, its padding zeroed
  float* v;                     // position 0's panels; position xi's start v_stride floats further
  size_t v_stride;
};

namespace winograd {

// Tiles per tile row are rounded up to a multiple of 4 (the extra ones read only zeros and are
// never written out), so every run of tiles the transforms see is whole 4- and 8-wide vectors.
__attribute__((always_inline)) inline int64_t tile_rows(const ConvGeom& g) { return (g.OH + 1) / 2; }
__attribute__((always_inline)) inline int64_t tile_cols(const ConvGeom& g) { return ((g.OW + 1) / 2 + 3) / 4 * 4; }

// The padded plane the input transform reads: padded rows 0 .. 2*TH + 1 and columns
// 0 .. 2*TW + 1, split by column parity (phase 0 holds the even columns, phase 1 the odd ones,
// each Wq = TW + 1 wide, Hp rows), so each tile's four columns are two contiguous pairs.
__attribute__((always_inline)) inline size_t plane_rows(const ConvGeom& g) { return size_t(2 * tile_rows(g) + 2); }
__attribute__((always_inline)) inline size_t plane_cols(const ConvGeom& g) { return size_t(tile_cols(g) + 1); }

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

// An output row's vector with a residual: + the residual's elements (when r is given), then the
// ReLU (when with_relu), as the separate Add and Relu nodes compute them.
template <class V>
__attribute__((always_inline)) inline V with_residual(V v, const float* r, bool with_relu) {
  if (r) v = v + load<V>(r);
  return with_relu ? rows::relu(v) : v;
}

// WinogradOutputKernel: the outputs of n tiles (a multiple of 4) into two output rows, tile k at
// columns 2k and 2k + 1, with the bias and, when with_relu, the ReLU. With rtop (a Y-shaped
// residual's elements at the top row's place, 2n readable; rbottom the same for the bottom row,
// or null) the residual is added before the ReLU.
template <bool Wide>
__attribute__((always_inline)) inline void output_transform(const float* m, size_t ms, int64_t n, float bias, bool with_relu,
                                                            float* top, float* bottom, const float* rtop,
                                                            const float* rbottom) {
  const bool late = rtop != nullptr;  // the ReLU after the residual, on the interleaved rows
  auto put = [&](float* row, const float* r, int64_t at, auto v) {
    if (late) v = with_residual(v, r ? r + at : nullptr, with_relu);
    store(row + at, v);
  };
  int64_t k = 0;
  if (Wide)
    for (; k + 16 <= n; k += 16) {
      V16 y[4];
      output_group<V16>(m + k, ms, bias, with_relu && !late, y);
      put(top, rtop, 2 * k, __builtin_shufflevector(y[0], y[1], 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23));
      put(top, rtop, 2 * k + 16,
          __builtin_shufflevector(y[0], y[1], 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31));
      put(bottom, rbottom, 2 * k, __builtin_shufflevector(y[2], y[3], 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23));
      put(bottom, rbottom, 2 * k + 16,
          __builtin_shufflevector(y[2], y[3], 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31));
    }
  for (; k + 8 <= n; k += 8) {
    V8 y[4];
    output_group<V8>(m + k, ms, bias, with_relu && !late, y);
    put(top, rtop, 2 * k, __builtin_shufflevector(y[0], y[1], 0, 8, 1, 9, 2, 10, 3, 11));
    put(top, rtop, 2 * k + 8, __builtin_shufflevector(y[0], y[1], 4, 12, 5, 13, 6, 14, 7, 15));
    put(bottom, rbottom, 2 * k, __builtin_shufflevector(y[2], y[3], 0, 8, 1, 9, 2, 10, 3, 11));
    put(bottom, rbottom, 2 * k + 8, __builtin_shufflevector(y[2], y[3], 4, 12, 5, 13, 6, 14, 7, 15));
  }
  if (k < n) {
    V4 y[4];
    output_group<V4>(m + k, ms, bias, with_relu && !late, y);
    put(top, rtop, 2 * k, __builtin_shufflevector(y[0], y[1], 0, 4, 1, 5));
    put(top, rtop, 2 * k + 4, __builtin_shufflevector(y[0], y[1], 2, 6, 3, 7));
    put(bottom, rbottom, 2 * k, __builtin_shufflevector(y[2], y[3], 0, 4, 1, 5));
    put(bottom, rbottom, 2 * k + 4, __builtin_shufflevector(y[2], y[3], 2, 6, 3, 7));
  }
}

// WinogradInputKernel: V for a block's pieces as packed B panels of NR = in.nr columns, in the
// layout of a gemm_pack_b buffer's data for K = C and the block's ncr (whole panels) columns: K
// blocks of kGemmKC rows, each a run of NR-column panels. Per image and channel, the padded rows the pieces read are
// split by parity once, then every piece is transformed.
template <bool Wide>
__attribute__((always_inline)) inline void block_in(const WinogradInput& in) {
  const ConvGeom& g = *in.g;
  const WinogradPiece* pieces = in.pieces;
  const size_t count = in.count, ncr = in.ncr, NR = in.nr;
  const size_t Wq = plane_cols(g), Hp = plane_rows(g);
  for (size_t a = 0; a < count;) {
    size_t z = a;
    while (z < count && pieces[z].n == pieces[a].n) ++z;  // pieces [a, z): one image
    const float* image = in.x + pieces[a].n * g.C * g.H * g.W;
    for (int64_t c = 0; c < g.C; ++c) {
      fill_rows(g, image + c * g.H * g.W, 2 * pieces[a].th, 2 * pieces[z - 1].th + 4, in.plane);
      const size_t k0 = size_t(c) / kGemmKC * kGemmKC, kc = std::min(kGemmKC, size_t(g.C) - k0);
      float* panels = in.v + k0 * ncr + (size_t(c) - k0) * NR;  // row c of panel 0
      for (size_t i = a; i < z; ++i) {
        const WinogradPiece& p = pieces[i];
        const float* e = in.plane + p.row_off;
        input_transform<Wide>(e, e + Hp * Wq, Wq, p.col, p.len, panels + size_t(p.panel) * kc * NR + size_t(p.lane), in.v_stride);
      }
    }
    a = z;
  }
}

}  // namespace winograd
}  // namespace om::kernels
