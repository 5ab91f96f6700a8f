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
  for (const char* cmd : {"info", "run", "convert", "bench", "dot", "quantize"}) {
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
  CHECK(contains(r.out, "2 int8 weights, 4 activation Q/DQ pairs (u8, per-channel weights)"));
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
