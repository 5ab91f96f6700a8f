#include "onemodel/core/threads.h"

#include "onemodel/core/status.h"
#include "onemodel/kernels/thread_pool.h"

namespace om {

void set_num_threads(int threads) {
  if (threads < 0)
    raise(Status::error(ErrorKind::InvalidArgument,
                               msg("om::set_num_threads(", threads, "): give 0 (every core), 1 (single-threaded) or a thread count")));
  kernels::set_default_threads(threads);
}

int get_num_threads() { return kernels::default_threads(); }

}  // namespace om
