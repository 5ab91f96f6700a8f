// Views and copies with PyTorch semantics: reshape permute transpose squeeze unsqueeze expand
// slice select flip contiguous clone cast, and concat.
#include <algorithm>
#include <optional>

#include "onemodel/ops/record.h"
#include "onemodel/core/tensor_internal.h"
#include "onemodel/core/trace_hook.h"
#include "onemodel/ops/ops.h"

namespace om {
namespace ops {
namespace {

Status bad_dim(const char* call, int64_t dim, const Tensor& x) {
  return Status::error(ErrorKind::InvalidArgument, msg(call, ": dim ", dim, " is out of range for ", x.to_string()));
}

// Strides that let `new_shape` view memory laid out as (shape, strides), or nullopt when only a
// copy can express it (the rule PyTorch's view follows).
std::optional<Shape> view_strides(const Shape& shape, const Shape& strides, const Shape& new_shape) {
  Shape out(new_shape.size(), 0);
  if (shape_numel(shape) == 0 || shape.empty()) return contiguous_strides(new_shape);
  int64_t view_d = int64_t(new_shape.size()) - 1;
  int64_t chunk_base = strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
    tensor_numel *= shape[size_t(d)];
    if (d == 0 || (shape[size_t(d - 1)] != 1 && strides[size_t(d - 1)] != tensor_numel * chunk_base)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_shape[size_t(view_d)] == 1)) {
        out[size_t(view_d)] = view_numel * chunk_base;
        view_numel *= new_shape[size_t(view_d)];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base = strides[size_t(d - 1)];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

Result<Shape> resolve_shape(const Tensor& x, const Shape& shape, const char* call) {
  Shape out = shape;
  int64_t known = 1, infer = -1;
  for (size_t k = 0; k < out.size(); ++k) {
    if (out[k] == -1) {
      if (infer >= 0) return Status::error(ErrorKind::InvalidArgument, msg(call, ": only one -1 is allowed in ", shape_str(shape)));
      infer = int64_t(k);
    } else if (out[k] < 0) {
      return Status::error(ErrorKind::InvalidArgument, msg(call, ": invalid size ", out[k], " in ", shape_str(shape)));
    }
  }
  Shape given;  // the sizes other than -1, counted with the checked helper (core/shape.h)
  for (int64_t d : out)
    if (d != -1) given.push_back(d);
  OM_TRY(check_shape(call, given, &known));
  if (infer >= 0) {
    if (known == 0 || x.numel() % known != 0)
      return Status::error(ErrorKind::ShapeMismatch, msg(call, ": cannot infer -1 in ", shape_str(shape), " for ", x.to_string()));
    out[size_t(infer)] = x.numel() / known;
  }
  if (shape_numel(out) != x.numel())
    return Status::error(ErrorKind::ShapeMismatch, msg(call, ": shape ", shape_str(shape), " has ", shape_numel(out), " elements but ",
                                                       x.to_string(), " has ", x.numel()));
  return out;
}

// A copy that keeps the trace identity of its source (aliases write no node).
Result<Tensor> copy_of(const Tensor& x, OpId id) {
  OM_ASSIGN_OR_RETURN(Tensor out, detail::make_tensor(x.shape(), x.dtype()));
  OM_TRY(detail::copy_elements(x, out));
  OM_TRY(record_op(id, {x}, out));
  return out;
}

}  // namespace

namespace {
// reshape and view: one recording (Reshape); only view refuses strides that need a copy.
Result<Tensor> reshape_or_view(const Tensor& x, const Shape& shape, bool may_copy, const char* call) {
  OM_TRY(check_input(x, call));
  OM_ASSIGN_OR_RETURN(Shape s, resolve_shape(x, shape, call));
  Tensor out;
  if (auto st = view_strides(x.shape(), x.strides(), s)) {
    out = detail::make_view(x, s, *st, x.storage_offset());
  } else if (!may_copy) {
    return Status::error(ErrorKind::InvalidArgument,
                         msg(call, ": shape ", shape_str(s), " cannot view ", x.to_string(), " with strides ", shape_str(x.strides()),
                             " without a copy; use reshape() (which copies when it must) or contiguous().view()"));
  } else {
    OM_ASSIGN_OR_RETURN(Tensor dense, detail::make_tensor(x.shape(), x.dtype()));
    OM_TRY(detail::copy_elements(x, dense));
    out = detail::make_view(dense, s, contiguous_strides(s), 0);
  }
  OM_TRY(record<OpId::Reshape>({x}, out));
  return out;
}
}  // namespace

Result<Tensor> reshape(const Tensor& x, const Shape& shape) { return reshape_or_view(x, shape, true, "om::Tensor::reshape"); }
Result<Tensor> view(const Tensor& x, const Shape& shape) { return reshape_or_view(x, shape, false, "om::Tensor::view"); }

Result<Tensor> permute(const Tensor& x, const std::vector<int64_t>& dims) {
  const char* call = "om::Tensor::permute";
  OM_TRY(check_input(x, call));
  if (int64_t(dims.size()) != x.dim())
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": ", dims.size(), " dims given for ", x.to_string()));
  std::vector<int64_t> perm(dims.size());
  std::vector<bool> seen(dims.size(), false);
  Shape shape(dims.size()), strides(dims.size());
  for (size_t k = 0; k < dims.size(); ++k) {
    int64_t d;
    if (!normalize_axis(dims[k], x.dim(), &d) || seen[size_t(d)])
      return Status::error(ErrorKind::InvalidArgument, msg(call, ": ", shape_str(dims), " is not a permutation of ", x.dim(), " dims"));
    seen[size_t(d)] = true;
    perm[k] = d;
    shape[k] = x.shape()[size_t(d)];
    strides[k] = x.strides()[size_t(d)];
  }
  Tensor out = detail::make_view(x, shape, strides, x.storage_offset());
  OM_TRY(record<OpId::Permute>({x}, out, PermuteAttrs{perm}));
  return out;
}

Result<Tensor> transpose(const Tensor& x, int64_t dim0, int64_t dim1) {
  OM_TRY(check_input(x, "om::Tensor::transpose"));
  int64_t a, b;
  if (!normalize_axis(dim0, x.dim(), &a)) return bad_dim("om::Tensor::transpose", dim0, x);
  if (!normalize_axis(dim1, x.dim(), &b)) return bad_dim("om::Tensor::transpose", dim1, x);
  std::vector<int64_t> perm(size_t(x.dim()));
  for (size_t k = 0; k < perm.size(); ++k) perm[k] = int64_t(k);
  std::swap(perm[size_t(a)], perm[size_t(b)]);
  return permute(x, perm);
}

Result<Tensor> squeeze(const Tensor& x, std::optional<int64_t> dim) {
  const char* call = "om::Tensor::squeeze";
  OM_TRY(check_input(x, call));
  Shape shape, strides;
  int64_t d = -1;
  if (dim && !normalize_axis(*dim, x.dim(), &d)) return bad_dim(call, *dim, x);
  for (int64_t k = 0; k < x.dim(); ++k) {
    const bool drop = x.shape()[size_t(k)] == 1 && (!dim || k == d);
    if (!drop) {
      shape.push_back(x.shape()[size_t(k)]);
      strides.push_back(x.strides()[size_t(k)]);
    }
  }
  Tensor out = detail::make_view(x, shape, strides, x.storage_offset());
  OM_TRY(record<OpId::Squeeze>({x}, out, SqueezeAttrs{dim ? d : -1}));
  return out;
}

Result<Tensor> unsqueeze(const Tensor& x, int64_t dim) {
  const char* call = "om::Tensor::unsqueeze";
  OM_TRY(check_input(x, call));
  int64_t d;
  if (!normalize_axis(dim, x.dim() + 1, &d)) return bad_dim(call, dim, x);
  Shape shape = x.shape(), strides = x.strides();
  const int64_t st = d < x.dim() ? x.strides()[size_t(d)] * x.shape()[size_t(d)] : 1;
  shape.insert(shape.begin() + d, 1);
  strides.insert(strides.begin() + d, st);
  Tensor out = detail::make_view(x, shape, strides, x.storage_offset());
  OM_TRY(record<OpId::Unsqueeze>({x}, out, UnsqueezeAttrs{d}));
  return out;
}

Result<Tensor> expand(const Tensor& x, const Shape& shape) {
  const char* call = "om::Tensor::expand";
  OM_TRY(check_input(x, call));
  if (shape.size() < size_t(x.dim()))
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": target ", shape_str(shape), " has fewer dims than ", x.to_string()));
  const size_t lead = shape.size() - size_t(x.dim());
  Shape out_shape(shape.size()), strides(shape.size(), 0);
  for (size_t k = 0; k < shape.size(); ++k) {
    if (k < lead) {
      if (shape[k] < 0) return Status::error(ErrorKind::InvalidArgument, msg(call, ": -1 is not allowed for a new leading dim in ", shape_str(shape)));
      out_shape[k] = shape[k];
      continue;
    }
    const int64_t have = x.shape()[k - lead];
    const int64_t want = shape[k] == -1 ? have : shape[k];
    if (want < 0) return Status::error(ErrorKind::InvalidArgument, msg(call, ": invalid size ", shape[k], " in ", shape_str(shape)));
    if (have != want && have != 1)
      return Status::error(ErrorKind::ShapeMismatch, msg(call, ": cannot expand ", x.to_string(), " to ", shape_str(shape), " (dim ", k, ": ", have,
                                                         " vs ", want, "); only size-1 dims expand"));
    out_shape[k] = want;
    strides[k] = have == want ? x.strides()[k - lead] : 0;
  }
  OM_TRY(check_shape(call, out_shape));  // a broadcast view may not exceed the element limit either
  Tensor out = detail::make_view(x, out_shape, strides, x.storage_offset());
  OM_TRY(record<OpId::Expand>({x}, out));
  return out;
}

