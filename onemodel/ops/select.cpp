// max/min (whole tensor or along a dim), argmax/argmin and topk (docs/training.md). NaN counts
// as the extreme value (PyTorch). Indices have no gradient: their records exist only while a
// trace is active.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "onemodel/core/tensor_internal.h"
#include "onemodel/core/trace_hook.h"
#include "onemodel/ops/math_ops.h"
#include "onemodel/ops/ops.h"
#include "onemodel/ops/record.h"

namespace om {
namespace ops {
namespace {

// `a` comes before `b` in the order "largest first" (max) or "smallest first"; NaN first.
inline bool before(float a, float b, bool max) {
  if (std::isnan(a)) return !std::isnan(b);
  if (std::isnan(b)) return false;
  return max ? a > b : a < b;
}

struct Layout {
  int64_t outer = 1, extent = 1, inner = 1;
  Shape out_shape;
};

Status layout(const Tensor& x, bool all, int64_t* dim, bool keepdim, const char* call, Layout* l) {
  OM_TRY(check_input(x, call));
  if (x.dtype() != DType::f32)
    return Status::error(ErrorKind::DTypeMismatch, msg(call, ": expects f32, got ", x.to_string(), "; cast with .to(om::DType::f32)"));
  if (all) {
    if (x.numel() == 0) return Status::error(ErrorKind::InvalidArgument, msg(call, ": the tensor ", x.to_string(), " is empty; it has no extreme element"));
    l->extent = x.numel();
    l->out_shape = {};
    return Status::ok();
  }
  int64_t d;
  if (!normalize_axis(*dim, x.dim(), &d))
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": dim ", *dim, " is out of range for ", x.to_string()));
  *dim = d;
  const Shape& s = x.shape();
  if (s[size_t(d)] == 0) return Status::error(ErrorKind::InvalidArgument, msg(call, ": dim ", d, " of ", x.to_string(), " is empty"));
  // sub-products of a checked shape (docs/memory.md): shape_numel cannot overflow here
  l->outer = shape_numel(Shape(s.begin(), s.begin() + d));
  l->extent = s[size_t(d)];
  l->inner = shape_numel(Shape(s.begin() + d + 1, s.end()));
  l->out_shape = s;
  if (keepdim) l->out_shape[size_t(d)] = 1;
  else l->out_shape.erase(l->out_shape.begin() + d);
  return Status::ok();
}

// What max/min and argmax/argmin both compute: the layout (normalising *dim), the dense input
// and, for every output position, the index along the reduced extent of the first extreme element.
struct Extremes {
  Layout l;
  Tensor dx, idx;
};
Result<Extremes> extremes(const Tensor& x, bool all, int64_t* dim, bool keepdim, bool max, const char* call) {
  Extremes e;
  OM_TRY(layout(x, all, dim, keepdim, call, &e.l));
  const Layout& l = e.l;
  OM_ASSIGN_OR_RETURN(e.dx, detail::dense(x));
  OM_ASSIGN_OR_RETURN(e.idx, detail::make_tensor(l.out_shape, DType::i64, false, call));
  const float* p = detail::raw_as<float>(e.dx);
  int64_t* pi = detail::raw_as<int64_t>(e.idx);
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t i = 0; i < l.inner; ++i) {
      const float* row = p + o * l.extent * l.inner + i;
      int64_t best = 0;
      for (int64_t a = 1; a < l.extent; ++a)
        if (before(row[a * l.inner], row[best * l.inner], max)) best = a;
      pi[o * l.inner + i] = best;
    }
  return e;
}

}  // namespace

Result<Tensor> reduce_extreme(const Tensor& x, bool all, int64_t dim, bool keepdim, bool max) {
  const OpId op = max ? OpId::MaxReduce : OpId::MinReduce;
  const char* call = op_name(op);
  OM_ASSIGN_OR_RETURN(Extremes e, extremes(x, all, &dim, keepdim, max, call));
  const Layout& l = e.l;
  OM_ASSIGN_OR_RETURN(Tensor out, detail::make_tensor(l.out_shape, DType::f32, false, call));
  const float* p = detail::raw_as<float>(e.dx);
  const int64_t* pi = detail::raw_as<int64_t>(e.idx);
  float* py = detail::raw_as<float>(out);
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t i = 0; i < l.inner; ++i) py[o * l.inner + i] = p[(o * l.extent + pi[o * l.inner + i]) * l.inner + i];
  // The gradient: to the index along a dim; spread evenly over ties for the whole tensor.
  Tensor saved = all ? detail::make_view(out, out.shape(), out.strides(), 0) : e.idx;
  OM_TRY(record_op(op, {x}, out, ReduceAttrs{all, all ? 0 : dim, keepdim}, saved));
  return out;
}

