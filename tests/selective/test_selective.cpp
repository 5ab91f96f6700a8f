// Selective operator registration (onemodel/op_list.h; docs/deploying.md, "Selective operator
// registration"): this test program registers only an MLP's operators, so the library's full
// registry (graph/registry_full.cpp) is never linked — were it, the two definitions of
// registered_op_list() would not link.
#include <onemodel/op_list.h>

#include <doctest/doctest.h>

#include <cstring>

#include "onemodel/graph/op_registry.h"
#include "onemodel/graph/passes/pass.h"
#include "onemodel/io/onnx.h"
#include "runtime/runtime_helpers.h"

#define TEST_MLP_OPS(X) X(MatMul) X(Add) X(Relu)
OM_REGISTER_OPS(TEST_MLP_OPS)

namespace {
using namespace rt;

// y = relu(x W + b) for x [2, 3], W [3, 2], b [2]; with `extra`, a Sigmoid after it.
g::Graph mlp(bool extra = false) {
  g::Graph gr;
  gr.name = "mlp";
  gr.inputs.push_back(value("x", DType::f32, {2, 3}));
  gr.initializers.push_back(g::TensorData::from_vector<float>("W", {3, 2}, {1, -1, 2, 0.5f, -3, 1}));
  gr.initializers.push_back(g::TensorData::from_vector<float>("b", {2}, {0.5f, -0.25f}));
  gr.nodes.push_back(node("MatMul", {"x", "W"}, {"xw"}));
  gr.nodes.push_back(node("Add", {"xw", "b"}, {"z"}));
  gr.nodes.push_back(node("Relu", {"z"}, {extra ? "r" : "y"}));
  if (extra) gr.nodes.push_back(node("Sigmoid", {"r"}, {"y"}));
  g::ValueInfo y;
  y.name = "y";
  gr.outputs.push_back(y);
  return gr;
}

}  // namespace

TEST_CASE("a program's own operator list is the whole registry") {
  const g::OpList ops = g::all_ops();
  CHECK(ops.selective);
  REQUIRE(ops.size() == 3);
  CHECK(std::strcmp(ops.defs[0]->op_type, "MatMul") == 0);
  CHECK(g::find_op("", "Relu") == &g::op_defs::Relu);
  CHECK(g::find_op("ai.onnx", "Add") == &g::op_defs::Add);
  CHECK(g::find_op("", "Conv") == nullptr);
  CHECK(g::find_op(g::kOnemodelDomain, "FusedMatMul") == nullptr);
}

TEST_CASE("a model of registered operators runs, without the fusions into operators the list leaves out") {
  for (om::ArithmeticMode mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
    om::SessionOptions o;
    o.mode = mode;
    om::Session s(mlp(), o);
    // fuse_matmul_epilogue writes FusedMatMul, which this program does not register: it did not run.
    REQUIRE(s.graph().nodes.size() == 3);
    for (const g::Node& n : s.graph().nodes) CHECK(n.op_type != "FusedMatMul");
    const std::vector<float> x = {1, 2, 3, -1, 0, 2};
    const std::vector<Out> out = run(s, {Feed::of<float>("x", {2, 3}, x)});
    const std::vector<float> y = out.at(0).as<float>();
    REQUIRE(y.size() == 4);
    // Row 0: [1 + 4 - 9, -1 + 1 + 3] + b = [-3.5, 2.75]; row 1: [-1 - 6, 1 + 2] + b = [-6.5, 2.75].
    CHECK(y[0] == 0.0f);
    CHECK(y[1] == 2.75f);
    CHECK(y[2] == 0.0f);
    CHECK(y[3] == 2.75f);
  }
}

TEST_CASE("a model with an operator the list leaves out is refused when the Session is created, naming it") {
  om::Session s;
  const om::Status st = om::Session::create(mlp(true), om::SessionOptions{}, &s);
  REQUIRE_FALSE(st.is_ok());
  CHECK(st.kind() == om::ErrorKind::Unsupported);
  CHECK(st.message().find("does not register: Sigmoid") != std::string::npos);
  CHECK(st.message().find("onemodel ops MODEL") != std::string::npos);

  // The ONNX reader says the same (the file itself is well formed).
  const om::Result<std::vector<uint8_t>> bytes = om::onnx::write_bytes(mlp(true), g::GraphCheck::AlreadyVerified);
  REQUIRE(bytes.is_ok());
  const om::Result<g::Graph> read = om::onnx::read_bytes(bytes.value().data(), bytes.value().size());
  REQUIRE_FALSE(read.is_ok());
  CHECK(read.status().message().find("does not register: Sigmoid") != std::string::npos);
}

TEST_CASE("the passes that write operators this program does not register are not linked") {
  namespace p = om::graph::passes;
  size_t by_operator = 0;
  for (const p::Pass& pass : p::all_passes()) {
    if (pass.linked != p::Linked::ByOperator) {
      CHECK_MESSAGE(bool(pass.run), pass.name);
      continue;
    }
    ++by_operator;
    const std::string name = pass.name;
    // The Conv, attention, int8 and elementwise chain fusions' records (conv.cpp, attention.cpp,
    // quant.cpp, fused_elementwise.cpp) are not in this program, so nothing links their passes;
    // FusedMatMul's record comes with MatMul's family (matmul.cpp), which this test links without
    // --gc-sections.
    if (name == "fuse_conv_epilogue" || name == "fold_conv_batchnorm" || name == "fuse_attention" || name == "fuse_qdq_conv" ||
        name == "fuse_elementwise_chains" || name == "fuse_conv_chain")
      CHECK_MESSAGE(bool(!pass.run), name);
  }
  CHECK(by_operator == 16);
}

// OM_REGISTER_OPS links no batch split (onemodel/op_list.h): a batch on two threads runs whole,
// with the single-threaded bits.
TEST_CASE("a program listing its operators without the batch split runs every batch whole") {
  CHECK(g::all_ops().batch_split == nullptr);
  om::SessionOptions two;
  two.threads = 2;
  om::Session s(mlp(), two);
  om::SessionOptions one_thread;
  one_thread.threads = 1;
  om::Session one(mlp(), one_thread);
  const std::vector<Feed> feeds{Feed::of("x", {2, 3}, std::vector<float>{1, 2, 3, -1, 0, 2})};
  CHECK(run(s, feeds)[0].bytes == run(one, feeds)[0].bytes);
  CHECK(s.last_plan_stats().batch_parts == 1);
}