Result<Tensor> slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  const char* call = "om::Tensor::slice";
  OM_TRY(check_input(x, call));
  int64_t d;
  if (!normalize_axis(dim, x.dim(), &d)) return bad_dim(call, dim, x);
  if (step <= 0) return Status::error(ErrorKind::InvalidArgument, msg(call, ": step must be positive, got ", step, "; use flip() to reverse"));
  const int64_t size = x.shape()[size_t(d)];
  auto clamp = [&](int64_t v) {
    if (v < 0) v += size;
    return std::min(std::max<int64_t>(v, 0), size);
  };
  const int64_t s = clamp(start), e = std::max(clamp(end), s);
  Shape shape = x.shape(), strides = x.strides();
  shape[size_t(d)] = (e - s + step - 1) / step;
  strides[size_t(d)] *= step;
  Tensor out = detail::make_view(x, shape, strides, x.storage_offset() + s * x.strides()[size_t(d)]);
  OM_TRY(record<OpId::Slice>({x}, out, SliceAttrs{d, s, e, step, start, end}));
  return out;
}

Result<Tensor> select(const Tensor& x, int64_t dim, int64_t index) {
  const char* call = "om::Tensor::select";
  OM_TRY(check_input(x, call));
  int64_t d;
  if (!normalize_axis(dim, x.dim(), &d)) return bad_dim(call, dim, x);
  const int64_t size = x.shape()[size_t(d)];
  const int64_t i = index < 0 ? index + size : index;
  if (i < 0 || i >= size)
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": index ", index, " is out of range for dim ", d, " of size ", size));
  Shape shape = x.shape(), strides = x.strides();
  shape.erase(shape.begin() + d);
  strides.erase(strides.begin() + d);
  Tensor out = detail::make_view(x, shape, strides, x.storage_offset() + i * x.strides()[size_t(d)]);
  OM_TRY(record<OpId::Select>({x}, out, SelectAttrs{d, i, index}));
  return out;
}

