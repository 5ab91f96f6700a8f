// docs/tracing.md, "What fails, and how": what fails loudly, and when. One case per failure.
#include <doctest/doctest.h>

#include "onemodel/onemodel.h"
#include "trace_helpers.h"
#include "test_util.h"

using testutil::contains;
using testutil::error_of;

using om::TraceErrorKind;
using tracetest::trace_error_kind;

TEST_CASE("DataDependent: user reads of a traced tensor are refused, naming the call") {
  struct Read {
    const char* call;
    void (*fn)(const om::Tensor&);
  };
  const Read reads[] = {
      {"om::Tensor::to_vector", [](const om::Tensor& t) { (void)t.to_vector<float>(); }},
      {"om::Tensor::get", [](const om::Tensor& t) { (void)t.get<float>({0, 0}); }},
      {"om::Tensor::item", [](const om::Tensor& t) { (void)om::sum(t).item<float>(); }},
      {"om::Tensor::data", [](const om::Tensor& t) { (void)t.data<float>(); }},
      {"om::Tensor::storage", [](const om::Tensor& t) { (void)t.storage(); }},
      {"om::Tensor::copy_from", [](const om::Tensor& t) { om::zeros({2, 3}).copy_from(t); }},
  };
  for (const Read& r : reads) {
    CAPTURE(r.call);
    auto tracer = om::Tracer::begin();
    om::Tensor x = tracer.input("x", om::ones({2, 3}));
    om::Tensor y = om::relu(x);
    std::string m;
    CHECK(trace_error_kind([&] { r.fn(y); }, &m) == TraceErrorKind::DataDependent);
    CHECK(contains(m, r.call));
  }
}

TEST_CASE("DataDependent: constants, library kernels and reads after finish are fine") {
  om::Tensor w = om::ones({3, 3});
  om::Tensor y;
  {
    auto tracer = om::Tracer::begin();
    om::Tensor x = tracer.input("x", om::ones({2, 3}));
    CHECK(w.to_vector<float>().size() == 9);  // an untraced weight may be read
    y = om::matmul(om::softmax(x), w);        // kernels read traced data internally
    tracer.finish({{"y", y}});
  }
  CHECK(y.to_vector<float>()[0] == doctest::Approx(1.0f));  // the example run's values
}

TEST_CASE("InPlaceMutation: writes into traced tensors are refused") {
  struct Write {
    const char* call;
    void (*fn)(om::Tensor&);
  };
  const Write writes[] = {
      {"om::Tensor::fill_", [](om::Tensor& t) { t.fill_(1.0); }},
      {"om::Tensor::set", [](om::Tensor& t) { t.set<float>({0, 0}, 1.0f); }},
      {"om::Tensor::mutable_data", [](om::Tensor& t) { (void)t.mutable_data<float>(); }},
      {"om::Tensor::mutable_storage", [](om::Tensor& t) { (void)t.mutable_storage(); }},
      {"om::Tensor::copy_from", [](om::Tensor& t) { t.copy_from(om::zeros({2, 3})); }},
  };
  for (const Write& w : writes) {
    CAPTURE(w.call);
    auto tracer = om::Tracer::begin();
    om::Tensor x = tracer.input("x", om::ones({2, 3}));
    om::Tensor y = om::relu(x);
    std::string m;
    CHECK(trace_error_kind([&] { w.fn(y); }, &m) == TraceErrorKind::InPlaceMutation);
    CHECK(contains(m, w.call));
  }
}

TEST_CASE("InPlaceMutation: a captured constant changed during the trace is caught at finish") {
  om::Tensor w = om::ones({3, 3});
  auto tracer = om::Tracer::begin();
  om::Tracer::parameter("w", w);
  om::Tensor x = tracer.input("x", om::ones({2, 3}));
  om::Tensor y = om::matmul(x, w);
  w.fill_(2.0);  // the graph already holds the ones
  std::string m;
  CHECK(trace_error_kind([&] { tracer.finish({{"y", y}}); }, &m) == TraceErrorKind::InPlaceMutation);
  CHECK(contains(m, "'w'"));
  // the failed finish ended the trace: a new one can begin
  CHECK_NOTHROW(om::Tracer::begin());
}

TEST_CASE("NoGradInTrace: a NoGradGuard while tracing") {
  auto tracer = om::Tracer::begin();
  om::Tensor x = tracer.input("x", om::ones({2, 3}));
  std::string m;
  CHECK(trace_error_kind([&] { om::NoGradGuard g; }, &m) == TraceErrorKind::NoGradInTrace);
  CHECK(contains(m, "NoGradGuard"));
  CHECK(om::GradMode::is_enabled());
}

