// Every graph operator walked from its registry record: a one-node ONNX model of it is accepted
// by the reader and runs in a Session in Fast mode and, when the record declares an exact
// kernel, in Exact mode with the same result shape. An operator added to the registry without
// an example in op_examples.h fails this test (docs/adding-an-operator.md).
#include <doctest/doctest.h>

#include <atomic>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <type_traits>
#include <utility>

#include "onemodel/graph/op_registry.h"
#include "onemodel/graph/passes/pass.h"
#include "onemodel/io/onnx.h"
#include "onemodel/kernels/thread_pool.h"
#include "onemodel/runtime/plan.h"
#include "runtime/op_examples.h"
#include "runtime/runtime_helpers.h"

using namespace rt;
using namespace op_examples;

TEST_CASE("every registry operator reads from a one-node ONNX model and runs in each mode it declares") {
  size_t walked = 0, lowered = 0;
  for (const g::OpDef* op : g::all_ops()) {
    CAPTURE(std::string(op->op_type));
    // Sequence operators take or give sequences, which a one-node tensor graph cannot: each has
    // its cases in test_sequence_ops.cpp, which checks that every one of them does.
    if (op->flags & g::kOpSequence) {
      ++lowered;
      continue;
    }
    auto it = examples().find(op->op_type);
    if (it == examples().end()) {
      FAIL_CHECK("no example for ", op->op_type, " in tests/runtime/op_examples.h: add one");
      continue;
    }
    const Example e = it->second();
    // The graph's output dtype is taken from a Fast session on the IR (the registry's inference).
    g::Graph gr = one_node_graph(*op, e);
    {
      om::Session probe(gr, {om::ArithmeticMode::Fast});
      gr.outputs[0].dtype = run(probe, e.feeds)[0].dtype;
    }
    const std::vector<uint8_t> bytes = om::onnx::write(gr);
    om::Result<g::Graph> read = om::onnx::read_bytes(bytes.data(), bytes.size());
    REQUIRE_MESSAGE(read.is_ok(), read.status().message());
    CHECK(read.value().nodes.at(0).op_type == op->op_type);

    om::Session fast = om::Session::from_onnx(bytes, {om::ArithmeticMode::Fast});
    const std::vector<Out> yf = run(fast, e.feeds);
    REQUIRE(yf.size() == 1);
    if (g::runs_in(*op, om::ArithmeticMode::Exact)) {
      om::Session exact = om::Session::from_onnx(bytes, {om::ArithmeticMode::Exact});
      const std::vector<Out> ye = run(exact, e.feeds);
      CHECK(ye[0].dims == yf[0].dims);
      CHECK(ye[0].dtype == yf[0].dtype);
    } else {
      CHECK_THROWS_AS(om::Session::from_onnx(bytes, {om::ArithmeticMode::Exact}), om::Error);
    }
    ++walked;
  }
  CHECK(walked + lowered == g::all_ops().size());
  CHECK(walked == examples().size());  // no example left for an operator that is gone
}

// A kernel cannot reach its node: KernelContext has no member that leads there, so reading an
// attribute or comparing an op type while running does not compile.
template <typename T, typename = void>
struct reaches_node : std::false_type {};
template <typename T>
struct reaches_node<T, std::void_t<decltype(std::declval<T>().node)>> : std::true_type {};
TEST_CASE("kernels cannot reach the node: KernelContext has no node member") {
  static_assert(!reaches_node<g::KernelContext>::value, "KernelContext must not expose the node");
  CHECK(!reaches_node<g::KernelContext>::value);
  CHECK(reaches_node<g::InferContext>::value);  // the detector works: infer and prepare see the node
}

