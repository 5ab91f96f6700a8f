#include "onemodel/core/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "onemodel/core/convert.h"
#include "onemodel/core/tensor_internal.h"
#include "onemodel/core/trace_hook.h"

namespace om {

namespace detail {

Result<Tensor> make_tensor(const Shape& shape, DType dtype, bool zero, const char* call) {
  int64_t numel = 0;
  OM_TRY(check_shape(call, shape, &numel));
  const size_t n = size_t(numel);
  OM_ASSIGN_OR_RETURN(auto storage, allocate_storage(n * dtype_size(dtype), zero));
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::move(storage);
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->dtype = dtype;
  return Tensor(impl);
}

Tensor make_view(const Tensor& src, Shape shape, Shape strides, int64_t offset) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = src.impl()->storage;
  impl->shape = std::move(shape);
  impl->strides = std::move(strides);
  impl->offset = offset;
  impl->dtype = src.dtype();
  return Tensor(impl);
}

Status check_live(const Tensor& t, const char* call) {
  if (!t.defined()) return Status::error(ErrorKind::InvalidArgument, msg(call, ": the tensor is undefined (default-constructed)"));
  if (!t.impl()->storage->live())
    return Status::error(ErrorKind::UseAfterRelease,
                         msg(call, ": tensor ", t.to_string(), " was allocated in an om::StoreScope that has been released; "
                             "keep tensors that must survive outside the scope (or clone them before it ends)"));
  return Status::ok();
}

namespace {
template <typename T> double load_as_double(const void* p) { return double(*static_cast<const T*>(p)); }
double load_any(DType dt, const void* p) {
  switch (dt) {
    case DType::f32: return load_as_double<float>(p);
    case DType::u8: return load_as_double<uint8_t>(p);
    case DType::i8: return load_as_double<int8_t>(p);
    case DType::i32: return load_as_double<int32_t>(p);
    case DType::i64: return load_as_double<int64_t>(p);
    case DType::boolean: return *static_cast<const uint8_t*>(p) ? 1.0 : 0.0;
    case DType::f16: return half_to_float(*static_cast<const half*>(p));
    case DType::bf16: return bf16_to_float(*static_cast<const bfloat16*>(p));
    case DType::f64: return load_as_double<double>(p);
    case DType::i16: return load_as_double<int16_t>(p);
    case DType::u16: return load_as_double<uint16_t>(p);
    case DType::u32: return load_as_double<uint32_t>(p);
    case DType::u64: return load_as_double<uint64_t>(p);
  }
  return 0;
}
void store_any(DType dt, void* p, double v) {
  switch (dt) {
    case DType::f32: *static_cast<float*>(p) = float(v); break;
    case DType::u8: *static_cast<uint8_t*>(p) = float_to_int<uint8_t>(v); break;
    case DType::i8: *static_cast<int8_t*>(p) = float_to_int<int8_t>(v); break;
    case DType::i32: *static_cast<int32_t*>(p) = float_to_int<int32_t>(v); break;
    case DType::i64: *static_cast<int64_t*>(p) = float_to_int<int64_t>(v); break;
    case DType::boolean: *static_cast<uint8_t*>(p) = v != 0 ? 1 : 0; break;
    case DType::f16: *static_cast<half*>(p) = float_to_half(float(v)); break;
    case DType::bf16: *static_cast<bfloat16*>(p) = float_to_bf16(float(v)); break;
    case DType::f64: *static_cast<double*>(p) = v; break;
    case DType::i16: *static_cast<int16_t*>(p) = float_to_int<int16_t>(v); break;
    case DType::u16: *static_cast<uint16_t*>(p) = float_to_int<uint16_t>(v); break;
    case DType::u32: *static_cast<uint32_t*>(p) = float_to_int<uint32_t>(v); break;
    case DType::u64: *static_cast<uint64_t*>(p) = float_to_int<uint64_t>(v); break;
  }
}
// i64 -> i64 must not round through double.
bool same_width_int(DType a, DType b) { return a == b; }

// Calls fn(src_elem_offset, dst_elem_offset) over all logical indices.
template <typename Fn>
void for_each_index(const Shape& shape, const Shape& s_strides, const Shape& d_strides, int64_t s_off, int64_t d_off, Fn fn) {
  const size_t rank = shape.size();
  if (shape_numel(shape) == 0) return;
  std::vector<int64_t> idx(rank, 0);
  int64_t so = s_off, dof = d_off;
  while (true) {
    fn(so, dof);
    size_t k = rank;
    while (k > 0) {
      --k;
      if (++idx[k] < shape[k]) {
        so += s_strides[k];
        dof += d_strides[k];
        break;
      }
      so -= s_strides[k] * (shape[k] - 1);
      dof -= d_strides[k] * (shape[k] - 1);
      idx[k] = 0;
      if (k == 0) return;
    }
    if (rank == 0) return;
  }
}
}  // namespace

Status copy_elements(const Tensor& src, const Tensor& dst) {
  const TensorImpl& s = *src.impl();
  const TensorImpl& d = *dst.impl();
  const uint8_t* sb = static_cast<const uint8_t*>(s.storage->data);
  uint8_t* db = static_cast<uint8_t*>(d.storage->data);
  const size_t ss = dtype_size(s.dtype), ds = dtype_size(d.dtype);
  if (same_width_int(s.dtype, d.dtype)) {
    if (src.is_contiguous() && dst.is_contiguous()) {
      if (src.numel()) std::memmove(db + d.offset * ds, sb + s.offset * ss, size_t(src.numel()) * ss);
      return Status::ok();
    }
    for_each_index(s.shape, s.strides, d.strides, s.offset, d.offset,
                   [&](int64_t so, int64_t dof) { std::memcpy(db + dof * ds, sb + so * ss, ss); });
    return Status::ok();
  }
  for_each_index(s.shape, s.strides, d.strides, s.offset, d.offset, [&](int64_t so, int64_t dof) {
    store_any(d.dtype, db + dof * ds, load_any(s.dtype, sb + so * ss));
  });
  return Status::ok();
}

Result<Tensor> dense(const Tensor& src) {
  if (src.is_contiguous()) return src;
  OM_ASSIGN_OR_RETURN(Tensor out, make_tensor(src.shape(), src.dtype()));
  OM_TRY(copy_elements(src, out));
  return out;
}

double element_as_double(const Tensor& t, int64_t flat) {
  const TensorImpl& i = *t.impl();
  int64_t off = i.offset;
  for (size_t k = i.shape.size(); k-- > 0;) {
    off += (flat % i.shape[k]) * i.strides[k];
    flat /= i.shape[k];
  }
  return load_any(i.dtype, static_cast<const uint8_t*>(i.storage->data) + off * int64_t(dtype_size(i.dtype)));
}

void bump_version(const Tensor& t) { t.impl()->storage->version.fetch_add(1); }

Status defined_or_error(const Tensor& t, const char* call) {
  if (!t.defined()) return Status::error(ErrorKind::InvalidArgument, msg(call, ": the tensor is undefined (default-constructed)"));
  return Status::ok();
}

}  // namespace detail

