#include "onemodel/core/storage.h"

#include <cstring>

namespace om::detail {

Result<std::shared_ptr<StorageImpl>> allocate_storage(size_t nbytes, bool zero) {
  Store& store = Store::current();
  uint64_t scope_id = 0;
  OM_ASSIGN_OR_RETURN(void* p, store.allocate(nbytes, &scope_id));
  auto s = std::make_shared<StorageImpl>();
  s->data = p;
  s->nbytes = nbytes;
  s->store = store.state();
  s->generation = scope_id;
  if (zero && nbytes) std::memset(p, 0, nbytes);
  return s;
}

}  // namespace om::detail