// Kernels read their prepared record, never the node, run any sub-range of their work and
// allocate nothing: every operator's one-node plan is built and run whole (and again, counting
// allocations); then a plan built and run with every
// kernel's work cut in three (plan-time evaluation included) must give the same bits, and again
// after every node's op type, name and attributes are erased from the graph it was built from.
// (KernelContext has no node to read; this proves the plan keeps none either.)
TEST_CASE("every kernel runs any split of its work from its prepared record, with the node's attributes and op type erased") {
  size_t walked = 0;
  for (const g::OpDef* op : g::all_ops()) {
    CAPTURE(std::string(op->op_type));
    auto it = examples().find(op->op_type);
    if (it == examples().end()) continue;  // reported by the test above (sequence operators: test_sequence_ops.cpp)
    const Example e = it->second();
    for (om::ArithmeticMode mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
      if (!g::runs_in(*op, mode)) continue;
      CAPTURE(int(mode));
      g::Graph gr = one_node_graph(*op, e);
      auto ops = om::runtime::resolve_ops(gr, mode);
      REQUIRE(ops.is_ok());
      auto cg = om::runtime::compile_graph(gr, std::move(ops).value());
      REQUIRE(cg.is_ok());
      std::vector<std::vector<int64_t>> dims;
      std::vector<void*> data;
      for (const Feed& f : e.feeds) {
        dims.push_back(f.dims);
        data.push_back(const_cast<uint8_t*>(f.bytes.data()));
      }
      const std::vector<char> fed(e.feeds.size(), 1);
      auto run_plan = [&](om::runtime::Plan& p) {
        REQUIRE(om::runtime::execute_plan(p, mode, data.data()).is_ok());
        const om::runtime::Plan::Output& o = p.outputs[0];
        const uint8_t* src = static_cast<const uint8_t*>(o.input >= 0 ? data[size_t(o.input)] : o.data);
        return std::vector<uint8_t>(src, src + o.desc->nbytes());
      };
      auto whole = om::runtime::build_plan(cg.value(), mode, dims, fed, true, {}, &data);
      REQUIRE_MESSAGE(whole.is_ok(), whole.status().message());
      const std::vector<uint8_t> before = run_plan(*whole.value());
      // Once planned, running allocates nothing (the test program counts every operator new).
      const size_t allocations = g_allocations.load();
      const om::Status again = om::runtime::execute_plan(*whole.value(), mode, data.data());
      CHECK(g_allocations.load() - allocations == 0);
      CHECK(again.is_ok());
      {
        // On thread pools, with every work of two units or more split over all of their
        // threads (the products' columns too): the same bits, and no allocation once planned.
        om::kernels::set_min_part_cost_for_testing(1);
        for (int threads : {2, 3, 8}) {
          CAPTURE(threads);
          om::kernels::ThreadPool pool(threads);
          om::kernels::PoolScope scope(&pool);
          auto par = om::runtime::build_plan(cg.value(), mode, dims, fed, true, {}, &data);
          REQUIRE_MESSAGE(par.is_ok(), par.status().message());
          REQUIRE(pool.reserve_scratch(par.value()->max_scratch_bytes));
          CHECK(run_plan(*par.value()) == before);
          REQUIRE(om::runtime::execute_plan(*par.value(), mode, data.data()).is_ok());  // the workers' first parts
          const size_t planned = g_allocations.load();
          CHECK(om::runtime::execute_plan(*par.value(), mode, data.data()).is_ok());
          CHECK(g_allocations.load() - planned == 0);
        }
        om::kernels::set_min_part_cost_for_testing(om::kernels::kMinPartCost);
      }
      g::set_work_split_for_testing(3);
      auto split = om::runtime::build_plan(cg.value(), mode, dims, fed, true, {}, &data);
      REQUIRE_MESSAGE(split.is_ok(), split.status().message());
      CHECK(run_plan(*split.value()) == before);
      for (g::Node& n : gr.nodes) {
        n.op_type = "Erased";
        n.name.clear();
        for (g::Attribute& a : n.attributes) {
          a.name = "erased";
          a.i = -1;
          a.f = -1.0f;
          a.s.assign(64, '?');
          a.ints.assign(a.ints.size(), -1);
          a.floats.assign(a.floats.size(), -1.0f);
        }
      }
      CHECK(run_plan(*split.value()) == before);
      g::set_work_split_for_testing(1);
    }
    ++walked;
  }
  size_t lowered = 0;
  for (const g::OpDef* op : g::all_ops()) lowered += (op->flags & g::kOpSequence) != 0;
  CHECK(walked + lowered == g::all_ops().size());
}

