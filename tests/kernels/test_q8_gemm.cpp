// The integer products (q8_gemm.h) against the definition written here, sum over k of
// (A - za)(B - zb) in i32 arithmetic wrapping modulo 2^32, on every ISA this machine runs: the
// four u8/s8 dtype pairs, zero points at the ends of their ranges, per-row and per-column zero
// points, sizes around every tile and group (tails in M, K and N), operands at the extremes
// (all 255 against all -128, the largest products), and K large enough to wrap the accumulator.
#include <doctest/doctest.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <limits>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernel_test_util.h"
#include "onemodel/kernels/kernels_internal.h"
#include "onemodel/kernels/q8_depthwise.h"
#include "onemodel/kernels/q8_gemm.h"

using namespace om::kernels;
using namespace om::kernels::test;

namespace {

struct Case {
  size_t M, K, N;
  bool a_signed, b_signed;
  int fill;  // 0 random, 1 extremes (the largest products), 2 random with per-row/column zero points
};

int32_t value_at(const std::vector<uint8_t>& v, size_t i, bool is_signed) {
  return is_signed ? int32_t(int8_t(v[i])) : int32_t(v[i]);
}

// C = (A - za) (B - zb) through the packed operands and the raw product, as the operators run it.
std::vector<int32_t> through_kernel(const Case& c, const std::vector<uint8_t>& a, const std::vector<uint8_t>& b,
                                    const std::vector<int32_t>& za, const std::vector<int32_t>& zb) {
  const size_t lda = q8_lda(c.K), panels = q8_panels(c.N), ldc = panels * kQ8Panel;
  std::vector<uint8_t> pa(c.M * lda + 1);
  std::vector<int32_t> rs(c.M), cs(ldc), raw(c.M * ldc, 777);
  std::vector<int8_t> pb(q8_packed_b_bytes(c.K, c.N) + 1);
  q8_pack_a(a.data(), c.a_signed, ptrdiff_t(c.K), 1, c.M, c.K, pa.data(), lda, rs.data());
  q8_pack_b(b.data(), c.b_signed, ptrdiff_t(c.N), 1, c.K, c.N, pb.data(), cs.data());
  q8_dot(pa.data(), lda, c.M, pb.data(), q8_panel_stride(c.K), q8_groups(c.K), panels, raw.data(), ldc);
  std::vector<int32_t> y(c.M * c.N);
  for (size_t m = 0; m < c.M; ++m)
    for (size_t n = 0; n < c.N; ++n)
      y[m * c.N + n] = q8_correct(raw[m * ldc + n], rs[m], cs[n], q8_zero_a(za[m], c.a_signed),
                                  q8_zero_b(zb[n], c.b_signed), c.K);
  return y;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  const size_t Ms[] = {1, 2, 3, 5, 6, 7, 13}, Ks[] = {1, 3, 4, 5, 17, 64, 301}, Ns[] = {1, 15, 16, 17, 33, 64, 70};
  int i = 0;
  for (size_t M : Ms)
    for (size_t K : Ks)
      for (size_t N : Ns) {
        ++i;
        out.push_back({M, K, N, (i & 1) != 0, (i & 2) != 0, i % 3});
      }
  // Every dtype pair at the extremes, and a K whose sums wrap the i32 accumulator.
  for (int s = 0; s < 4; ++s) out.push_back({7, 67, 49, (s & 1) != 0, (s & 2) != 0, 1});
  out.push_back({2, 70000, 3, false, true, 1});  // one panel of B' (1.1 MB): the microcontroller has 4 MB
  return out;
}

}  // namespace

