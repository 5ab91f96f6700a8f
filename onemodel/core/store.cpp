#include "onemodel/core/store.h"

#include <algorithm>

namespace om {

namespace detail {
bool StoreState::scope_live(uint64_t id) {
  if (!alive) return false;
  if (id == 0) return true;
  // Scope ids grow with nesting, so the live stack is sorted.
  auto it = std::lower_bound(scopes.begin(), scopes.end(), id,
                             [](const ScopeMark& m, uint64_t v) { return m.id < v; });
  return it != scopes.end() && it->id == id;
}

namespace {
// Blocks before the current one count whole (their tails were skipped), the current one up to
// the bump offset.
void recount_used(StoreState& s) {
  size_t used = s.offset;
  for (size_t i = 0; i < s.block && i < s.blocks.size(); ++i) used += s.blocks[i].size;
  s.used = used;
}

// Block `i` of a growing store holds no storage and no scope is live (no mark points into it):
// the current block restarts at offset 0; an earlier one moves after the current block as
// reserved capacity (one spare is kept, more go back to the system).
void reclaim_block(StoreState& s, size_t i) {
  if (i == s.block) {
    s.offset = 0;
  } else if (i < s.block) {
    StoreBlock b = std::move(s.blocks[i]);
    s.blocks.erase(s.blocks.begin() + ptrdiff_t(i));
    --s.block;
    bool have_spare = false;
    for (size_t k = s.block + 1; k < s.blocks.size(); ++k) have_spare = have_spare || s.blocks[k].live == 0;
    if (!have_spare) s.blocks.insert(s.blocks.begin() + ptrdiff_t(s.block + 1), std::move(b));
  }
  recount_used(s);
}

void sweep(StoreState& s) {
  if (s.fixed || !s.scopes.empty()) return;
  for (size_t i = std::min(s.block + 1, s.blocks.size()); i-- > 0;)
    if (s.blocks[i].live == 0) reclaim_block(s, i);
}
}  // namespace

void StoreState::on_storage_freed(const void* p) {
  std::lock_guard<Mutex> lock(mutex);
  if (!alive) return;
  const uint8_t* q = static_cast<const uint8_t*>(p);
  for (size_t i = 0; i < blocks.size(); ++i) {
    StoreBlock& b = blocks[i];
    if (q < b.base || q >= b.base + b.size) continue;
    if (b.live) --b.live;
    if (!fixed && scopes.empty() && b.live == 0) reclaim_block(*this, i);
    return;
  }
}
}  // namespace detail

namespace {
OM_THREAD_LOCAL Store* t_current = nullptr;

size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

detail::StoreBlock make_block(size_t bytes) {
  detail::StoreBlock b;
  b.raw.reset(new (std::nothrow) uint8_t[bytes + Store::kAlignment]);
  if (!b.raw) return b;
  const uintptr_t p = reinterpret_cast<uintptr_t>(b.raw.get());
  b.base = reinterpret_cast<uint8_t*>(align_up(p, Store::kAlignment));
  b.size = bytes;
  return b;
}
}  // namespace

Store::Store(size_t block_bytes) : Store(block_bytes, false) {}

Store::Store(size_t capacity, bool fixed) : state_(std::make_shared<detail::StoreState>()) {
  state_->fixed = fixed;
  state_->block_bytes = std::max<size_t>(align_up(capacity, kAlignment), kAlignment);
  if (fixed) state_->blocks.push_back(make_block(state_->block_bytes));
}

Store Store::fixed(size_t capacity_bytes) { return Store(capacity_bytes, true); }
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;

Store::~Store() {
  if (!state_) return;
  std::lock_guard<Mutex> lock(state_->mutex);
  state_->alive = false;  // storages still holding the state now report UseAfterRelease
  state_->blocks.clear();
}

bool Store::is_fixed() const { return state_->fixed; }
size_t Store::capacity() const {
  std::lock_guard<Mutex> lock(state_->mutex);
  size_t n = 0;
  for (const auto& b : state_->blocks) n += b.size;
  return n;
}
size_t Store::used() const {
  std::lock_guard<Mutex> lock(state_->mutex);
  return state_->used;
}
size_t Store::peak() const {
  std::lock_guard<Mutex> lock(state_->mutex);
  return state_->peak;
}

namespace {
// Each thread has its own default store (docs/memory.md): a StoreScope on one thread never
// releases another thread's tensors. When the thread ends, the store object goes but its state
// (the blocks) stays alive for as long as a tensor allocated there still references it, so
// tensors handed to another thread, or living in static objects, remain valid.
struct DefaultStoreHolder {
  Store* store = nullptr;
  ~DefaultStoreHolder() {
    if (!store) return;
    Store::detach_state(*store);
    delete store;
  }
};
OM_THREAD_LOCAL DefaultStoreHolder t_default;
}  // namespace

void Store::detach_state(Store& s) { s.state_.reset(); }

Store& Store::default_store() {
  if (!t_default.store) t_default.store = new Store();
  return *t_default.store;
}

Store& Store::current() { return t_current ? *t_current : default_store(); }

Result<void*> Store::allocate(size_t bytes, uint64_t* scope_id) {
  detail::StoreState& s = *state_;
  std::lock_guard<Mutex> lock(s.mutex);
  const size_t need = align_up(std::max<size_t>(bytes, 1), kAlignment);
  *scope_id = s.scopes.empty() ? 0 : s.scopes.back().id;
  // Try the current block, then later (already reserved) blocks, then a new one.
  while (s.block < s.blocks.size()) {
    detail::StoreBlock& b = s.blocks[s.block];
    if (b.size - s.offset >= need) {
      void* p = b.base + s.offset;
      ++b.live;
      s.offset += need;
      s.used += need;
      s.peak = std::max(s.peak, s.used);
      return p;
    }
    if (s.fixed) break;
    if (s.block + 1 >= s.blocks.size()) break;
    s.used += b.size - s.offset;  // the block's tail is skipped until the scope releases it
    ++s.block;
    s.offset = 0;
  }
  if (s.fixed) {
    return Status::error(ErrorKind::OutOfMemory,
                         msg("om::Store: cannot allocate ", bytes, " bytes: the fixed store has ", s.block_bytes - s.offset,
                             " of ", s.block_bytes, " bytes free; create it with a larger Store::fixed(capacity) "
                             "or release memory with an om::StoreScope"));
  }
  detail::StoreBlock nb = make_block(std::max(need, s.block_bytes));
  if (!nb.raw) {
    return Status::error(ErrorKind::OutOfMemory, msg("om::Store: the system refused a block of ", std::max(need, s.block_bytes), " bytes"));
  }
  if (!s.blocks.empty()) s.used += s.blocks[s.block].size - s.offset;
  // Insert after the current block so release-by-mark keeps working.
  const size_t at = s.blocks.empty() ? 0 : s.block + 1;
  s.blocks.insert(s.blocks.begin() + at, std::move(nb));
  s.block = at;
  s.offset = need;
  ++s.blocks[at].live;
  s.used += need;
  s.peak = std::max(s.peak, s.used);
  return static_cast<void*>(s.blocks[at].base);
}

StoreGuard::StoreGuard(Store& store) : previous_(t_current) { t_current = &store; }
StoreGuard::~StoreGuard() { t_current = previous_; }

StoreScope::StoreScope() : StoreScope(Store::current()) {}

StoreScope::StoreScope(Store& store) : state_(store.state()) {
  std::lock_guard<Mutex> lock(state_->mutex);
  id_ = state_->next_scope_id++;
  state_->scopes.push_back({id_, state_->block, state_->offset, state_->used});
}

StoreScope::~StoreScope() {
  std::lock_guard<Mutex> lock(state_->mutex);
  auto& scopes = state_->scopes;
  // Strict nesting is the contract; tolerate a missing mark rather than corrupting the store.
  for (size_t i = scopes.size(); i-- > 0;) {
    if (scopes[i].id == id_) {
      state_->block = scopes[i].block;
      state_->offset = scopes[i].offset;
      state_->used = scopes[i].used;
      scopes.erase(scopes.begin() + i, scopes.end());
      detail::sweep(*state_);
      break;
    }
  }
}

}  // namespace om