Result<Tensor> arg_extreme(const Tensor& x, bool all, int64_t dim, bool keepdim, bool max) {
  const OpId op = max ? OpId::ArgMax : OpId::ArgMin;
  const char* call = op_name(op);
  OM_ASSIGN_OR_RETURN(Extremes e, extremes(x, all, &dim, keepdim, max, call));
  if (detail::trace_hook()) OM_TRY(record_op(op, {x}, e.idx, ReduceAttrs{all, all ? 0 : dim, keepdim}));
  return e.idx;
}

Result<std::pair<Tensor, Tensor>> topk(const Tensor& x, int64_t k, int64_t dim, bool largest) {
  const char* call = "om::topk";
  Layout l;
  OM_TRY(layout(x, false, &dim, true, call, &l));
  if (k < 0 || k > l.extent)
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": k = ", k, " is not in [0, ", l.extent, "] (the size of dim ", dim, " of ",
                                                         x.to_string(), ")"));
  Shape shape = x.shape();
  shape[size_t(dim)] = k;
  OM_ASSIGN_OR_RETURN(Tensor dx, detail::dense(x));
  OM_ASSIGN_OR_RETURN(Tensor values, detail::make_tensor(shape, DType::f32, false, call));
  OM_ASSIGN_OR_RETURN(Tensor indices, detail::make_tensor(shape, DType::i64, false, call));
  const float* p = detail::raw_as<float>(dx);
  float* pv = detail::raw_as<float>(values);
  int64_t* pi = detail::raw_as<int64_t>(indices);
  std::vector<int64_t> order(size_t(l.extent));
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t i = 0; i < l.inner; ++i) {
      const float* row = p + o * l.extent * l.inner + i;
      std::iota(order.begin(), order.end(), int64_t(0));
      // stable: equal values keep the lower index first
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return before(row[a * l.inner], row[b * l.inner], largest); });
      for (int64_t j = 0; j < k; ++j) {
        pv[(o * k + j) * l.inner + i] = row[order[size_t(j)] * l.inner];
        pi[(o * k + j) * l.inner + i] = order[size_t(j)];
      }
    }
  const TopKAttrs attrs{dim, k, largest};
  OM_TRY(record<OpId::TopK>({x}, values, attrs, indices));
  if (detail::trace_hook()) OM_TRY(record<OpId::TopKIndices>({x}, indices, attrs));
  return std::make_pair(values, indices);
}

}  // namespace ops

Tensor max(const Tensor& x) { return unwrap(ops::reduce_extreme(x, true, 0, false, true)); }
Tensor min(const Tensor& x) { return unwrap(ops::reduce_extreme(x, true, 0, false, false)); }
std::pair<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim) {
  return {unwrap(ops::reduce_extreme(x, false, dim, keepdim, true)), unwrap(ops::arg_extreme(x, false, dim, keepdim, true))};
}
std::pair<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim) {
  return {unwrap(ops::reduce_extreme(x, false, dim, keepdim, false)), unwrap(ops::arg_extreme(x, false, dim, keepdim, false))};
}
Tensor argmax(const Tensor& x) { return unwrap(ops::arg_extreme(x, true, 0, false, true)); }
Tensor argmin(const Tensor& x) { return unwrap(ops::arg_extreme(x, true, 0, false, false)); }
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim) { return unwrap(ops::arg_extreme(x, false, dim, keepdim, true)); }
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim) { return unwrap(ops::arg_extreme(x, false, dim, keepdim, false)); }
std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest) { return unwrap(ops::topk(x, k, dim, largest)); }

}  // namespace om
