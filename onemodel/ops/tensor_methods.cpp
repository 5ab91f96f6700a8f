// Tensor's view and copy methods: declared with the tensor (core) and defined here, beside the
// recorded operators they forward to (ops/shape_ops.cpp), so the tensor layer does not depend
// on the operators.
#include <algorithm>

#include "onemodel/core/tensor_internal.h"
#include "onemodel/ops/ops.h"

namespace om {

Tensor Tensor::reshape(const Shape& s) const { return unwrap(ops::reshape(*this, s)); }
Tensor Tensor::view(const Shape& s) const { return unwrap(ops::view(*this, s)); }
Tensor Tensor::permute(const std::vector<int64_t>& d) const { return unwrap(ops::permute(*this, d)); }
Tensor Tensor::transpose(int64_t a, int64_t b) const { return unwrap(ops::transpose(*this, a, b)); }
Tensor Tensor::t() const {
  if (dim() > 2) raise(Status::error(ErrorKind::InvalidArgument, msg("om::Tensor::t: expects at most 2 dims, got ", to_string(), "; use transpose(a, b)")));
  if (dim() < 2) return *this;
  return transpose(0, 1);
}
Tensor Tensor::squeeze() const { return unwrap(ops::squeeze(*this, std::nullopt)); }
Tensor Tensor::squeeze(int64_t d) const { return unwrap(ops::squeeze(*this, d)); }
Tensor Tensor::unsqueeze(int64_t d) const { return unwrap(ops::unsqueeze(*this, d)); }
Tensor Tensor::expand(const Shape& s) const { return unwrap(ops::expand(*this, s)); }
Tensor Tensor::slice(int64_t d, int64_t s, int64_t e, int64_t st) const { return unwrap(ops::slice(*this, d, s, e, st)); }
Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const {
  check(ops::check_input(*this, "om::Tensor::flatten"));
  if (dim() == 0) return reshape({1});  // PyTorch: a 0-d tensor flattens to [1]
  int64_t s = 0, e = 0;
  if (!normalize_axis(start_dim, dim(), &s) || !normalize_axis(end_dim, dim(), &e) || s > e)
    raise(Status::error(ErrorKind::InvalidArgument, msg("om::Tensor::flatten: start_dim ", start_dim, " and end_dim ", end_dim,
                                                        " do not name dims in order of ", to_string())));
  Shape out(shape().begin(), shape().begin() + s);
  int64_t n = 1;
  for (int64_t k = s; k <= e; ++k) n *= shape()[size_t(k)];
  out.push_back(n);
  out.insert(out.end(), shape().begin() + e + 1, shape().end());
  return reshape(out);
}
Tensor Tensor::repeat(const Shape& repeats) const {
  check(ops::check_input(*this, "om::Tensor::repeat"));
  if (int64_t(repeats.size()) < dim())
    raise(Status::error(ErrorKind::InvalidArgument, msg("om::Tensor::repeat: ", repeats.size(), " repeat counts for ", to_string(),
                                                        "; give at least one per dim (", dim(), ")")));
  for (int64_t r : repeats)
    if (r < 0) raise(Status::error(ErrorKind::InvalidArgument, msg("om::Tensor::repeat: repeat count ", r, " must not be negative")));
  // [s0, s1, ...] -> [1, s0, 1, s1, ...] -> expand to [r0, s0, r1, s1, ...] -> [r0*s0, r1*s1, ...]
  Tensor x = *this;
  while (x.dim() < int64_t(repeats.size())) x = x.unsqueeze(0);
  Shape interleaved, target;
  for (size_t k = 0; k < repeats.size(); ++k) {
    x = x.unsqueeze(int64_t(2 * k));
    interleaved.push_back(repeats[k]);
    interleaved.push_back(x.shape()[2 * k + 1]);
    int64_t n = 0;
    if (!checked_mul(repeats[k], x.shape()[2 * k + 1], &n))
      raise(Status::error(ErrorKind::InvalidArgument, msg("om::Tensor::repeat: ", repeats[k], " repeats of an axis of ", x.shape()[2 * k + 1],
                                                          " overflow")));
    target.push_back(n);
  }
  return x.expand(interleaved).reshape(target);
}
Tensor Tensor::tile(const Shape& dims) const {
  // PyTorch's tile: repeat, with leading 1s when fewer counts than dims are given.
  Shape repeats(size_t(std::max<int64_t>(0, dim() - int64_t(dims.size()))), 1);
  repeats.insert(repeats.end(), dims.begin(), dims.end());
  return repeat(repeats);
}
Tensor Tensor::select(int64_t d, int64_t i) const { return unwrap(ops::select(*this, d, i)); }
Tensor Tensor::flip(int64_t d) const { return unwrap(ops::flip(*this, d)); }
Tensor Tensor::contiguous() const { return unwrap(ops::contiguous(*this)); }
Tensor Tensor::clone() const { return unwrap(ops::clone(*this)); }
Tensor Tensor::to(DType dt) const { return unwrap(ops::cast(*this, dt)); }

}  // namespace om