namespace {
using detail::defined_or_error;
Status user_read(const Tensor& t, const char* call) {
  OM_TRY(detail::check_live(t, call));
  if (detail::TraceHook* h = detail::trace_hook()) OM_TRY(h->on_user_read(*t.impl(), call));
  return Status::ok();
}
Status user_write(const Tensor& t, const char* call) {
  OM_TRY(detail::check_live(t, call));
  if (detail::TraceHook* h = detail::trace_hook()) OM_TRY(h->on_user_write(*t.impl(), call));
  detail::bump_version(t);
  return Status::ok();
}
template <typename T>
Status dtype_is(const Tensor& t, const char* call) {
  if (t.dtype() != dtype_of<T>::value)
    return Status::error(ErrorKind::DTypeMismatch, msg(call, ": the tensor holds ", dtype_name(t.dtype()), " but ",
                                                        dtype_name(dtype_of<T>::value), " was requested; convert with .to(om::DType::",
                                                        dtype_name(dtype_of<T>::value), ") or ask for the stored type"));
  return Status::ok();
}
Result<int64_t> element_offset(const Tensor& t, const std::vector<int64_t>& index, const char* call) {
  if (int64_t(index.size()) != t.dim())
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": index has ", index.size(), " coordinates but the tensor ", t.to_string(),
                                                          " has ", t.dim(), " dims"));
  int64_t off = t.storage_offset();
  for (size_t k = 0; k < index.size(); ++k) {
    int64_t i = index[k];
    if (i < 0) i += t.shape()[k];
    if (i < 0 || i >= t.shape()[k])
      return Status::error(ErrorKind::InvalidArgument, msg(call, ": index ", index[k], " is out of range for dim ", k, " of size ", t.shape()[k]));
    off += i * t.strides()[k];
  }
  return off;
}
}  // namespace

