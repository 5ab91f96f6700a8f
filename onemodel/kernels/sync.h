// The library's lock and thread-local types (in kernels/, the bottom room: every layer uses them).
// A build with ONEMODEL_NO_THREADS (the bare-metal one, docs/deploying.md) has one thread of
// execution and a C++ library without std::mutex: the locks are then no-ops and thread-local
// state is plain static state, so the same code serves both.
#pragma once

#if defined(ONEMODEL_NO_THREADS)
namespace om {
struct Mutex {
  void lock() {}
  void unlock() {}
  bool try_lock() { return true; }
};
// With one thread a waited-for condition already holds when wait() is reached (nobody else could
// make it true later), so waiting returns at once.
struct CondVar {
  template <class Lock>
  void wait(Lock&) {}
  template <class Lock, class Pred>
  void wait(Lock&, Pred) {}
  void notify_one() {}
  void notify_all() {}
};
}  // namespace om
#define OM_THREAD_LOCAL
#include <mutex>  // std::lock_guard and std::unique_lock exist without threads
#else
#include <condition_variable>
#include <mutex>
namespace om {
using Mutex = std::mutex;
using CondVar = std::condition_variable;
}  // namespace om
#define OM_THREAD_LOCAL thread_local
#endif
