// Elementwise, reduction, softmax and f16 kernels of the native ISA against the scalar
// reference: every size up to a few vectors past each tile, unaligned pointers, both step kinds.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/kernel_test_util.h"
#include "onemodel/core/dtype.h"
#include "onemodel/kernels/kernels_internal.h"

using namespace om::kernels;
using namespace om::kernels::test;
using om::ArithmeticMode;

namespace {

std::vector<size_t> sizes() {
  std::vector<size_t> s;
  for (size_t n = 0; n <= 40; ++n) s.push_back(n);
  for (size_t n : {63, 64, 65, 127, 257, 1000, 1031}) s.push_back(n);
  return s;
}

const BinaryOp kBinary[] = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div,
                            BinaryOp::Max, BinaryOp::Min, BinaryOp::Pow};
const UnaryOp kUnary[] = {UnaryOp::Identity, UnaryOp::Neg,     UnaryOp::Relu, UnaryOp::Sigmoid,
                          UnaryOp::Tanh,     UnaryOp::GeluErf, UnaryOp::GeluTanh, UnaryOp::Exp,
                          UnaryOp::Log,      UnaryOp::Erf,     UnaryOp::Sqrt, UnaryOp::Abs,
                          UnaryOp::Reciprocal};

}  // namespace

TEST_CASE("dispatch: native ISA is supported, scalar always is, force_isa switches") {
  CHECK(isa_supported(Isa::Scalar));
  CHECK(isa_supported(native_isa()));
  MESSAGE("native ISA: " << std::string(isa_name(native_isa())));
#if defined(__aarch64__)
  CHECK(native_isa() == Isa::Neon);
  CHECK_FALSE(isa_supported(Isa::Avx2));
#endif
#if defined(__x86_64__)
  CHECK_FALSE(isa_supported(Isa::Neon));
#endif
  {
    IsaScope s(Isa::Scalar);
    CHECK(active_isa() == Isa::Scalar);
  }
  CHECK(active_isa() == native_isa());
}

TEST_CASE("dispatch: every slot of every ISA's kernel tables is filled") {
  CHECK(om::kernels::table_complete(om::kernels::scalar_table()));
  CHECK(om::kernels::table_complete(om::kernels::scalar_conv_table()));
  CHECK(om::kernels::table_complete(om::kernels::scalar_q8_table()));
#if defined(__x86_64__)
  // The library builds the AVX2 and AVX-512 tables on every x86-64 target; a table's code is
  // compiled for its ISA, so it is only looked at on a CPU that runs that ISA.
  if (isa_supported(Isa::Avx2)) {
    CHECK(om::kernels::table_complete(om::kernels::avx2_table()));
    CHECK(om::kernels::table_complete(om::kernels::avx2_conv_table()));
    CHECK(om::kernels::table_complete(om::kernels::avx2_q8_table()));
  }
  if (isa_supported(Isa::Avx512)) {
    CHECK(om::kernels::table_complete(om::kernels::avx512_table()));
    CHECK(om::kernels::table_complete(om::kernels::avx512_conv_table()));
    CHECK(om::kernels::table_complete(om::kernels::avx512_q8_table()));
  }
#endif
#if defined(__aarch64__)
  CHECK(om::kernels::table_complete(om::kernels::neon_table()));
  CHECK(om::kernels::table_complete(om::kernels::neon_conv_table()));
  CHECK(om::kernels::table_complete(om::kernels::neon_q8_table()));
#endif
  om::kernels::KernelTable missing = om::kernels::scalar_table();
  missing.softmax_rows_fast = nullptr;
  CHECK_FALSE(om::kernels::table_complete(missing));
  om::kernels::ConvKernelTable missing_conv = om::kernels::scalar_conv_table();
  missing_conv.pool_window = nullptr;
  CHECK_FALSE(om::kernels::table_complete(missing_conv));
  om::kernels::Q8KernelTable missing_q8 = om::kernels::scalar_q8_table();
  missing_q8.q8_pair_dot = nullptr;
  CHECK_FALSE(om::kernels::table_complete(missing_q8));
}

