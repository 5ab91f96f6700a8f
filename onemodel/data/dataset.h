// Datasets for the data loader (docs/training.md, "Data loading"), as PyTorch's
// torch.utils.data: a dataset has a size and yields the samples at a list of indices as one
// batch. TensorDataset holds inputs and targets whose first axis is the sample.
#pragma once
#include <cstdint>
#include <vector>

#include "onemodel/core/tensor.h"

namespace om::data {

// One batch: inputs and targets, first axis the batch (y undefined for an unlabelled dataset).
struct Batch {
  Tensor x, y;
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  // The samples at `indices` (each in [0, size())), stacked along a new first axis, in order.
  virtual Batch get_batch(const std::vector<int64_t>& indices) const = 0;
};

// Samples are x[i] and y[i] (PyTorch's TensorDataset of two tensors; y may be undefined). x and
// y must agree on their first axis. Batches are copies made with om::index_select.
class TensorDataset : public Dataset {
 public:
  explicit TensorDataset(Tensor x, Tensor y = Tensor());
  int64_t size() const override;
  Batch get_batch(const std::vector<int64_t>& indices) const override;
  const Tensor& x() const { return x_; }
  const Tensor& y() const { return y_; }

 private:
  Tensor x_, y_;
};

}  // namespace om::data
