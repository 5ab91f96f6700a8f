// The tensor store: tensors' bytes are bump-allocated in blocks of an om::Store and come back
// when an om::StoreScope ends, never per tensor. A fixed store (for devices) has one block of a
// set capacity; a growing store (the default) adds blocks as needed. Every allocation is
// 64-byte aligned. A storage remembers the scope it was allocated in; using it after that scope
// was released is detected (UseAfterRelease) instead of reading reused memory.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include "onemodel/kernels/sync.h"
#include <vector>

#include "onemodel/core/status.h"

namespace om {

namespace detail {
struct StoreState;  // shared with every storage allocated from the store
}

class Store {
 public:
  static constexpr size_t kAlignment = 64;

  // A growing store; blocks of at least `block_bytes`.
  explicit Store(size_t block_bytes = size_t(4) << 20);
  // A fixed-capacity store: exhaustion is an OutOfMemory error naming request and capacity.
  static Store fixed(size_t capacity_bytes);
  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();

  bool is_fixed() const;
  size_t capacity() const;   // bytes reserved in blocks
  size_t used() const;       // bytes handed out and not released
  size_t peak() const;       // high-water mark of used()

  // This thread's default (growing) store, used when no StoreGuard is active. Per thread, so
  // scopes opened by two threads never release each other's tensors (docs/memory.md).
  static Store& default_store();
  // The store new tensors go to on this thread.
  static Store& current();

  // Internal: allocation. `scope_id` receives the id of the innermost live scope.
  Result<void*> allocate(size_t bytes, uint64_t* scope_id);
  const std::shared_ptr<detail::StoreState>& state() const { return state_; }
  // Internal: drops this object's reference without releasing the blocks; storages still
  // holding the state keep it (and their bytes) alive. Used when a thread's default store goes.
  static void detach_state(Store& s);

 private:
  Store(size_t capacity, bool fixed);
  std::shared_ptr<detail::StoreState> state_;
  friend class StoreScope;
};

// Makes `store` the current store of this thread for the guard's lifetime.
class StoreGuard {
 public:
  explicit StoreGuard(Store& store);
  ~StoreGuard();
  StoreGuard(const StoreGuard&) = delete;
  StoreGuard& operator=(const StoreGuard&) = delete;

 private:
  Store* previous_;
};

// RAII mark/release on the current store (or a given one): everything allocated while the scope
// is alive is released when it ends. Scopes nest strictly.
class StoreScope {
 public:
  StoreScope();
  explicit StoreScope(Store& store);
  ~StoreScope();
  StoreScope(const StoreScope&) = delete;
  StoreScope& operator=(const StoreScope&) = delete;

 private:
  std::shared_ptr<detail::StoreState> state_;
  uint64_t id_;
};

namespace detail {

struct StoreBlock {
  std::unique_ptr<uint8_t[]> raw;
  uint8_t* base = nullptr;  // aligned start
  size_t size = 0;
  size_t live = 0;  // storages allocated here and not yet destroyed (growing stores reuse at 0)
};

struct ScopeMark {
  uint64_t id;
  size_t block;
  size_t offset;
  size_t used;
};

struct StoreState {
  Mutex mutex;
  bool fixed = false;
  bool alive = true;
  size_t block_bytes = 0;
  std::vector<StoreBlock> blocks;
  size_t block = 0;   // current block index
  size_t offset = 0;  // offset within the current block
  size_t used = 0;
  size_t peak = 0;
  uint64_t next_scope_id = 1;
  std::vector<ScopeMark> scopes;  // live scopes, innermost last; id 0 = the root, always live

  // True while memory allocated under scope `id` has not been released.
  bool scope_live(uint64_t id);
  // Called when the storage at `p` is destroyed. A growing store with no live scope reuses a
  // block once no storage in it is left (docs/memory.md), so scope-less loops stay bounded.
  void on_storage_freed(const void* p);
};

}  // namespace detail
}  // namespace om