TEST_CASE("SymbolicShape: partial slice of a symbolic axis, ambiguous reshape") {
  {
    auto tracer = om::Tracer::begin();
    om::Tensor x = tracer.input("x", om::ones({4, 3}), {"batch", ""});
    std::string m;
    CHECK(trace_error_kind([&] { (void)x.slice(0, 0, 2); }, &m) == TraceErrorKind::SymbolicShape);
    CHECK(contains(m, "om::Tensor::slice"));
    CHECK(contains(m, "the slice [0:2:1] of symbolic axis 0 (example size 4) ends at a fixed position"));
    CHECK(trace_error_kind([&] { (void)x.slice(0, -3, 3); }, &m) == TraceErrorKind::SymbolicShape);
    CHECK(contains(m, "the slice [-3:3:1] of symbolic axis 0"));  // the bounds as written
    CHECK_NOTHROW((void)x.slice(0, 0, -1));  // counted from the end: traced
    CHECK_NOTHROW((void)x.slice(1, 0, 2));  // a static axis is fine
    CHECK_NOTHROW((void)x.slice(0, 0, 4));  // so is the full range
  }
  {
    auto tracer = om::Tracer::begin();
    om::Tensor x = tracer.input("x", om::ones({4, 6}), {"a", "b"});
    std::string m;
    // [a=4, b=6] -> [8, 3]: 8 takes 2*a, and no output dim can hold b
    CHECK(trace_error_kind([&] { (void)x.reshape({8, 3}); }, &m) == TraceErrorKind::SymbolicShape);
    CHECK(contains(m, "om::Tensor::reshape"));
  }
}

TEST_CASE("InvalidUsage: nested tracers, names used twice, constant outputs, bad symbolic sizes") {
  {
    auto tracer = om::Tracer::begin();
    CHECK(trace_error_kind([] { (void)om::Tracer::begin(); }) == TraceErrorKind::InvalidUsage);
  }
  {
    auto tracer = om::Tracer::begin();
    om::Tensor x = tracer.input("x", om::ones({2, 3}));
    CHECK(trace_error_kind([&] { (void)tracer.input("x", om::ones({2, 3})); }) == TraceErrorKind::InvalidUsage);
    CHECK(trace_error_kind([&] { om::Tracer::parameter("x", om::ones({1})); }) == TraceErrorKind::InvalidUsage);
    CHECK(trace_error_kind([&] { tracer.finish({{"y", om::relu(x)}, {"y", om::tanh(x)}}); }) == TraceErrorKind::InvalidUsage);
  }
  {
    auto tracer = om::Tracer::begin();
    om::Tensor x = tracer.input("x", om::ones({2, 3}));
    std::string m;
    CHECK(trace_error_kind([&] { tracer.finish({{"c", om::ones({2})}}); }, &m) == TraceErrorKind::InvalidUsage);
    CHECK(contains(m, "does not depend on any input"));
  }
  {
    auto tracer = om::Tracer::begin();
    CHECK(trace_error_kind([&] { (void)tracer.input("x", om::ones({1, 3}), {"batch", ""}); }) == TraceErrorKind::InvalidUsage);
  }
  {
    auto tracer = om::Tracer::begin();
    (void)tracer.input("x", om::ones({4, 3}), {"batch", ""});
    std::string m;
    CHECK(trace_error_kind([&] { (void)tracer.input("y", om::ones({4, 5}), {"seq", ""}); }, &m) == TraceErrorKind::InvalidUsage);
    CHECK(contains(m, "distinct"));
  }
}

TEST_CASE("UnsupportedOperation: training-only operators are refused by name") {
  auto tracer = om::Tracer::begin();
  om::Tensor x = tracer.input("x", om::ones({2, 3}));
  std::string m;
  om::Tensor target = om::from_vector<int64_t>({0, 2});
  CHECK(trace_error_kind([&] { (void)om::cross_entropy(x, target); }, &m) == TraceErrorKind::UnsupportedOperation);
  CHECK(contains(m, "om::cross_entropy"));
}

TEST_CASE("UnsupportedOperation: Dropout in training mode says to call eval()") {
  auto model = std::make_shared<om::nn::Sequential>(std::make_shared<om::nn::Linear>(3, 4), std::make_shared<om::nn::Dropout>(0.2));
  std::string m;
  CHECK(trace_error_kind([&] { (void)model->trace(om::ones({2, 3}), {"batch", ""}); }, &m) == TraceErrorKind::UnsupportedOperation);
  CHECK(contains(m, "call eval() on the model before tracing"));
  model->eval();
  CHECK(model->trace(om::ones({2, 3}), {"batch", ""}).graph().nodes.size() > 0);
}

TEST_CASE("nn::Linear's shape error suggests the in_features the input has") {
  om::nn::Linear fc(4, 2);
  const std::string m = error_of([&] { fc(om::ones({3, 5})); }).what();
  CHECK(contains(m, "must end in in_features = 4"));
  CHECK(contains(m, "construct Linear(5, 2) for this input"));
}

TEST_CASE("the trace arena is fixed: exhaustion names the capacity and the option") {
  om::TracerOptions o;
  o.arena_bytes = 16 << 10;
  auto tracer = om::Tracer::begin(o);
  om::Tensor x = tracer.input("x", om::ones({2, 3}));
  std::string m;
  CHECK(trace_error_kind(
            [&] {
              for (int i = 0; i < 10000; ++i) x = om::relu(x);
            },
            &m) == TraceErrorKind::InvalidUsage);
  CHECK(contains(m, "arena_bytes"));
  CHECK(contains(m, std::to_string(16 << 10)));
}

TEST_CASE("a Tracer destroyed without finish (stack unwinding) leaves the thread clean") {
  try {
    auto tracer = om::Tracer::begin();
    om::Tensor x = tracer.input("x", om::ones({2, 3}));
    (void)om::relu(x).to_vector<float>();
  } catch (const om::TraceException&) {
  }
  // nothing is traced any more, and a new trace can begin
  om::Tensor y = om::relu(om::ones({2}));
  CHECK_FALSE(y.requires_grad());
  CHECK_NOTHROW(om::Tracer::begin());
}
