// The thread pool (thread_pool.h). One job at a time: the job's fields are written under the
// mutex, and a part is claimed by a compare-and-swap on a counter whose high half is the job's
// generation, so a worker that woke late for a finished job can never claim a part of the next
// one with the old job's function.
#include "onemodel/kernels/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <vector>
#if !defined(ONEMODEL_NO_THREADS)
#include <thread>
#endif

#include "onemodel/kernels/sync.h"

#if defined(__linux__)
#include <sched.h>
#endif

namespace om::kernels {
namespace {

OM_THREAD_LOCAL bool t_in_part = false;
OM_THREAD_LOCAL bool t_scope_set = false;
OM_THREAD_LOCAL ThreadPool* t_scope_pool = nullptr;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

}  // namespace

struct ThreadPool::State {
  Mutex job_mu;  // held by the caller whose job runs
  Mutex mu;      // job fields, sleeping workers
  CondVar work_cv, done_cv;
  std::atomic<uint32_t> generation{0};
  std::atomic<uint64_t> next{0};  // generation << 32 | next part to claim
  std::atomic<size_t> pending{0};  // parts of the current job not finished
  PartFn fn = nullptr;
  void* ctx = nullptr;
  size_t parts = 0;
  bool stop = false;
  int sleeping = 0;
  bool caller_waiting = false;
  std::vector<std::unique_ptr<void, FreeDeleter>> scratch;  // per worker slot
#if !defined(ONEMODEL_NO_THREADS)
  std::vector<std::thread> workers;
#endif

  // Claims and runs parts of job `gen` until none is left; returns how many it ran.
  void work(uint32_t gen, PartFn f, void* c, size_t n, size_t slot) {
    uint64_t v = next.load(std::memory_order_acquire);
    for (;;) {
      if (uint32_t(v >> 32) != gen || (v & 0xffffffffu) >= n) return;
      if (!next.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel)) continue;
      f(c, size_t(v & 0xffffffffu), slot);
      if (pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<Mutex> lock(mu);
        if (caller_waiting) done_cv.notify_all();
      }
      v = next.load(std::memory_order_acquire);
    }
  }

  void worker_loop(size_t slot) {
    t_in_part = true;  // a worker only ever runs parts: parallel work asked for there runs inline
    uint32_t seen = 0;
    for (;;) {
      // Poll a little before sleeping: the next kernel of a run usually follows within microseconds.
      const auto spin_until = std::chrono::steady_clock::now() + std::chrono::microseconds(kSpinMicros);
      for (unsigned i = 0; generation.load(std::memory_order_acquire) == seen; ++i) {
        cpu_relax();
        if ((i & 63) == 63 && std::chrono::steady_clock::now() > spin_until) break;
      }
      PartFn f;
      void* c;
      size_t n;
      uint32_t gen;
      {
        std::unique_lock<Mutex> lock(mu);
        if (generation.load(std::memory_order_relaxed) == seen && !stop) {
          ++sleeping;
          work_cv.wait(lock, [&] { return stop || generation.load(std::memory_order_relaxed) != seen; });
          --sleeping;
        }
        if (stop) return;
        gen = seen = generation.load(std::memory_order_relaxed);
        f = fn;
        c = ctx;
        n = parts;
      }
      work(gen, f, c, n, slot);
    }
  }
};

ThreadPool::ThreadPool(int threads) : state_(new State) {
  if (threads <= 0) threads = hardware_threads();
  threads_ = std::min(std::max(threads, 1), kMaxThreads);
#if defined(ONEMODEL_NO_THREADS)
  threads_ = 1;  // bare metal: no threads, every part runs on the caller
#else
  state_->scratch.resize(size_t(threads_));
  for (int s = 1; s < threads_; ++s) state_->workers.emplace_back([this, s] { state_->worker_loop(size_t(s)); });
#endif
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<Mutex> lock(state_->mu);
    state_->stop = true;
  }
  state_->work_cv.notify_all();
#if !defined(ONEMODEL_NO_THREADS)
  for (std::thread& t : state_->workers) t.join();
#endif
}

void ThreadPool::run(size_t parts, PartFn fn, void* ctx) {
  State& st = *state_;
  const bool inline_run = parts <= 1 || threads_ == 1 || t_in_part || parts > 0xffffffffu;
  if (inline_run || !st.job_mu.try_lock()) {  // busy with another caller's job: run here
    const bool was = t_in_part;
    t_in_part = true;
    for (size_t p = 0; p < parts; ++p) fn(ctx, p, 0);
    t_in_part = was;
    return;
  }
  uint32_t gen;
  bool wake;
  {
    std::lock_guard<Mutex> lock(st.mu);
    st.fn = fn;
    st.ctx = ctx;
    st.parts = parts;
    st.pending.store(parts, std::memory_order_relaxed);
    gen = st.generation.load(std::memory_order_relaxed) + 1;
    st.next.store(uint64_t(gen) << 32, std::memory_order_relaxed);
    st.generation.store(gen, std::memory_order_release);
    wake = st.sleeping > 0;
  }
  if (wake) st.work_cv.notify_all();
  t_in_part = true;
  st.work(gen, fn, ctx, parts, 0);
  t_in_part = false;
  // The caller's parts are done; wait for the workers' (briefly polling, then sleeping).
  for (unsigned i = 0; i < 4096 && st.pending.load(std::memory_order_acquire) != 0; ++i) cpu_relax();
  if (st.pending.load(std::memory_order_acquire) != 0) {
    std::unique_lock<Mutex> lock(st.mu);
    st.caller_waiting = true;
    st.done_cv.wait(lock, [&] { return st.pending.load(std::memory_order_acquire) == 0; });
    st.caller_waiting = false;
  }
  st.job_mu.unlock();
}