TEST_CASE("f32_binary: native == scalar bitwise, every op, size, step and misalignment") {
  const auto av = awkward_values(1100, 1), bv = awkward_values(1100, 2);
  std::vector<float> ref(1100), got(1100);
  for (BinaryOp op : kBinary)
    for (size_t n : sizes())
      for (size_t off = 0; off < 3; ++off)
        for (size_t as : {0, 1})
          for (size_t bs : {0, 1}) {
            const float* a = av.data() + off;
            const float* b = bv.data() + 2 * off + 1;
            {
              IsaScope s(Isa::Scalar);
              f32_binary(op, a, as, b, bs, ref.data() + off, n);
            }
            f32_binary(op, a, as, b, bs, got.data() + off, n);
            const size_t bad = first_mismatch(ref.data() + off, got.data() + off, n);
            INFO("op " << int(op) << " n " << n << " off " << off << " steps " << as << bs << " at " << bad);
            REQUIRE(bad == n);
          }
}

TEST_CASE("f32_binary: reference semantics") {
  const float a[] = {1.0f, -2.0f, NAN, 3.0f, 0.0f, -0.0f, 2.0f, -8.0f, 4.0f};
  const float b[] = {2.0f, -3.0f, 1.0f, NAN, -0.0f, 0.0f, 10.0f, 1.0f / 3.0f, 0.5f};
  float y[9];
  f32_binary(BinaryOp::Max, a, 1, b, 1, y, 9);
  CHECK(y[0] == 2.0f);
  CHECK(y[1] == -2.0f);
  CHECK(std::isnan(y[2]));
  CHECK(std::isnan(y[3]));
  f32_binary(BinaryOp::Pow, a, 1, b, 1, y, 9);
  CHECK(y[0] == 1.0f);
  CHECK(y[6] == 1024.0f);
  CHECK(std::isnan(y[7]));  // negative base, fractional exponent
  CHECK(y[8] == 2.0f);
  const float two = 2.0f;
  f32_binary(BinaryOp::Mul, a, 1, &two, 0, y, 2);
  CHECK(y[0] == 2.0f);
  CHECK(y[1] == -4.0f);
}

TEST_CASE("f32_binary: pow is close to double-precision pow") {
  const auto av = awkward_values(4000, 3, 8.0f, false), bv = awkward_values(4000, 4, 3.0f, false);
  std::vector<float> y(4000);
  std::vector<float> pa(4000);
  for (size_t i = 0; i < 4000; ++i) pa[i] = std::fabs(av[i]);
  f32_binary(BinaryOp::Pow, pa.data(), 1, bv.data(), 1, y.data(), 4000);
  for (size_t i = 0; i < 4000; ++i) {
    const double r = std::pow(double(pa[i]), double(bv[i]));
    INFO(pa[i] << " ^ " << bv[i]);
    CHECK(std::fabs(y[i] - r) <= 1e-5 * std::fabs(r) + 1e-38);
  }
}

TEST_CASE("f32_unary: native == scalar bitwise, every op, size and misalignment") {
  const auto xv = awkward_values(1100, 5, 12.0f);
  std::vector<float> ref(1100), got(1100);
  for (UnaryOp op : kUnary)
    for (size_t n : sizes())
      for (size_t off = 0; off < 4; ++off) {
        const float* x = xv.data() + off;
        {
          IsaScope s(Isa::Scalar);
          f32_unary(op, x, ref.data() + (off ^ 1), n);
        }
        f32_unary(op, x, got.data() + (off ^ 1), n);
        const size_t bad = first_mismatch(ref.data() + (off ^ 1), got.data() + (off ^ 1), n);
        INFO("op " << int(op) << " n " << n << " off " << off << " at " << bad);
        REQUIRE(bad == n);
      }
}