TEST_CASE("integer products: every ISA equals the definition, wrapping modulo 2^32") {
  const Isa native = native_isa();
  const std::vector<Case> all = cases();
  uint64_t hash = 0;
  for (Isa isa : available_isas()) {
    IsaScope scope(isa);
    uint64_t h = kFnvOffset;
    for (size_t ci = 0; ci < all.size(); ++ci) {
      const Case& c = all[ci];
      std::mt19937 rng(uint32_t(ci * 31 + 7));
      std::vector<uint8_t> a(c.M * c.K), b(c.K * c.N);
      // Extremes: A at its largest magnitude, B at -128 (the top bit), so every product is
      // 255 * -128 (u8) or -128 * -128 (s8).
      for (auto& v : a) v = c.fill == 1 ? uint8_t(c.a_signed ? 0x80 : 0xff) : uint8_t(rng());
      for (auto& v : b) v = c.fill == 1 ? uint8_t(c.b_signed ? 0x80 : 0xff) : uint8_t(rng());
      std::vector<int32_t> za(c.M), zb(c.N);
      const int32_t za_lo = c.a_signed ? -128 : 0, zb_lo = c.b_signed ? -128 : 0;
      // At the extremes the zero points sit at the other end of the range: |A - za| = |B - zb| = 255.
      for (size_t m = 0; m < c.M; ++m) za[m] = c.fill == 2 ? za_lo + int32_t(rng() % 256) : (c.fill == 1 ? (c.a_signed ? 127 : 0) : za_lo);
      for (size_t n = 0; n < c.N; ++n) zb[n] = c.fill == 2 ? zb_lo + int32_t(rng() % 256) : (c.fill == 1 ? (c.b_signed ? 127 : 0) : zb_lo + 3);
      const std::vector<int32_t> y = through_kernel(c, a, b, za, zb);
      size_t bad = y.size();
      for (size_t m = 0; m < c.M && bad == y.size(); ++m)
        for (size_t n = 0; n < c.N; ++n) {
          uint32_t acc = 0;
          for (size_t k = 0; k < c.K; ++k)
            acc += uint32_t((value_at(a, m * c.K + k, c.a_signed) - za[m]) * (value_at(b, k * c.N + n, c.b_signed) - zb[n]));
          if (int32_t(acc) != y[m * c.N + n]) {
            bad = m * c.N + n;
            break;
          }
        }
      INFO("isa " << isa_name(isa) << " case " << ci << ": M " << c.M << " K " << c.K << " N " << c.N << " a "
                  << (c.a_signed ? "s8" : "u8") << " b " << (c.b_signed ? "s8" : "u8") << " fill " << c.fill << " element "
                  << bad);
      CHECK(bad == y.size());
      for (int32_t v : y)
        for (int byte = 0; byte < 4; ++byte) {
          h ^= (uint32_t(v) >> (8 * byte)) & 0xffu;
          h *= 0x100000001b3ull;
        }
    }
    if (isa == Isa::Scalar) hash = h;
    CHECK(h == hash);
    if (isa == native) std::printf("EXACT_HASH q8_gemm %s %016" PRIx64 "\n", isa_name(isa), h);
  }
  std::fflush(stdout);
}

TEST_CASE("integer products over B' in place (q8_dot_taps): every ISA equals the definition for any walk") {
  // Panels anywhere in one buffer, groups in runs at per-run offsets and a stride (the integer
  // convolutions' strip: a run of channel groups per tap, a plane apart), walks of one group to
  // more than the AMX tile's 16, rows and panels around every tile's size.
  struct Walk {
    size_t runs, run;
    ptrdiff_t stride;
  };
  const Walk walks[] = {{1, 1, 64}, {9, 1, 4}, {9, 8, 1156}, {1, 20, 64}, {4, 5, 332}, {25, 3, 900}};
  const size_t rows_of[] = {1, 2, 5, 6, 7, 13}, panels_of[] = {1, 3, 4, 5, 9};
  std::mt19937 rng(99);
  for (const Walk& wk : walks)
    for (size_t rows : rows_of)
      for (size_t npanels : panels_of) {
        const size_t groups = wk.runs * wk.run, lda = groups * kQ8Group + 8;
        std::vector<ptrdiff_t> offsets(wk.runs);
        for (size_t t = 0; t < wk.runs; ++t) offsets[t] = ptrdiff_t(t * 44 + rng() % 8 * 4);
        const size_t span = size_t(offsets.back()) + (wk.run - 1) * size_t(wk.stride) + 64;
        std::vector<int8_t> buf(span + npanels * 12 * 4 + 64);
        for (auto& v : buf) v = int8_t(rng());
        std::vector<const int8_t*> panels(npanels);
        for (size_t i = 0; i < npanels; ++i) panels[i] = buf.data() + (i * 12 + rng() % 3) * 4;  // overlapping, as a strip's are
        std::vector<uint8_t> a(rows * lda);
        for (auto& v : a) v = uint8_t(rng());
        const size_t ldc = npanels * kQ8Panel + 3;
        std::vector<int32_t> want(rows * ldc, 777);
        for (size_t r = 0; r < rows; ++r)
          for (size_t i = 0; i < npanels; ++i)
            for (size_t j = 0; j < kQ8Panel; ++j) {
              uint32_t acc = 0;
              for (size_t t = 0; t < wk.runs; ++t)
                for (size_t q = 0; q < wk.run; ++q)
                  for (size_t k = 0; k < kQ8Group; ++k)
                    acc += uint32_t(int32_t(a[r * lda + (t * wk.run + q) * kQ8Group + k]) *
                                    int32_t(panels[i][offsets[t] + ptrdiff_t(q) * wk.stride + ptrdiff_t(j * kQ8Group + k)]));
              want[r * ldc + i * kQ8Panel + j] = int32_t(acc);
            }
        const Q8Walk w{offsets.data(), wk.runs, wk.run, wk.stride};
        for (Isa isa : available_isas()) {
          IsaScope scope(isa);
          std::vector<int32_t> got(rows * ldc, 777);
          std::vector<int8_t> scratch(npanels * groups * 64);
          q8_dot_taps(a.data(), lda, rows, panels.data(), npanels, w, got.data(), ldc, scratch.data());
          INFO("isa " << isa_name(isa) << " runs " << wk.runs << " run " << wk.run << " rows " << rows << " panels "
                      << npanels);
          CHECK(got == want);
        }
      }
}

