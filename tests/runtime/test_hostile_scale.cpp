// Hostile use at scale: one Session shared by threads, model files changed or special files,
// and graphs large enough that a quadratic pass or planner would hang.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include <sys/stat.h>
#include <unistd.h>

#include "onemodel/io/format_v1.h"
#include "onemodel/onemodel.h"
#include "runtime_helpers.h"
#include "test_util.h"

using namespace rt;
using testutil::contains;

namespace {

std::string temp_path(const char* name) { return std::string(OM_BINARY_DIR) + "/" + name; }

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// y = x * w + b (MatMul, Add) with w [4, 4] and b [4] initializers; x [n, 4].
g::Graph affine() {
  g::Graph gr;
  gr.inputs.push_back(sym_value("x", DType::f32, {"n", "4"}));
  gr.initializers.push_back(g::TensorData::from_vector<float>("w", {4, 4}, random_floats(16, 1)));
  gr.initializers.push_back(g::TensorData::from_vector<float>("b", {4}, random_floats(4, 2)));
  gr.nodes.push_back(node("MatMul", {"x", "w"}, {"h"}));
  gr.nodes.push_back(node("Add", {"h", "b"}, {"y"}));
  gr.outputs.push_back(sym_value("y", DType::f32, {"n", "4"}));
  return gr;
}

}  // namespace

TEST_CASE("hostile: one Session run from two threads gives the same bits as one thread") {
  const g::Graph gr = affine();
  om::Session shared(gr);
  om::Session reference(gr);
  // Expected outputs per batch size, computed alone.
  std::vector<std::vector<float>> xs, expect;
  for (int64_t n = 1; n <= 6; ++n) {
    xs.push_back(random_floats(size_t(n * 4), uint32_t(n)));
    expect.push_back(run(reference, {Feed::of<float>("x", {n, 4}, xs.back())})[0].as<float>());
  }
  std::atomic<int> wrong{0}, failed{0};
  auto worker = [&](om::Session* sess, int seed) {
    std::vector<float> out(24);
    for (int it = 0; it < 2000; ++it) {
      const int64_t n = 1 + (it * 7 + seed) % 6;  // varying shapes: new plans, evictions
      int64_t dims[2] = {n, 4};
      om::TensorView in;
      in.dims = dims;
      in.rank = 2;
      in.data = xs[size_t(n - 1)].data();
      om::TensorView o;
      o.data = out.data();
      o.capacity = out.size() * sizeof(float);
      if (!sess->try_run(&in, 1, &o, 1).is_ok()) { ++failed; continue; }
      if (std::memcmp(out.data(), expect[size_t(n - 1)].data(), size_t(n * 4) * sizeof(float)) != 0) ++wrong;
    }
  };
  om::SessionOptions few;
  few.max_cached_plans = 2;  // eviction while the other thread runs
  om::Session evicting(gr, few);
  std::thread a(worker, &shared, 0), b(worker, &shared, 3), c(worker, &evicting, 1), d(worker, &evicting, 4);
  a.join();
  b.join();
  c.join();
  d.join();
  CHECK(wrong == 0);
  CHECK(failed == 0);
}

TEST_CASE("hostile: per-thread default stores, so scopes on two threads never release each other's tensors") {
  std::atomic<int> errors{0};
  auto train = [&] {
    for (int step = 0; step < 300; ++step) {
      om::StoreScope scope;
      try {
        om::Tensor a = om::full({8}, 1.0);
        om::Tensor b = om::full({8}, 2.0);
        om::Tensor c = om::add(a, b);
        if (c.data<float>()[7] != 3.0f) ++errors;
      } catch (const om::Error&) {
        ++errors;
      }
    }
  };
  std::thread a(train), b(train);
  a.join();
  b.join();
  CHECK(errors == 0);
  // A tensor made on a thread that has ended stays valid.
  om::Tensor kept;
  std::thread t([&] { kept = om::full({4}, 5.0); });
  t.join();
  CHECK(kept.data<float>()[3] == 5.0f);
}

TEST_CASE("hostile: a copying load survives truncation of the file; special files and unknown header bits are refused") {
  const std::string path = temp_path("hostile_copy.om");
  REQUIRE(om::format_v1::write_file(affine(), path).is_ok());
  om::SessionOptions copy;
  copy.map_weights = false;
  om::Session s = om::Session::load(path, copy);
  REQUIRE(::truncate(path.c_str(), 10) == 0);  // with a mapping, touching the weights would be a SIGBUS
  auto out = run(s, {Feed::of<float>("x", {1, 4}, {1, 2, 3, 4})});
  CHECK(out[0].dims == std::vector<int64_t>{1, 4});

  om::Session none;
  auto st = om::Session::try_load("/dev/zero", {}, &none);
  CHECK(!st.is_ok());
  CHECK(contains(st.message(), "not a regular file"));
  const std::string fifo = temp_path("hostile_fifo");
  std::remove(fifo.c_str());
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  st = om::Session::try_load(fifo, {}, &none);  // must not block waiting for a writer
  CHECK(contains(st.message(), "not a regular file"));
  std::remove(fifo.c_str());

  // A header flag or reserved byte set (with a valid CRC) is refused.
  auto bytes = om::format_v1::write_bytes(affine()).value();
  for (size_t at : {size_t(24), size_t(40), size_t(64 + 4)}) {
    auto b = bytes;
    b[at] = 1;
    std::memset(b.data() + 28, 0, 4);
    const uint32_t crc = om::format_v1::crc32(b.data(), 160);
    std::memcpy(b.data() + 28, &crc, 4);
    auto r = om::format_v1::read_bytes(b.data(), b.size());
    INFO("byte " << at);
    CHECK(!r.is_ok());
    CHECK(r.status().kind() == om::ErrorKind::Format);
  }
}

