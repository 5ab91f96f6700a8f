// AVX-512 VNNI raw integer product (q8_gemm.h): vpdpbusd multiplies the four u8 of A' in each
// 32-bit lane by the four s8 of B' and adds them to the lane, wrapping like the i32 accumulator.
// A tile of 6 rows by 4 panels (64 columns) holds 24 accumulators; per group of 4 k it loads
// four 64-byte panel groups and broadcasts six rows' 4 bytes. Built with -mavx512vnni; the table
// uses it only where the CPU reports AVX512_VNNI (else the AVX2 product, the same bits).
#include <immintrin.h>

#include "onemodel/kernels/q8_blocks.h"
#include "onemodel/kernels/q8_depthwise.h"

namespace om::kernels::avx512 {
namespace {

struct VnniTile {
  static constexpr int kRows = 6, kPanels = 4;
  template <int R, int P>
  static void run(const uint8_t* a, size_t lda, const int8_t* b, size_t ps, size_t groups, int32_t* c, size_t ldc) {
    __m512i acc[R][P];
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
      for (int p = 0; p < P; ++p) acc[r][p] = _mm512_setzero_si512();
    for (size_t g = 0; g < groups; ++g) {
      __m512i bv[P];
#pragma GCC unroll 4
      for (int p = 0; p < P; ++p) bv[p] = _mm512_loadu_si512(b + p * ps + g * 64);
#pragma GCC unroll 6
      for (int r = 0; r < R; ++r) {
        const __m512i av = _mm512_set1_epi32(int(q8::load_group(a + r * lda + g * 4)));
#pragma GCC unroll 4
        for (int p = 0; p < P; ++p) acc[r][p] = _mm512_dpbusd_epi32(acc[r][p], av, bv[p]);
      }
    }
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
      for (int p = 0; p < P; ++p) _mm512_storeu_si512(c + r * ldc + p * 16, acc[r][p]);
  }
};

}  // namespace

void q8_dot__avx512vnni(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t ps, size_t groups,
                        size_t panels, int32_t* c, size_t ldc) {
  q8::blocks<VnniTile>(a, lda, rows, b, ps, groups, panels, c, ldc);
}

// The depthwise word products (q8_depthwise.h) on 16 lanes with vpdpwssd: a lane's two 16-bit
// products and the add in one instruction, wrapping like the i32 accumulator; the tails masked.
namespace {
struct VnniPairOps {
  using V = __m512i;
  static constexpr size_t L = 16;
  static V zero() { return _mm512_setzero_si512(); }
  static V bcast(uint32_t w) { return _mm512_set1_epi32(int(w)); }
  static V load(const uint32_t* p) { return _mm512_loadu_si512(p); }
  static __mmask16 mask(size_t count) { return __mmask16((1u << count) - 1); }
  static V load_n(const uint32_t* p, size_t count) { return _mm512_maskz_loadu_epi32(mask(count), p); }
  static void store(int32_t* p, V v) { _mm512_storeu_si512(p, v); }
  static void store_n(int32_t* p, V v, size_t count) { _mm512_mask_storeu_epi32(p, mask(count), v); }
  static V dot(V acc, V x, V w) { return _mm512_dpwssd_epi32(acc, x, w); }
};
}  // namespace

void q8_pair_dot__avx512vnni(const uint32_t* const* src, const uint32_t* w, size_t taps, size_t n, size_t rows,
                             size_t src_stride, int32_t* acc) {
  q8::pair_dot<VnniPairOps>(src, w, taps, n, rows, src_stride, acc);
}

}  // namespace om::kernels::avx512
