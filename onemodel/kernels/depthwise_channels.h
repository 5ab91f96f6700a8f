// The depthwise convolution with channels as lanes (DepthwiseChannelsKernel in
// kernels_internal.h), written once over the small vector interface of small_gemm.h plus
// zip_lo/zip_hi (lanes [0, L/2) of a and b interleaved, then lanes [L/2, L)) or an ISA's own
// transpose (Ops::transpose: AVX-512's), and instantiated by each vector ISA's file.
//
// Why: a plane of 8 x 8 outputs fills half an AVX-512 vector per row, and a column stride of 2
// makes every plane a phase-split copy first; a MobileNet-style stack's stride-2 layer from
// 16 x 16 to 8 x 8 ran at under 5 G multiply-adds/s that way (15.6 us for 74K). Here L channels'
// planes are transposed into one zero-bordered buffer of pixels of L channels (the
// channel-blocked layout ONNX Runtime calls NCHWc, kept inside the kernel), every tap is one full
// vector for any plane width or stride, and the outputs are transposed back to the NCHW planes.
//
// The bits are the plane kernel's: an output's chain is acc = +0, acc = fma(x_t, w_t, acc) over
// its taps in (kh, kw) order (padded taps read +0, as the padded buffer does), then acc + bias,
// then Relu's rule when relu is set. A lane is one channel, so no chain depends on the width.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "onemodel/kernels/conv.h"
#include "onemodel/kernels/kernels_internal.h"

namespace om::kernels::dwc {

// v[i] becomes lane i of every vector: the ISA's own transpose where it has one, else an L x L
// transpose in log2(L) rounds of zips (each round moves one bit of the lane index into the
// vector index), unrolled so that v stays in registers.
template <class Ops, class = void>
struct HasTranspose : std::false_type {};
template <class Ops>
struct HasTranspose<Ops, std::void_t<decltype(Ops::transpose(std::declval<typename Ops::V (&)[Ops::L]>()))>>
    : std::true_type {};

template <class Ops, size_t Round = 1>
inline void transpose(typename Ops::V (&v)[Ops::L]) {
  using V = typename Ops::V;
  constexpr size_t L = Ops::L;
  if constexpr (HasTranspose<Ops>::value) {
    Ops::transpose(v);
  } else if constexpr (Round < L) {
    V t[L];
    _Pragma("GCC unroll 16") for (size_t i = 0; i < L / 2; ++i) {
      t[2 * i] = Ops::zip_lo(v[i], v[i + L / 2]);
      t[2 * i + 1] = Ops::zip_hi(v[i], v[i + L / 2]);
    }
    transpose<Ops, Round * 2>(t);
    _Pragma("GCC unroll 16") for (size_t i = 0; i < L; ++i) v[i] = t[i];
  }
}

// The input planes' rows into the buffer: pixel (r, j) of the block's channels at
// buf[((r + pad_t) Wp + pad_l + j) L], for the rows and columns the windows reach; +0 in the
// pixels of the pads around them.
template <class Ops>
inline void gather(const DepthwiseChannels& d, size_t nc) {
  using V = typename Ops::V;
  constexpr size_t L = Ops::L;
  const ConvGeom& g = *d.g;
  const int64_t rows = std::clamp<int64_t>(d.Hp - g.pad_t, 0, g.H), cols = std::clamp<int64_t>(d.Wp - g.pad_l, 0, g.W);
  const auto zero = [&](int64_t r, int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) Ops::store(d.buf + (r * d.Wp + c) * int64_t(L), Ops::zero());
  };
  // A left pad may be wider than the columns any window reaches (then cols is 0).
  const int64_t left = std::min(g.pad_l, d.Wp);
  for (int64_t r = 0; r < d.Hp; ++r) {
    if (r < g.pad_t || r >= g.pad_t + rows) zero(r, 0, d.Wp);
    else zero(r, 0, left), zero(r, left + cols, d.Wp);
  }
  const int64_t HW = g.H * g.W;
  for (int64_t r = 0; r < rows; ++r) {
    float* dst = d.buf + ((r + g.pad_t) * d.Wp + g.pad_l) * int64_t(L);
    for (int64_t j = 0; j < cols; j += int64_t(L)) {
      const size_t n = size_t(std::min<int64_t>(int64_t(L), cols - j));
      const float* src = d.x + r * g.W + j;
      V v[L];
      _Pragma("GCC unroll 16") for (size_t c = 0; c < L; ++c) {
        if (c >= nc) v[c] = Ops::zero();
        else v[c] = n == L ? Ops::load(src + int64_t(c) * HW) : Ops::load_n(src + int64_t(c) * HW, n);
      }
      transpose<Ops>(v);
      float* to = dst + j * int64_t(L);
      if (n == L) {
        _Pragma("GCC unroll 16") for (size_t k = 0; k < L; ++k) Ops::store(to + k * L, v[k]);
      } else {
        for (size_t k = 0; k < n; ++k) Ops::store(to + k * L, v[k]);
      }
    }
  }
}