TEST_CASE("integer requantization: every ISA rounds half to even and saturates as QuantizeLinear, NaN to the zero point") {
  const float mults[] = {0.5f, 0.25f, 1.0f / 3.0f, 1e-3f, 7.5f, 1e30f, std::numeric_limits<float>::infinity(),
                         std::numeric_limits<float>::quiet_NaN(), 0.0f, -0.75f};
  const int32_t zps[][3] = {{0, 0, 255}, {128, 0, 255}, {255, 0, 255}, {0, -128, 127}, {-128, -128, 127}, {127, -128, 127}};
  const size_t n = 77;  // past every vector width, with a tail
  std::vector<int32_t> raw(n), cs(n);
  uint64_t hash = 0;
  for (Isa isa : available_isas()) {
    IsaScope scope(isa);
    std::mt19937 rng(41);  // the same inputs on every ISA
    uint64_t h = kFnvOffset;
    // Each multiplier for the whole row, then (mult NaN) per-column multipliers, all of them in turn.
    std::vector<float> per_col(n);
    for (size_t j = 0; j < n; ++j) per_col[j] = mults[j % (sizeof mults / sizeof mults[0])];
    for (float row_mult : mults)
      for (const auto& z : zps) {
        const bool by_col = row_mult != row_mult;
        for (size_t j = 0; j < n; ++j) {
          // Ties: values that land on .5 after the multiply by 0.5 and 0.25; and the extremes.
          raw[j] = j % 11 == 0 ? int32_t(0x7fffffff - j) : int32_t(rng() % 4001) - 2000;
          cs[j] = int32_t(rng() % 201) - 100;
        }
        const int32_t za = int32_t(rng() % 7) - 3;
        const uint32_t add = uint32_t(rng() % 1001) - 500u;
        std::vector<uint8_t> out(n, 0xaa);
        Q8Requant q{raw.data(), cs.data(), za, add, row_mult, by_col ? per_col.data() : nullptr, z[0], z[1], z[2], out.data(), z[1] < 0, n};
        q8_requantize(q);
        for (size_t j = 0; j < n; ++j) {
          const int32_t acc = int32_t(uint32_t(raw[j]) + add - uint32_t(za) * uint32_t(cs[j]));
          const float mult = by_col ? per_col[j] : row_mult;
          const float v = float(acc) * mult;
          int32_t want;
          if (v != v) want = std::min(std::max(z[0], z[1]), z[2]);
          else {
            const float r = std::nearbyint(v);  // the definition: round half to even, then saturate
            want = r <= float(z[1] - z[0]) ? z[1] : r >= float(z[2] - z[0]) ? z[2] : int32_t(r) + z[0];
          }
          const int32_t got = z[1] < 0 ? int32_t(int8_t(out[j])) : int32_t(out[j]);
          if (got != want) {
            INFO("isa " << isa_name(isa) << " mult " << mult << " zp " << z[0] << " element " << j << " acc " << acc);
            CHECK(got == want);
            break;
          }
        }
        for (uint8_t b : out) {
          h ^= b;
          h *= 0x100000001b3ull;
        }
      }
    if (isa == Isa::Scalar) hash = h;
    CHECK(h == hash);
  }
}

