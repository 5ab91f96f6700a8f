// Elementwise math, comparisons, selection and value/index reductions (docs/training.md).
// The public functions throw om::Error; the om::ops twins return Result.
#pragma once
#include <optional>
#include <utility>

#include "onemodel/core/tensor.h"

namespace om {

// f32, elementwise; exp/log/sqrt use the library's own functions (same bits as the graph layer).
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor pow(const Tensor& base, const Tensor& exponent);  // f32, numpy broadcasting
Tensor pow(const Tensor& base, double exponent);
// Limits each element to [min, max]; std::nullopt leaves that side open.
Tensor clamp(const Tensor& x, std::optional<double> min, std::optional<double> max = std::nullopt);

// Comparisons: bool tensors, numpy broadcasting, both operands of one dtype (f32 i64 i32 bool).
// No gradient. (`==`/`!=` are not overloaded: use om::eq / om::ne.)
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, double b);
Tensor ne(const Tensor& a, double b);
Tensor lt(const Tensor& a, double b);
Tensor le(const Tensor& a, double b);
Tensor gt(const Tensor& a, double b);
Tensor ge(const Tensor& a, double b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, double b);
Tensor operator<=(const Tensor& a, double b);
Tensor operator>(const Tensor& a, double b);
Tensor operator>=(const Tensor& a, double b);

// condition ? a : b elementwise (bool condition, a and b of one dtype, three-way broadcasting).
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);

// Elementwise max/min of two tensors (f32; ties split the gradient in half, as PyTorch does).
Tensor max(const Tensor& a, const Tensor& b);
Tensor min(const Tensor& a, const Tensor& b);
// The largest/smallest element (a 0-d tensor; NaN wins; ties share the gradient evenly).
Tensor max(const Tensor& x);
Tensor min(const Tensor& x);
// Along `dim`: (values, i64 indices of the first occurrence).
std::pair<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim = false);
std::pair<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim = false);
// i64 index of the first largest/smallest element: over the flattened tensor, or along `dim`.
Tensor argmax(const Tensor& x);
Tensor argmin(const Tensor& x);
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim = false);
// The k largest (or smallest) along `dim`, sorted, ties by lower index: (values, i64 indices).
std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim = -1, bool largest = true);

namespace ops {
enum class Compare { Eq, Ne, Lt, Le, Gt, Ge };
Result<Tensor> unary_math(int op /* OpId::Exp, Log, Sqrt, Abs */, const Tensor& x);
Result<Tensor> pow(const Tensor& a, const Tensor& b);
Result<Tensor> clamp(const Tensor& x, std::optional<double> min, std::optional<double> max);
Result<Tensor> compare(Compare c, const Tensor& a, const Tensor& b);
Result<Tensor> where(const Tensor& condition, const Tensor& a, const Tensor& b);
Result<Tensor> maximum(const Tensor& a, const Tensor& b, bool max);
// all: over every element; else along dim. Returns values (MaxReduce/MinReduce records).
Result<Tensor> reduce_extreme(const Tensor& x, bool all, int64_t dim, bool keepdim, bool max);
Result<Tensor> arg_extreme(const Tensor& x, bool all, int64_t dim, bool keepdim, bool max);
Result<std::pair<Tensor, Tensor>> topk(const Tensor& x, int64_t k, int64_t dim, bool largest);
}  // namespace ops

}  // namespace om
