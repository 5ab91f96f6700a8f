// NEON GEMM micro-kernel: an 8x8 tile of C in 16 q-registers. Each step k multiplies the eight
// A values (two registers, used lane by lane) into two 4-wide B vectors with fused multiply-adds,
// so every C element is exactly the in-order fma chain over k of the scalar reference.
#include <arm_neon.h>

#include <cstddef>
#include <cstring>

#include "onemodel/kernels/depthwise_channels.h"
#include "onemodel/kernels/depthwise_plane.h"
#include "onemodel/kernels/pool_window.h"
#include "onemodel/kernels/small_gemm.h"

namespace om::kernels::neon {
namespace {
constexpr size_t kMR = 8, kNR = 8;
}

namespace {
// x < 0 ? 0 : x per lane (UnaryOp::Relu's rule). A select, not vmaxq (which turns -0 into +0
// and returns NaN for either operand).
inline float32x4_t relu(float32x4_t x) { return vbslq_f32(vcltq_f32(x, vdupq_n_f32(0.0f)), vdupq_n_f32(0.0f), x); }

template <class B>
inline void tile_8x8(size_t kc, const float* a, B b, float* c, size_t ldc, size_t mr, size_t nr, bool load_c,
                     const TileEpilogue* ep) {
  StagedTile<kMR, kNR> t(c, ldc, mr, nr, load_c);
  float* cc = t.cc;
  const size_t ldcc = t.ldcc;
  const bool full = t.full;
  float32x4_t acc[kMR][2];
  for (size_t i = 0; i < kMR; ++i) {
    if (load_c || !full) {
      acc[i][0] = vld1q_f32(cc + i * ldcc);
      acc[i][1] = vld1q_f32(cc + i * ldcc + 4);
    } else {
      acc[i][0] = acc[i][1] = vdupq_n_f32(0.0f);
    }
  }
  for (size_t k = 0; k < kc; ++k) {
    const float* bk = b.row(k);
    const float32x4_t b0 = vld1q_f32(bk), b1 = vld1q_f32(bk + 4);
    const float32x4_t a0 = vld1q_f32(a), a1 = vld1q_f32(a + 4);
    acc[0][0] = vfmaq_laneq_f32(acc[0][0], b0, a0, 0);
    acc[0][1] = vfmaq_laneq_f32(acc[0][1], b1, a0, 0);
    acc[1][0] = vfmaq_laneq_f32(acc[1][0], b0, a0, 1);
    acc[1][1] = vfmaq_laneq_f32(acc[1][1], b1, a0, 1);
    acc[2][0] = vfmaq_laneq_f32(acc[2][0], b0, a0, 2);
    acc[2][1] = vfmaq_laneq_f32(acc[2][1], b1, a0, 2);
    acc[3][0] = vfmaq_laneq_f32(acc[3][0], b0, a0, 3);
    acc[3][1] = vfmaq_laneq_f32(acc[3][1], b1, a0, 3);
    acc[4][0] = vfmaq_laneq_f32(acc[4][0], b0, a1, 0);
    acc[4][1] = vfmaq_laneq_f32(acc[4][1], b1, a1, 0);
    acc[5][0] = vfmaq_laneq_f32(acc[5][0], b0, a1, 1);
    acc[5][1] = vfmaq_laneq_f32(acc[5][1], b1, a1, 1);
    acc[6][0] = vfmaq_laneq_f32(acc[6][0], b0, a1, 2);
    acc[6][1] = vfmaq_laneq_f32(acc[6][1], b1, a1, 2);
    acc[7][0] = vfmaq_laneq_f32(acc[7][0], b0, a1, 3);
    acc[7][1] = vfmaq_laneq_f32(acc[7][1], b1, a1, 3);
    a += kMR;
  }
  if (ep) {
    const StagedAddend<kMR, kNR> add(ep, ldc, mr, nr);
    for (size_t i = 0; i < kMR; ++i)
      for (int h = 0; h < 2; ++h) {
        if (ep->row_bias) acc[i][h] = vaddq_f32(acc[i][h], vdupq_n_f32(i < mr ? ep->row_bias[i] : 0.0f));
        if (add.p) acc[i][h] = vaddq_f32(acc[i][h], vld1q_f32(add.p + i * add.ld + 4 * h));
        if (ep->relu) acc[i][h] = relu(acc[i][h]);
      }
  }
  for (size_t i = 0; i < kMR; ++i) {
    vst1q_f32(cc + i * ldcc, acc[i][0]);
    vst1q_f32(cc + i * ldcc + 4, acc[i][1]);
  }
  t.done();
}
}  // namespace

OM_GEMM_TILE_ENTRIES(8x8, neon, tile_8x8, kNR)

namespace {
struct NeonOps {
  using V = float32x4_t;
  static constexpr size_t L = 4;
  static V zero() { return vdupq_n_f32(0.0f); }
  static V bcast(const float* p) { return vld1q_dup_f32(p); }
  static V load(const float* p) { return vld1q_f32(p); }
  static V load_n(const float* p, size_t n) {
    float t[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    std::memcpy(t, p, n * sizeof(float));
    return vld1q_f32(t);
  }
  // depthwise_plane.h's edge loads: range(lo, hi) names lanes [lo, hi), load_range(p, m) loads
  // them and +0 elsewhere; lanes outside are never read.
  struct Range {
    ptrdiff_t lo = 0, hi = 0;
  };
  static Range range(ptrdiff_t lo, ptrdiff_t hi) { return {lo < 0 ? 0 : lo, hi > 4 ? 4 : hi}; }
  static V load_range(const float* p, Range m) {
    if (m.lo == 0 && m.hi == 4) return vld1q_f32(p);
    float t[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (ptrdiff_t j = m.lo; j < m.hi; ++j) t[j] = p[j];
    return vld1q_f32(t);
  }
  static void store(float* p, V v) { vst1q_f32(p, v); }
  static void store_n(float* p, V v, size_t n) {
    float t[4];
    vst1q_f32(t, v);
    std::memcpy(p, t, n * sizeof(float));
  }
  static V fma(V a, V b, V acc) { return vfmaq_f32(acc, a, b); }
  // depthwise_channels.h's transposes.
  static V zip_lo(V a, V b) { return vzip1q_f32(a, b); }
  static V zip_hi(V a, V b) { return vzip2q_f32(a, b); }
  static V add(V a, V b) { return vaddq_f32(a, b); }
  static V relu(V a) { return neon::relu(a); }
  static V div(V a, V b) { return vdivq_f32(a, b); }
  // pool_window.h's selection: v where v > m, or v is NaN and m is not.
  static V pick(V v, V m) {
    const uint32x4_t v_ok = vceqq_f32(v, v), m_ok = vceqq_f32(m, m);
    const uint32x4_t take = vorrq_u32(vcgtq_f32(v, m), vbicq_u32(m_ok, v_ok));
    return vbslq_f32(take, v, m);
  }
  // v > m ? v : m (vmaxq_f32 would return +0 for max(-0, +0) and propagate NaN: not the same bits)
  static V max(V v, V m) { return vbslq_f32(vcgtq_f32(v, m), v, m); }
  static bool any_nan(V v) { return vminvq_u32(vceqq_f32(v, v)) == 0; }
  static V load_even(const float* p) { return vld2q_f32(p).val[0]; }
  static constexpr bool kPairMax = true;
  // pool_window.h's pair maxima (odd > even ? odd : even), in order.
  static V pair_max(const float* p, V& probe) {
    const float32x4x2_t v = vld2q_f32(p);
    probe = vaddq_f32(probe, vaddq_f32(v.val[0], v.val[1]));
    return vbslq_f32(vcgtq_f32(v.val[1], v.val[0]), v.val[1], v.val[0]);
  }
  static V pair_order(V v) { return v; }
  static V load_even_n(const float* p, size_t n) {
    float t[8] = {};
    std::memcpy(t, p, (2 * n - 1) * sizeof(float));
    return vld2q_f32(t).val[0];
  }
};
}  // namespace

// 32 q-registers: up to 4 rows x 4 vectors of accumulators plus the B vectors.
void f32_gemm_small__neon(size_t kc, size_t m, const float* a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                          const float* b, ptrdiff_t b_rs, size_t ps, float* c, size_t ldc, size_t n,
                          bool load_c) {
  small::gemm<NeonOps, kNR, 8, 4, 4>(kc, m, a, a_rs, a_cs, b, b_rs, ps, c, ldc, n, load_c);
}

void f32_depthwise_plane__neon(const DepthwisePlane& p) { dw::plane<NeonOps>(p); }
size_t f32_depthwise_channels__neon(const DepthwiseChannels& d) { return dwc::channels<NeonOps>(d); }
void f32_pool_window__neon(const ConvGeom& g, const PoolWindow& w, const float* x, float* y) {
  pool::window<NeonOps>(g, w, x, y);
}

}  // namespace om::kernels::neon