TEST_CASE("f32_chain: every step kind equals its separate kernel, native == scalar bitwise, sizes past a block, in place") {
  const auto xv = awkward_values(1300, 7, 9.0f);
  using om::kernels::ChainOp;
  using om::kernels::ChainProgram;
  using om::kernels::ChainStep;
  constexpr int32_t C = om::kernels::kChainConstant, N = om::kernels::kChainNone;
  // Each step kind once, a constant on either side, X read again, values read twice.
  ChainProgram p;
  const ChainStep steps[] = {
      {ChainOp::Sub, C, 0, 0.75f, 0}, {ChainOp::Relu, 1, N, 0, 0},         {ChainOp::Div, C, 2, 0.75f, 0},
      {ChainOp::Sigmoid, 3, N, 0, 0}, {ChainOp::Tanh, 4, N, 0, 0},         {ChainOp::Sub, 5, 0, 0, 0},
      {ChainOp::LeakyRelu, 6, N, 0.3f, 0}, {ChainOp::HardSigmoid, 7, N, 0.4f, 0.3f}, {ChainOp::HardSwish, 8, N, 0, 0},
      {ChainOp::Clip, 9, N, -0.5f, 2.5f}, {ChainOp::Mul, 10, 10, 0, 0},     {ChainOp::Add, 11, C, -0.25f, 0},
      {ChainOp::Clip, 12, N, -INFINITY, 0.0f}, {ChainOp::Max, 13, C, -0.125f, 0}, {ChainOp::Min, C, 0, 0.5f, 0},
      {ChainOp::Max, 15, 14, 0, 0}};
  p.steps = int32_t(sizeof steps / sizeof steps[0]);
  for (int32_t i = 0; i < p.steps; ++i) p.step[i] = steps[i];
  // The same steps through f32_binary / f32_unary and the activation formulas, one at a time.
  auto reference = [&](const float* x, size_t n) {
    std::vector<std::vector<float>> v(size_t(p.steps) + 1, std::vector<float>(n));
    std::copy(x, x + n, v[0].begin());
    for (int32_t s = 0; s < p.steps; ++s) {
      const ChainStep& st = p.step[s];
      float* d = v[size_t(s) + 1].data();
      const float* a = st.a == C ? &st.c0 : v[size_t(st.a)].data();
      if (om::kernels::chain_op_binary(st.op)) {
        const float* b = st.b == C ? &st.c0 : v[size_t(st.b)].data();
        if (st.op == ChainOp::Max || st.op == ChainOp::Min) {  // the variadic Max/Min nodes' fold of two
          for (size_t i = 0; i < n; ++i) {
            const float x = a[st.a == C ? 0 : i], y = b[st.b == C ? 0 : i];
            const float m = st.op == ChainOp::Max ? (x < y ? y : x) : (y < x ? y : x);
            d[i] = x != x || y != y ? NAN : m;
          }
          continue;
        }
        const BinaryOp op = st.op == ChainOp::Add ? BinaryOp::Add : st.op == ChainOp::Sub ? BinaryOp::Sub
                            : st.op == ChainOp::Mul ? BinaryOp::Mul : BinaryOp::Div;
        IsaScope scalar(Isa::Scalar);
        f32_binary(op, a, st.a == C ? 0 : 1, b, st.b == C ? 0 : 1, d, n);
        continue;
      }
      auto clamp01 = [](float u) { return u < 1.0f ? (u > 0.0f ? u : 0.0f) : 1.0f; };
      for (size_t i = 0; i < n; ++i) {
        const float e = a[i];
        switch (st.op) {
          case ChainOp::Relu: d[i] = e < 0.0f ? 0.0f : e; break;
          case ChainOp::Sigmoid: d[i] = om::kernels::sigmoid_f32(e); break;
          case ChainOp::Tanh: d[i] = om::kernels::tanh_f32(e); break;
          case ChainOp::Clip: { const float t = e < st.c0 ? st.c0 : e; d[i] = t > st.c1 ? st.c1 : t; break; }
          case ChainOp::LeakyRelu: d[i] = e < 0.0f ? st.c0 * e : e; break;
          case ChainOp::HardSigmoid: d[i] = clamp01(st.c0 * e + st.c1); break;
          case ChainOp::HardSwish: d[i] = e * clamp01(e * (1.0f / 6.0f) + 0.5f); break;
          default: FAIL("not a one-operand step");
        }
      }
    }
    return v.back();
  };
  std::vector<size_t> ns = sizes();
  ns.push_back(512);
  ns.push_back(1029);  // two whole blocks and a tail
  for (Isa isa : available_isas()) {
    IsaScope scope(isa);
    for (size_t n : ns)
      for (size_t off = 0; off < 3; ++off) {
        const float* x = xv.data() + off;
        const std::vector<float> want = reference(x, n);
        std::vector<float> y(n + 1, 12345.0f);
        om::kernels::f32_chain(p, x, y.data() + 1, n);
        INFO("isa " << isa_name(isa) << " n " << n << " off " << off);
        CHECK(first_mismatch(y.data() + 1, want.data(), n) == n);
        std::vector<float> inplace(x, x + n);  // y is x
        om::kernels::f32_chain(p, inplace.data(), inplace.data(), n);
        CHECK(first_mismatch(inplace.data(), want.data(), n) == n);
      }
  }
}

