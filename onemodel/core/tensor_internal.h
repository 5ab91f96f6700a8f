// Library-internal tensor helpers: raw access for kernels (no tracer checks, only liveness),
// allocation and strided copies. Never part of the public API.
#pragma once
#include "onemodel/core/tensor.h"

namespace om::detail {

// A new contiguous tensor in the current store.
// Refuses negative sizes and element counts above kMaxNumel (core/shape.h), naming `call`.
Result<Tensor> make_tensor(const Shape& shape, DType dtype, bool zero = false, const char* call = "om::Tensor");
// A view sharing `src`'s storage with a new shape/strides/offset (no record).
Tensor make_view(const Tensor& src, Shape shape, Shape strides, int64_t offset);
// UseAfterRelease when the storage's scope has been released.
Status check_live(const Tensor& t, const char* call);
// Pointer to the first logical element (storage base + offset) — library kernels only.
inline void* raw(const Tensor& t) {
  TensorImpl* i = t.impl();
  return static_cast<uint8_t*>(i->storage->data) + i->offset * int64_t(dtype_size(i->dtype));
}
template <typename T> T* raw_as(const Tensor& t) { return static_cast<T*>(raw(t)); }
// Copies the logical elements of src into dst (same shape; dtypes may differ: converts).
Status copy_elements(const Tensor& src, const Tensor& dst);
// src itself when contiguous, else a contiguous copy (no record).
Result<Tensor> dense(const Tensor& src);
// Reads one element as double (for messages, tests and slow paths).
double element_as_double(const Tensor& t, int64_t flat_index_in_logical_order);
// An InvalidArgument error naming `call` when t is undefined (default-constructed).
Status defined_or_error(const Tensor& t, const char* call);
void bump_version(const Tensor& t);
// om::full / om::zeros / om::arange without exceptions; an active trace may record them from
// the run-time sizes (docs/tracing.md, "Creation from sizes").
Result<Tensor> create_full(const Shape& shape, double value, DType dtype, const char* call);
Result<Tensor> create_range(double start, double end, double step, DType dtype);

}  // namespace om::detail
