// PyTorch's DataLoader, single-process: batches of a dataset in a fixed or shuffled order.
//
//   om::data::TensorDataset train(x, y);
//   om::data::DataLoader loader(train, {/*batch_size*/ 32, /*shuffle*/ true, /*drop_last*/ false, /*seed*/ 7});
//   for (int epoch = 0; epoch < 10; ++epoch)
//     for (const om::data::Batch& b : loader) { ... }   // one epoch per loop
//
// The order is a function of (seed, epoch) only, the same on every machine. The loader keeps
// its place: epoch() and position() (batches handed out in the current epoch); a loop left
// early continues where it stopped at the next loop, and checkpoints save the place
// (nn/checkpoint.h) so a resumed run reads the batches an uninterrupted one would.
#pragma once
#include <cstdint>
#include <iterator>
#include <vector>

#include "onemodel/data/dataset.h"

namespace om::data {

struct DataLoaderOptions {
  int64_t batch_size = 1;
  bool shuffle = false;
  bool drop_last = false;  // skip a last batch smaller than batch_size
  uint64_t seed = 0;       // the shuffle's seed (epoch e's order depends on seed and e only)
};

class DataLoader {
 public:
  // The dataset must outlive the loader.
  DataLoader(const Dataset& dataset, const DataLoaderOptions& options = {});

  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Batch;
    using difference_type = std::ptrdiff_t;
    using pointer = const Batch*;
    using reference = const Batch&;
    const Batch& operator*() const { return batch_; }
    const Batch* operator->() const { return &batch_; }
    Iterator& operator++();
    bool operator==(const Iterator& o) const { return loader_ == o.loader_; }
    bool operator!=(const Iterator& o) const { return !(*this == o); }

   private:
    friend class DataLoader;
    explicit Iterator(DataLoader* loader);
    DataLoader* loader_ = nullptr;  // null: the end
    Batch batch_;
  };

  // Starts the next epoch, or continues the current one where it stopped; iterating to the
  // end finishes the epoch (epoch() + 1, position() 0).
  Iterator begin();
  Iterator end() { return Iterator(nullptr); }

  int64_t batches_per_epoch() const;
  int64_t epoch() const { return epoch_; }
  int64_t position() const { return position_; }
  // Restores a place (checkpoints): epoch >= 0, position in [0, batches_per_epoch()].
  void set_place(int64_t epoch, int64_t position);
  const DataLoaderOptions& options() const { return options_; }
  const Dataset& dataset() const { return dataset_; }
  // The sample indices of epoch `epoch`, in the order its batches take them.
  std::vector<int64_t> order(int64_t epoch) const;

 private:
  Batch next_batch();  // the batch at position_, then position_ + 1

  const Dataset& dataset_;
  DataLoaderOptions options_;
  int64_t epoch_ = 0, position_ = 0;
  std::vector<int64_t> order_;  // the current epoch's order (cached)
  int64_t order_epoch_ = -1;
};

}  // namespace om::data
