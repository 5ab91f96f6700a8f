// The `onemodel` command-line tool: every subcommand run on a traced MLP, outputs checked.
// (quantize writes QDQ models whose outputs are checked against om::quant::quantize_static.)
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "onemodel/onemodel.h"
#include "test_util.h"

using testutil::contains;
namespace fs = std::filesystem;

namespace {

struct Run {
  int code = -1;
  std::string out;  // stdout and stderr
};

// The tool beside the test programs (started through OM_TEST_EMULATOR in cross runs).
Run tool(const std::string& args) {
  std::string cmd;
  if (const char* emu = std::getenv("OM_TEST_EMULATOR")) cmd = std::string(emu) + " ";
  cmd += std::string("'") + OM_BINARY_DIR + "/onemodel' " + args + " 2>&1";
  Run r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// A tiny MLP traced with a symbolic batch, saved as .om and .onnx, and an input batch of 5.
struct Fixture {
  fs::path dir;
  om::Tensor x;
  om::Tensor expected;
  Fixture() {
    dir = fs::temp_directory_path() / ("om_cli_test_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    om::Generator gen(3);
    auto model = std::make_shared<om::nn::Sequential>(
        std::make_shared<om::nn::Linear>(4, 8), std::make_shared<om::nn::ReLU>(), std::make_shared<om::nn::Linear>(8, 3));
    x = om::randn({5, 4}, gen);
    om::TracedModel traced = model->trace(x, {"batch", ""}, "features", "logits");
    traced.save((dir / "mlp.om").string());
    traced.save_onnx((dir / "mlp.onnx").string());
    om::save_npy((dir / "x.npy").string(), x);
    om::Session s(traced, {om::ArithmeticMode::Exact});
    expected = s.run({{"features", x}})[0];
  }
  ~Fixture() { fs::remove_all(dir); }
  std::string p(const std::string& name) const { return "'" + (dir / name).string() + "'"; }
};

}  // namespace

TEST_CASE("onemodel: help, unknown commands and options") {
  Run r = tool("--help");
  CHECK(r.code == 0);
  CHECK(contains(r.out, "info MODEL"));
  for (const char* cmd : {"info", "run", "convert", "bench", "dot", "quantize", "ops"}) {
    r = tool(std::string(cmd) + " --help");
    CHECK(r.code == 0);
    CHECK(contains(r.out, std::string("usage: onemodel ") + cmd));
  }
  r = tool("frobnicate");
  CHECK(r.code == 2);
  CHECK(contains(r.out, "unknown command 'frobnicate'"));
  r = tool("info --bogus x.om");
  CHECK(r.code == 2);
  CHECK(contains(r.out, "unknown option --bogus"));
}

TEST_CASE("onemodel info, run, convert, bench and dot on a traced MLP") {
  Fixture f;
  Run r = tool("info " + f.p("mlp.om"));
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(contains(r.out, "features             f32   [batch,4]"));
  CHECK(contains(r.out, "logits               f32   [batch,3]"));
  CHECK(contains(r.out, "ai.onnx=20"));
  CHECK(contains(r.out, "exact kernel"));
  CHECK(contains(r.out, "parameters: 67 values in 4 tensors, 268 bytes"));
  CHECK(contains(r.out, "passes (Fast session):"));
  CHECK(contains(r.out, "passes (Exact session):"));

  // run (Exact): the output file equals the in-process Exact session bit for bit
  r = tool("run " + f.p("mlp.om") + " --input features=" + f.p("x.npy") + " --mode exact --out " + f.p("out"));
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(contains(r.out, "output logits f32[5,3]"));
  CHECK(contains(r.out, "hash exact fnv1a="));
  om::Tensor got = om::load_npy((f.dir / "out" / "logits.npy").string());
  CHECK(got.to_vector<float>() == f.expected.to_vector<float>());
  const std::string hash_line = r.out.substr(r.out.find("hash exact"));

  // convert both ways; the converted files give the same Exact hash
  r = tool("convert " + f.p("mlp.om") + " " + f.p("back.onnx"));
  CHECK(r.code == 0);
  r = tool("convert " + f.p("back.onnx") + " " + f.p("again.om"));
  CHECK(r.code == 0);
  for (const char* file : {"back.onnx", "again.om", "mlp.onnx"}) {
    r = tool(std::string("run ") + f.p(file) + " --input " + f.p("x.npy") + " --mode exact --out " + f.p("out2"));
    CHECK(r.code == 0);
    CHECK(contains(r.out, hash_line));
  }
  // any thread count: the same bits
  for (const char* threads : {"1", "3"}) {
    r = tool("run " + f.p("mlp.om") + " --input features=" + f.p("x.npy") + " --mode exact --threads " + threads + " --out " + f.p("out3"));
    CHECK(r.code == 0);
    CHECK(contains(r.out, hash_line));
  }
  r = tool("run " + f.p("mlp.om") + " --input features=" + f.p("x.npy") + " --threads -1");
  CHECK(r.code != 0);
  CHECK(contains(r.out, "--threads is a thread count"));

  r = tool("bench " + f.p("mlp.om") + " --shape features=16,4 --runs 50 --threads 2");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(contains(r.out, "Fast mode, 2 threads"));
  CHECK(contains(r.out, "features=f32[16,4]"));
  CHECK(contains(r.out, "p50"));
  CHECK(contains(r.out, "p99"));
  CHECK(contains(r.out, "arena: "));
  CHECK(contains(r.out, "allocations per run: 0.00"));
  r = tool("bench " + f.p("mlp.om") + " --shape features=16,4 --runs 20 --warmup 5 --profile");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(contains(r.out, "allocations per run: 0.00"));  // timing the steps allocates nothing
  CHECK(contains(r.out, "steps (mean per run over 25 runs"));
  CHECK(contains(r.out, "MatMul"));
  CHECK(contains(r.out, "%"));

  r = tool("dot " + f.p("mlp.onnx"));
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(contains(r.out, "digraph"));
  CHECK(contains(r.out, "f32[batch,4]"));
  CHECK(contains(r.out, "f32[batch,8]"));
  CHECK(contains(r.out, "f32[batch,3]"));
  r = tool("dot " + f.p("mlp.om") + " --after-passes --mode exact");
  CHECK(r.code == 0);
  CHECK(contains(r.out, "digraph"));
  r = tool("dot " + f.p("mlp.om") + " --svg --out " + f.p("g.svg"));
  if (std::system("command -v dot >/dev/null 2>&1") == 0) {
    CHECK(r.code == 0);
    CHECK(fs::exists(f.dir / "g.svg"));
  } else {
    CHECK(r.code == 1);
    CHECK(contains(r.out, "apt-get install graphviz"));
  }
}

TEST_CASE("onemodel: errors name the file and the fix") {
  Fixture f;
  Run r = tool("info " + f.p("missing.om"));
  CHECK(r.code == 1);
  CHECK(contains(r.out, "missing.om"));
  r = tool("info " + f.p("x.npy"));
  CHECK(r.code == 1);
  CHECK(contains(r.out, "*.om"));
  r = tool("run " + f.p("mlp.om"));
  CHECK(r.code == 2);
  CHECK(contains(r.out, "input 'features' was not given; the model's inputs are: features f32[batch,4]"));
  r = tool("run " + f.p("mlp.om") + " --input wrong=" + f.p("x.npy"));
  CHECK(r.code == 2);
  CHECK(contains(r.out, "the model has no input 'wrong'; its inputs are: features f32[batch,4]"));
  r = tool("bench " + f.p("mlp.om") + " --shape features=2,5");
  CHECK(r.code == 1);
  CHECK(contains(r.out, "features"));
  r = tool("convert " + f.p("mlp.om") + " " + f.p("out.txt"));
  CHECK(r.code == 2);
}

TEST_CASE("onemodel quantize: calibration folders, options, the files it writes") {
  Fixture f;
  // Two batch layouts: one folder per batch with <input>.npy, or one file per batch.
  om::Generator gen(8);
  om::quant::CalibrationSet batches;
  for (int b = 0; b < 3; ++b) {
    const om::Tensor t = om::randn({6, 4}, gen);
    batches.push_back({{"features", t}});
    fs::create_directories(f.dir / "calib" / ("b" + std::to_string(b)));
    om::save_npy((f.dir / "calib" / ("b" + std::to_string(b)) / "features.npy").string(), t);
    fs::create_directories(f.dir / "flat");
    om::save_npy((f.dir / "flat" / ("b" + std::to_string(b) + ".npy")).string(), t);
  }
  const om::graph::Graph want = om::quant::quantize_static(om::Model::load((f.dir / "mlp.om").string()).graph(), batches);
  const std::vector<float> want_y = om::Session(want).run({{"features", f.x}})[0].to_vector<float>();

  Run r = tool("quantize " + f.p("mlp.om") + " --calibration " + f.p("calib") + " " + f.p("q.om"));
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(contains(r.out, "calibrated on 3 batches; 2 quantized MatMul"));
  CHECK(contains(r.out, "2 int8 weights, 3 activation Q/DQ pairs (u8, per-channel weights)"));  // the input, each output after its bias and Relu
  CHECK(contains(r.out, "wrote "));
  CHECK(om::Session::load((f.dir / "q.om").string()).run({{"features", f.x}})[0].to_vector<float>() == want_y);

  r = tool("quantize " + f.p("mlp.onnx") + " --calibration " + f.p("flat") + " " + f.p("q.onnx"));
  CHECK(r.code == 0);
  CHECK(om::Session::from_onnx_file((f.dir / "q.onnx").string()).run({{"features", f.x}})[0].to_vector<float>() == want_y);

  r = tool("quantize " + f.p("mlp.om") + " --calibration " + f.p("calib") + " " + f.p("q8.om") +
           " --s8 --per-tensor --percentile 99.9 --keep MatMul_0 --inputs-only --threads 1");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(contains(r.out, "1 float MatMul, 1 quantized MatMul"));
  CHECK(contains(r.out, "1 int8 weights, 1 activation Q/DQ pairs (s8, per-tensor weights)"));
  r = tool("quantize " + f.p("mlp.om") + " --calibration " + f.p("calib") + " " + f.p("none.om") + " --keep-op MatMul");
  CHECK(r.code == 0);
  CHECK(contains(r.out, "2 float MatMul"));

  // Mistakes: usage (exit 2) or errors naming the option or file (exit 1).
  r = tool("quantize " + f.p("mlp.om") + " " + f.p("q.om"));
  CHECK(r.code == 2);
  CHECK(contains(r.out, "--calibration DIR is required"));
  r = tool("quantize " + f.p("mlp.om") + " --calibration " + f.p("calib") + " " + f.p("q.txt"));
  CHECK(r.code == 2);
  r = tool("quantize " + f.p("mlp.om") + " --calibration " + f.p("calib") + " " + f.p("q.om") + " --percentile high");
  CHECK(r.code == 2);
  CHECK(contains(r.out, "--percentile takes a number"));
  r = tool("quantize " + f.p("mlp.om") + " --calibration " + f.p("calib") + " " + f.p("q.om") + " --percentile 20");
  CHECK(r.code == 1);
  CHECK(contains(r.out, "QuantOptions::percentile is 20"));
  r = tool("quantize " + f.p("mlp.om") + " --calibration " + f.p("missing") + " " + f.p("q.om"));
  CHECK(r.code == 1);
  CHECK(contains(r.out, "is not a directory"));
  fs::create_directories(f.dir / "empty");
  r = tool("quantize " + f.p("mlp.om") + " --calibration " + f.p("empty") + " " + f.p("q.om"));
  CHECK(r.code == 1);
  CHECK(contains(r.out, "holds no batches"));
  fs::create_directories(f.dir / "wrong" / "b0");
  om::save_npy((f.dir / "wrong" / "b0" / "pixels.npy").string(), f.x);
  r = tool("quantize " + f.p("mlp.om") + " --calibration " + f.p("wrong") + " " + f.p("q.om"));
  CHECK(r.code == 1);
  CHECK(contains(r.out, "no input named 'pixels'"));
  r = tool("quantize " + f.p("mlp.om") + " --calibration " + f.p("calib") + " " + f.p("q.om") + " --keep nothing");
  CHECK(r.code == 1);
  CHECK(contains(r.out, "'nothing'"));
}

namespace {

// y = x + Relu(c), c a constant of n floats (the passes fold Relu(c): n * 4 bytes), with the
// output named `out`; saved as ONNX.
void write_folding_model(const std::string& path, int64_t n, const std::string& out) {
  using namespace om::graph;
  Graph g;
  g.inputs = {ValueInfo{"x", om::DType::f32, true, {Dim::fixed(n)}}};
  g.outputs = {ValueInfo{out, om::DType::f32, true, {Dim::fixed(n)}}};
  std::vector<float> c(static_cast<size_t>(n), -1.0f);
  for (size_t i = 0; i < c.size(); i += 2) c[i] = float(i);
  g.initializers.push_back(TensorData::copy_of("c", om::DType::f32, {n}, c.data(), c.size() * 4));
  Node relu;
  relu.op_type = "Relu";
  relu.inputs = {"c"};
  relu.outputs = {"rc"};
  Node add;
  add.op_type = "Add";
  add.inputs = {"x", "rc"};
  add.outputs = {out};
  g.nodes = {relu, add};
  om::onnx::write(g, path);
}

// Conv (1 -> 2 channels, 3x3 on 6x6) then LeakyRelu, saved as ONNX: the passes fold the
// activation into the convolution as a one-step chain.
void write_conv_chain_model(const std::string& path) {
  using namespace om::graph;
  Graph g;
  g.inputs = {ValueInfo{"x", om::DType::f32, true, {Dim::fixed(1), Dim::fixed(1), Dim::fixed(6), Dim::fixed(6)}}};
  g.outputs = {ValueInfo{"y", om::DType::f32, true, {Dim::fixed(1), Dim::fixed(2), Dim::fixed(4), Dim::fixed(4)}}};
  std::vector<float> w(18);
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(i % 5) - 2.0f;
  g.initializers.push_back(TensorData::copy_of("w", om::DType::f32, {2, 1, 3, 3}, w.data(), w.size() * 4));
  Node conv;
  conv.op_type = "Conv";
  conv.inputs = {"x", "w"};
  conv.outputs = {"c"};
  Node leaky;
  leaky.op_type = "LeakyRelu";
  leaky.inputs = {"c"};
  leaky.outputs = {"y"};
  leaky.attributes.push_back(Attribute::of_float("alpha", 0.1f));
  g.nodes = {conv, leaky};
  om::onnx::write(g, path);
}

}  // namespace

TEST_CASE("onemodel ops: a convolution that runs an elementwise chain needs FusedElementwise's kernel") {
  Fixture f;
  write_conv_chain_model((f.dir / "conv_chain.onnx").string());
  // Both sessions fold the LeakyRelu into the FusedConv, so no FusedElementwise node is left; the
  // chain still runs on FusedElementwise's kernel, which only that operator's record links.
  om::Session s = om::Session::from_onnx_file((f.dir / "conv_chain.onnx").string(), {om::ArithmeticMode::Fast});
  bool chained = false, separate = false;
  for (const auto& n : s.graph().nodes) {
    chained = chained || (n.op_type == "FusedConv" && n.attr("ops") != nullptr);
    separate = separate || n.op_type == "FusedElementwise";
  }
  REQUIRE(chained);
  REQUIRE(!separate);
  Run r = tool("ops " + f.p("conv_chain.onnx") + " --list");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(r.out == "Conv FusedConv FusedElementwise LeakyRelu\n");
}

TEST_CASE("onemodel run, bench, info: --max-arena, --max-folded and the other session options") {
  Fixture f;
  // The MLP at batch 5 needs an arena of some hundred bytes: 16 bytes is too few, 1M plenty.
  Run r = tool("run " + f.p("mlp.om") + " --input " + f.p("x.npy") + " --max-arena 16 --out " + f.p("o1"));
  INFO(r.out);
  CHECK(r.code == 1);
  CHECK(contains(r.out, "SessionOptions::max_arena_bytes = 16"));
  CHECK(contains(r.out, "--max-arena BYTES"));
  r = tool("run " + f.p("mlp.om") + " --input " + f.p("x.npy") + " --max-arena 1M --mode exact --out " + f.p("o1"));
  CHECK(r.code == 0);
  CHECK(om::load_npy((f.dir / "o1" / "logits.npy").string()).to_vector<float>() == f.expected.to_vector<float>());

  r = tool("bench " + f.p("mlp.om") + " --shape features=64,4 --runs 5 --max-arena=64");
  CHECK(r.code == 1);
  CHECK(contains(r.out, "SessionOptions::max_arena_bytes = 64"));
  r = tool("bench " + f.p("mlp.om") + " --shape features=64,4 --runs 5 --max-arena 1M --threads 1");
  CHECK(r.code == 0);
  CHECK(contains(r.out, "Fast mode, 1 thread,"));

  // info plans for the declared shapes (batch 1) and reports the arena against the limit.
  r = tool("info " + f.p("mlp.onnx") + " --max-arena 3K");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(contains(r.out, "plan (Fast, declared shapes): arena "));
  CHECK(contains(r.out, "limit 3072 B, --max-arena"));
  CHECK(contains(r.out, "plan (Exact, declared shapes): arena "));
  r = tool("info " + f.p("mlp.onnx") + " --max-arena 8 --mode exact");
  CHECK(r.code == 0);
  CHECK(!contains(r.out, "passes (Fast session)"));
  CHECK(contains(r.out, "plan (Exact, declared shapes): cannot plan:"));
  CHECK(contains(r.out, "SessionOptions::max_arena_bytes = 8"));

  // --max-folded bounds the constants the passes compute when the session is created.
  write_folding_model((f.dir / "fold.onnx").string(), 1024, "y");
  om::save_npy((f.dir / "x1024.npy").string(), om::zeros({1024}, om::DType::f32));
  r = tool("run " + f.p("fold.onnx") + " --input " + f.p("x1024.npy") + " --max-folded 1K --out " + f.p("o2"));
  CHECK(r.code == 1);
  CHECK(contains(r.out, "SessionOptions::max_folded_bytes = 1024"));
  CHECK(contains(r.out, "--max-folded BYTES"));
  r = tool("run " + f.p("fold.onnx") + " --input " + f.p("x1024.npy") + " --max-folded 4K --out " + f.p("o2"));
  CHECK(r.code == 0);
  const std::vector<float> y = om::load_npy((f.dir / "o2" / "y.npy").string()).to_vector<float>();
  REQUIRE(y.size() == 1024);
  CHECK(y[2] == 2.0f);
  CHECK(y[3] == 0.0f);
  r = tool("info " + f.p("fold.onnx") + " --max-folded 1K");
  CHECK(r.code == 0);
  CHECK(contains(r.out, "max_folded_bytes = 1024"));

  // Byte counts: a number with an optional K, M or G; nothing else, nothing that overflows.
  for (const char* bad : {"0", "12X", "-5", "M", "99999999999999999999", "17179869184G"}) {
    r = tool("bench " + f.p("mlp.om") + " --max-arena " + bad);
    INFO(bad, ": ", r.out);
    CHECK(r.code == 2);
    CHECK(contains(r.out, "--max-arena"));
  }
  r = tool("info " + f.p("mlp.om") + " --max-folded 1.5M");
  CHECK(r.code == 2);
  CHECK(contains(r.out, "K, M or G suffix"));
  r = tool("info " + f.p("mlp.om") + " --mode slow");
  CHECK(r.code == 2);
}

TEST_CASE("onemodel run: output file names are made safe and listed") {
  Fixture f;
  // A name with '/' would leave DIR (or fail); ':' and ' ' are not portable: percent-encoded.
  const std::string name = "head/out:0 final%";
  write_folding_model((f.dir / "named.onnx").string(), 4, name);
  om::save_npy((f.dir / "x4.npy").string(), om::from_vector<float>({1, 2, 3, 4}, {4}));
  Run r = tool("run " + f.p("named.onnx") + " --input " + f.p("x4.npy") + " --out " + f.p("o3"));
  INFO(r.out);
  REQUIRE(r.code == 0);
  const fs::path file = f.dir / "o3" / "head%2Fout%3A0%20final%25.npy";
  CHECK(fs::exists(file));
  CHECK(!fs::exists(f.dir / "o3" / "head"));
  CHECK(contains(r.out, "output head/out:0 final% f32[4] -> " + file.string()));
  CHECK(om::load_npy(file.string()).to_vector<float>() == std::vector<float>{1, 2, 5, 4});
  // Names already safe are kept as they are.
  r = tool("run " + f.p("mlp.onnx") + " --input " + f.p("x.npy") + " --out " + f.p("o4"));
  CHECK(r.code == 0);
  CHECK(contains(r.out, "-> " + (f.dir / "o4" / "logits.npy").string()));
}

TEST_CASE("onemodel ops: the header that registers a model's operators; onemodel info --arena: a shape's arena") {
  Fixture f;
  // The traced MLP is MatMul, Add, Relu, MatMul, Add; the MatMul epilogue fusion writes
  // FusedMatMul in their place, so the list has it too.
  Run r = tool("ops " + f.p("mlp.om") + " --name MLP_OPS");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(contains(r.out, "#include <onemodel/op_list.h>"));
  CHECK(contains(r.out, "#define MLP_OPS(X) X(Add) X(FusedMatMul) X(MatMul) X(Relu)\n"));
  CHECK(contains(r.out, "OM_REGISTER_OPS(MLP_OPS)"));
  // The same for the ONNX file; and one header may cover several models.
  Run onnx = tool("ops " + f.p("mlp.onnx") + " " + f.p("mlp.om") + " --name MLP_OPS");
  CHECK(onnx.code == 0);
  CHECK(contains(onnx.out, "#define MLP_OPS(X) X(Add) X(FusedMatMul) X(MatMul) X(Relu)\n"));
  r = tool("ops " + f.p("mlp.om") + " --list");
  CHECK(r.code == 0);
  CHECK(r.out == "Add FusedMatMul MatMul Relu\n");
  r = tool("ops");
  CHECK(r.code == 2);
  CHECK(contains(r.out, "expected at least one MODEL"));

  // --arena: the plan for that batch, which needs more than the declared shape's (batch 1).
  r = tool("info " + f.p("mlp.om") + " --arena features=64,4 --mode fast");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(contains(r.out, "plan (Fast, features=[64,4]): arena "));
  Run one = tool("info " + f.p("mlp.om") + " --mode fast");
  CHECK(contains(one.out, "plan (Fast, declared shapes): arena "));
  auto arena = [](const std::string& out) {
    const size_t at = out.find("): arena ");
    return at == std::string::npos ? 0ull : std::stoull(out.substr(at + 9));
  };
  CHECK(arena(r.out) > arena(one.out));
  // What Session::try_arena_bytes_for says for the same shape.
  om::Session s(om::Session::load((f.dir / "mlp.om").string(), {om::ArithmeticMode::Fast}));
  const int64_t dims[] = {64, 4};
  om::TensorView v;
  v.name = "features";
  v.dims = dims;
  v.rank = 2;
  size_t bytes = 0;
  REQUIRE(s.try_arena_bytes_for(&v, 1, &bytes).is_ok());
  CHECK(arena(r.out) == bytes);
  r = tool("info " + f.p("mlp.om") + " --arena nosuch=1,4");
  CHECK(r.code == 2);
  CHECK(contains(r.out, "the model has no input named 'nosuch'"));
  CHECK_FALSE(contains(r.out, "operators:"));  // refused before the report
}
