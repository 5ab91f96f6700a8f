// Keyword spotting on a Cortex-M4F: the model is a C array in flash (kws_model.cpp, written from a
// .om by this folder's CMakeLists.txt), used in place by Session::try_from_bytes (the weights are
// not copied to RAM), with activations and scratch in a static arena the program owns, planned
// once, then run on a frame of MFCC features in Exact mode. Prints the best class and the heap
// the runtime holds; fails if a run after planning takes any heap or the scores are not
// probabilities.
#include <malloc.h>

#include <cmath>
#include <cstdio>

#include "onemodel/runtime/session.h"

extern const uint8_t kws_model[];
extern const size_t kws_model_size;

namespace {
size_t heap_in_use() { return size_t(mallinfo().uordblks); }

// A stand-in for a microphone's MFCC frame: 49 time steps x 10 coefficients.
float g_mfcc[49 * 10];
// The activations and scratch of the plan (`onemodel info MODEL --arena mfcc=1,1,49,10` prints
// the arena a shape needs; Session::try_arena_bytes_for asks the same at run time). Too small a
// buffer is refused when planning, naming the bytes needed.
alignas(64) uint8_t g_arena[256 * 1024];
}  // namespace

int main() {
  for (int i = 0; i < 49 * 10; ++i) g_mfcc[i] = std::sin(0.37f * float(i)) * 2.0f;
  const size_t heap_before = heap_in_use();

  om::SessionOptions options;
  options.mode = om::ArithmeticMode::Exact;
  options.threads = 1;
  options.arena = g_arena;
  options.arena_bytes = sizeof g_arena;
  options.prepack_weights = false;  // packed copies would live in RAM: read the weights in flash
  om::Session session;
  if (om::Status st = om::Session::try_from_bytes(kws_model, kws_model_size, options, &session); !st.is_ok()) {
    std::printf("cortex_m_kws: %s\n", st.message().c_str());
    return 1;
  }
  const int64_t dims[] = {1, 1, 49, 10};
  om::TensorView in;
  in.name = "mfcc";
  in.dims = dims;
  in.rank = 4;
  in.data = g_mfcc;
  om::TensorView out[2];
  const size_t n_out = session.output_names().size() < 2 ? session.output_names().size() : 2;
  if (om::Status st = session.try_run(&in, 1, out, n_out); !st.is_ok()) {  // plans, then runs
    std::printf("cortex_m_kws: %s\n", st.message().c_str());
    return 1;
  }
  const size_t heap_planned = heap_in_use();
  if (om::Status st = session.try_run(&in, 1, out, n_out); !st.is_ok()) {
    std::printf("cortex_m_kws: %s\n", st.message().c_str());
    return 1;
  }
  const size_t heap_after = heap_in_use();

  const om::TensorView& probs = out[n_out - 1];
  const float* p = static_cast<const float*>(probs.data);
  int best = 0;
  float sum = 0;
  for (int64_t c = 0; c < probs.numel(); ++c) {
    sum += p[c];
    if (p[c] > p[best]) best = int(c);
  }
  std::printf("cortex_m_kws: class %d (p = %d/1000) of %d\n", best, int(p[best] * 1000.0f + 0.5f), int(probs.numel()));
  std::printf("cortex_m_kws: heap %u bytes in use after planning (arena %u, in the program's buffer), %d more taken by a run\n",
              unsigned(heap_planned - heap_before), unsigned(session.last_plan_stats().arena_bytes),
              int(heap_after) - int(heap_planned));
  if (heap_after != heap_planned) {
    std::printf("cortex_m_kws: FAIL: a run after planning took heap\n");
    return 1;
  }
  if (!(std::fabs(sum - 1.0f) < 1e-4f)) {
    std::printf("cortex_m_kws: FAIL: the scores sum to %d/1000000, not 1\n", int(sum * 1e6f));
    return 1;
  }
  return 0;
}
