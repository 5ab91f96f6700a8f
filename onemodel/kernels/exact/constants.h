// Constants of the library's own transcendental functions, shared by the scalar, AVX2 and NEON
// versions. Polynomial coefficients were fitted for this library (least squares on Chebyshev
// nodes in extended precision, reweighted toward equal ripple, rounded to float).
#pragma once
#include <cstdint>

namespace om::kernels::exact::c {

constexpr uint32_t kNanBits = 0x7fc00000u;
constexpr float kMinNormal = 0x1p-126f;
constexpr float kTwo23 = 0x1p23f;

// exp: x = k ln2 + r, |r| <= ln2/2 (+ rounding), exp(r) by its degree-7 Taylor polynomial.
constexpr float kExpMax = 89.0f;    // exp(89) overflows: the result is +inf
constexpr float kExpMin = -104.0f;  // exp(-104) < 2^-150: the result is +0
constexpr float kLog2e = 0x1.715476p+0f;
constexpr float kRoundMagic = 0x1.8p23f;  // adding it rounds |v| < 2^22 to an integer
constexpr float kLn2Hi = 0x1.62e43p-1f;
constexpr float kLn2Lo = -0x1.05c61p-29f;
constexpr float kExpPoly[8] = {1.0f,          1.0f,          0.5f,           0x1.555556p-3f,
                               0x1.555556p-5f, 0x1.111112p-7f, 0x1.6c16c2p-10f, 0x1.a01a02p-13f};

// log: x = 2^e m, m in [sqrt(1/2), sqrt(2)), log(1+f) = f + f^2 Q(f).
constexpr uint32_t kSqrtHalfBits = 0x3f3504f3u;
constexpr float kLn2HiShort = 0x1.62e4p-1f;  // 16 significant bits: e * hi is exact
constexpr float kLn2LoShort = 0x1.7f7d1cp-20f;
constexpr float kLogPoly[9] = {-0x1.fffff8p-2f, 0x1.555554p-2f, -0x1.000438p-2f,
                               0x1.99a23p-3f,   -0x1.542252p-3f, 0x1.229156p-3f,
                               -0x1.0f836ep-3f, 0x1.079a42p-3f,  -0x1.350d1ap-4f};

// 1/d for d in [1, 2]: start 24/17 - 8/17 d (relative error <= 1/17).
constexpr float kRecipSlope = -0x1.e1e1e2p-2f;
constexpr float kRecipOffset = 0x1.69696ap+0f;

// tanh: x + x^3 P(x^2) below the split, 1 - 2t/(1+t) above.
constexpr float kTanhSplit = 0.625f;
constexpr float kTanhPoly[6] = {-0x1.55554ep-2f, 0x1.110f2ap-3f, -0x1.b9bf1p-5f,
                                0x1.61e692p-6f,  -0x1.051cdcp-7f, 0x1.032bbcp-9f};

// erf: z + z P(z^2) below the split; above it erfc(z) = exp(-z^2 + S(z)).
constexpr float kErfSplit = 0.921875f;
constexpr float kErfMaxArg = 4.0f;  // erf(4) rounds to 1
constexpr float kErfPoly[7] = {0x1.06eba8p-3f,  -0x1.812742p-2f, 0x1.ce2decp-4f, -0x1.b80ca4p-6f,
                               0x1.54b93cp-8f,  -0x1.a9d88ep-11f, 0x1.5bcd3ep-14f};
constexpr float kErfcMid = 4.0f;
constexpr float kErfcMaxArg = 10.5f;  // erfc(10.5) underflows
constexpr float kErfcC1 = 2.5f;       // S1 is a polynomial in z - 2.5 on [0.921875, 4]
constexpr float kErfcS1[11] = {-0x1.8e8b72p+0f, -0x1.692524p-2f, 0x1.cb9f2cp-5f, -0x1.63ccep-7f,
                               0x1.1be04cp-9f,  -0x1.b9240cp-12f, 0x1.415838p-14f, -0x1.b3871p-17f,
                               0x1.0cc812p-19f, -0x1.1628b8p-24f, -0x1.2422aep-24f};
constexpr float kErfcC2 = 7.25f;  // S2 is a polynomial in z - 7.25 on [4, 10.5]
constexpr float kErfcS2[11] = {-0x1.480554p+1f, -0x1.1559p-3f,    0x1.27332cp-7f, -0x1.9bbe66p-11f,
                               0x1.3da356p-14f, -0x1.018abcp-17f, 0x1.a99d6cp-21f, -0x1.546694p-24f,
                               0x1.261708p-27f, -0x1.587e48p-30f, 0x1.098ccap-33f};

// GELU.
constexpr float kInvSqrt2 = 0x1.6a09e6p-1f;
constexpr float kGeluErfMin = -15.0f;   // below it the result is -0
constexpr float kGeluTanhMin = -30.0f;  // likewise
constexpr float kGeluTanhK0 = 0x1.988454p+0f;  // 2 sqrt(2/pi)
constexpr float kGeluTanhK1 = 0x1.2444f2p-4f;  // 2 sqrt(2/pi) * 0.044715

}  // namespace om::kernels::exact::c
