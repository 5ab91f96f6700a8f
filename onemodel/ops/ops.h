// Eager operators. The public functions (namespace om) throw om::Error; each has an internal
// Status-returning twin in om::ops that the library itself uses.
#pragma once
#include <optional>
#include <vector>

#include "onemodel/core/tensor.h"

namespace om {

enum class GeluApproximate { None, Tanh };
enum class Reduction { Mean, Sum, None };

// elementwise (numpy broadcasting; scalars are 0-d constants)
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor add(const Tensor& a, double b);
Tensor sub(const Tensor& a, double b);
Tensor mul(const Tensor& a, double b);
Tensor div(const Tensor& a, double b);
Tensor neg(const Tensor& x);
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, double b);
Tensor operator-(const Tensor& a, double b);
Tensor operator*(const Tensor& a, double b);
Tensor operator/(const Tensor& a, double b);
Tensor operator*(double a, const Tensor& b);
Tensor operator-(const Tensor& x);

// activations
Tensor relu(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor gelu(const Tensor& x, GeluApproximate approximate = GeluApproximate::None);

// linear algebra
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());  // x W^T + b

// reductions
Tensor sum(const Tensor& x);
Tensor sum(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor mean(const Tensor& x);
Tensor mean(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor softmax(const Tensor& x, int64_t dim = -1);
Tensor log_softmax(const Tensor& x, int64_t dim = -1);

// joining and indexing
Tensor cat(const std::vector<Tensor>& xs, int64_t dim = 0);
// The tensors, all of one shape, joined along a new axis `dim` (PyTorch's stack).
Tensor stack(const std::vector<Tensor>& xs, int64_t dim = 0);
// The entries of `x` along `dim` at `index` (1-D, i64 or i32, each in [-size, size)), in that
// order: shape of x with dim's extent replaced by index.numel(). Any dtype; the gradient flows to
// x (summed where an index repeats). Traced as ONNX Gather.
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);

// losses (training only: not traceable)
// (more losses, with options: onemodel/ops/losses.h)
Tensor nll_loss(const Tensor& log_probs, const Tensor& target, Reduction reduction = Reduction::Mean,
                int64_t ignore_index = -100, const Tensor& weight = Tensor());  // weight: f32 [classes]
Tensor cross_entropy(const Tensor& logits, const Tensor& target, Reduction reduction = Reduction::Mean);
Tensor mse_loss(const Tensor& prediction, const Tensor& target, Reduction reduction = Reduction::Mean);

namespace ops {
Result<Tensor> add(const Tensor& a, const Tensor& b);
Result<Tensor> sub(const Tensor& a, const Tensor& b);
Result<Tensor> mul(const Tensor& a, const Tensor& b);
Result<Tensor> div(const Tensor& a, const Tensor& b);
Result<Tensor> neg(const Tensor& x);
Result<Tensor> relu(const Tensor& x);
Result<Tensor> sigmoid(const Tensor& x);
Result<Tensor> tanh(const Tensor& x);
Result<Tensor> gelu(const Tensor& x, GeluApproximate approximate);
Result<Tensor> matmul(const Tensor& a, const Tensor& b);
Result<Tensor> sum_all(const Tensor& x);
Result<Tensor> sum(const Tensor& x, int64_t dim, bool keepdim);
Result<Tensor> mean_all(const Tensor& x);
Result<Tensor> mean(const Tensor& x, int64_t dim, bool keepdim);
Result<Tensor> softmax(const Tensor& x, int64_t dim, bool log);
Result<Tensor> cat(const std::vector<Tensor>& xs, int64_t dim);
Result<Tensor> nll_loss(const Tensor& log_probs, const Tensor& target, Reduction reduction, int64_t ignore_index,
                        const Tensor& weight = Tensor());

Result<Tensor> reshape(const Tensor& x, const Shape& shape);
Result<Tensor> view(const Tensor& x, const Shape& shape);  // reshape without a copy, or an error
Result<Tensor> permute(const Tensor& x, const std::vector<int64_t>& dims);
Result<Tensor> transpose(const Tensor& x, int64_t dim0, int64_t dim1);
Result<Tensor> squeeze(const Tensor& x, std::optional<int64_t> dim);
Result<Tensor> unsqueeze(const Tensor& x, int64_t dim);
Result<Tensor> expand(const Tensor& x, const Shape& shape);
Result<Tensor> slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step);
Result<Tensor> select(const Tensor& x, int64_t dim, int64_t index);
Result<Tensor> flip(const Tensor& x, int64_t dim);
Result<Tensor> index_select(const Tensor& x, int64_t dim, const Tensor& index);
Result<Tensor> stack(const std::vector<Tensor>& xs, int64_t dim);
Result<Tensor> contiguous(const Tensor& x);
Result<Tensor> clone(const Tensor& x);
Result<Tensor> cast(const Tensor& x, DType dtype);

// Helpers shared by operators and gradients.
Result<Shape> broadcast_shapes(const Shape& a, const Shape& b, const char* call);
// Sums `x` down to `shape` (the reverse of broadcasting).
Result<Tensor> sum_to(const Tensor& x, const Shape& shape);
Status check_input(const Tensor& x, const char* call);
// `x` broadcast to `shape` as a dense tensor (no record).
Result<Tensor> broadcast_dense(const Tensor& x, const Shape& shape);
// `a` and `b` broadcast against each other, both dense at their common shape (no record).
struct BroadcastPair {
  Tensor a, b;
  Shape shape;
};
Result<BroadcastPair> broadcast_pair(const Tensor& a, const Tensor& b, const char* call);
// Both operands live and of one dtype, as binary arithmetic and comparisons require.
Status check_same_dtype(const Tensor& a, const Tensor& b, const char* call);
}  // namespace ops

}  // namespace om
