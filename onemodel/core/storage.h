// A storage is a byte range in a Store plus the facts the rest of the library checks: a version
// counter bumped by every mutation (the tracer compares it at finish) and the scope generation
// it was allocated in (use-after-release detection).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "onemodel/core/store.h"

namespace om {

namespace detail {
struct StorageImpl {
  void* data = nullptr;
  size_t nbytes = 0;
  std::shared_ptr<StoreState> store;  // null for storages that own nothing in a store
  uint64_t generation = 0;            // the scope id it was allocated under
  std::atomic<uint64_t> version{0};

  bool live() const {
    if (!store) return true;
    std::lock_guard<Mutex> lock(store->mutex);
    return store->scope_live(generation);
  }
};

// Allocates `nbytes` in the current store (zero-filled when `zero`).
Result<std::shared_ptr<StorageImpl>> allocate_storage(size_t nbytes, bool zero);
}  // namespace detail

// The public handle returned by Tensor::storage() / mutable_storage().
class Storage {
 public:
  Storage() = default;
  explicit Storage(std::shared_ptr<detail::StorageImpl> impl) : impl_(std::move(impl)) {}
  size_t nbytes() const { return impl_ ? impl_->nbytes : 0; }
  uint64_t version() const { return impl_ ? impl_->version.load() : 0; }
  uint64_t generation() const { return impl_ ? impl_->generation : 0; }
  const void* data() const { return impl_ ? impl_->data : nullptr; }
  bool operator==(const Storage& o) const { return impl_ == o.impl_; }
  const std::shared_ptr<detail::StorageImpl>& impl() const { return impl_; }

 private:
  std::shared_ptr<detail::StorageImpl> impl_;
};

}  // namespace om
