// NEON raw integer product (q8_gemm.h) for every AArch64 core (no dot-product extension
// needed): the u8 of A' and the s8 of B' are widened to 16 bits; their product fits 16 bits
// exactly (255 * -128 .. 255 * 127), and vpadalq adds products in pairs into 32-bit lanes,
// wrapping like the i32 accumulator. A panel group (16 columns x 4 k) gives eight vectors of
// (column, k pair) partial sums per row; one pairwise add at the end gives four columns each.
#include <arm_neon.h>

#include "onemodel/kernels/q8_blocks.h"
#include "onemodel/kernels/q8_depthwise.h"
#include "onemodel/kernels/q8_requantize.h"

namespace om::kernels::neon {
namespace {

struct WideTile {
  static constexpr int kRows = 2, kPanels = 1;
  template <int R, int P>
  static void run(const uint8_t* a, size_t lda, const int8_t* const* b, const Q8Walk& w, int32_t* c, size_t ldc) {
    static_assert(P == 1, "one panel per tile");
    int32x4_t acc[R][8];
#pragma GCC unroll 2
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
      for (int v = 0; v < 8; ++v) acc[r][v] = vdupq_n_s32(0);
    for (size_t t = 0; t < w.runs; ++t, a += w.run * 4) {
      const int8_t* bt = b[0] + w.offsets[t];
      for (size_t q = 0; q < w.run; ++q) {
        const int8_t* bg = bt + ptrdiff_t(q) * w.stride;
        int16x8_t av[R];  // the row's 4 k values, twice: for two columns
#pragma GCC unroll 2
        for (int r = 0; r < R; ++r)
          av[r] = vreinterpretq_s16_u16(vmovl_u8(vreinterpret_u8_u32(vdup_n_u32(q8::load_group(a + r * lda + q * 4)))));
#pragma GCC unroll 4
        for (int v = 0; v < 4; ++v) {
          const int8x16_t bv = vld1q_s8(bg + v * 16);
          const int16x8_t lo = vmovl_s8(vget_low_s8(bv)), hi = vmovl_high_s8(bv);
#pragma GCC unroll 2
          for (int r = 0; r < R; ++r) {
            acc[r][2 * v] = vpadalq_s16(acc[r][2 * v], vmulq_s16(lo, av[r]));
            acc[r][2 * v + 1] = vpadalq_s16(acc[r][2 * v + 1], vmulq_s16(hi, av[r]));
          }
        }
      }
    }
    // acc[r][i] lanes: column 2i (k pairs 01, 23), column 2i+1 (the same).
#pragma GCC unroll 2
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
      for (int q = 0; q < 4; ++q) vst1q_s32(c + r * ldc + q * 4, vpaddq_s32(acc[r][2 * q], acc[r][2 * q + 1]));
  }
};

}  // namespace

void q8_dot__neon(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t ps, size_t groups, size_t panels,
                  int32_t* c, size_t ldc) {
  q8::dot<WideTile>(a, lda, rows, b, ps, groups, panels, c, ldc);
}

void q8_dot_taps__neon(const uint8_t* a, size_t lda, size_t rows, const int8_t* const* panels, size_t npanels,
                       const Q8Walk& w, int32_t* c, size_t ldc, int8_t*) {
  q8::dot_taps<WideTile>(a, lda, rows, panels, npanels, w, c, ldc);
}

// The quantized epilogue (q8_requantize.h) at this ISA's vector width.
void q8_requantize__neon(const Q8Requant& q) { q8::requantize(q); }

void q8_range__neon(const float* x, size_t n, float* lo, float* hi) { q8::range(x, n, lo, hi); }

// QuantizeLinear per tensor (q8_requantize.h's loop on 4 lanes).
void q8_quantize__neon(const float* x, size_t n, float scale, int32_t zp, int32_t lo, int32_t hi, void* out,
                       bool out_signed) {
  q8::quantize(x, n, scale, zp, lo, hi, out, out_signed);
}

// 16 columns per step: vst4q_u8 stores four vectors interleaved byte by byte, which is the words;
// each column's four bytes are summed as int8 in 16 bits, then widened. A tail runs the same step
// on copies.
namespace {
inline void interleave16(const uint8_t* r0, const uint8_t* r1, const uint8_t* r2, const uint8_t* r3, uint8x16_t f,
                         uint32_t* out, int32_t* s) {
  uint8x16x4_t x;
  x.val[0] = veorq_u8(vld1q_u8(r0), f);
  x.val[1] = veorq_u8(vld1q_u8(r1), f);
  x.val[2] = veorq_u8(vld1q_u8(r2), f);
  x.val[3] = veorq_u8(vld1q_u8(r3), f);
  vst4q_u8(reinterpret_cast<uint8_t*>(out), x);
  const int8x16_t a = vreinterpretq_s8_u8(x.val[0]), b = vreinterpretq_s8_u8(x.val[1]);
  const int8x16_t d = vreinterpretq_s8_u8(x.val[2]), e = vreinterpretq_s8_u8(x.val[3]);
  const int16x8_t lo = vaddq_s16(vaddl_s8(vget_low_s8(a), vget_low_s8(b)), vaddl_s8(vget_low_s8(d), vget_low_s8(e)));
  const int16x8_t hi = vaddq_s16(vaddl_high_s8(a, b), vaddl_high_s8(d, e));
  vst1q_s32(s, vaddw_s16(vld1q_s32(s), vget_low_s16(lo)));
  vst1q_s32(s + 4, vaddw_high_s16(vld1q_s32(s + 4), lo));
  vst1q_s32(s + 8, vaddw_s16(vld1q_s32(s + 8), vget_low_s16(hi)));
  vst1q_s32(s + 12, vaddw_high_s16(vld1q_s32(s + 12), hi));
}
}  // namespace

void q8_interleave4__neon(const uint8_t* const rows[4], uint8_t flip, size_t n, uint32_t* out, size_t panel_words,
                          int32_t* sums) {
  const uint8x16_t f = vdupq_n_u8(flip);
  size_t c = 0;
  for (; c + 16 <= n; c += 16)
    interleave16(rows[0] + c, rows[1] + c, rows[2] + c, rows[3] + c, f, out + c / 16 * panel_words, sums + c);
  if (c < n) {
    const size_t m = n - c;
    alignas(16) uint8_t in[4][16] = {};
    alignas(16) uint32_t words[16];
    alignas(16) int32_t s[16] = {};
    for (int t = 0; t < 4; ++t) __builtin_memcpy(in[t], rows[t] + c, m);
    interleave16(in[0], in[1], in[2], in[3], f, words, s);
    for (size_t j = 0; j < m; ++j) out[c / 16 * panel_words + j] = words[j], sums[c + j] += s[j];
  }
}

// The integer depthwise steps (q8_depthwise.h).
void q8_pair_rows__neon(const uint8_t* a, const uint8_t* b, size_t rows, size_t in_stride, size_t step, int32_t zero,
                        bool is_signed, size_t n, uint32_t* out, size_t out_stride) {
  q8::pair_rows(a, b, rows, in_stride, step, zero, is_signed, n, out, out_stride);
}

// Per row, 8 outputs per step: four words are eight int16 (lo, hi, lo, hi...); the widening
// multiplies by the weight word's halves keep each product in a lane, and one pairwise add at
// the end sums each word's two. The last fewer than 8 run the reference's loop.
void q8_pair_dot__neon(const uint32_t* const* src, const uint32_t* w, size_t taps, size_t n, size_t rows,
                       size_t src_stride, int32_t* acc) {
  for (size_t i = 0; i < rows; ++i, acc += n) {
    const size_t off = i * src_stride;
    size_t j = 0;
    for (; j + 8 <= n; j += 8) {
      int32x4_t a0 = vdupq_n_s32(0), a1 = a0, b0 = a0, b1 = a0;
      for (size_t t = 0; t < taps; ++t) {
        const int16x8_t wv = vreinterpretq_s16_u32(vdupq_n_u32(w[t]));
        const int16x8_t x0 = vreinterpretq_s16_u32(vld1q_u32(src[t] + off + j));
        const int16x8_t x1 = vreinterpretq_s16_u32(vld1q_u32(src[t] + off + j + 4));
        a0 = vmlal_s16(a0, vget_low_s16(x0), vget_low_s16(wv));
        b0 = vmlal_high_s16(b0, x0, wv);
        a1 = vmlal_s16(a1, vget_low_s16(x1), vget_low_s16(wv));
        b1 = vmlal_high_s16(b1, x1, wv);
      }
      vst1q_s32(acc + j, vpaddq_s32(a0, b0));
      vst1q_s32(acc + j + 4, vpaddq_s32(a1, b1));
    }
    for (; j < n; ++j) {
      uint32_t s = 0;
      for (size_t t = 0; t < taps; ++t) s += q8::pair_product(src[t][off + j], w[t]);
      acc[j] = int32_t(s);
    }
  }
}

}  // namespace om::kernels::neon
