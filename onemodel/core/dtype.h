// Element types. The numeric codes equal ONNX TensorProto.DataType so files map directly.
#pragma once
#include <cstddef>
#include <cstdint>

namespace om {

enum class DType : int32_t {
  f32 = 1,
  u8 = 2,
  i8 = 3,
  i32 = 6,
  i64 = 7,
  boolean = 9,
  f16 = 10,
  f64 = 11,
  i16 = 5,
  u16 = 4,
  u32 = 12,
  u64 = 13,
  bf16 = 16,
};

constexpr size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32: return 4;
    case DType::u8: return 1;
    case DType::i8: return 1;
    case DType::i32: return 4;
    case DType::i64: return 8;
    case DType::boolean: return 1;
    case DType::f16: return 2;
    case DType::f64: return 8;
    case DType::i16: return 2;
    case DType::u16: return 2;
    case DType::u32: return 4;
    case DType::u64: return 8;
    case DType::bf16: return 2;
  }
  return 0;
}

const char* dtype_name(DType t);
// True for the ONNX codes onemodel supports; used by every reader.
bool dtype_from_onnx(int32_t code, DType* out);

// Half-precision storage type (IEEE binary16); arithmetic happens in f32.
struct half {
  uint16_t bits = 0;
};
float half_to_float(half h);
half float_to_half(float f);  // round to nearest even

// bfloat16 storage type (f32's upper half: 8 exponent bits, 7 mantissa bits); arithmetic in f32.
struct bfloat16 {
  uint16_t bits = 0;
};
float bf16_to_float(bfloat16 h);  // exact
bfloat16 float_to_bf16(float f);  // round to nearest even; NaN stays NaN (quiet, sign kept)

// The 16-bit float storage types (f16, bf16), for code written once over both.
inline float storage_to_float(half h) { return half_to_float(h); }
inline float storage_to_float(bfloat16 h) { return bf16_to_float(h); }
template <typename T> struct is_float16_storage { static constexpr bool value = false; };
template <> struct is_float16_storage<half> { static constexpr bool value = true; };
template <> struct is_float16_storage<bfloat16> { static constexpr bool value = true; };
template <typename T> T float_to_storage(float f);
template <> inline half float_to_storage<half>(float f) { return float_to_half(f); }
template <> inline bfloat16 float_to_storage<bfloat16>(float f) { return float_to_bf16(f); }

template <typename T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::f32; };
template <> struct dtype_of<uint8_t> { static constexpr DType value = DType::u8; };
template <> struct dtype_of<int8_t> { static constexpr DType value = DType::i8; };
template <> struct dtype_of<int32_t> { static constexpr DType value = DType::i32; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::i64; };
template <> struct dtype_of<bool> { static constexpr DType value = DType::boolean; };
template <> struct dtype_of<half> { static constexpr DType value = DType::f16; };
template <> struct dtype_of<double> { static constexpr DType value = DType::f64; };
template <> struct dtype_of<int16_t> { static constexpr DType value = DType::i16; };
template <> struct dtype_of<uint16_t> { static constexpr DType value = DType::u16; };
template <> struct dtype_of<uint32_t> { static constexpr DType value = DType::u32; };
template <> struct dtype_of<uint64_t> { static constexpr DType value = DType::u64; };
template <> struct dtype_of<bfloat16> { static constexpr DType value = DType::bf16; };

}  // namespace om
