#include "onemodel/data/dataloader.h"

#include <algorithm>
#include <numeric>

#include "onemodel/core/status.h"

namespace om::data {
namespace {

// Uniform in [0, bound) from 64 random bits, rejecting the biased top (bound >= 1).
uint64_t below(Generator& g, uint64_t bound) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  for (;;) {
    const uint64_t r = (uint64_t(g.next_u32()) << 32) | g.next_u32();
    if (r < limit) return r % bound;
  }
}

}  // namespace

DataLoader::DataLoader(const Dataset& dataset, const DataLoaderOptions& options) : dataset_(dataset), options_(options) {
  if (options.batch_size < 1)
    raise(Status::error(ErrorKind::InvalidArgument, msg("om::data::DataLoader: batch_size ", options.batch_size, " must be at least 1")));
}

int64_t DataLoader::batches_per_epoch() const {
  const int64_t n = dataset_.size(), b = options_.batch_size;
  return options_.drop_last ? n / b : (n + b - 1) / b;
}

std::vector<int64_t> DataLoader::order(int64_t epoch) const {
  std::vector<int64_t> idx(size_t(dataset_.size()));
  std::iota(idx.begin(), idx.end(), int64_t(0));
  if (!options_.shuffle) return idx;
  // Fisher-Yates from a generator seeded by (seed, epoch) alone: any epoch can be replayed.
  Generator g(options_.seed + 0x9E3779B97F4A7C15ull * uint64_t(epoch + 1));
  for (size_t i = idx.size(); i > 1; --i) std::swap(idx[i - 1], idx[size_t(below(g, uint64_t(i)))]);
  return idx;
}

void DataLoader::set_place(int64_t epoch, int64_t position) {
  if (epoch < 0 || position < 0 || position > batches_per_epoch())
    raise(Status::error(ErrorKind::InvalidArgument, msg("om::data::DataLoader::set_place: epoch ", epoch, " and position ", position,
                                                        " must be >= 0 and position at most the ", batches_per_epoch(), " batches of an epoch")));
  epoch_ = epoch;
  position_ = position;
}

Batch DataLoader::next_batch() {
  if (order_epoch_ != epoch_) {
    order_ = order(epoch_);
    order_epoch_ = epoch_;
  }
  const int64_t b = options_.batch_size, first = position_ * b;
  const int64_t last = std::min(first + b, dataset_.size());
  ++position_;  // handed out: a checkpoint taken while it is used resumes after it
  return dataset_.get_batch(std::vector<int64_t>(order_.begin() + first, order_.begin() + last));
}

DataLoader::Iterator DataLoader::begin() {
  if (position_ >= batches_per_epoch()) {  // the last epoch ran to its end: the next one starts
    if (position_ > 0 || batches_per_epoch() == 0) ++epoch_;
    position_ = 0;
  }
  if (batches_per_epoch() == 0) return end();
  return Iterator(this);
}

DataLoader::Iterator::Iterator(DataLoader* loader) : loader_(loader) {
  if (loader_) batch_ = loader_->next_batch();
}

DataLoader::Iterator& DataLoader::Iterator::operator++() {
  if (loader_->position_ >= loader_->batches_per_epoch()) {
    ++loader_->epoch_;
    loader_->position_ = 0;
    loader_ = nullptr;
    batch_ = Batch();
  } else {
    batch_ = loader_->next_batch();
  }
  return *this;
}

}  // namespace om::data