const Shape& Tensor::shape() const {
  static const Shape empty;
  return impl_ ? impl_->shape : empty;
}
const Shape& Tensor::strides() const {
  static const Shape empty;
  return impl_ ? impl_->strides : empty;
}
int64_t Tensor::numel() const { return impl_ ? shape_numel(impl_->shape) : 0; }
DType Tensor::dtype() const { return impl_ ? impl_->dtype : DType::f32; }
int64_t Tensor::storage_offset() const { return impl_ ? impl_->offset : 0; }

bool Tensor::is_contiguous() const {
  if (!impl_) return true;
  int64_t expected = 1;
  for (size_t k = impl_->shape.size(); k-- > 0;) {
    if (impl_->shape[k] == 1) continue;
    if (impl_->strides[k] != expected) return false;
    expected *= impl_->shape[k];
  }
  return true;
}

std::string Tensor::to_string() const {
  if (!impl_) return "undefined";
  return msg(dtype_name(impl_->dtype), shape_str(impl_->shape));
}

template <typename T>
std::vector<T> Tensor::to_vector() const {
  check(user_read(*this, "om::Tensor::to_vector"));
  check(dtype_is<T>(*this, "om::Tensor::to_vector"));
  std::vector<T> out(static_cast<size_t>(numel()));
  if (out.empty()) return out;
  Tensor dst = detail::make_view(*this, shape(), contiguous_strides(shape()), 0);
  auto holder = std::make_shared<detail::StorageImpl>();
  holder->data = out.data();
  holder->nbytes = out.size() * sizeof(T);
  dst.impl()->storage = holder;
  check(detail::copy_elements(*this, dst));
  return out;
}

template <typename T>
T Tensor::get(const std::vector<int64_t>& index) const {
  check(user_read(*this, "om::Tensor::get"));
  check(dtype_is<T>(*this, "om::Tensor::get"));
  const int64_t off = unwrap(element_offset(*this, index, "om::Tensor::get"));
  return static_cast<const T*>(impl_->storage->data)[off];
}

template <typename T>
T Tensor::item() const {
  check(user_read(*this, "om::Tensor::item"));
  check(dtype_is<T>(*this, "om::Tensor::item"));
  if (numel() != 1)
    raise(Status::error(ErrorKind::InvalidArgument, msg("om::Tensor::item: the tensor ", to_string(), " has ", numel(),
                                                         " elements; item() needs exactly one (use get() or to_vector())")));
  return static_cast<const T*>(impl_->storage->data)[impl_->offset];
}

template <typename T>
const T* Tensor::data() const {
  check(user_read(*this, "om::Tensor::data"));
  check(dtype_is<T>(*this, "om::Tensor::data"));
  if (!is_contiguous())
    raise(Status::error(ErrorKind::InvalidArgument, msg("om::Tensor::data: the tensor ", to_string(),
                                                         " is a non-contiguous view; call .contiguous() first")));
  return static_cast<const T*>(detail::raw(*this));
}

Storage Tensor::storage() const {
  check(user_read(*this, "om::Tensor::storage"));
  return Storage(impl_->storage);
}

Tensor& Tensor::copy_from(const Tensor& src) {
  check(user_read(src, "om::Tensor::copy_from"));
  check(user_write(*this, "om::Tensor::copy_from"));
  if (src.shape() != shape())
    raise(Status::error(ErrorKind::ShapeMismatch, msg("om::Tensor::copy_from: source ", src.to_string(), " and destination ", to_string(),
                                                       " differ in shape; reshape or expand the source first")));
  check(detail::copy_elements(src, *this));
  return *this;
}

Tensor& Tensor::fill_(double value) {
  check(user_write(*this, "om::Tensor::fill_"));
  Tensor one = unwrap(detail::make_tensor({}, dtype()));
  detail::store_any(dtype(), detail::raw(one), value);
  Tensor src = detail::make_view(one, shape(), Shape(shape().size(), 0), 0);
  check(detail::copy_elements(src, *this));
  return *this;
}

template <typename T>
void Tensor::set(const std::vector<int64_t>& index, T value) {
  check(user_write(*this, "om::Tensor::set"));
  check(dtype_is<T>(*this, "om::Tensor::set"));
  const int64_t off = unwrap(element_offset(*this, index, "om::Tensor::set"));
  static_cast<T*>(impl_->storage->data)[off] = value;
}