TEST_CASE("QuantizeLinear per tensor (q8_quantize): every ISA divides, rounds half to even and saturates as the definition, NaN to the zero point") {
  const float scales[] = {1.0f, 0.5f, 1.0f / 3.0f, 1e-3f, 7.5f, 3e-39f};  // the last one subnormal
  const int32_t zps[][3] = {{0, 0, 255}, {128, 0, 255}, {255, 0, 255}, {0, -128, 127}, {-128, -128, 127}, {127, -128, 127}};
  const size_t n = 77;  // past every vector width, with a tail
  std::mt19937 rng(43);
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = float(int(rng() % 1201) - 600) * 0.25f;  // quarters: ties after / 0.5 and / 1
  x[0] = std::numeric_limits<float>::quiet_NaN(), x[1] = std::numeric_limits<float>::infinity();
  x[2] = -std::numeric_limits<float>::infinity(), x[3] = -0.0f, x[4] = 1e30f, x[5] = -1e30f, x[6] = 2.5f, x[7] = -2.5f;
  for (float scale : scales)
    for (const auto& z : zps) {
      std::vector<int32_t> want(n);
      for (size_t i = 0; i < n; ++i) {
        const float v = x[i] / scale;
        if (v != v) want[i] = std::min(std::max(z[0], z[1]), z[2]);
        else {
          const float r = std::nearbyint(v);
          want[i] = r <= float(z[1] - z[0]) ? z[1] : r >= float(z[2] - z[0]) ? z[2] : int32_t(r) + z[0];
        }
      }
      for (Isa isa : available_isas()) {
        IsaScope scope(isa);
        std::vector<uint8_t> out(n + 1, 0xaa);
        q8_quantize(x.data(), n, scale, z[0], z[1], z[2], out.data(), z[1] < 0);
        std::vector<int32_t> got(n);
        for (size_t i = 0; i < n; ++i) got[i] = z[1] < 0 ? int32_t(int8_t(out[i])) : int32_t(out[i]);
        INFO("isa " << isa_name(isa) << " scale " << scale << " zero point " << z[0]);
        CHECK(got == want);
        CHECK(out[n] == 0xaa);  // nothing past n
      }
    }
}

TEST_CASE("DynamicQuantizeLinear's range (q8_range): every ISA gives min and max of 0 and the finite elements, -0 as +0") {
  std::mt19937 rng(47);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (size_t n : {0, 1, 5, 16, 17, 77, 1000})
    for (int form = 0; form < 4; ++form) {  // mixed signs, all positive, all negative, non-finite among them
      std::vector<float> x(n);
      for (auto& v : x) {
        v = float(int(rng() % 20001) - 10000) * 1e-2f;
        if (form == 1) v = std::fabs(v) + 1.0f;
        if (form == 2) v = -std::fabs(v) - 1.0f;
      }
      if (form == 3 && n > 3) x[0] = nan, x[1] = inf, x[2] = -inf, x[n - 1] = -0.0f;
      float want_lo = 0.0f, want_hi = 0.0f;
      for (float v : x)
        if (std::isfinite(v)) want_lo = std::min(want_lo, v), want_hi = std::max(want_hi, v);
      for (Isa isa : available_isas()) {
        IsaScope scope(isa);
        float lo = 1.0f, hi = -1.0f;
        q8_range(x.data(), n, &lo, &hi);
        INFO("isa " << isa_name(isa) << " n " << n << " form " << form);
        CHECK(lo == want_lo);
        CHECK(hi == want_hi);
        CHECK(!(lo == 0.0f && std::signbit(lo)));  // never -0
      }
    }
}