TEST_CASE("f32_unary: in place, and simple values") {
  std::vector<float> x = {-1.0f, 0.0f, 2.0f, -0.0f, NAN, 1.0f, 4.0f, 9.0f, 16.0f};
  f32_unary(UnaryOp::Relu, x.data(), x.data(), x.size());
  CHECK(x[0] == 0.0f);
  CHECK(x[2] == 2.0f);
  CHECK(std::isnan(x[4]));
  f32_unary(UnaryOp::Sqrt, x.data() + 5, x.data() + 5, 4);
  CHECK(x[5] == 1.0f);
  CHECK(x[8] == 4.0f);
  float e = 0.0f, l = 1.0f;
  f32_unary(UnaryOp::Exp, &e, &e, 1);
  f32_unary(UnaryOp::Log, &l, &l, 1);
  CHECK(e == 1.0f);
  CHECK(l == 0.0f);
  CHECK(exp_f32(1.0f) == doctest::Approx(2.718281828));
  CHECK(std::isinf(log_f32(0.0f)));
  CHECK(std::isnan(log_f32(-1.0f)));
  CHECK(tanh_f32(100.0f) == 1.0f);
  CHECK(tanh_f32(-100.0f) == -1.0f);
  CHECK(sigmoid_f32(0.0f) == 0.5f);
  CHECK(erf_f32(INFINITY) == 1.0f);
  CHECK(erf_f32(-INFINITY) == -1.0f);
}

TEST_CASE("f32_sum: exact order matches an independent implementation of the rule") {
  for (size_t n : sizes())
    for (size_t off = 0; off < 3; ++off) {
      const auto v = awkward_values(n + off, uint32_t(n * 7 + off), 100.0f, false);
      const float* x = v.data() + off;
      float lane[8] = {};
      const size_t body = n / 8 * 8;
      for (size_t k = 0; k < body; ++k) lane[k % 8] += x[k];
      float want = ((lane[0] + lane[4]) + (lane[2] + lane[6])) + ((lane[1] + lane[5]) + (lane[3] + lane[7]));
      for (size_t k = body; k < n; ++k) want += x[k];
      const float got = f32_sum(x, n, ArithmeticMode::Exact);
      INFO("n " << n << " off " << off);
      CHECK(same_bits(got, want));
      double d = 0;
      for (size_t k = 0; k < n; ++k) d += x[k];
      CHECK(f32_sum(x, n, ArithmeticMode::Fast) == doctest::Approx(d).epsilon(1e-4).scale(100.0 * n + 1.0));
    }
}

TEST_CASE("f32_reduce_sum: every output follows the exact rule over its strided sequence") {
  for (size_t outer : {1, 3})
    for (size_t n : {0, 1, 5, 8, 9, 17, 33})
      for (size_t inner : {1, 2, 7, 8, 9, 16, 19}) {
        const auto v = awkward_values(outer * n * inner, uint32_t(outer + 10 * n + 100 * inner), 10.0f, false);
        std::vector<float> got(outer * inner), seq(n);
        f32_reduce_sum(v.data(), outer, n, inner, got.data(), ArithmeticMode::Exact);
        for (size_t o = 0; o < outer; ++o)
          for (size_t i = 0; i < inner; ++i) {
            for (size_t k = 0; k < n; ++k) seq[k] = v[(o * n + k) * inner + i];
            IsaScope s(Isa::Scalar);
            const float want = f32_sum(seq.data(), n, ArithmeticMode::Exact);
            INFO("outer " << outer << " n " << n << " inner " << inner << " o " << o << " i " << i);
            CHECK(same_bits(got[o * inner + i], want));
          }
      }
}

