// Calls a generic function with the C++ element type of a DType, so a loop written once as a
// template serves every dtype (bool tensors hold one byte each, visited as bool).
#pragma once
#include <cstdint>

#include "onemodel/core/dtype.h"

namespace om {

template <typename T> struct TypeTag { using type = T; };

template <typename F>
decltype(auto) visit_dtype(DType dt, F&& f) {
  switch (dt) {
    case DType::f32: return f(TypeTag<float>{});
    case DType::f64: return f(TypeTag<double>{});
    case DType::f16: return f(TypeTag<half>{});
    case DType::bf16: return f(TypeTag<bfloat16>{});
    case DType::u8: return f(TypeTag<uint8_t>{});
    case DType::i8: return f(TypeTag<int8_t>{});
    case DType::u16: return f(TypeTag<uint16_t>{});
    case DType::i16: return f(TypeTag<int16_t>{});
    case DType::u32: return f(TypeTag<uint32_t>{});
    case DType::i32: return f(TypeTag<int32_t>{});
    case DType::u64: return f(TypeTag<uint64_t>{});
    case DType::i64: return f(TypeTag<int64_t>{});
    case DType::boolean: return f(TypeTag<bool>{});
  }
  return f(TypeTag<float>{});  // unreachable: every enumerator is listed above
}

}  // namespace om
