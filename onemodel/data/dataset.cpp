#include "onemodel/data/dataset.h"

#include "onemodel/core/status.h"
#include "onemodel/ops/ops.h"

namespace om::data {

TensorDataset::TensorDataset(Tensor x, Tensor y) : x_(std::move(x)), y_(std::move(y)) {
  const char* call = "om::data::TensorDataset";
  if (!x_.defined() || x_.dim() < 1)
    raise(Status::error(ErrorKind::InvalidArgument, msg(call, ": x must have a first (sample) axis, got ", x_.to_string())));
  if (y_.defined() && (y_.dim() < 1 || y_.shape()[0] != x_.shape()[0]))
    raise(Status::error(ErrorKind::ShapeMismatch, msg(call, ": x ", x_.to_string(), " and y ", y_.to_string(),
                                                      " must have the same first (sample) axis")));
}

int64_t TensorDataset::size() const { return x_.shape()[0]; }

Batch TensorDataset::get_batch(const std::vector<int64_t>& indices) const {
  const Tensor idx = from_vector<int64_t>(indices);
  Batch b;
  b.x = index_select(x_, 0, idx);
  if (y_.defined()) b.y = index_select(y_, 0, idx);
  return b;
}

}  // namespace om::data