TEST_CASE("integer convolution strip: every ISA interleaves four rows into words and sums them as int8, tails included") {
  std::mt19937 rng(17);
  for (size_t n : {1, 15, 16, 17, 31, 32, 33, 64, 100}) {
    std::vector<uint8_t> rows[4];
    for (auto& r : rows) {
      r.resize(n);
      for (auto& v : r) v = uint8_t(rng());
    }
    rows[1][0] = 0x7f, rows[2][0] = 0x80, rows[3][0] = 0xff;  // the extremes of either flip
    const uint8_t* ptr[4] = {rows[0].data(), rows[1].data(), rows[2].data(), rows[3].data()};
    for (uint8_t flip : {uint8_t(0), uint8_t(0x80)}) {
      std::vector<uint32_t> want(n);
      std::vector<int32_t> want_sums(n);
      for (size_t c = 0; c < n; ++c) {
        want_sums[c] = int32_t(c) - 7;  // sums accumulate onto what is there
        for (size_t t = 0; t < 4; ++t) {
          const uint8_t v = uint8_t(ptr[t][c] ^ flip);
          want[c] |= uint32_t(v) << (8 * t);
          want_sums[c] += int8_t(v);
        }
      }
      // A plain row (16 words from one group of 16 columns to the next), and panels 40 words apart.
      for (size_t panel_words : {size_t(16), size_t(40)}) {
        const size_t span = (n + 15) / 16 * panel_words;
        std::vector<uint32_t> want_at(span + 1, 0xdeadbeef);
        for (size_t c = 0; c < n; ++c) want_at[c / 16 * panel_words + c % 16] = want[c];
        for (Isa isa : available_isas()) {
          IsaScope scope(isa);
          std::vector<uint32_t> got(span + 1, 0xdeadbeef);
          std::vector<int32_t> sums(n + 1);
          for (size_t c = 0; c <= n; ++c) sums[c] = int32_t(c) - 7;
          q8_interleave4(ptr, flip, n, got.data(), panel_words, sums.data());
          INFO("isa " << isa_name(isa) << " n " << n << " flip " << int(flip) << " panel words " << panel_words);
          CHECK(got == want_at);  // the words where they belong, nothing between panels or past n
          CHECK(std::vector<int32_t>(sums.begin(), sums.begin() + long(n)) == want_sums);
          CHECK(sums[n] == int32_t(n) - 7);
        }
      }
    }
  }
}