Result<Tensor> flip(const Tensor& x, int64_t dim) {
  const char* call = "om::Tensor::flip";
  OM_TRY(check_input(x, call));
  int64_t d;
  if (!normalize_axis(dim, x.dim(), &d)) return bad_dim(call, dim, x);
  // A reversed view (negative stride) copied out: flip returns a copy, as in PyTorch.
  Shape strides = x.strides();
  const int64_t size = x.shape()[size_t(d)];
  strides[size_t(d)] = -strides[size_t(d)];
  const int64_t off = x.storage_offset() + (size > 0 ? (size - 1) * x.strides()[size_t(d)] : 0);
  Tensor reversed = detail::make_view(x, x.shape(), strides, off);
  OM_ASSIGN_OR_RETURN(Tensor out, detail::make_tensor(x.shape(), x.dtype()));
  OM_TRY(detail::copy_elements(reversed, out));
  OM_TRY(record<OpId::Flip>({x}, out, FlipAttrs{d}));
  return out;
}

Result<Tensor> contiguous(const Tensor& x) {
  OM_TRY(check_input(x, "om::Tensor::contiguous"));
  if (x.is_contiguous()) return x;
  return copy_of(x, OpId::Contiguous);
}

Result<Tensor> clone(const Tensor& x) {
  OM_TRY(check_input(x, "om::Tensor::clone"));
  return copy_of(x, OpId::Clone);
}

