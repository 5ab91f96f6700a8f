// Runs on the Cortex-M4 (qemu-system-arm -M mps2-an386): every model test_mcu wrote into
// mcu_models.h, read from its in-flash .om bytes, run in Exact mode; prints the EXACT_HASH lines
// tools/exactness.sh compares with x86-64 and AArch64 and fails unless each hash equals the one
// the host computed. The exit status is qemu's.
#include <cstdio>  // before <cinttypes>: newlib defines PRIx64 only once <cstdio> has set it up
#include <cinttypes>

#include "mcu_models.h"
#include "onemodel/io/format_v1.h"
#include "onemodel/kernels/kernels.h"
#include "onemodel/runtime/session.h"

namespace {

uint64_t fnv1a(const void* data, size_t n, uint64_t h) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

bool run_model(const McuModel& m) {
  auto graph = om::format_v1::read_bytes(m.om, m.om_size);
  if (!graph.is_ok()) {
    std::printf("FAIL %s: %s\n", m.name, graph.status().message().c_str());
    return false;
  }
  om::Session session;
  om::SessionOptions options;
  options.mode = om::ArithmeticMode::Exact;
  options.threads = 1;
  om::Status st = om::Session::create(graph.value(), options, &session);
  if (!st.is_ok()) {
    std::printf("FAIL %s: %s\n", m.name, st.message().c_str());
    return false;
  }
  om::TensorView in;
  in.name = m.input;
  in.dtype = om::DType::f32;
  in.dims = m.dims;
  in.rank = m.rank;
  in.data = const_cast<float*>(m.data);
  om::TensorView out[4];
  const size_t n_out = session.output_names().size();
  if (n_out > 4) {
    std::printf("FAIL %s: %u outputs, this program takes 4\n", m.name, unsigned(n_out));
    return false;
  }
  st = session.try_run(&in, 1, out, n_out);
  if (!st.is_ok()) {
    std::printf("FAIL %s: %s\n", m.name, st.message().c_str());
    return false;
  }
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t o = 0; o < n_out; ++o) h = fnv1a(out[o].data, size_t(out[o].numel()) * om::dtype_size(out[o].dtype), h);
  std::printf("EXACT_HASH mcu_%s %s %016" PRIx64 "\n", m.name, om::kernels::isa_name(om::kernels::active_isa()), h);
  if (h != m.hash) {
    std::printf("FAIL %s: hash %016" PRIx64 ", the host's is %016" PRIx64 "\n", m.name, h, m.hash);
    return false;
  }
  std::printf("ok   %s (arena %u bytes)\n", m.name, unsigned(session.last_plan_stats().arena_bytes));
  return true;
}

}  // namespace

int main() {
  int failed = 0;
  for (const McuModel& m : kMcuModels) failed += run_model(m) ? 0 : 1;
  std::printf("%s: %d of %u models failed\n", failed ? "FAILED" : "PASSED", failed, unsigned(sizeof kMcuModels / sizeof kMcuModels[0]));
  return failed;
}