TEST_CASE("integer depthwise steps: every ISA lays out pair words and sums word products as the definition, tails and wrapping included") {
  std::mt19937 rng(29);
  // Pair rows: both dtypes, steps 1 to 3, zero points at the ends of the ranges, three rows
  // apart in the input and in the output.
  for (size_t n : {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 100})
    for (size_t step : {1, 2, 3})
      for (bool is_signed : {false, true})
        for (int32_t zero : is_signed ? std::vector<int32_t>{-128, 0, 127} : std::vector<int32_t>{0, 1, 255}) {
          const size_t rows = 3, in_stride = n * step + 5, out_stride = n + 3;
          // Exactly the bytes read, so a sanitizer sees any load past the last one.
          std::vector<uint8_t> a((rows - 1) * in_stride + (n - 1) * step + 1), b(a.size());
          for (auto& v : a) v = uint8_t(rng());
          for (auto& v : b) v = uint8_t(rng());
          a[0] = 0, b[0] = 0xff;
          std::vector<uint32_t> want(rows * out_stride, 0xdeadbeef);
          auto val = [&](uint8_t v) { return (is_signed ? int32_t(int8_t(v)) : int32_t(v)) - zero; };
          for (size_t i = 0; i < rows; ++i)
            for (size_t c = 0; c < n; ++c) {
              const int32_t lo = val(a[i * in_stride + c * step]), hi = val(b[i * in_stride + c * step]);
              CHECK(std::abs(lo) <= 255);
              want[i * out_stride + c] = uint32_t(uint16_t(int16_t(lo))) | uint32_t(uint16_t(int16_t(hi))) << 16;
            }
          for (Isa isa : available_isas()) {
            IsaScope scope(isa);
            std::vector<uint32_t> got(rows * out_stride, 0xdeadbeef);
            q8_pair_rows(a.data(), b.data(), rows, in_stride, step, zero, is_signed, n, got.data(), out_stride);
            INFO("isa " << isa_name(isa) << " n " << n << " step " << step << " signed " << is_signed << " zero " << zero);
            CHECK(got == want);  // the words, and nothing between the rows
            if (step == 2) {  // neighbours (b = a + 1, the depthwise column pairs): exactly 2n bytes a row
              std::vector<uint8_t> r((rows - 1) * in_stride + 2 * n);
              for (auto& v : r) v = uint8_t(rng());
              std::vector<uint32_t> wn(rows * out_stride, 0xdeadbeef), gn(rows * out_stride, 0xdeadbeef);
              for (size_t i = 0; i < rows; ++i)
                for (size_t c = 0; c < n; ++c)
                  wn[i * out_stride + c] = q8_pair(val(r[i * in_stride + 2 * c]), val(r[i * in_stride + 2 * c + 1]));
              q8_pair_rows(r.data(), r.data() + 1, rows, in_stride, 2, zero, is_signed, n, gn.data(), out_stride);
              CHECK(gn == wn);
            }
          }
        }
  // Pair dots: tap counts of 1x1 to 7x7 kernels in pairs, rows apart in the words, and enough
  // taps of the largest products (255 x -255 in both halves, every tap reading the same words:
  // little memory, the microcontroller runs this too) to wrap the i32 sum.
  // Rows: 5 (a block of four rows and one more), 11 (AVX-512 puts rows of at most 8 words two to
  // a vector, four pairs at a time: a block of four pairs, one pair and one row).
  constexpr size_t kWrapTaps = 17000;  // 17000 x 2 x 255 x 255 > 2^31
  for (size_t taps : {size_t(1), size_t(2), size_t(6), size_t(15), size_t(28), kWrapTaps})
    for (size_t n : {1, 7, 8, 15, 16, 17, 40})
      for (size_t rows : {size_t(5), size_t(11)}) {
        const bool wrap = taps == kWrapTaps;
        if (wrap && (n > 17 || rows > 5)) continue;
        const size_t stride = n + 9;
        std::vector<std::vector<uint32_t>> words(wrap ? 1 : taps, std::vector<uint32_t>(rows * stride));
        std::vector<uint32_t> w(taps);
        auto v = [&] { return int32_t(rng() % 511) - 255; };
        for (size_t t = 0; t < taps; ++t) w[t] = wrap ? q8_pair(-255, -255) : q8_pair(v(), v());
        for (auto& row : words)
          for (auto& x : row) x = wrap ? q8_pair(255, 255) : q8_pair(v(), v());
        std::vector<const uint32_t*> src(taps);
        for (size_t t = 0; t < taps; ++t) src[t] = words[wrap ? 0 : t].data();
        std::vector<int32_t> want(rows * n + 1, 777);
        for (size_t i = 0; i < rows; ++i)
          for (size_t j = 0; j < n; ++j) {
            int64_t sum = 0;
            for (size_t t = 0; t < taps; ++t) {
              const uint32_t x = src[t][i * stride + j];
              sum += int64_t(int16_t(x & 0xFFFF)) * int16_t(w[t] & 0xFFFF) + int64_t(int16_t(x >> 16)) * int16_t(w[t] >> 16);
            }
            want[i * n + j] = int32_t(uint32_t(uint64_t(sum)));  // modulo 2^32
          }
        if (wrap) CHECK(int64_t(want[0]) != -int64_t(taps) * 2 * 255 * 255);  // the sum wrapped
        for (Isa isa : available_isas()) {
          IsaScope scope(isa);
          std::vector<int32_t> got(rows * n + 1, 777);
          q8_pair_dot(src.data(), w.data(), taps, n, rows, stride, got.data());
          INFO("isa " << isa_name(isa) << " taps " << taps << " n " << n << " rows " << rows);
          CHECK(got == want);  // nothing past the last row
        }
      }
}

namespace {
// Each kernel against the reference over row, K and panel counts around every tile and group.
void check_raw_products(const std::vector<std::pair<const char*, Q8DotKernel>>& kernels) {
  std::mt19937 rng(5);
  for (const auto& [name, kernel] : kernels)
    for (size_t rows : {1, 5, 16, 17, 40, 48})
      for (size_t K : {4, 63, 64, 65, 300, 1000})
        for (size_t panels : {1, 2, 3, 5, 9}) {
          const size_t lda = q8_lda(K), groups = q8_groups(K), ps = q8_panel_stride(K), ldc = panels * kQ8Panel + 3;
          std::vector<uint8_t> a(rows * lda);
          std::vector<int8_t> b(panels * ps);
          for (auto& v : a) v = uint8_t(rng());
          for (auto& v : b) v = int8_t(rng());
          std::vector<int32_t> want(rows * ldc, 7), got(rows * ldc, 7);
          q8_dot__scalar(a.data(), lda, rows, b.data(), ps, groups, panels, want.data(), ldc);
          kernel(a.data(), lda, rows, b.data(), ps, groups, panels, got.data(), ldc);
          INFO(name << ": rows " << rows << " K " << K << " panels " << panels);
          CHECK(got == want);
        }
}
}  // namespace

