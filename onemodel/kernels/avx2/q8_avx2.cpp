// AVX2 raw integer product (q8_gemm.h), exact without VNNI: the u8 of A' and the s8 of B' are
// widened to 16 bits and vpmaddwd adds products in pairs into 32-bit lanes. That pair sum is at
// most 2 * 255 * 128 in magnitude, so it never saturates (vpmaddubsw's 16-bit sums would). A
// panel group (16 columns x 4 k) widens to four vectors whose lanes hold (column, k pair)
// partial sums; at the end one horizontal add per two vectors gives eight columns.
#include <immintrin.h>

#include "onemodel/kernels/q8_blocks.h"
#include "onemodel/kernels/q8_requantize.h"

namespace om::kernels::avx2 {
namespace {

struct WideTile {
  static constexpr int kRows = 2, kPanels = 1;  // 8 accumulators: 3 rows (12) spill
  template <int R, int P>
  static void run(const uint8_t* a, size_t lda, const int8_t* b, size_t, size_t groups, int32_t* c, size_t ldc) {
    static_assert(P == 1, "one panel per tile");
    __m256i acc[R][4];
#pragma GCC unroll 2
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < 4; ++v) acc[r][v] = _mm256_setzero_si256();
    for (size_t g = 0; g < groups; ++g) {
      __m256i av[R];  // the row's 4 k values as 16-bit lanes, repeated for 4 columns
#pragma GCC unroll 2
      for (int r = 0; r < R; ++r)
        av[r] = _mm256_cvtepu8_epi16(_mm_set1_epi32(int(q8::load_group(a + r * lda + g * 4))));
#pragma GCC unroll 4
      for (int v = 0; v < 4; ++v) {
        const __m256i bv = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + g * 64 + v * 16)));
#pragma GCC unroll 2
        for (int r = 0; r < R; ++r) acc[r][v] = _mm256_add_epi32(acc[r][v], _mm256_madd_epi16(av[r], bv));
      }
    }
    // acc[r][v] lanes: columns 4v, 4v+1 (k pairs 01, 23) | columns 4v+2, 4v+3. hadd within
    // 128-bit halves gives columns (0 1 4 5 | 2 3 6 7) of two vectors; the permute orders them.
#pragma GCC unroll 2
    for (int r = 0; r < R; ++r)
      for (int h = 0; h < 2; ++h) {
        const __m256i s = _mm256_hadd_epi32(acc[r][2 * h], acc[r][2 * h + 1]);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + r * ldc + h * 8), _mm256_permute4x64_epi64(s, 0xd8));
      }
  }
};

}  // namespace

void q8_dot__avx2(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t ps, size_t groups, size_t panels,
                  int32_t* c, size_t ldc) {
  q8::blocks<WideTile>(a, lda, rows, b, ps, groups, panels, c, ldc);
}

// The quantized epilogue (q8_requantize.h) at this ISA's vector width.
void q8_requantize__avx2(const Q8Requant& q) { q8::requantize(q); }

}  // namespace om::kernels::avx2
