// The 8-lane vector Ops of q8_depthwise.h's pair_dot loop, for the files built with AVX2 flags:
// masked loads and stores (vpmaskmovd reads and writes nothing past the lanes asked for), and the
// word product as vpmaddwd plus an add (MaddDot) or as AVX-VNNI's vpdpwssd (q8_avxvnni.cpp).
#pragma once
#include <immintrin.h>

#include "onemodel/kernels/q8_depthwise.h"

namespace om::kernels::q8 {

struct MaddDot {
  static __m256i dot(__m256i acc, __m256i x, __m256i w) { return _mm256_add_epi32(acc, _mm256_madd_epi16(x, w)); }
};

template <class Dot>
struct PairOps8 {
  using V = __m256i;
  static constexpr size_t L = 8;
  static V zero() { return _mm256_setzero_si256(); }
  static V bcast(uint32_t w) { return _mm256_set1_epi32(int(w)); }
  static V load(const uint32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static V mask(size_t count) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(count)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static V load_n(const uint32_t* p, size_t count) { return _mm256_maskload_epi32(reinterpret_cast<const int*>(p), mask(count)); }
  static void store(int32_t* p, V v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
  static void store_n(int32_t* p, V v, size_t count) { _mm256_maskstore_epi32(p, mask(count), v); }
  static V dot(V acc, V x, V w) { return Dot::dot(acc, x, w); }
};

}  // namespace om::kernels::q8
