// One definition of the library's transcendental functions, written once over a small "lane
// operations" interface V and instantiated for scalar floats (exact/math.h), AVX2 (8 lanes),
// AVX-512 (16 lanes) and NEON (4 lanes). Because every ISA runs literally the same sequence of
// correctly rounded operations (+, -, *, fma) plus compares, selects and bit operations, the
// results are the same bits everywhere. Branches only skip work whose result a select would discard.
//
// V provides: types F (floats), I (int32 lanes), M (lane mask); set(float), seti(int32);
// add sub mul fma(a,b,c)=a*b+c rounded once; gt lt eq isnan (masks); select(m,a,b) = m?a:b;
// maxgt(a,b) = a>b?a:b; mingt(a,b) = a<b?a:b; abs neg_abs copysign_pos (bit ops);
// to_int (truncating, exact on integral values), to_float; iadd isub isra ishl iand;
// as_int as_float (bit casts); any(m) all(m).
#pragma once
#include <cstdint>

#include "onemodel/kernels/exact/constants.h"

namespace om::kernels::exact {

template <class V>
struct MathImpl {
  using F = typename V::F;
  using I = typename V::I;
  using M = typename V::M;

  template <size_t N>
  static F horner(F x, const float (&c)[N]) {
    F p = V::set(c[N - 1]);
    for (size_t i = N - 1; i-- > 0;) p = V::fma(p, x, V::set(c[i]));
    return p;
  }

  // 1 / (hi + lo) for hi in [1, 2], |lo| <= ulp(hi): linear start (relative error <= 1/17),
  // two Newton steps, and a last one that also folds in lo.
  static F recip_1_2(F hi, F lo) {
    const F one = V::set(1.0f);
    F r = V::fma(hi, V::set(c::kRecipSlope), V::set(c::kRecipOffset));
    F e = V::fma(V::neg(hi), r, one);
    r = V::fma(r, e, r);
    e = V::fma(V::neg(hi), r, one);
    r = V::fma(r, e, r);
    e = V::fma(V::neg(lo), r, V::fma(V::neg(hi), r, one));
    return V::fma(r, e, r);
  }
  // 1/(1+t) for t in [0, 1], keeping the rounding error of 1+t.
  static F recip_one_plus(F t) {
    const F one = V::set(1.0f);
    const F hi = V::add(one, t);
    const F lo = V::sub(t, V::sub(hi, one));
    return recip_1_2(hi, lo);
  }

  // exp for every non-NaN input (clamped so the scale factors stay representable).
  static F exp_core(F x) {
    x = V::maxgt(x, V::set(c::kExpMin));
    x = V::mingt(x, V::set(c::kExpMax));
    const F magic = V::set(c::kRoundMagic);
    const F kf = V::sub(V::add(V::mul(x, V::set(c::kLog2e)), magic), magic);
    F r = V::fma(kf, V::set(-c::kLn2Hi), x);
    r = V::fma(kf, V::set(-c::kLn2Lo), r);
    const F p = horner(r, c::kExpPoly);
    // 2^k as two factors so that a subnormal result is rounded once, by the last multiply.
    const I k = V::to_int(kf);
    const I k1 = V::isra(k, 1);
    const I k2 = V::isub(k, k1);
    const I bias = V::seti(127);
    const F s1 = V::as_float(V::ishl(V::iadd(k1, bias), 23));
    const F s2 = V::as_float(V::ishl(V::iadd(k2, bias), 23));
    return V::mul(V::mul(p, s1), s2);
  }

  static F exp(F x) { return V::select(V::isnan(x), x, exp_core(x)); }

  static F log(F x) {
    const M sub = V::lt(x, V::set(c::kMinNormal));
    const F xs = V::select(sub, V::mul(x, V::set(c::kTwo23)), x);
    const F e_adj = V::select(sub, V::set(-23.0f), V::set(0.0f));
    const I ix = V::isub(V::as_int(xs), V::seti(int32_t(c::kSqrtHalfBits)));
    const F e = V::add(V::to_float(V::isra(ix, 23)), e_adj);
    const F m = V::as_float(V::iadd(V::iand(ix, V::seti(0x7fffff)), V::seti(int32_t(c::kSqrtHalfBits))));
    const F f = V::sub(m, V::set(1.0f));
    const F y = V::fma(V::mul(f, f), horner(f, c::kLogPoly), f);
    F r = V::fma(e, V::set(c::kLn2HiShort), V::fma(e, V::set(c::kLn2LoShort), y));
    const F inf = V::set(__builtin_inff());
    r = V::select(V::eq(x, inf), inf, r);
    r = V::select(V::eq(x, V::set(0.0f)), V::set(-__builtin_inff()), r);
    r = V::select(V::lt(x, V::set(0.0f)), V::as_float(V::seti(int32_t(c::kNanBits))), r);
    return V::select(V::isnan(x), x, r);
  }

