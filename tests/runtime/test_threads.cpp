// Threads (docs/threads.md): the pool itself; every output the same bits at any thread count,
// in Exact and in Fast; no allocation per run with threads; sessions sharing one pool and
// several callers of one Session, from several threads at once (make tsan runs these too).
#include <doctest/doctest.h>

#include <ostream>  // doctest prints the shared_ptrs CHECKs compare through operator<<

#include <atomic>
#include <cstring>
#include <thread>

#include "onemodel/kernels/thread_pool.h"
#include "runtime_helpers.h"

using namespace rt;
using om::graph::Attribute;
namespace k = om::kernels;

namespace {

// Sets the smallest part's cost for the scope (1: every work of two units or more splits).
struct MinPartCost {
  explicit MinPartCost(int64_t c) { k::set_min_part_cost_for_testing(c); }
  ~MinPartCost() { k::set_min_part_cost_for_testing(k::kMinPartCost); }
};

// Conv + Relu, a 3x3 16 -> 16 Conv (the Winograd form in Fast sessions, whose tile blocks split
// over threads), MaxPool, then a product, LayerNormalization, Gelu and Softmax: the families that
// split by images, planes, tiles, rows and product columns. x: [batch, 3, 16, 16].
g::Graph net() {
  g::Graph gr;
  gr.inputs.push_back(sym_value("x", DType::f32, {"batch", "3", "16", "16"}));
  gr.initializers.push_back(g::TensorData::from_vector<float>("w", {16, 3, 3, 3}, random_floats(432, 1, -0.5f, 0.5f)));
  gr.initializers.push_back(g::TensorData::from_vector<float>("b", {16}, random_floats(16, 2)));
  gr.initializers.push_back(g::TensorData::from_vector<float>("w3", {16, 16, 3, 3}, random_floats(2304, 6, -0.2f, 0.2f)));
  gr.initializers.push_back(g::TensorData::from_vector<float>("w2", {16 * 7 * 7, 96}, random_floats(16 * 49 * 96, 3, -0.1f, 0.1f)));
  gr.initializers.push_back(g::TensorData::from_vector<float>("gamma", {96}, random_floats(96, 4)));
  gr.initializers.push_back(g::TensorData::from_vector<float>("beta", {96}, random_floats(96, 5)));
  gr.initializers.push_back(g::TensorData::from_vector<int64_t>("flat", {2}, {-1, 16 * 7 * 7}));
  gr.nodes.push_back(node("Conv", {"x", "w", "b"}, {"c"}, {Attribute::of_ints("kernel_shape", {3, 3})}));
  gr.nodes.push_back(node("Relu", {"c"}, {"r0"}));
  gr.nodes.push_back(node("Conv", {"r0", "w3"}, {"r"}, {Attribute::of_ints("pads", {1, 1, 1, 1})}));
  gr.nodes.push_back(node("MaxPool", {"r"}, {"p"}, {Attribute::of_ints("kernel_shape", {2, 2}), Attribute::of_ints("strides", {2, 2})}));
  gr.nodes.push_back(node("Reshape", {"p", "flat"}, {"f"}));
  gr.nodes.push_back(node("MatMul", {"f", "w2"}, {"m"}));
  gr.nodes.push_back(node("LayerNormalization", {"m", "gamma", "beta"}, {"n"}, {Attribute::of_int("axis", -1)}));
  gr.nodes.push_back(node("Gelu", {"n"}, {"e"}));
  gr.nodes.push_back(node("Softmax", {"e"}, {"y"}, {Attribute::of_int("axis", -1)}));
  gr.outputs.push_back(value("y", DType::f32, {}));
  return gr;
}

std::vector<Feed> feeds_for(int64_t batch, uint32_t seed) {
  return {Feed::of("x", {batch, 3, 16, 16}, random_floats(size_t(batch) * 768, seed))};
}

// One run into a caller buffer (safe while other threads run the same Session).
std::vector<float> run_into(om::Session& s, const std::vector<Feed>& feeds) {
  std::vector<om::TensorView> in = views(feeds);
  std::vector<float> y(size_t(feeds[0].dims[0]) * 96);
  om::TensorView out;
  out.data = y.data();
  out.capacity = y.size() * sizeof(float);
  s.run(in.data(), in.size(), &out, 1);
  return y;
}

om::SessionOptions options(om::ArithmeticMode mode, int threads) {
  om::SessionOptions o;
  o.mode = mode;
  o.threads = threads;
  return o;
}

}  // namespace