#if defined(__aarch64__)  // the library builds the NEON files on every AArch64 target
namespace om::kernels::neon {
void q8_dot__neon(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t ps, size_t groups, size_t panels,
                  int32_t* c, size_t ldc);
void q8_dot__neondot(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t ps, size_t groups, size_t panels,
                     int32_t* c, size_t ldc);
}  // namespace om::kernels::neon

TEST_CASE("integer products: each AArch64 raw product the CPU runs (the dot-product one, the widening one) equals the reference") {
  std::vector<std::pair<const char*, Q8DotKernel>> kernels = {{"neon widening", neon::q8_dot__neon}};
  if (cpu_has_neon_dotprod()) kernels.push_back({"neon dot product", neon::q8_dot__neondot});
  const std::string dot = cpu_has_neon_dotprod() ? "NEON dot product: yes" : "NEON dot product: no";
  MESSAGE(dot);
  check_raw_products(kernels);
}
#endif

#if defined(__x86_64__)  // the library builds the AVX2 and AVX-512 files on every x86-64 target
namespace om::kernels::avx2 {
void q8_dot__avx2(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t ps, size_t groups, size_t panels,
                  int32_t* c, size_t ldc);
void q8_dot__avxvnni(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t ps, size_t groups, size_t panels,
                     int32_t* c, size_t ldc);
}  // namespace om::kernels::avx2
namespace om::kernels::avx512 {
void q8_dot__avx512vnni(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t ps, size_t groups, size_t panels,
                        int32_t* c, size_t ldc);
void q8_dot__amx(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t ps, size_t groups, size_t panels,
                 int32_t* c, size_t ldc);
bool amx_usable();
}  // namespace om::kernels::avx512

TEST_CASE("integer products: each x86 raw product the CPU runs (AMX, the two VNNI, AVX2's widening) equals the reference, whichever the table took") {
  std::vector<std::pair<const char*, Q8DotKernel>> kernels;
  if (isa_supported(Isa::Avx2)) kernels.push_back({"avx2 widening", avx2::q8_dot__avx2});
  if (cpu_has_avx_vnni()) kernels.push_back({"avx vnni", avx2::q8_dot__avxvnni});
  if (cpu_has_avx512_vnni()) kernels.push_back({"avx512 vnni", avx512::q8_dot__avx512vnni});
  if (cpu_has_amx_int8() && avx512::amx_usable()) kernels.push_back({"amx", avx512::q8_dot__amx});
  check_raw_products(kernels);
}
#endif

#if defined(__ARM_FEATURE_SIMD32)
TEST_CASE("integer products: the M-profile DSP raw product (the bare-metal table's) equals the reference") {
  std::mt19937 rng(7);
  for (size_t rows : {1, 3, 8})
    for (size_t K : {4, 5, 63, 64, 300})
      for (size_t panels : {1, 2, 3}) {
        const size_t lda = q8_lda(K), groups = q8_groups(K), ps = q8_panel_stride(K), ldc = panels * kQ8Panel + 3;
        std::vector<uint8_t> a(rows * lda);
        std::vector<int8_t> b(panels * ps);
        for (auto& v : a) v = uint8_t(rng());
        for (auto& v : b) v = int8_t(rng());
        // The extremes too: 255 x -128 in every lane, where a halfword product is at its largest.
        if (rows == 8) std::fill(a.begin(), a.end(), uint8_t(255)), std::fill(b.begin(), b.end(), int8_t(-128));
        std::vector<int32_t> want(rows * ldc, 7), got(rows * ldc, 7);
        q8_dot__scalar(a.data(), lda, rows, b.data(), ps, groups, panels, want.data(), ldc);
        q8_dot__dsp(a.data(), lda, rows, b.data(), ps, groups, panels, got.data(), ldc);
        CAPTURE(rows);
        CAPTURE(K);
        CAPTURE(panels);
        CHECK(got == want);
      }
}
#endif
