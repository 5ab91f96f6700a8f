// The om::Tensor convenience overload of Session::run (kept apart so the allocation-free core
// does not depend on the eager layer).
#include <cstring>

#include "onemodel/core/tensor.h"
#include "onemodel/runtime/session.h"
#include "onemodel/runtime/value.h"

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

// The caller's tensor as a view: bool tensors travel as their u8 bytes (0 or 1), the same bytes
// the graph reads; `keep` holds the contiguous copy the view points into.
TensorView view_of(const Tensor& src, const char* name, std::vector<Tensor>* keep) {
  keep->push_back(src.dtype() == DType::boolean ? src.to(DType::u8) : src.contiguous());
  const Tensor& t = keep->back();
  TensorView v;
  v.name = name;
  v.dtype = src.dtype();
  v.dims = t.shape().data();
  v.rank = t.shape().size();
  v.data = const_cast<void*>(raw(t));
  return v;
}

Tensor tensor_of(const TensorView& v) {
  const bool is_bool = v.dtype == DType::boolean;
  Tensor t = empty(Shape(v.dims, v.dims + v.rank), is_bool ? DType::u8 : v.dtype);
  const size_t bytes = size_t(v.numel()) * dtype_size(v.dtype);
  if (bytes) std::memcpy(raw_mut(t), v.data, bytes);
  return is_bool ? t.to(DType::boolean) : t;
}

}  // namespace

const Tensor& Value::tensor() const {
  if (!present_ || is_sequence())
    raise(Status::error(ErrorKind::InvalidArgument, msg("om::Value::tensor: the value is ", present_ ? "a sequence" : "an empty optional",
                                                        "; read elements() instead")));
  return elements_[0];
}

std::vector<Tensor> Session::run(const std::vector<std::pair<std::string, Tensor>>& inputs) {
  std::vector<Tensor> contiguous;
  contiguous.reserve(inputs.size());
  std::vector<TensorView> in(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) in[i] = view_of(inputs[i].second, inputs[i].first.c_str(), &contiguous);
  std::vector<TensorView> out(output_names().size());
  std::vector<Tensor> result;
  // Copied out before the run's arena is free for another thread's run.
  check(run_with(in.data(), in.size(), out.data(), out.size(), [](void* ctx, const TensorView* views, size_t n) {
    auto& res = *static_cast<std::vector<Tensor>*>(ctx);
    for (size_t i = 0; i < n; ++i) res.push_back(tensor_of(views[i]));
  }, &result));
  return result;
}

std::vector<Value> Session::run_values(const std::vector<std::pair<std::string, Value>>& inputs) {
  size_t total = 0;
  for (const auto& in : inputs) total += in.second.elements().size();
  std::vector<Tensor> contiguous;
  contiguous.reserve(total);  // the views point into it: no reallocation
  std::vector<std::vector<TensorView>> elems(inputs.size());
  std::vector<ValueView> in(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = inputs[i].second;
    for (const Tensor& t : v.elements()) elems[i].push_back(view_of(t, inputs[i].first.c_str(), &contiguous));
    in[i].name = inputs[i].first.c_str();
    in[i].kind = v.kind();
    in[i].present = !v.is_none();
    in[i].elements = elems[i].data();
    in[i].count = elems[i].size();
  }
  std::vector<Value> result;
  check(try_run_values(in.data(), in.size(), [](void* ctx, const ValueView* views, size_t n) {
    auto& res = *static_cast<std::vector<Value>*>(ctx);
    for (size_t i = 0; i < n; ++i) {
      const ValueView& v = views[i];
      std::vector<Tensor> ts;
      for (size_t e = 0; e < v.count; ++e) ts.push_back(tensor_of(v.elements[e]));
      switch (v.kind) {
        case graph::ValueKind::Tensor: res.push_back(Value(std::move(ts.at(0)))); break;
        case graph::ValueKind::Sequence: res.push_back(Value::sequence(std::move(ts))); break;
        case graph::ValueKind::Optional: res.push_back(v.present ? Value::optional(std::move(ts.at(0))) : Value::none()); break;
        case graph::ValueKind::OptionalSequence:
          res.push_back(v.present ? Value::optional_sequence(std::move(ts)) : Value::none());
          break;
      }
    }
  }, &result));
  return result;
}

}  // namespace om