TEST_CASE("hostile: a 100,000-node chain is created and run in linear time") {
  const int n = 100000;
  g::Graph gr;
  gr.inputs.push_back(value("x", DType::f32, {4}));
  std::string prev = "x";
  for (int i = 0; i < n; ++i) {
    const std::string out = i + 1 == n ? "y" : "r" + std::to_string(i);
    gr.nodes.push_back(node("Relu", {prev}, {out}));
    prev = out;
  }
  gr.outputs.push_back(value("y", DType::f32, {4}));
  const auto t0 = std::chrono::steady_clock::now();
  om::Session s(gr);
  auto out = run(s, {Feed::of<float>("x", {4}, {-1, 2, -3, 4})});
  const double t = seconds_since(t0);
  MESSAGE("100,000-node Relu chain: create + plan + run " << t << " s");
  CHECK(out[0].as<float>() == std::vector<float>{0, 2, 0, 4});
  CHECK(t < 20.0);
}

TEST_CASE("hostile: 10,000 MatMul+Add pairs fuse and plan in linear time") {
  const int n = 10000;
  g::Graph gr;
  gr.inputs.push_back(value("x", DType::f32, {1, 4}));
  gr.initializers.push_back(g::TensorData::from_vector<float>("w", {4, 4}, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
  std::string prev = "x";
  for (int i = 0; i < n; ++i) {
    const std::string b = "b" + std::to_string(i);
    gr.initializers.push_back(g::TensorData::from_vector<float>(b, {4}, {0, 0, 0, i == 0 ? 1.0f : 0.0f}));
    const std::string h = "h" + std::to_string(i), out = i + 1 == n ? "y" : "a" + std::to_string(i);
    gr.nodes.push_back(node("MatMul", {prev, "w"}, {h}));
    gr.nodes.push_back(node("Add", {h, b}, {out}));
    prev = out;
  }
  gr.outputs.push_back(value("y", DType::f32, {1, 4}));
  for (auto mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
    om::SessionOptions opt;
    opt.mode = mode;
    const auto t0 = std::chrono::steady_clock::now();
    om::Session s(gr, opt);
    auto out = run(s, {Feed::of<float>("x", {1, 4}, {1, 2, 3, 4})});
    const double t = seconds_since(t0);
    MESSAGE("10,000 MatMul+Add pairs: create + plan + run " << t << " s");
    CHECK(s.graph().nodes.size() == size_t(n));  // every pair fused
    CHECK(out[0].as<float>() == std::vector<float>{1, 2, 3, 5});
    CHECK(t < 20.0);
  }
}

TEST_CASE("hostile: 10,000 Transpose -> MatMul -> Transpose triples fold in linear time") {
  const int n = 10000;
  g::Graph gr;
  gr.inputs.push_back(value("x", DType::f32, {4, 4}));
  gr.initializers.push_back(g::TensorData::from_vector<float>("w", {4, 4}, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
  std::string prev = "x";
  for (int i = 0; i < n; ++i) {
    const std::string s = std::to_string(i), out = i + 1 == n ? "y" : "a" + s;
    gr.nodes.push_back(node("Transpose", {prev}, {"t" + s}, {g::Attribute::of_ints("perm", {1, 0})}));
    gr.nodes.push_back(node("MatMul", {"t" + s, "w"}, {"m" + s}));
    gr.nodes.push_back(node("Transpose", {"m" + s}, {out}, {g::Attribute::of_ints("perm", {1, 0})}));
    prev = out;
  }
  gr.outputs.push_back(value("y", DType::f32, {4, 4}));
  const std::vector<float> x = random_floats(16, 3);
  for (auto mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
    om::SessionOptions opt;
    opt.mode = mode;
    const auto t0 = std::chrono::steady_clock::now();
    om::Session s(gr, opt);
    auto out = run(s, {Feed::of<float>("x", {4, 4}, x)});
    const double t = seconds_since(t0);
    MESSAGE("10,000 Transpose-MatMul-Transpose triples: create + plan + run " << t << " s");
    // Each trailing Transpose composes with the next leading one into an identity that folds
    // into the next MatMul; only the last trailing Transpose stays (a [1, 0] perm_y would move
    // the last axis).
    CHECK(s.graph().nodes.size() == size_t(n + 1));
    CHECK(out[0].as<float>() == x);              // the identity weight and paired transposes keep x
    CHECK(t < 20.0);
  }
}