TEST_CASE("thread pool: every part runs once, one part per slot at a time; nested work runs inline") {
  k::ThreadPool pool(4);
  CHECK(pool.threads() == 4);
  CHECK(k::ThreadPool(1).threads() == 1);
  CHECK(k::ThreadPool(0).threads() == k::hardware_threads());
  for (size_t parts : {size_t(1), size_t(2), size_t(3), size_t(4), size_t(7), size_t(64), size_t(1000)}) {
    CAPTURE(parts);
    std::vector<std::atomic<int>> hits(parts);
    std::atomic<int> busy[4] = {};
    std::atomic<bool> overlap{false}, bad_slot{false}, nested_inline{true};
    struct Ctx {
      std::vector<std::atomic<int>>* hits;
      std::atomic<int>* busy;
      std::atomic<bool>*overlap, *bad_slot, *nested_inline;
      k::ThreadPool* pool;
    } ctx{&hits, busy, &overlap, &bad_slot, &nested_inline, &pool};
    pool.run(parts, [](void* c, size_t part, size_t slot) {
      Ctx& x = *static_cast<Ctx*>(c);
      if (slot >= 4) { x.bad_slot->store(true); return; }
      if (x.busy[slot].fetch_add(1) != 0) x.overlap->store(true);
      (*x.hits)[part].fetch_add(1);
      // Parallel work asked for inside a part runs on this thread.
      k::PoolScope scope(x.pool);
      if (k::current_pool() != nullptr || !k::in_parallel_part()) x.nested_inline->store(false);
      size_t inner = 0;
      k::parallel_for(3, [&](size_t, size_t s) { inner += s == 0 ? 1 : 100; });
      if (inner != 3) x.nested_inline->store(false);
      x.busy[slot].fetch_sub(1);
    }, &ctx);
    for (size_t p = 0; p < parts; ++p) CHECK(hits[p].load() == 1);
    CHECK(!overlap.load());
    CHECK(!bad_slot.load());
    CHECK(nested_inline.load());
  }
  // Worker scratch: reserved once, 64-byte aligned, one block per worker, none for the caller.
  REQUIRE(pool.reserve_scratch(1000));
  CHECK(pool.slot_scratch_bytes() >= 1000);
  CHECK(pool.slot_scratch(0) == nullptr);
  for (size_t s = 1; s < 4; ++s) {
    CHECK(pool.slot_scratch(s) != nullptr);
    CHECK(reinterpret_cast<uintptr_t>(pool.slot_scratch(s)) % 64 == 0);
  }
  CHECK(pool.slot_scratch(1) != pool.slot_scratch(2));
}

TEST_CASE("thread pool: callers on several threads share one pool; a busy pool runs the caller's parts on its own thread") {
  k::ThreadPool pool(3);
  std::atomic<long> total{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&] {
      for (int job = 0; job < 300; ++job)
        pool.run(5, [](void* c, size_t part, size_t) { static_cast<std::atomic<long>*>(c)->fetch_add(long(part) + 1); }, &total);
    });
  for (std::thread& t : callers) t.join();
  CHECK(total.load() == 4L * 300 * 15);
}