Result<Tensor> cast(const Tensor& x, DType dtype) {
  OM_TRY(check_input(x, "om::Tensor::to"));
  if (x.dtype() == dtype) return x;
  OM_ASSIGN_OR_RETURN(Tensor out, detail::make_tensor(x.shape(), dtype));
  OM_TRY(detail::copy_elements(x, out));
  OM_TRY(record<OpId::Cast>({x}, out, CastAttrs{dtype}));
  return out;
}

Result<Tensor> cat(const std::vector<Tensor>& xs, int64_t dim) {
  const char* call = "om::cat";
  if (xs.empty()) return Status::error(ErrorKind::InvalidArgument, msg(call, ": needs at least one tensor"));
  for (const Tensor& x : xs) OM_TRY(check_input(x, call));
  const Tensor& first = xs[0];
  int64_t d;
  if (!normalize_axis(dim, first.dim(), &d)) return bad_dim(call, dim, first);
  Shape shape = first.shape();
  shape[size_t(d)] = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Tensor& x = xs[i];
    if (x.dtype() != first.dtype())
      return Status::error(ErrorKind::DTypeMismatch, msg(call, ": tensor ", i, " is ", dtype_name(x.dtype()), " but tensor 0 is ", dtype_name(first.dtype())));
    bool ok = x.dim() == first.dim();
    for (int64_t k = 0; ok && k < x.dim(); ++k) ok = k == d || x.shape()[size_t(k)] == first.shape()[size_t(k)];
    if (!ok)
      return Status::error(ErrorKind::ShapeMismatch, msg(call, ": tensor ", i, " ", x.to_string(), " does not match tensor 0 ", first.to_string(),
                                                         " outside dim ", d));
    shape[size_t(d)] += x.shape()[size_t(d)];
  }
  OM_ASSIGN_OR_RETURN(Tensor out, detail::make_tensor(shape, first.dtype()));
  int64_t at = 0;
  for (const Tensor& x : xs) {
    Shape part = out.shape();
    part[size_t(d)] = x.shape()[size_t(d)];
    Tensor dst = detail::make_view(out, part, out.strides(), at * out.strides()[size_t(d)]);
    OM_TRY(detail::copy_elements(x, dst));
    at += x.shape()[size_t(d)];
  }
  OM_TRY(record<OpId::Concat>(xs, out, ConcatAttrs{d}));
  return out;
}