  static F tanh(F x) {
    const F a = V::abs(x);
    const M small = V::lt(a, V::set(c::kTanhSplit));
    const F s = V::mul(x, x);
    F y = V::fma(V::mul(x, s), horner(s, c::kTanhPoly), x);
    if (!V::all(small)) {
      // tanh(a) = 1 - 2t/(1+t), t = exp(-2a): no cancellation above the split.
      const F t = exp_core(V::mul(a, V::set(-2.0f)));
      const F q = V::mul(V::add(t, t), recip_one_plus(t));
      y = V::select(small, y, V::copysign_pos(V::sub(V::set(1.0f), q), x));
    }
    return V::select(V::isnan(x), x, y);
  }

  static F sigmoid_core(F x) {
    const F t = exp_core(V::neg_abs(x));
    const F r = recip_one_plus(t);
    return V::select(V::lt(x, V::set(0.0f)), V::mul(t, r), r);
  }
  static F sigmoid(F x) { return V::select(V::isnan(x), x, sigmoid_core(x)); }

  // erf(z) = z + z P(z^2) below the split.
  static F erf_small(F z) { return V::fma(z, horner(V::mul(z, z), c::kErfPoly), z); }
  // erfc(z) = exp(-z^2 + S(z)) for z at or above the split (S fitted on two intervals).
  static F erfc_large(F z) {
    z = V::mingt(z, V::set(c::kErfcMaxArg));
    const M lower = V::lt(z, V::set(c::kErfcMid));
    F s;
    if (V::all(lower)) {
      s = horner(V::sub(z, V::set(c::kErfcC1)), c::kErfcS1);
    } else if (!V::any(lower)) {
      s = horner(V::sub(z, V::set(c::kErfcC2)), c::kErfcS2);
    } else {
      s = V::select(lower, horner(V::sub(z, V::set(c::kErfcC1)), c::kErfcS1),
                    horner(V::sub(z, V::set(c::kErfcC2)), c::kErfcS2));
    }
    return exp_core(V::fma(V::neg(z), z, s));
  }

  static F erf(F x) {
    const F a = V::abs(x);
    const M small = V::lt(a, V::set(c::kErfSplit));
    F y = erf_small(x);
    if (!V::all(small)) {
      const F z = V::mingt(a, V::set(c::kErfMaxArg));
      y = V::select(small, y, V::copysign_pos(V::sub(V::set(1.0f), erfc_large(z)), x));
    }
    return V::select(V::isnan(x), x, y);
  }

  // 0.5 x (1 + erf(x/sqrt2)); for x < 0 evaluated as 0.5 x erfc(|x|/sqrt2) (no cancellation).
  static F gelu_erf(F x) {
    const F xc = V::maxgt(x, V::set(c::kGeluErfMin));
    const F z = V::mul(V::abs(xc), V::set(c::kInvSqrt2));
    const M neg = V::lt(xc, V::set(0.0f));
    const M small = V::lt(z, V::set(c::kErfSplit));
    const F one = V::set(1.0f);
    F factor;
    if (V::all(small)) {
      const F s = erf_small(z);
      factor = V::select(neg, V::sub(one, s), V::add(one, s));
    } else {
      const F ec = erfc_large(z);
      factor = V::select(neg, ec, V::sub(V::set(2.0f), ec));
      if (V::any(small)) {
        const F s = erf_small(z);
        factor = V::select(small, V::select(neg, V::sub(one, s), V::add(one, s)), factor);
      }
    }
    const F y = V::mul(V::mul(V::set(0.5f), xc), factor);
    return V::select(V::isnan(x), x, y);
  }

  // 0.5 x (1 + tanh(u)), u = sqrt(2/pi)(x + 0.044715 x^3), evaluated as x sigmoid(2u) (the same
  // function without the cancellation for x < 0).
  static F gelu_tanh(F x) {
    const F xc = V::maxgt(x, V::set(c::kGeluTanhMin));
    const F v = V::mul(xc, V::fma(V::set(c::kGeluTanhK1), V::mul(xc, xc), V::set(c::kGeluTanhK0)));
    const F y = V::mul(xc, sigmoid_core(v));
    return V::select(V::isnan(x), x, y);
  }
};

}  // namespace om::kernels::exact