TEST_CASE("every output is the same bits at 1, 2, 3 and 8 threads, in Exact and in Fast") {
  for (om::ArithmeticMode mode : {om::ArithmeticMode::Exact, om::ArithmeticMode::Fast}) {
    CAPTURE(int(mode));
    for (int64_t batch : {1, 5}) {
      CAPTURE(batch);
      const auto feeds = feeds_for(batch, 11);
      om::Session one(net(), options(mode, 1));
      const std::vector<float> ref = run_into(one, feeds);
      for (int64_t min_cost : {k::kMinPartCost, int64_t(1)}) {
        MinPartCost cost(min_cost);
        for (int threads : {2, 3, 8}) {
          CAPTURE(threads);
          CAPTURE(min_cost);
          om::Session s(net(), options(mode, threads));
          CHECK(run_into(s, feeds) == ref);
        }
      }
    }
  }
}

TEST_CASE("pointwise and depthwise layers split over threads give the same bits at 1, 2, 3 and 8 threads") {
  // Pointwise (split by pixel columns) -> depthwise 3x3, stride 1 and 2, multiplier 2 (split by
  // planes) -> pointwise.
  g::Graph gr;
  gr.inputs.push_back(sym_value("x", DType::f32, {"batch", "8", "19", "17"}));
  gr.initializers.push_back(g::TensorData::from_vector<float>("p1", {24, 8, 1, 1}, random_floats(192, 21, -0.5f, 0.5f)));
  gr.initializers.push_back(g::TensorData::from_vector<float>("d1", {24, 1, 3, 3}, random_floats(216, 22, -0.5f, 0.5f)));
  gr.initializers.push_back(g::TensorData::from_vector<float>("b1", {24}, random_floats(24, 23)));
  gr.initializers.push_back(g::TensorData::from_vector<float>("d2", {48, 1, 3, 3}, random_floats(432, 24, -0.5f, 0.5f)));
  gr.initializers.push_back(g::TensorData::from_vector<float>("p2", {16, 48, 1, 1}, random_floats(768, 25, -0.5f, 0.5f)));
  gr.nodes.push_back(node("Conv", {"x", "p1"}, {"a"}));
  gr.nodes.push_back(node("Conv", {"a", "d1", "b1"}, {"b"}, {Attribute::of_int("group", 24), Attribute::of_ints("pads", {1, 1, 1, 1})}));
  gr.nodes.push_back(node("Relu", {"b"}, {"c"}));
  gr.nodes.push_back(node("Conv", {"c", "d2"}, {"d"},  // multiplier 2, stride 2
                          {Attribute::of_int("group", 24), Attribute::of_ints("pads", {1, 1, 1, 1}), Attribute::of_ints("strides", {2, 2})}));
  gr.nodes.push_back(node("Conv", {"d", "p2"}, {"y"}));
  gr.outputs.push_back(value("y", DType::f32, {}));
  for (om::ArithmeticMode mode : {om::ArithmeticMode::Exact, om::ArithmeticMode::Fast})
    for (int64_t batch : {1, 3}) {
      CAPTURE(int(mode));
      CAPTURE(batch);
      const std::vector<Feed> feeds{Feed::of("x", {batch, 8, 19, 17}, random_floats(size_t(batch) * 8 * 19 * 17, 26))};
      om::Session one(gr, options(mode, 1));
      const Out ref = run(one, feeds)[0];
      for (int64_t min_cost : {k::kMinPartCost, int64_t(1)}) {
        MinPartCost cost(min_cost);
        for (int threads : {2, 3, 8}) {
          CAPTURE(threads);
          CAPTURE(min_cost);
          om::Session s(gr, options(mode, threads));
          CHECK(run(s, feeds)[0].bytes == ref.bytes);
        }
      }
    }
}