TEST_CASE("registry records are complete and unique") {
  std::set<std::string> seen;
  for (const g::OpDef* op : g::all_ops()) {
    CAPTURE(std::string(op->op_type));
    CHECK(seen.insert(std::string(op->domain) + "::" + op->op_type).second);
    // Control flow (If) is planned from its subgraphs, sequence operators are lowered into
    // tensor nodes: no infer step or kernel of their own.
    CHECK((bool(op->infer) || (op->flags & (g::kOpControlFlow | g::kOpSequence))));
    CHECK(bool(op->flags & g::kOpSequence) == (op->sequences != nullptr));
    CHECK(g::runs_in(*op, om::ArithmeticMode::Fast));
    CHECK(op->min_inputs <= op->max_inputs);
    CHECK(op->since >= g::kOldestOpset);
    CHECK(op->since <= g::kNewestOpset);
    CHECK(std::string(op->notes).size() > 0);
    CHECK(g::find_op(op->domain, op->op_type) == op);
    for (int m = 0; m < op->upgrade.num_moved; ++m) CHECK(op->upgrade.moved[m].since > g::kOldestOpset);
    CHECK(op->oldest_opset() >= g::kOldestOpset);
    CHECK(op->oldest_opset() <= op->since);
  }
}

TEST_CASE("every family table under graph/ops is listed in families.def") {
  std::ifstream list(std::string(OM_SOURCE_DIR) + "/onemodel/graph/ops/families.def");
  std::stringstream ls;
  ls << list.rdbuf();
  std::set<std::string> listed;
  const std::string text = ls.str();
  const std::regex fam(R"(\nOM_OP_FAMILY\((\w+)\))");
  for (auto m = std::sregex_iterator(text.begin(), text.end(), fam); m != std::sregex_iterator(); ++m) listed.insert((*m)[1]);
  REQUIRE(!listed.empty());
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(OM_SOURCE_DIR) + "/onemodel/graph/ops")) {
    if (entry.path().extension() != ".cpp") continue;
    ++files;
    const std::string file = entry.path().filename().string();
    // Files are named by the family they hold: a name saying only "more of something" hides
    // where an operator lives (the rule the family regrouping set).
    const std::string stem = entry.path().stem().string();
    CAPTURE(file);
    CHECK_FALSE(std::regex_search(stem, std::regex("_(more|extra|misc)$|^import_")));
    std::ifstream f(entry.path());
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string src = ss.str();
    const std::regex def(R"(OpTable (\w+)_ops\(\) \{)");
    for (auto m = std::sregex_iterator(src.begin(), src.end(), def); m != std::sregex_iterator(); ++m) {
      CAPTURE(file);
      CHECK(listed.count((*m)[1]) == 1);
    }
  }
  CHECK(files >= listed.size());
}

TEST_CASE("registry: every pass linked by operators is named by an operator's record, and every record's pass is in the table") {
  namespace p = om::graph::passes;
  std::set<g::RewriteFn> named;
  for (const g::OpDef* op : g::all_ops())
    for (const g::RewriteFn* w = op->written_by; w && *w; ++w) named.insert(*w);
  size_t listed = 0;
  for (const p::Pass& pass : p::all_passes()) {
    REQUIRE_MESSAGE(bool(pass.run), pass.name);  // the full registry links every pass
    if (pass.linked == p::Linked::ByOperator) {
      CHECK_MESSAGE(named.count(pass.run) == 1, pass.name, " is named by no operator's record: it would never run");
      ++listed;
    }
  }
  CHECK(listed == named.size());
}

// Flags add up (an op made by a family helper with its own flags can take more).
static_assert(g::op("X").with_flags(g::kOpAlias).with_flags(g::kOpF16InF32).flags == (g::kOpAlias | g::kOpF16InF32),
              "with_flags adds to the flags");

TEST_CASE("registry: the operators compute_f16_in_f32 runs in f32 are float operators of the default domain") {
  size_t flagged = 0;
  for (const g::OpDef* op : g::all_ops()) {
    if (!(op->flags & g::kOpF16InF32)) continue;
    ++flagged;
    CAPTURE(op->op_type);
    CHECK(std::string(op->domain).empty());
    CHECK(bool(op->fast));
  }
  CHECK(flagged == 81);  // the elementwise and activation ops, products, pools, norms, softmaxes, data movement
}
