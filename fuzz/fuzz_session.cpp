// libFuzzer target reaching the Session: a fuzzed ONNX model is created in Fast and Exact mode,
// planned and run on small inputs derived from its declared shapes (fuzz/session_harness.h).
// Seeds: fuzz/corpus/session (hostile models of docs/onnx.md, "Fuzzing").
#include "session_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  om::fuzz::run_session_case(data, size);
  return 0;
}