TEST_CASE("with threads a planned run allocates nothing") {
  MinPartCost cost(1);  // every kernel splits, the products' columns too
  for (om::ArithmeticMode mode : {om::ArithmeticMode::Exact, om::ArithmeticMode::Fast}) {
    om::Session s(net(), options(mode, 2));
    const auto feeds = feeds_for(3, 12);
    std::vector<om::TensorView> in = views(feeds);
    std::vector<float> y(3 * 96);
    om::TensorView out;
    out.data = y.data();
    out.capacity = y.size() * sizeof(float);
    s.run(in.data(), 1, &out, 1);  // plans (and reserves the workers' scratch)
    s.run(in.data(), 1, &out, 1);  // the workers' first parts
    const size_t before = g_allocations.load();
    for (int i = 0; i < 5; ++i) s.run(in.data(), 1, &out, 1);
    CHECK(g_allocations.load() - before == 0);
  }
}

// Several callers run one Session at once, each in an execution context of its own; with
// max_concurrent_runs = 1 they take turns. Either way every result is the serial one, and once
// the contexts exist concurrent runs allocate nothing.
TEST_CASE("one Session run from four threads with different shapes gives the serial results") {
  for (size_t bound : {size_t(4), size_t(1)}) {
    CAPTURE(bound);
    om::SessionOptions o = options(om::ArithmeticMode::Exact, 2);
    o.max_concurrent_runs = bound;
    om::Session s(net(), o);
    std::vector<std::vector<Feed>> feeds;
    std::vector<std::vector<float>> expected;
    for (int64_t b = 1; b <= 4; ++b) {
      feeds.push_back(feeds_for(b, uint32_t(20 + b)));
      expected.push_back(run_into(s, feeds.back()));
    }
    std::atomic<int> wrong{0};
    auto hammer = [&](int rounds) {
      std::vector<std::thread> callers;
      for (int t = 0; t < 4; ++t)
        callers.emplace_back([&, t] {
          for (int i = 0; i < rounds; ++i) {
            const size_t c = size_t(t + i) % feeds.size();
            if (run_into(s, feeds[c]) != expected[c]) wrong.fetch_add(1);
          }
        });
      for (std::thread& t : callers) t.join();
    };
    hammer(25);
    CHECK(wrong.load() == 0);
  }
}

TEST_CASE("two callers of one Session run in parallel without allocating once their contexts exist") {
  om::Session s(net(), options(om::ArithmeticMode::Fast, 1));
  const auto feeds = feeds_for(2, 40);
  const std::vector<float> expected = run_into(s, feeds);
  std::vector<om::TensorView> in = views(feeds);
  std::atomic<int> wrong{0};
  auto two_callers = [&](int rounds) {
    std::vector<std::thread> callers;
    for (int t = 0; t < 2; ++t)
      callers.emplace_back([&] {
        std::vector<float> y(2 * 96);
        om::TensorView out;
        out.data = y.data();
        out.capacity = y.size() * sizeof(float);
        for (int i = 0; i < rounds; ++i) {
          s.run(in.data(), 1, &out, 1);
          if (y != expected) wrong.fetch_add(1);
        }
      });
    for (std::thread& t : callers) t.join();
  };
  two_callers(20);  // the second caller slot and context are made here, when the callers overlap
  // What starting the two threads allocates by itself, then the same with 20 runs each: equal.
  // Under an emulator the two threads may not overlap in the first rounds, so the second context
  // can be made in a later one: a few tries are allowed, since with at most two contexts only
  // their creation can allocate; an allocation in every run would fail every try.
  size_t harness = 0, with_runs = 0;
  for (int attempt = 0; attempt < 10 && (attempt == 0 || with_runs != harness); ++attempt) {
    size_t before = g_allocations.load();
    two_callers(0);
    harness = g_allocations.load() - before;
    before = g_allocations.load();
    two_callers(20);
    with_runs = g_allocations.load() - before;
  }
  CHECK(with_runs == harness);
  CHECK(wrong.load() == 0);
}

