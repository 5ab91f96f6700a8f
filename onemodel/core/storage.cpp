#include "onemodel/core/storage.h"

#include <cstring>

namespace om::detail {

Result<std::shared_ptr<StorageImpl>> allocate_storage(size_t nbytes, bool zero) {
  Store& store = Store::current();
  uint64_t scope_id = 0;
  OM_ASSIGN_OR_RETURN(void* p, store.allocate(nbytes, &scope_id));
  // The deleter tells the store, so a growing store can reuse blocks whose storages are gone.
  std::shared_ptr<StorageImpl> s(new StorageImpl, [](StorageImpl* impl) {
    if (impl->store) impl->store->on_storage_freed(impl->data);
    delete impl;
  });
  s->data = p;
  s->nbytes = nbytes;
  s->store = store.state();
  s->generation = scope_id;
  if (zero && nbytes) std::memset(p, 0, nbytes);
  return s;
}

}  // namespace om::detail