TEST_CASE("f32_max: native == scalar and the documented NaN / signed-zero rules") {
  for (size_t n : sizes())
    for (size_t off = 0; off < 3; ++off) {
      const auto v = awkward_values(n + off, uint32_t(n + 1000 * off), 50.0f, false);
      float ref;
      {
        IsaScope s(Isa::Scalar);
        ref = f32_max(v.data() + off, n);
      }
      const float got = f32_max(v.data() + off, n);
      CHECK(same_bits(ref, got));
      if (n > 0) CHECK(got == *std::max_element(v.begin() + off, v.end()));
    }
  std::vector<float> z(37, -0.0f);
  CHECK(bits(f32_max(z.data(), z.size())) == 0x80000000u);
  z[20] = 0.0f;
  CHECK(bits(f32_max(z.data(), z.size())) == 0u);
  z[33] = NAN;
  CHECK(std::isnan(f32_max(z.data(), z.size())));
}

TEST_CASE("f32_softmax_rows: native == scalar bitwise, rows sum to 1, log form consistent") {
  for (size_t n : {1, 2, 7, 8, 9, 33, 257, 1000})
    for (bool log : {false, true}) {
      const size_t rows = 3;
      const auto x = awkward_values(rows * n + 1, uint32_t(n), 20.0f, false);
      std::vector<float> ref(rows * n), got(rows * n);
      {
        IsaScope s(Isa::Scalar);
        f32_softmax_rows(x.data() + 1, ref.data(), rows, n, log, ArithmeticMode::Exact);
      }
      f32_softmax_rows(x.data() + 1, got.data(), rows, n, log, ArithmeticMode::Exact);
      INFO("n " << n << " log " << log);
      CHECK(first_mismatch(ref.data(), got.data(), rows * n) == rows * n);
      for (size_t r = 0; r < rows; ++r) {
        double s = 0;
        for (size_t i = 0; i < n; ++i) s += log ? std::exp(double(got[r * n + i])) : got[r * n + i];
        CHECK(s == doctest::Approx(1.0).epsilon(1e-5));
      }
    }
}

TEST_CASE("f16 conversions: native == scalar for every half and a float sweep; core agrees") {
  std::vector<uint16_t> h(65536);
  for (uint32_t i = 0; i < 65536; ++i) h[i] = uint16_t(i);
  std::vector<float> ref(65536), got(65536);
  {
    IsaScope s(Isa::Scalar);
    f16_to_f32(h.data(), ref.data(), h.size());
  }
  f16_to_f32(h.data(), got.data(), h.size());
  for (uint32_t i = 0; i < 65536; ++i) {
    INFO("half " << i);
    REQUIRE(bits(ref[i]) == bits(got[i]));
    if (!std::isnan(ref[i])) REQUIRE(bits(ref[i]) == bits(om::half_to_float(om::half{uint16_t(i)})));
  }
  // Floats around every rounding boundary: all exponents, dense mantissas.
  std::vector<float> f;
  for (uint32_t u = 0; u < 0x80000000u; u += 0x1357u) {
    f.push_back(from_bits(u));
    f.push_back(from_bits(u | 0x80000000u));
  }
  for (uint32_t u = 0x33000000u; u < 0x33000010u; ++u) f.push_back(from_bits(u));  // 2^-25 ties
  std::vector<uint16_t> hr(f.size()), hg(f.size());
  {
    IsaScope s(Isa::Scalar);
    f32_to_f16(f.data(), hr.data(), f.size());
  }
  f32_to_f16(f.data(), hg.data(), f.size());
  for (size_t i = 0; i < f.size(); ++i) {
    INFO("float " << f[i] << " bits " << bits(f[i]));
    REQUIRE(hr[i] == hg[i]);
    if (!std::isnan(f[i])) REQUIRE(hr[i] == om::float_to_half(f[i]).bits);
  }
}
