// The convolution's copies into its padded planes and from them into the GEMM's packed B panels
// (the implicit GEMM of conv.cpp), written once and instantiated by every ISA file
// (f32_conv_fill_padded__<isa>, f32_conv_pack_panels__<isa>): copies only, so they cannot change
// a result, and compiled with the ISA file's flags the fixed-size copies become 512- or 256-bit
// moves. Everything here is always_inline: the ISA files are compiled with different flags, so no
// out-of-line copy of a helper may be shared between them (the linker would keep any one).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "onemodel/kernels/conv.h"
#include "onemodel/kernels/conv_rows.h"
#include "onemodel/kernels/kernels_internal.h"

namespace om::kernels {

// The rows and columns of the zero-padded input plane the windows touch.
__attribute__((always_inline)) inline int64_t padded_rows(const ConvGeom& g) {
  return (g.OH - 1) * g.sH + (g.kH - 1) * g.dH + 1;
}
__attribute__((always_inline)) inline int64_t padded_cols(const ConvGeom& g) {
  return (g.OW - 1) * g.sW + (g.kW - 1) * g.dW + 1;
}
// With a column stride s the padded plane is split by column phase (columns q, q + s, ... of
// phase q % s stored together, each phase this wide), so every tap of a row of outputs reads a
// contiguous run.
__attribute__((always_inline)) inline int64_t phase_cols(const ConvGeom& g) {
  return (padded_cols(g) + g.sW - 1) / g.sW;
}

// The convolution's B = im2col[k, p] (k = (c, kh, kw) of one group's channels, p an output pixel
// from p0 on) read from the group's zero-padded, column-phase-split planes, where tap t of output
// pixel (oh, ow) is at tap_off[t] + oh * sH * phase_cols + ow.
struct ConvImage {
  const ConvGeom* g;
  const float* planes;       // Cg padded buffers of `plane_floats` each
  const ptrdiff_t* tap_off;  // per tap (kh, kw), inside a buffer
  int64_t plane_floats, p0;
};

namespace panels {

// Copies of n floats, the whole panel row (nr) the common case.
__attribute__((always_inline)) inline void copy(float* d, const float* s, int64_t n) {
  if (n == 32) std::memcpy(d, s, 32 * sizeof(float));
  else if (n == 16) std::memcpy(d, s, 16 * sizeof(float));
  else if (n == 8) std::memcpy(d, s, 8 * sizeof(float));
  else
    for (int64_t j = 0; j < n; ++j) d[j] = s[j];
}

// ConvPackPanelsKernel: the columns [j0, j0 + nc) of B's rows [k0, k0 + kc) as panels of nr
// columns (the last one zero-filled past nc), each panel row one or a few contiguous copies.
__attribute__((always_inline)) inline void pack(const ConvImage& s, size_t k0, size_t kc, size_t j0, size_t nc, size_t nr,
                                                float* dst) {
  const ConvGeom& g = *s.g;
  const int64_t kk = g.kH * g.kW, row_step = g.sH * phase_cols(g);
  // The panel's pixels as runs within output rows: at most nr runs (nr <= kGemmNRMultiple).
  int64_t seg_dst[kGemmNRMultiple], seg_src[kGemmNRMultiple], seg_len[kGemmNRMultiple];
  for (size_t jp = 0; jp < nc; jp += nr, dst += kc * nr) {
    const int64_t cols = int64_t(std::min(nr, nc - jp));
    const int64_t p = s.p0 + int64_t(j0 + jp);
    int64_t oh = p / g.OW, ow = p % g.OW, segs = 0;
    for (int64_t j = 0; j < cols; ++segs) {
      seg_dst[segs] = j;
      seg_src[segs] = oh * row_step + ow;
      seg_len[segs] = std::min(g.OW - ow, cols - j);
      j += seg_len[segs];
      ++oh;
      ow = 0;
    }
    int64_t c = int64_t(k0) / kk, t = int64_t(k0) % kk;
    for (size_t k = 0; k < kc; ++k) {
      float* d = dst + k * nr;
      const float* base = s.planes + c * s.plane_floats + s.tap_off[t];
      if (segs == 1 && cols == int64_t(nr)) {
        copy(d, base + seg_src[0], cols);
      } else {
        for (int64_t q = 0; q < segs; ++q) copy(d + seg_dst[q], base + seg_src[q], seg_len[q]);
        for (size_t j = size_t(cols); j < nr; ++j) d[j] = 0.0f;
      }
      if (++t == kk) {
        t = 0;
        ++c;
      }
    }
  }
}

// ConvFillPaddedKernel: plane into the interior of the padded buffer (the border was zeroed once:
// no channel writes it). Phase ph of a strided buffer holds padded columns ph + j*S, j < Wq.
__attribute__((always_inline)) inline void fill_padded(const ConvGeom& g, const float* plane, float* pad) {
  const int64_t Hp = padded_rows(g), Wp = padded_cols(g), Wq = phase_cols(g), S = g.sW;
  const int64_t lo = std::min(Wp, g.pad_l), hi = std::max(lo, std::min(Wp, g.pad_l + g.W));
  const int64_t r_lo = std::min(Hp, g.pad_t), r_hi = std::max(r_lo, std::min(Hp, g.pad_t + g.H));
  for (int64_t r = r_lo; r < r_hi; ++r) {
    const float* src = plane + (r - g.pad_t) * g.W - g.pad_l;  // src[q] = padded column q
    if (S == 1) {
      rows::copy(src + lo, hi - lo, pad + r * Wq + lo);
    } else if (S == 2) {  // the common strided case: the input columns [lo, hi) split by parity
      rows::split_by_parity(src + lo, hi - lo, lo, pad + r * Wq, pad + (Hp + r) * Wq);
    } else {
      for (int64_t ph = 0; ph < S; ++ph) {
        // Columns q = ph + j*S with lo <= q < hi: j in [jl, jh).
        const int64_t jl = std::min(Wq, lo > ph ? (lo - ph + S - 1) / S : 0);
        const int64_t jh = std::max(jl, std::min(Wq, hi > ph ? (hi - ph + S - 1) / S : 0));
        float* dst = pad + (ph * Hp + r) * Wq;
        const float* from = src + ph;
        for (int64_t j = jl; j < jh; ++j) dst[j] = from[j * S];
      }
    }
  }
}

}  // namespace panels
}  // namespace om::kernels