// The first min(L, channels) channels of the block; returns how many.
template <class Ops>
size_t channels(const DepthwiseChannels& d) {
  using V = typename Ops::V;
  constexpr size_t L = Ops::L;
  const ConvGeom& g = *d.g;
  const size_t nc = std::min(L, d.channels);
  const int64_t kk = g.kH * g.kW, P = g.OH * g.OW;
  for (int64_t t = 0; t < kk; ++t)
    for (size_t c = 0; c < L; ++c) d.wt[size_t(t) * L + c] = c < nc ? d.w[int64_t(c) * kk + t] : 0.0f;
  V bv = Ops::zero();
  if (d.bias) {
    float b[L];
    for (size_t c = 0; c < L; ++c) b[c] = c < nc ? d.bias[c] : 0.0f;
    bv = Ops::load(b);
  }
  gather<Ops>(d, nc);
  const ptrdiff_t row_step = ptrdiff_t(g.dH * d.Wp * int64_t(L)), col_step = ptrdiff_t(g.dW * int64_t(L));
  for (int64_t p0 = 0; p0 < P; p0 += int64_t(L)) {
    const size_t np = size_t(std::min<int64_t>(int64_t(L), P - p0));
    ptrdiff_t at[L];  // pixel k's tap (0, 0); past np, the last pixel again (its lanes are not stored)
    int64_t oh = p0 / g.OW, ow = p0 % g.OW;
    for (size_t k = 0; k < L; ++k) {
      at[k] = ptrdiff_t((oh * g.sH * d.Wp + ow * g.sW) * int64_t(L));
      if (k + 1 < np && ++ow == g.OW) ow = 0, ++oh;
    }
    V acc[L];
    _Pragma("GCC unroll 16") for (size_t k = 0; k < L; ++k) acc[k] = Ops::zero();
    const float* wt = d.wt;
    for (int64_t kh = 0; kh < g.kH; ++kh) {
      const float* q = d.buf + kh * row_step;
      for (int64_t kw = 0; kw < g.kW; ++kw, q += col_step, wt += L) {
        const V wv = Ops::load(wt);
        _Pragma("GCC unroll 16") for (size_t k = 0; k < L; ++k) acc[k] = Ops::fma(Ops::load(q + at[k]), wv, acc[k]);
      }
    }
    if (d.bias) _Pragma("GCC unroll 16") for (size_t k = 0; k < L; ++k) acc[k] = Ops::add(acc[k], bv);
    if (d.relu) _Pragma("GCC unroll 16") for (size_t k = 0; k < L; ++k) acc[k] = Ops::relu(acc[k]);
    transpose<Ops>(acc);
    for (size_t c = 0; c < nc; ++c) {
      float* out = d.y + int64_t(c) * P + p0;
      if (np == L) Ops::store(out, acc[c]);
      else Ops::store_n(out, acc[c], np);
    }
  }
  return nc;
}

}  // namespace om::kernels::dwc