Result<Tensor> stack(const std::vector<Tensor>& xs, int64_t dim) {
  const char* call = "om::stack";
  if (xs.empty()) return Status::error(ErrorKind::InvalidArgument, msg(call, ": needs at least one tensor"));
  for (const Tensor& x : xs) OM_TRY(check_input(x, call));
  int64_t d;
  if (!normalize_axis(dim, xs[0].dim() + 1, &d))
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": dim ", dim, " is out of range for a new axis of ", xs[0].to_string(),
                                                         " (valid: [", -(xs[0].dim() + 1), ", ", xs[0].dim(), "])"));
  std::vector<Tensor> parts;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (xs[i].shape() != xs[0].shape())
      return Status::error(ErrorKind::ShapeMismatch, msg(call, ": tensor ", i, " ", xs[i].to_string(), " does not have the shape of tensor 0 ",
                                                         xs[0].to_string(), "; stack needs equal shapes (cat joins along an existing axis)"));
    OM_ASSIGN_OR_RETURN(Tensor u, ops::unsqueeze(xs[i], d));
    parts.push_back(u);
  }
  return ops::cat(parts, d);  // recorded as Unsqueeze + Concat: traced and differentiated through them
}

Result<Tensor> index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  const char* call = "om::index_select";
  OM_TRY(check_input(x, call));
  OM_TRY(check_input(index, call));
  int64_t d;
  if (!normalize_axis(dim, x.dim(), &d)) return bad_dim(call, dim, x);
  if ((index.dtype() != DType::i64 && index.dtype() != DType::i32) || index.dim() != 1)
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": index must be a 1-D i64 or i32 tensor, got ", index.to_string(),
                                                         index.dim() != 1 ? "; reshape it to [n]" : "; cast with .to(om::DType::i64)"));
  const int64_t size = x.shape()[size_t(d)];
  OM_ASSIGN_OR_RETURN(Tensor di, detail::dense(index));
  std::vector<int64_t> rows(size_t(index.numel()));
  for (int64_t k = 0; k < index.numel(); ++k) {
    const int64_t ix = index.dtype() == DType::i64 ? detail::raw_as<int64_t>(di)[k] : int64_t(detail::raw_as<int32_t>(di)[k]);
    if (ix < -size || ix >= size)
      return Status::error(ErrorKind::InvalidArgument, msg(call, ": index ", ix, " (element ", k, ") is out of range for dim ", d, " of ",
                                                           x.to_string(), "; indices must be in [", -size, ", ", size, ")"));
    rows[size_t(k)] = ix < 0 ? ix + size : ix;
  }
  Shape shape = x.shape();
  shape[size_t(d)] = index.numel();
  OM_ASSIGN_OR_RETURN(Tensor out, detail::make_tensor(shape, x.dtype()));
  // One strided view per selected entry, copied into its place in the output.
  Shape part = x.shape();
  part[size_t(d)] = 1;
  for (size_t k = 0; k < rows.size(); ++k) {
    Tensor src = detail::make_view(x, part, x.strides(), x.storage_offset() + rows[k] * x.strides()[size_t(d)]);
    Tensor dst = detail::make_view(out, part, out.strides(), int64_t(k) * out.strides()[size_t(d)]);
    OM_TRY(detail::copy_elements(src, dst));
  }
  OM_TRY(record<OpId::IndexSelect>({x, index}, out, IndexSelectAttrs{d}));
  return out;
}

}  // namespace ops

Tensor stack(const std::vector<Tensor>& xs, int64_t dim) { return unwrap(ops::stack(xs, dim)); }
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) { return unwrap(ops::index_select(x, dim, index)); }

Tensor cat(const std::vector<Tensor>& xs, int64_t dim) { return unwrap(ops::cat(xs, dim)); }

}  // namespace om
