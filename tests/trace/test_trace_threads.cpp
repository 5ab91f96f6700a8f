// The tracer is per thread (docs/tracing.md): two threads trace at once, each recording only its
// own calls, and each traced model runs in a Session to its own eager result.
#include <doctest/doctest.h>

#include <thread>

#include "onemodel/onemodel.h"

namespace {

// Traces x -> relu(x W + b) * scale on this thread and checks the session against eager.
bool trace_and_check(float scale, int rounds) {
  bool ok = true;
  for (int r = 0; r < rounds && ok; ++r) {
    om::Tensor w = om::full({6, 5}, 0.25f * scale), b = om::full({5}, -0.5f);
    const om::Tensor x0 = om::full({3, 6}, 1.0f + float(r));
    auto tracer = om::Tracer::begin();
    om::Tracer::parameter("w", w);
    om::Tracer::parameter("b", b);
    om::Tensor x = tracer.input("x", x0, {"batch", ""});
    om::Tensor y = om::mul(om::relu(om::add(om::matmul(x, w), b)), om::full({1}, scale));
    om::TracedModel model = tracer.finish({{"y", y}});
    ok = ok && model.graph().nodes.size() >= 4;
    om::Session s(model);
    ok = ok && s.run({{"x", x0}})[0].to_vector<float>() == y.to_vector<float>();
  }
  return ok;
}

}  // namespace

TEST_CASE("two threads trace at once, each its own model") {
  bool a = false, b = false;
  std::thread ta([&] { a = trace_and_check(1.0f, 20); });
  std::thread tb([&] { b = trace_and_check(3.0f, 20); });
  ta.join();
  tb.join();
  CHECK(a);
  CHECK(b);
}