template <typename T>
T* Tensor::mutable_data() {
  check(user_write(*this, "om::Tensor::mutable_data"));
  check(dtype_is<T>(*this, "om::Tensor::mutable_data"));
  if (!is_contiguous())
    raise(Status::error(ErrorKind::InvalidArgument, msg("om::Tensor::mutable_data: the tensor ", to_string(),
                                                         " is a non-contiguous view; call .contiguous() first")));
  return static_cast<T*>(detail::raw(*this));
}

Storage Tensor::mutable_storage() {
  check(user_write(*this, "om::Tensor::mutable_storage"));
  return Storage(impl_->storage);
}

#define OM_INSTANTIATE(T)                                                 \
  template std::vector<T> Tensor::to_vector<T>() const;                   \
  template T Tensor::get<T>(const std::vector<int64_t>&) const;           \
  template T Tensor::item<T>() const;                                     \
  template const T* Tensor::data<T>() const;                              \
  template void Tensor::set<T>(const std::vector<int64_t>&, T);           \
  template T* Tensor::mutable_data<T>();                                  \
  template Tensor from_vector<T>(const std::vector<T>&, const Shape&);
OM_INSTANTIATE(float)
OM_INSTANTIATE(int64_t)
OM_INSTANTIATE(int32_t)
OM_INSTANTIATE(int8_t)
OM_INSTANTIATE(uint8_t)
OM_INSTANTIATE(half)
OM_INSTANTIATE(bfloat16)
OM_INSTANTIATE(double)
OM_INSTANTIATE(int16_t)
OM_INSTANTIATE(uint16_t)
OM_INSTANTIATE(uint32_t)
OM_INSTANTIATE(uint64_t)
#undef OM_INSTANTIATE
// bool: std::vector<bool> is packed, so bool tensors are read as uint8_t (0/1) or via get<bool>.
template bool Tensor::get<bool>(const std::vector<int64_t>&) const;
template bool Tensor::item<bool>() const;
template void Tensor::set<bool>(const std::vector<int64_t>&, bool);

// ---- autograd ----
bool Tensor::requires_grad() const {
  if (!impl_) return false;
  if (impl_->requires_grad) return true;
  detail::TraceHook* h = detail::trace_hook();
  return h && h->is_traced(*impl_);
}

Tensor& Tensor::requires_grad_(bool on) {
  check(defined_or_error(*this, "om::Tensor::requires_grad_"));
  if (on && impl_->dtype != DType::f32)
    raise(Status::error(ErrorKind::DTypeMismatch, msg("om::Tensor::requires_grad_: only f32 tensors can require gradients, got ", to_string())));
  if (impl_->grad_fn)
    raise(Status::error(ErrorKind::InvalidArgument, "om::Tensor::requires_grad_: the tensor is the result of an operation; "
                                                    "only leaves can change it (use .detach().requires_grad_())"));
  impl_->requires_grad = on;
  if (on && !impl_->grad_buffer) impl_->grad_buffer = unwrap(detail::make_tensor(shape(), DType::f32, true)).impl_ptr();
  return *this;
}

Tensor Tensor::grad() const {
  if (!impl_ || !impl_->grad) return Tensor();
  return Tensor(impl_->grad);
}

void Tensor::zero_grad() {
  if (impl_ && impl_->grad) Tensor(impl_->grad).fill_(0.0);
}

Tensor Tensor::detach() const {
  check(defined_or_error(*this, "om::Tensor::detach"));
  // Detaching a traced tensor returns it unchanged: it still depends on the trace input.
  if (detail::TraceHook* h = detail::trace_hook(); h && h->is_traced(*impl_)) return *this;
  return detail::make_view(*this, shape(), strides(), storage_offset());
}

// ---- creation ----
Tensor empty(const Shape& shape, DType dtype) {
  if (detail::trace_hook()) return unwrap(detail::create_full(shape, 0.0, dtype, "om::empty"));
  return unwrap(detail::make_tensor(shape, dtype, false, "om::empty"));
}
Tensor zeros(const Shape& shape, DType dtype) { return unwrap(detail::create_full(shape, 0.0, dtype, "om::zeros")); }
Tensor ones(const Shape& shape, DType dtype) { return full(shape, 1.0, dtype); }
Tensor full(const Shape& shape, double value, DType dtype) { return unwrap(detail::create_full(shape, value, dtype, "om::full")); }
Tensor eye(int64_t n, int64_t m, DType dtype) {
  if (m == -1) m = n;
  if (n < 0 || m < 0)
    raise(Status::error(ErrorKind::InvalidArgument, msg("om::eye: sizes ", n, " x ", m, " must not be negative (m = -1 gives a square matrix)")));
  Tensor t = unwrap(detail::make_tensor({n, m}, dtype, true, "om::eye"));
  uint8_t* p = static_cast<uint8_t*>(detail::raw(t));
  const size_t es = dtype_size(dtype);
  for (int64_t i = 0; i < std::min(n, m); ++i) detail::store_any(dtype, p + size_t(i * m + i) * es, 1.0);
  if (detail::TraceHook* h = detail::trace_hook()) check(h->on_create(*t.impl(), detail::CreateKind::Eye, 0, 0));
  return t;
}
Tensor arange(int64_t end, DType dtype) { return arange(0, double(end), 1, dtype); }
Tensor arange(double start, double end, double step, DType dtype) { return unwrap(detail::create_range(start, end, step, dtype)); }

