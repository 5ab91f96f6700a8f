// The raw integer product (q8_gemm.h's q8_dot) with the M-profile DSP instructions (Cortex-M4,
// M7, M33...), which the bare-metal scalar table takes where the compiler targets them. Per group
// of four, A's bytes are widened once into two pairs of halfwords (UXTB16 of the word and of it
// rotated by 8) and each column's into two signed pairs (SXTB16), then two dual multiply-adds
// (SMLAD) add the four products. From the disassembly (GCC 12, Cortex-M4): a group of four
// columns' 16 multiply-adds is a 33-instruction loop body, where the reference's byte loop
// (LDRB, LDRSB, SMLABB, a reload and the loop test per product, at -Os) takes about 136. The
// same integers as q8_dot__scalar: every u8 x s8 product and each pair's sum are exact, and the
// 32-bit sums wrap as the reference's do (SMLAD only sets the Q flag).
#include "onemodel/kernels/kernels_internal.h"
#include "onemodel/kernels/q8_gemm.h"

#if defined(__ARM_FEATURE_SIMD32)
#include <arm_acle.h>

#include <cstring>

namespace om::kernels {
namespace {
uint32_t load_word(const void* p) {
  uint32_t w;
  std::memcpy(&w, p, sizeof w);  // A' rows and B' groups are 4-byte aligned; memcpy says so portably
  return w;
}
uint32_t rotate8(uint32_t w) { return (w >> 8) | (w << 24); }
// acc + the four products of a group: A's bytes 0 and 2 (a02) and 1 and 3 (a13) as halfwords
// against B's, sign-extended the same way.
int32_t dot4(int16x2_t a02, int16x2_t a13, uint32_t bw, int32_t acc) {
  return __smlad(a13, __sxtb16(int8x4_t(rotate8(bw))), __smlad(a02, __sxtb16(int8x4_t(bw)), acc));
}
}  // namespace

// Four columns at a time, their sums in registers over all groups; A's group unpacked once for
// the four.
void q8_dot_taps__dsp(const uint8_t* a, size_t lda, size_t rows, const int8_t* const* panels, size_t npanels,
                      const Q8Walk& w, int32_t* c, size_t ldc, int8_t*) {
  static_assert(kQ8Panel % 4 == 0, "a panel is whole runs of four columns");
  for (size_t r = 0; r < rows; ++r)
    for (size_t p = 0; p < npanels; ++p)
      for (size_t j = 0; j < kQ8Panel; j += 4) {
        const uint8_t* ar = a + r * lda;
        int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (size_t t = 0; t < w.runs; ++t) {
          const int8_t* bg = panels[p] + w.offsets[t] + j * kQ8Group;
          for (size_t q = 0; q < w.run; ++q, ar += kQ8Group, bg += w.stride) {
            const uint32_t aw = load_word(ar);
            const int16x2_t a02 = int16x2_t(__uxtb16(aw)), a13 = int16x2_t(__uxtb16(rotate8(aw)));
            s0 = dot4(a02, a13, load_word(bg), s0);
            s1 = dot4(a02, a13, load_word(bg + 4), s1);
            s2 = dot4(a02, a13, load_word(bg + 8), s2);
            s3 = dot4(a02, a13, load_word(bg + 12), s3);
          }
        }
        int32_t* out = c + r * ldc + p * kQ8Panel + j;
        out[0] = s0, out[1] = s1, out[2] = s2, out[3] = s3;
      }
}

void q8_dot__dsp(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t ps, size_t groups, size_t panels,
                 int32_t* c, size_t ldc) {
  const Q8Walk w = q8_packed_walk(groups);
  for (size_t p = 0; p < panels; ++p) {
    const int8_t* panel = b + p * ps;
    q8_dot_taps__dsp(a, lda, rows, &panel, 1, w, c + p * kQ8Panel, ldc, nullptr);
  }
}

}  // namespace om::kernels
#endif
