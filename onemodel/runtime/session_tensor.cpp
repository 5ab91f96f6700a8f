// The om::Tensor convenience overload of Session::run (kept apart so the allocation-free core
// does not depend on the eager layer).
#include <cstring>

#include "onemodel/core/tensor.h"
#include "onemodel/runtime/session.h"

namespace om {
namespace {

const void* raw(const Tensor& t) {
  switch (t.dtype()) {
    case DType::f32: return t.data<float>();
    case DType::u8: return t.data<uint8_t>();
    case DType::i8: return t.data<int8_t>();
    case DType::i32: return t.data<int32_t>();
    case DType::i64: return t.data<int64_t>();
    case DType::boolean: return nullptr;  // handled through u8 by the caller
    case DType::f16: return t.data<half>();
    case DType::bf16: return t.data<bfloat16>();
    case DType::f64: return t.data<double>();
    case DType::i16: return t.data<int16_t>();
    case DType::u16: return t.data<uint16_t>();
    case DType::u32: return t.data<uint32_t>();
    case DType::u64: return t.data<uint64_t>();
  }
  return nullptr;
}

void* raw_mut(Tensor& t) {
  switch (t.dtype()) {
    case DType::f32: return t.mutable_data<float>();
    case DType::u8: return t.mutable_data<uint8_t>();
    case DType::i8: return t.mutable_data<int8_t>();
    case DType::i32: return t.mutable_data<int32_t>();
    case DType::i64: return t.mutable_data<int64_t>();
    case DType::boolean: return nullptr;
    case DType::f16: return t.mutable_data<half>();
    case DType::bf16: return t.mutable_data<bfloat16>();
    case DType::f64: return t.mutable_data<double>();
    case DType::i16: return t.mutable_data<int16_t>();
    case DType::u16: return t.mutable_data<uint16_t>();
    case DType::u32: return t.mutable_data<uint32_t>();
    case DType::u64: return t.mutable_data<uint64_t>();
  }
  return nullptr;
}

}  // namespace

std::vector<Tensor> Session::run(const std::vector<std::pair<std::string, Tensor>>& inputs) {
  std::vector<Tensor> contiguous;
  contiguous.reserve(inputs.size());
  std::vector<TensorView> in(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    // bool tensors travel as their u8 bytes (0 or 1), the same bytes the graph reads.
    const Tensor& src = inputs[i].second;
    contiguous.push_back(src.dtype() == DType::boolean ? src.to(DType::u8) : src.contiguous());
    const Tensor& t = contiguous.back();
    in[i].name = inputs[i].first.c_str();
    in[i].dtype = src.dtype();
    in[i].dims = t.shape().data();
    in[i].rank = t.shape().size();
    in[i].data = const_cast<void*>(raw(t));
  }
  std::vector<TensorView> out(output_names().size());
  std::vector<Tensor> result;
  // Copied out before the run's arena is free for another thread's run.
  check(run_with(in.data(), in.size(), out.data(), out.size(), [](void* ctx, const TensorView* views, size_t n) {
    auto& res = *static_cast<std::vector<Tensor>*>(ctx);
    for (size_t i = 0; i < n; ++i) {
      const TensorView& v = views[i];
      const bool is_bool = v.dtype == DType::boolean;
      Tensor t = empty(Shape(v.dims, v.dims + v.rank), is_bool ? DType::u8 : v.dtype);
      const size_t bytes = size_t(v.numel()) * dtype_size(v.dtype);
      if (bytes) std::memcpy(raw_mut(t), v.data, bytes);
      res.push_back(is_bool ? t.to(DType::boolean) : t);
    }
  }, &result));
  return result;
}

}  // namespace om
