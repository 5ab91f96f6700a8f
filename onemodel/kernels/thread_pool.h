// The library's thread pool (docs/threads.md). Kernels split their work into parts; a pool runs
// the parts on its threads and the calling thread together. Which thread runs which part never
// changes a bit: every kernel gives the same bits for any partition of its work (the split
// tests), so the thread count only changes the speed.
//
// A pool's workers sleep on a condition variable between jobs; after a job a worker polls for
// the next one for kSpinMicros before it sleeps, so the kernels of one run (a few microseconds
// apart) do not pay a wake-up each, and an idle pool takes no core.
//
// One job at a time: a caller that finds the pool running another caller's job (two sessions
// sharing it, two threads of one session) runs its parts itself, on its own thread. A part that
// asks for parallel work again runs it inline (no nesting).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

namespace om::kernels {

class ThreadPool {
 public:
  static constexpr int kMaxThreads = 64;
  static constexpr int kSpinMicros = 50;
  // `threads` participants, the calling thread included (threads - 1 workers); 0 = every core
  // this process may run on (hardware_threads()). Clamped to [1, kMaxThreads].
  explicit ThreadPool(int threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return threads_; }

  // fn(ctx, part, slot) for every part in [0, parts), then returns. `slot` names the thread
  // running the part: 0 is the caller, 1.. the workers; one slot runs one part at a time, so
  // slot_scratch(slot) is the part's own.
  using PartFn = void (*)(void* ctx, size_t part, size_t slot);
  void run(size_t parts, PartFn fn, void* ctx);

  // Scratch of at least `bytes` for every worker slot, allocated now (planning) so running
  // allocates nothing; never shrinks. Waits for a job in flight.
  bool reserve_scratch(size_t bytes);
  // Worker slot `slot`'s scratch (64-byte aligned) and its size; slot 0 (the caller) has none:
  // the caller passes its own.
  void* slot_scratch(size_t slot) const;
  size_t slot_scratch_bytes() const { return scratch_bytes_.load(std::memory_order_acquire); }

  struct State;  // internal

 private:
  int threads_ = 1;
  std::atomic<size_t> scratch_bytes_{0};  // read before a job by callers of a shared pool
  std::unique_ptr<State> state_;
};

// Every core this process may run on (its CPU affinity), at least 1: what a thread count of 0
// means. The environment variable ONEMODEL_NUM_THREADS, when set to a positive count, replaces
// it (as OMP_NUM_THREADS does for OpenMP programs; the exactness check runs the tests so).
int hardware_threads();

// The pool kernels called on this thread split over: the one a PoolScope set, else the eager
// layer's default pool (set_default_threads); null inside a part and when the default is one
// thread.
ThreadPool* current_pool();
// Whether this thread is running a part of a pool's job (parallel work asked for here runs inline).
bool in_parallel_part();

// Makes `pool` this thread's current pool (null: single-threaded) until destroyed.
class PoolScope {
 public:
  explicit PoolScope(ThreadPool* pool);
  ~PoolScope();
  PoolScope(const PoolScope&) = delete;
  PoolScope& operator=(const PoolScope&) = delete;

 private:
  ThreadPool* previous_;
  bool previous_set_;
};

// The eager layer's pool size (om::set_num_threads): 0 = every core, the default; 1 = none.
// The pool is created when kernels first ask for it. A pool replaced by a later call is kept
// (idle) until the process exits, so a kernel running on it meanwhile finishes safely.
void set_default_threads(int threads);
int default_threads();

// Runs f(part, slot) for part in [0, parts) on the current pool (inline without one). F is any
// callable; parts <= 1 runs inline.
template <class F>
void parallel_for(size_t parts, F&& f) {
  ThreadPool* pool = parts > 1 ? current_pool() : nullptr;
  if (pool == nullptr) {
    for (size_t p = 0; p < parts; ++p) f(p, size_t(0));
    return;
  }
  using Fn = typename std::remove_reference<F>::type;
  pool->run(parts, [](void* ctx, size_t part, size_t slot) { (*static_cast<Fn*>(ctx))(part, slot); },
            const_cast<void*>(static_cast<const void*>(&f)));
}

// How many parts work of `cost` (estimated scalar operations) and `units` indivisible units
// splits into on `pool`: one per thread, but none smaller than kMinPartCost, so small work stays
// on one thread (the wake-up would cost more than it saves; docs/threads.md has the measurement).
constexpr int64_t kMinPartCost = int64_t(1) << 15;
size_t parts_for(const ThreadPool* pool, int64_t units, int64_t cost);
// For the thread tests: the smallest part's cost instead of kMinPartCost (1: every work of two
// or more units splits over every thread). Process-wide.
void set_min_part_cost_for_testing(int64_t cost);

}  // namespace om::kernels
