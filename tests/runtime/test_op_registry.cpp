// Every graph operator walked from its registry record: a one-node ONNX model of it is accepted
// by the reader and runs in a Session in Fast mode and, when the record declares an exact
// kernel, in Exact mode with the same result shape. An operator added to the registry without
// an example in op_examples.h fails this test (docs/adding-an-operator.md).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "onemodel/graph/op_registry.h"
#include "onemodel/io/onnx.h"
#include "runtime/op_examples.h"
#include "runtime/runtime_helpers.h"

using namespace rt;
using namespace op_examples;

TEST_CASE("every registry operator reads from a one-node ONNX model and runs in each mode it declares") {
  size_t walked = 0;
  for (const g::OpDef* op : g::all_ops()) {
    CAPTURE(std::string(op->op_type));
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
    if (op->exact) {
      om::Session exact = om::Session::from_onnx(bytes, {om::ArithmeticMode::Exact});
      const std::vector<Out> ye = run(exact, e.feeds);
      CHECK(ye[0].dims == yf[0].dims);
      CHECK(ye[0].dtype == yf[0].dtype);
    } else {
      CHECK_THROWS_AS(om::Session::from_onnx(bytes, {om::ArithmeticMode::Exact}), om::Error);
    }
    ++walked;
  }
  CHECK(walked == g::all_ops().size());
  CHECK(walked == examples().size());  // no example left for an operator that is gone
}

TEST_CASE("registry records are complete and unique") {
  std::set<std::string> seen;
  for (const g::OpDef* op : g::all_ops()) {
    CAPTURE(std::string(op->op_type));
    CHECK(seen.insert(std::string(op->domain) + "::" + op->op_type).second);
    CHECK(bool(op->infer));
    CHECK(bool(op->fast));
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
