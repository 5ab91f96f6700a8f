// The eager layer's threads (docs/threads.md), under libtorch's names. Eager kernels split
// their products (matrix products and the convolutions built on them) over one process-wide
// pool of this size; a Session has its own (SessionOptions::threads). The count never changes
// a bit of any result.
#pragma once

namespace om {

// 0 = every core this process may run on (the default); 1 = the calling thread only.
// Errors: a negative count (om::Error naming the value).
void set_num_threads(int threads);
// The eager pool's size (every core's count when set to 0).
int get_num_threads();

}  // namespace om