namespace detail {
// Creation from sizes: while a trace records, the tracer may record the tensor from the
// run-time sizes (docs/tracing.md, "Creation from sizes").
Result<Tensor> create_full(const Shape& shape, double value, DType dtype, const char* call) {
  OM_ASSIGN_OR_RETURN(Tensor t, make_tensor(shape, dtype, value == 0.0, call));
  if (value != 0.0 || std::signbit(value)) {
    uint8_t* p = static_cast<uint8_t*>(raw(t));
    const size_t es = dtype_size(dtype);
    for (int64_t i = 0; i < t.numel(); ++i) store_any(dtype, p + i * es, value);
  }
  if (TraceHook* h = trace_hook()) OM_TRY(h->on_create(*t.impl(), CreateKind::Full, value, 0));
  return t;
}

Result<Tensor> create_range(double start, double end, double step, DType dtype) {
  if (step == 0 || (end - start) / step < 0)
    return Status::error(ErrorKind::InvalidArgument, msg("om::arange: start ", start, ", end ", end, " and step ", step, " give no sequence"));
  const double count = std::ceil((end - start) / step);
  if (!(count <= double(kMaxNumel)))  // also NaN; converting a larger double would be undefined
    return Status::error(ErrorKind::InvalidArgument, msg("om::arange: start ", start, ", end ", end, " and step ", step,
                                                         " give more than 2^48 elements (docs/memory.md)"));
  const int64_t n = int64_t(count);
  OM_ASSIGN_OR_RETURN(Tensor t, make_tensor({n}, dtype, false, "om::arange"));
  uint8_t* p = static_cast<uint8_t*>(raw(t));
  for (int64_t i = 0; i < n; ++i) store_any(dtype, p + i * dtype_size(dtype), start + double(i) * step);
  if (TraceHook* h = trace_hook()) OM_TRY(h->on_create(*t.impl(), CreateKind::Range, start, step));
  return t;
}
}  // namespace detail
Tensor scalar_tensor(double value, DType dtype) { return full({}, value, dtype); }

Tensor from_blob(void* data, const Shape& shape, DType dtype) {
  const char* call = "om::from_blob";
  int64_t numel = 0;
  check(check_shape(call, shape, &numel));
  const size_t esize = dtype_size(dtype);
  if (numel > 0 && !data) raise(Status::error(ErrorKind::InvalidArgument, msg(call, ": data is null for shape ", shape_str(shape))));
  // Kernels read elements with natural alignment; an odd address would be undefined behaviour.
  if (reinterpret_cast<uintptr_t>(data) % esize != 0)
    raise(Status::error(ErrorKind::InvalidArgument, msg(call, ": data at address ", data, " is not aligned to the ", esize, " bytes of ",
                                                        dtype_name(dtype), "; copy it into an aligned buffer (or om::from_vector)")));
  // A storage that owns nothing in a store: never released by a scope, never freed here.
  auto holder = std::make_shared<detail::StorageImpl>();
  holder->data = data;
  holder->nbytes = size_t(numel) * esize;
  auto impl = std::make_shared<detail::TensorImpl>();
  impl->storage = std::move(holder);
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->dtype = dtype;
  return Tensor(impl);
}

template <typename T>
Tensor from_vector(const std::vector<T>& values, const Shape& shape) {
  check(check_shape("om::from_vector", shape));
  if (int64_t(values.size()) != shape_numel(shape))
    raise(Status::error(ErrorKind::ShapeMismatch, msg("om::from_vector: ", values.size(), " values cannot fill shape ", shape_str(shape),
                                                       " (", shape_numel(shape), " elements)")));
  Tensor t = unwrap(detail::make_tensor(shape, dtype_of<T>::value));
  if (!values.empty()) std::memcpy(detail::raw(t), values.data(), values.size() * sizeof(T));
  return t;
}

}  // namespace om