TEST_CASE("sessions sharing one pool run from two threads at once") {
  auto pool = std::make_shared<om::ThreadPool>(2);
  om::SessionOptions o = options(om::ArithmeticMode::Exact, 1);
  o.thread_pool = pool;
  om::Session a(net(), o), b(net(), o);
  CHECK(a.options().thread_pool == pool);
  const auto fa = feeds_for(2, 31), fb = feeds_for(3, 32);
  om::Session serial(net(), options(om::ArithmeticMode::Exact, 1));
  const auto ra = run_into(serial, fa), rb = run_into(serial, fb);
  std::atomic<int> wrong{0};
  std::thread ta([&] {
    for (int i = 0; i < 40; ++i) wrong += run_into(a, fa) != ra;
  });
  std::thread tb([&] {
    for (int i = 0; i < 40; ++i) wrong += run_into(b, fb) != rb;
  });
  ta.join();
  tb.join();
  CHECK(wrong.load() == 0);
  om::SessionOptions bad;
  bad.threads = -2;
  CHECK_THROWS_WITH_AS(om::Session(net(), bad), doctest::Contains("SessionOptions::threads is -2"), om::Error);
}

// Batches split between threads (docs/threads.md): a run over at least as many items as the pool
// has threads runs as one part per thread, each in its own arena, where every node keeps the
// items apart; the outputs are the whole batch's bits, into the caller's buffer or the session's.
TEST_CASE("a batch splits into one part per thread with the bits of the whole batch") {
  for (om::ArithmeticMode mode : {om::ArithmeticMode::Exact, om::ArithmeticMode::Fast}) {
    om::Session one(net(), options(mode, 1));
    for (int threads : {2, 3, 8}) {
      om::Session split(net(), options(mode, threads));
      om::SessionOptions whole_options = options(mode, threads);
      whole_options.split_batch = false;
      om::Session whole(net(), whole_options);
      for (int64_t batch : {1, 2, 5, 8}) {
        CAPTURE(int(mode));
        CAPTURE(threads);
        CAPTURE(batch);
        const auto feeds = feeds_for(batch, uint32_t(40 + batch));
        const std::vector<float> ref = run_into(one, feeds);
        CHECK(run_into(split, feeds) == ref);
        const bool splits = batch >= threads;
        CHECK(split.last_plan_stats().batch_parts == (splits ? size_t(threads) : 1u));
        CHECK((split.last_plan_stats().part_arena_bytes > 0) == splits);
        const Out own = run(split, feeds)[0];  // the session's own output buffer
        REQUIRE(own.bytes.size() == ref.size() * sizeof(float));
        CHECK(std::memcmp(own.bytes.data(), ref.data(), own.bytes.size()) == 0);
        CHECK(run_into(whole, feeds) == ref);
        CHECK(whole.last_plan_stats().batch_parts == 1);
      }
    }
  }
}

