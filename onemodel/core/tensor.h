// om::Tensor: a value type (cheap to copy, shares its storage) over shape + strides + offset.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <type_traits>
#include <string>
#include <vector>

#include "onemodel/core/dtype.h"
#include "onemodel/core/shape.h"
#include "onemodel/core/storage.h"

namespace om {

struct BackwardRecord;

namespace detail {
struct TensorImpl {
  std::shared_ptr<StorageImpl> storage;
  Shape shape;
  Shape strides;
  int64_t offset = 0;  // in elements
  DType dtype = DType::f32;

  // autograd
  bool requires_grad = false;                       // set by the user (leaves) or by a record
  std::shared_ptr<BackwardRecord> grad_fn;  // null for leaves
  std::shared_ptr<TensorImpl> grad;                 // accumulated gradient of a leaf
  // Allocated by requires_grad_(true) in the store and scope current then, so a gradient
  // outlives the per-step scopes of a training loop just like its parameter.
  std::shared_ptr<TensorImpl> grad_buffer;

  // tracing: the value this tensor has in the trace `trace_id` (0 = none)
  uint64_t trace_id = 0;
  uint32_t trace_value = 0;
};
}  // namespace detail

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<detail::TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const;
  const Shape& strides() const;
  int64_t dim() const { return int64_t(shape().size()); }
  int64_t numel() const;
  DType dtype() const;
  int64_t storage_offset() const;
  bool is_contiguous() const;

  // ---- reading values (user code; refused while the tensor is traced) ----
  template <typename T> std::vector<T> to_vector() const;
  template <typename T> T get(const std::vector<int64_t>& index) const;
  template <typename T> T item() const;
  template <typename T> const T* data() const;  // needs a contiguous tensor
  Storage storage() const;

  // ---- writing values (bump the storage version; refused into traced tensors) ----
  Tensor& copy_from(const Tensor& src);
  Tensor& fill_(double value);
  template <typename T> void set(const std::vector<int64_t>& index, T value);
  template <typename T> T* mutable_data();  // needs a contiguous tensor
  Storage mutable_storage();

  // ---- autograd ----
  bool requires_grad() const;
  Tensor& requires_grad_(bool on = true);
  Tensor grad() const;  // undefined until a backward pass reaches this leaf
  void zero_grad();
  // A backward pass releases the graph it ran through (as PyTorch does): running backward again
  // through it is an InvalidArgument error unless the first call passed retain_graph = true.
  void backward() const;                    // scalar outputs
  void backward(const Tensor& grad) const;  // any shape: grad has this tensor's shape
  // grad undefined ({}) = 1 for a scalar; retain_graph keeps the graph for another pass.
  void backward(const Tensor& grad, bool retain_graph) const;

  // ---- views and copies (PyTorch semantics) ----
  Tensor reshape(const Shape& shape) const;  // a view when strides allow, else a copy; one -1
  // PyTorch's view: reshape that never copies; strides that would need a copy are an error.
  Tensor view(const Shape& shape) const;
  Tensor permute(const std::vector<int64_t>& dims) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor expand(const Shape& shape) const;  // -1 keeps a size
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor flip(int64_t dim) const;
  // Dims start_dim..end_dim (negative counts from the end) merged into one: a reshape.
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  // PyTorch's repeat: the tensor tiled repeats[k] times along axis k (leading 1s added when
  // repeats is longer than the rank). Recorded as Unsqueeze, Expand and Reshape, so it is traced
  // (a count equal to a symbol's size follows it, as expand does) and differentiated.
  Tensor repeat(const Shape& repeats) const;
  // PyTorch's tile: repeat, where fewer counts than dims repeat the last dims (1s prepended).
  Tensor tile(const Shape& dims) const;
  Tensor contiguous() const;
  Tensor clone() const;
  Tensor detach() const;
  Tensor to(DType dtype) const;

  std::string to_string() const;  // shape and dtype, for messages
  detail::TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<detail::TensorImpl>& impl_ptr() const { return impl_; }

 private:
  std::shared_ptr<detail::TensorImpl> impl_;
};

// ---- creation (in the current store) ----
// Uninitialised, as PyTorch's; while a trace records it is zeros and recorded as zeros (what
// PyTorch's exporter writes), so a graph never holds arbitrary bytes.
Tensor empty(const Shape& shape, DType dtype = DType::f32);
Tensor zeros(const Shape& shape, DType dtype = DType::f32);
Tensor ones(const Shape& shape, DType dtype = DType::f32);
Tensor full(const Shape& shape, double value, DType dtype = DType::f32);
// PyTorch's eye: ones on the diagonal of an n x m matrix (m = -1: square). Traced as EyeLike.
Tensor eye(int64_t n, int64_t m = -1, DType dtype = DType::f32);
// PyTorch's arange: integer arguments give i64, a floating one f32 (or the dtype given).
Tensor arange(int64_t end, DType dtype = DType::i64);
Tensor arange(double start, double end, double step = 1, DType dtype = DType::f32);
template <typename A, typename B, typename C = int64_t,
          typename = std::enable_if_t<std::is_integral_v<A> && std::is_integral_v<B> && std::is_integral_v<C>>>
Tensor arange(A start, B end, C step = 1, DType dtype = DType::i64) {
  return arange(double(start), double(end), double(step), dtype);
}
template <typename T> Tensor from_vector(const std::vector<T>& values, const Shape& shape);
template <typename T> Tensor from_vector(const std::vector<T>& values) {
  return from_vector<T>(values, Shape{int64_t(values.size())});
}
Tensor scalar_tensor(double value, DType dtype = DType::f32);
// A contiguous tensor over caller memory: no copy, nothing allocated for the elements. The
// memory must stay valid (and must not be freed) while any tensor or view of it lives — the
// lifetime is the caller's; writes through the tensor write that memory. `data` must be aligned
// to the dtype's size. A tracer capturing it as a constant copies it (docs/api.md).
Tensor from_blob(void* data, const Shape& shape, DType dtype = DType::f32);

// A seedable generator whose streams are the same on every platform (PCG32; normals by the
// polar method using the library's own log).
class Generator {
 public:
  explicit Generator(uint64_t seed = 0x853c49e6748fea9bULL);
  uint32_t next_u32();
  float uniform();  // [0, 1)
  float normal();
  void seed(uint64_t s);
  // The whole state as a u8 tensor of kStateBytes (libtorch's Generator::get_state), and back:
  // set_state(get_state()) continues the stream exactly (checkpoints save it).
  static constexpr int64_t kStateBytes = 16;
  Tensor get_state() const;
  void set_state(const Tensor& state);

 private:
  uint64_t state_ = 0;
  bool has_spare_ = false;
  float spare_ = 0;
};
Generator& default_generator();
Tensor rand(const Shape& shape, Generator& gen = default_generator());
Tensor randn(const Shape& shape, Generator& gen = default_generator());

}  // namespace om
