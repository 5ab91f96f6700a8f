// NEON raw integer product (q8_gemm.h) with the ARMv8.2 dot-product instructions (sdot), which
// Cortex-A55/A75 and later have: each 32-bit lane takes four s8 by four s8 and adds them to the
// lane, wrapping like the i32 accumulator. A' is u8, so its bytes enter with the top bit flipped
// (A' - 128 as s8) and the product gets 128 x the column sums of B' back, which one more sdot
// against ones per panel group gives:
//   sum A' B' = sum (A' - 128) B' + 128 sum B'   (modulo 2^32).
// A tile of 4 rows by one panel (16 columns) holds 16 accumulators and the 4 column sums. Built
// with +dotprod; the NEON table takes it only where the CPU reports the extension (else the
// widening product, the same integers).
#include <arm_neon.h>

#include "onemodel/kernels/q8_blocks.h"

namespace om::kernels::neon {
namespace {

struct DotTile {
  static constexpr int kRows = 4, kPanels = 1;
  template <int R, int P>
  static void run(const uint8_t* a, size_t lda, const int8_t* const* b, const Q8Walk& w, int32_t* c, size_t ldc) {
    static_assert(P == 1, "one panel per tile");
    int32x4_t acc[R][4], sums[4];
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v) sums[v] = vdupq_n_s32(0);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < 4; ++v) acc[r][v] = vdupq_n_s32(0);
    const int8x16_t ones = vdupq_n_s8(1);
    for (size_t t = 0; t < w.runs; ++t, a += w.run * 4) {
      const int8_t* bt = b[0] + w.offsets[t];
      for (size_t q = 0; q < w.run; ++q) {
        const int8_t* bg = bt + ptrdiff_t(q) * w.stride;
        int8x16_t bv[4];  // columns 4v .. 4v + 3, four k each
#pragma GCC unroll 4
        for (int v = 0; v < 4; ++v) {
          bv[v] = vld1q_s8(bg + v * 16);
          sums[v] = vdotq_s32(sums[v], bv[v], ones);
        }
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
          const int8x16_t av = vreinterpretq_s8_u32(vdupq_n_u32(q8::load_group(a + r * lda + q * 4) ^ 0x80808080u));
#pragma GCC unroll 4
          for (int v = 0; v < 4; ++v) acc[r][v] = vdotq_s32(acc[r][v], bv[v], av);
        }
      }
    }
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v) sums[v] = vshlq_n_s32(sums[v], 7);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < 4; ++v) vst1q_s32(c + r * ldc + v * 4, vaddq_s32(acc[r][v], sums[v]));
  }
};

}  // namespace

void q8_dot__neondot(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t ps, size_t groups,
                     size_t panels, int32_t* c, size_t ldc) {
  q8::dot<DotTile>(a, lda, rows, b, ps, groups, panels, c, ldc);
}

void q8_dot_taps__neondot(const uint8_t* a, size_t lda, size_t rows, const int8_t* const* panels, size_t npanels,
                          const Q8Walk& w, int32_t* c, size_t ldc, int8_t*) {
  q8::dot_taps<DotTile>(a, lda, rows, panels, npanels, w, c, ldc);
}

}  // namespace om::kernels::neon