// The integer forms split too: QuantizeLinear -> QLinearConv (its weights at input 3) ->
// DequantizeLinear, and QLinearMatMul over rows; integers, so the same bits by construction.
TEST_CASE("a quantized convolution and product split into parts with the whole batch's bits") {
  g::Graph gr;
  gr.inputs.push_back(sym_value("x", DType::f32, {"batch", "4", "6", "6"}));
  std::vector<int8_t> w(8 * 4 * 3 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = int8_t(int(i * 37 % 255) - 127);
  gr.initializers.push_back(g::TensorData::from_vector<float>("s", {}, {0.02f}));
  gr.initializers.push_back(g::TensorData::from_vector<uint8_t>("zp", {}, {128}));
  gr.initializers.push_back(g::TensorData::from_vector<int8_t>("w", {8, 4, 3, 3}, w));
  gr.initializers.push_back(g::TensorData::from_vector<float>("ws", {8}, {0.01f, 0.02f, 0.03f, 0.01f, 0.02f, 0.03f, 0.01f, 0.02f}));
  gr.initializers.push_back(g::TensorData::from_vector<int8_t>("wzp", {8}, std::vector<int8_t>(8, 0)));
  gr.initializers.push_back(g::TensorData::from_vector<float>("ys", {}, {0.05f}));
  std::vector<int8_t> b(128 * 10);
  for (size_t i = 0; i < b.size(); ++i) b[i] = int8_t(int(i * 53 % 255) - 127);
  gr.initializers.push_back(g::TensorData::from_vector<int8_t>("b", {128, 10}, b));
  gr.initializers.push_back(g::TensorData::from_vector<int8_t>("bzp", {}, {0}));
  gr.initializers.push_back(g::TensorData::from_vector<int64_t>("flat", {2}, {-1, 128}));
  gr.nodes.push_back(node("QuantizeLinear", {"x", "s", "zp"}, {"q"}));
  gr.nodes.push_back(node("QLinearConv", {"q", "s", "zp", "w", "ws", "wzp", "ys", "zp"}, {"c"}, {Attribute::of_ints("pads", {0, 0, 0, 0})}));
  gr.nodes.push_back(node("DequantizeLinear", {"c", "ys", "zp"}, {"y"}));
  gr.nodes.push_back(node("Reshape", {"c", "flat"}, {"f"}));
  gr.nodes.push_back(node("QLinearMatMul", {"f", "ys", "zp", "b", "s", "bzp", "ys", "zp"}, {"m"}));
  gr.nodes.push_back(node("DequantizeLinear", {"m", "ys", "zp"}, {"y2"}));
  gr.outputs.push_back(value("y", DType::f32, {}));
  gr.outputs.push_back(value("y2", DType::f32, {}));
  for (int64_t batch : {2, 5}) {
    CAPTURE(batch);
    const std::vector<Feed> feeds{Feed::of("x", {batch, 4, 6, 6}, random_floats(size_t(batch) * 144, 60))};
    om::Session one(gr, options(om::ArithmeticMode::Exact, 1)), two(gr, options(om::ArithmeticMode::Exact, 2));
    const std::vector<Out> ref = run(one, feeds), got = run(two, feeds);
    CHECK(two.last_plan_stats().batch_parts == 2);
    REQUIRE(got.size() == 2);
    CHECK(got[0].bytes == ref[0].bytes);
    CHECK(got[1].bytes == ref[1].bytes);
  }
}

// Graphs where a part would not compute its own items: each runs whole (batch_parts 1) and
// gives the single-threaded result. Several pass the shape checks (the halves' shapes are the
// whole's with fewer items), so only the operators' batch rules keep them whole.
TEST_CASE("a graph whose items mix along axis 0 runs whole") {
  auto x_in = [] { return sym_value("x", DType::f32, {"batch", "6"}); };
  struct Case {
    const char* what;
    g::Graph graph;
  };
  std::vector<Case> cases;
  {
    g::Graph gr;  // Softmax over the items
    gr.inputs.push_back(x_in());
    gr.nodes.push_back(node("Softmax", {"x"}, {"y"}, {Attribute::of_int("axis", 0)}));
    gr.outputs.push_back(value("y", DType::f32, {}));
    cases.push_back({"Softmax axis 0", gr});
  }
  {
    g::Graph gr;  // the items reversed
    gr.inputs.push_back(x_in());
    gr.initializers.push_back(g::TensorData::from_vector<int64_t>("st", {1}, {-1}));
    gr.initializers.push_back(g::TensorData::from_vector<int64_t>("en", {1}, {INT64_MIN}));
    gr.initializers.push_back(g::TensorData::from_vector<int64_t>("ax", {1}, {0}));
    gr.initializers.push_back(g::TensorData::from_vector<int64_t>("sp", {1}, {-1}));
    gr.nodes.push_back(node("Slice", {"x", "st", "en", "ax", "sp"}, {"y"}));
    gr.outputs.push_back(value("y", DType::f32, {}));
    cases.push_back({"Slice reversing axis 0", gr});
  }
  {
    g::Graph gr;  // a sum over the items added back to each
    gr.inputs.push_back(x_in());
    gr.initializers.push_back(g::TensorData::from_vector<int64_t>("ax", {1}, {0}));
    gr.nodes.push_back(node("ReduceSum", {"x", "ax"}, {"s"}, {Attribute::of_int("keepdims", 1)}));
    gr.nodes.push_back(node("Add", {"x", "s"}, {"y"}));
    gr.outputs.push_back(value("y", DType::f32, {}));
    cases.push_back({"ReduceSum over axis 0", gr});
  }
  {
    g::Graph gr;  // a running sum over the items
    gr.inputs.push_back(x_in());
    gr.initializers.push_back(g::TensorData::from_vector<int64_t>("ax", {}, {0}));
    gr.nodes.push_back(node("CumSum", {"x", "ax"}, {"y"}));
    gr.outputs.push_back(value("y", DType::f32, {}));
    cases.push_back({"CumSum axis 0", gr});
  }
  {
    g::Graph gr;  // MaxPool's Indices count positions over the whole batch
    gr.inputs.push_back(sym_value("x", DType::f32, {"batch", "2", "4", "4"}));
    gr.nodes.push_back(node("MaxPool", {"x"}, {"y", "i"}, {Attribute::of_ints("kernel_shape", {2, 2}), Attribute::of_ints("strides", {2, 2})}));
    gr.outputs.push_back(value("y", DType::f32, {}));
    gr.outputs.push_back(value("i", DType::i64, {}));
    cases.push_back({"MaxPool with Indices", gr});
  }
  {
    g::Graph gr;  // the items side by side
    gr.inputs.push_back(x_in());
    gr.nodes.push_back(node("Concat", {"x", "x"}, {"y"}, {Attribute::of_int("axis", 0)}));
    gr.outputs.push_back(value("y", DType::f32, {}));
    cases.push_back({"Concat axis 0", gr});
  }
  for (const Case& c : cases) {
    const std::string what = c.what;
    CAPTURE(what);
    const int64_t per_item = c.graph.inputs[0].shape.size() == 2 ? 6 : 32;
    std::vector<int64_t> dims{6};
    if (per_item == 6) dims.push_back(6);
    else dims.insert(dims.end(), {2, 4, 4});
    const std::vector<Feed> feeds{Feed::of("x", dims, random_floats(size_t(6 * per_item), 50))};
    om::Session one(c.graph, options(om::ArithmeticMode::Exact, 1));
    om::Session two(c.graph, options(om::ArithmeticMode::Exact, 2));
    const std::vector<Out> ref = run(one, feeds), got = run(two, feeds);
    CHECK(two.last_plan_stats().batch_parts == 1);
    REQUIRE(got.size() == ref.size());
    for (size_t i = 0; i < ref.size(); ++i) CHECK(got[i].bytes == ref[i].bytes);
  }
  // Outputs computed per item (a mean over the last axis among them) beside one that is the
  // input itself: split, every output whole.
  g::Graph gr;
  gr.inputs.push_back(x_in());
  gr.initializers.push_back(g::TensorData::from_vector<int64_t>("last", {1}, {-1}));
  gr.nodes.push_back(node("Relu", {"x"}, {"y"}));
  gr.nodes.push_back(node("ReduceMean", {"x", "last"}, {"m"}, {Attribute::of_int("keepdims", 1)}));
  gr.nodes.push_back(node("Sub", {"x", "m"}, {"z"}));
  gr.outputs.push_back(value("y", DType::f32, {}));
  gr.outputs.push_back(value("x", DType::f32, {}));
  gr.outputs.push_back(value("z", DType::f32, {}));
  const std::vector<Feed> feeds{Feed::of("x", {5, 6}, random_floats(30, 51))};
  om::Session one(gr, options(om::ArithmeticMode::Exact, 1)), two(gr, options(om::ArithmeticMode::Exact, 2));
  const std::vector<Out> ref = run(one, feeds), got = run(two, feeds);
  CHECK(two.last_plan_stats().batch_parts == 2);
  REQUIRE(got.size() == 3);
  for (size_t i = 0; i < 3; ++i) CHECK(got[i].bytes == ref[i].bytes);
}