bool ThreadPool::reserve_scratch(size_t bytes) {
  if (bytes <= slot_scratch_bytes() || threads_ == 1) return true;
  std::lock_guard<Mutex> job(state_->job_mu);
  if (bytes <= slot_scratch_bytes()) return true;  // another plan reserved enough meanwhile
  const size_t size = (bytes + 63) / 64 * 64;
  std::vector<std::unique_ptr<void, FreeDeleter>> fresh;
  fresh.resize(size_t(threads_));
  for (int s = 1; s < threads_; ++s) {
    fresh[size_t(s)].reset(::aligned_alloc(64, size));
    if (!fresh[size_t(s)]) return false;
  }
  state_->scratch.swap(fresh);
  scratch_bytes_.store(size, std::memory_order_release);
  return true;
}

void* ThreadPool::slot_scratch(size_t slot) const {
  return slot == 0 || slot >= state_->scratch.size() ? nullptr : state_->scratch[slot].get();
}

int hardware_threads() {
  if (const char* env = std::getenv("ONEMODEL_NUM_THREADS")) {
    const long n = std::strtol(env, nullptr, 10);
    if (n > 0) return int(std::min<long>(n, ThreadPool::kMaxThreads));
  }
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
#endif
#if defined(ONEMODEL_NO_THREADS)
  return 1;
#else
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : int(n);
#endif
}

namespace {
Mutex g_default_mu;
int g_default_threads = 0;
std::atomic<ThreadPool*> g_default_pool{nullptr};
std::atomic<bool> g_default_single{false};
std::vector<ThreadPool*>& retired_pools() {  // reachable until exit: never destroyed under a running kernel
  static std::vector<ThreadPool*>* pools = new std::vector<ThreadPool*>();
  return *pools;
}

ThreadPool* default_pool() {
  ThreadPool* p = g_default_pool.load(std::memory_order_acquire);
  if (p != nullptr || g_default_single.load(std::memory_order_acquire)) return p;
  std::lock_guard<Mutex> lock(g_default_mu);
  p = g_default_pool.load(std::memory_order_relaxed);
  if (p != nullptr) return p;
  const int n = g_default_threads <= 0 ? hardware_threads() : g_default_threads;
  if (n <= 1) {
    g_default_single.store(true, std::memory_order_release);
    return nullptr;
  }
  p = new ThreadPool(n);
  retired_pools().push_back(p);
  g_default_pool.store(p, std::memory_order_release);
  return p;
}
}  // namespace

void set_default_threads(int threads) {
  std::lock_guard<Mutex> lock(g_default_mu);
  g_default_threads = threads < 0 ? 0 : threads;
  g_default_pool.store(nullptr, std::memory_order_release);  // the next request builds one of the new size
  g_default_single.store(false, std::memory_order_release);
}

int default_threads() {
  std::lock_guard<Mutex> lock(g_default_mu);
  return g_default_threads <= 0 ? hardware_threads() : g_default_threads;
}

ThreadPool* current_pool() {
  if (t_in_part) return nullptr;
  if (t_scope_set) return t_scope_pool;
  return default_pool();
}

bool in_parallel_part() { return t_in_part; }

PoolScope::PoolScope(ThreadPool* pool) : previous_(t_scope_pool), previous_set_(t_scope_set) {
  t_scope_pool = pool;
  t_scope_set = true;
}

PoolScope::~PoolScope() {
  t_scope_pool = previous_;
  t_scope_set = previous_set_;
}

namespace {
std::atomic<int64_t> g_min_part_cost{kMinPartCost};
}

void set_min_part_cost_for_testing(int64_t cost) { g_min_part_cost.store(cost < 1 ? 1 : cost, std::memory_order_relaxed); }

size_t parts_for(const ThreadPool* pool, int64_t units, int64_t cost) {
  if (pool == nullptr || units < 2 || pool->threads() < 2) return 1;
  const int64_t by_cost = std::max<int64_t>(1, cost / g_min_part_cost.load(std::memory_order_relaxed));
  return size_t(std::min<int64_t>({int64_t(pool->threads()), units, by_cost}));
}

}  // namespace om::kernels
