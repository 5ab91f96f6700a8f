// AVX-VNNI raw integer product (q8_gemm.h): the VEX form of vpdpbusd on 256-bit vectors, which
// client CPUs without AVX-512 have (and AVX-512 CPUs with it): each 32-bit lane takes the four u8
// of A' times the four s8 of B' added to the lane, wrapping like the i32 accumulator, so the sums
// are exact and the integers those of every other ISA. A tile of 6 rows by one panel (16 columns,
// two vectors) holds 12 accumulators; per group of 4 k it loads the panel group's two halves and
// broadcasts six rows' 4 bytes. Built with -mavxvnni; the AVX2 table takes it only where the CPU
// reports AVX-VNNI (else the widening product, the same bits). The depthwise word product too.
#include <immintrin.h>

#include "onemodel/kernels/avx2/q8_pair_ops_avx2.h"
#include "onemodel/kernels/q8_blocks.h"

namespace om::kernels::avx2 {
namespace {

struct VnniTile {
  static constexpr int kRows = 6, kPanels = 1;  // 12 accumulators, 2 B vectors, 1 broadcast: 15 of 16
  template <int R, int P>
  static void run(const uint8_t* a, size_t lda, const int8_t* const* b, const Q8Walk& w, int32_t* c, size_t ldc) {
    static_assert(P == 1, "one panel per tile");
    __m256i acc[R][2];
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
    for (size_t t = 0; t < w.runs; ++t, a += w.run * 4) {
      const int8_t* bt = b[0] + w.offsets[t];
      for (size_t q = 0; q < w.run; ++q) {
        const int8_t* bg = bt + ptrdiff_t(q) * w.stride;
        const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bg));
        const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bg + 32));
#pragma GCC unroll 6
        for (int r = 0; r < R; ++r) {
          const __m256i av = _mm256_set1_epi32(int(q8::load_group(a + r * lda + q * 4)));
          acc[r][0] = _mm256_dpbusd_avx_epi32(acc[r][0], av, b0);
          acc[r][1] = _mm256_dpbusd_avx_epi32(acc[r][1], av, b1);
        }
      }
    }
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + r * ldc), acc[r][0]);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + r * ldc + 8), acc[r][1]);
    }
  }
};

}  // namespace

void q8_dot__avxvnni(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t ps, size_t groups, size_t panels,
                     int32_t* c, size_t ldc) {
  q8::dot<VnniTile>(a, lda, rows, b, ps, groups, panels, c, ldc);
}

void q8_dot_taps__avxvnni(const uint8_t* a, size_t lda, size_t rows, const int8_t* const* panels, size_t npanels,
                          const Q8Walk& w, int32_t* c, size_t ldc, int8_t*) {
  q8::dot_taps<VnniTile>(a, lda, rows, panels, npanels, w, c, ldc);
}

// The depthwise word products (q8_depthwise.h) with vpdpwssd: a lane's two 16-bit products and
// the add in one instruction, wrapping like the i32 accumulator (the non-saturating form).
namespace {
struct VnniPairDot {
  static __m256i dot(__m256i acc, __m256i x, __m256i w) { return _mm256_dpwssd_avx_epi32(acc, x, w); }
};
}  // namespace

void q8_pair_dot__avxvnni(const uint32_t* const* src, const uint32_t* w, size_t taps, size_t n, size_t rows,
                          size_t src_stride, int32_t* acc) {
  q8::pair_dot<q8::PairOps8<VnniPairDot>>(src, w, taps, n, rows, src_stride, acc);
}

}  // namespace om::kernels::avx2
