#include "onemodel/core/dtype.h"

#include <cstring>

namespace om {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::u8: return "u8";
    case DType::i8: return "i8";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::boolean: return "bool";
    case DType::f16: return "f16";
    case DType::f64: return "f64";
    case DType::i16: return "i16";
    case DType::u16: return "u16";
    case DType::u32: return "u32";
    case DType::u64: return "u64";
    case DType::bf16: return "bf16";
  }
  return "?";
}

bool dtype_from_onnx(int32_t code, DType* out) {
  switch (code) {
    case 1: case 2: case 3: case 4: case 5: case 6: case 7: case 9: case 10: case 11: case 12: case 13: case 16:
      *out = static_cast<DType>(code);
      return true;
    default:
      return false;
  }
}

float half_to_float(half h) {
  const uint32_t sign = (uint32_t(h.bits) & 0x8000u) << 16;
  uint32_t exp = (h.bits >> 10) & 0x1f;
  uint32_t mant = h.bits & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while ((mant & 0x400u) == 0) { mant <<= 1; --exp; }
      mant &= 0x3ffu;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

half float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t sign = uint16_t((x >> 16) & 0x8000u);
  const uint32_t absx = x & 0x7fffffffu;
  half h;
  if (absx >= 0x7f800000u) {  // inf or nan
    h.bits = uint16_t(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0));
    return h;
  }
  if (absx >= 0x477ff000u) {  // rounds to >= 65520: overflow to inf
    h.bits = uint16_t(sign | 0x7c00u);
    return h;
  }
  if (absx < 0x38800000u) {  // below the smallest normal half: subnormal or zero
    if (absx < 0x33000000u) { h.bits = sign; return h; }
    const uint32_t e = absx >> 23;
    const uint32_t m = (absx & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // 14 - (e - 127) + 13 - 1 ... gives the subnormal position
    uint32_t q = m >> (shift);
    const uint32_t rem = m & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (q & 1))) ++q;
    h.bits = uint16_t(sign | q);
    return h;
  }
  uint32_t m = absx + 0xc8000000u;  // rebias exponent 127 -> 15 (subtract 112 << 23)
  const uint32_t rem = m & 0x1fffu;
  uint32_t q = m >> 13;
  if (rem > 0x1000u || (rem == 0x1000u && (q & 1))) ++q;
  h.bits = uint16_t(sign | q);
  return h;
}

float bf16_to_float(bfloat16 h) {
  const uint32_t bits = uint32_t(h.bits) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

bfloat16 float_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  bfloat16 h;
  if ((x & 0x7fffffffu) > 0x7f800000u) {  // NaN: keep the sign and the top payload bits, quiet
    h.bits = uint16_t((x >> 16) | 0x0040u);
    return h;
  }
  // Round to nearest even on the dropped 16 bits (a carry may reach the exponent: inf is right).
  x += 0x7fffu + ((x >> 16) & 1u);
  h.bits = uint16_t(x >> 16);
  return h;
}

}  // namespace om
