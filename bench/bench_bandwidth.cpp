// The memory-bound operators (pools, activations, elementwise) through a Session, one thread, on
// every vector ISA this machine runs, against a memcpy moving the same bytes in the same run
// (docs/performance.md, "Memory-bound operators"). An operator that reads R bytes and writes W
// moves R + W; a memcpy of (R + W) / 2 bytes moves as many (it reads and writes each byte once).
// The figure is memcpy's median time over the operator's: 1.0 is memcpy's speed, the target is
// 0.7 or more. Rounds alternate the operator and its memcpy, so both see the same machine load.
//
//   bench_bandwidth [--seconds S] [--only TEXT]
#include <onemodel/onemodel.h>

#include "onemodel/kernels/kernels.h"
#include "bench_values.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
namespace g = om::graph;

struct Case {
  std::string name;
  std::string op;
  std::vector<g::Attribute> attrs;
  std::vector<int64_t> x;                 // the input's shape
  std::vector<std::vector<int64_t>> consts;  // further inputs, as initializers (broadcast operands)
};

std::vector<Case> cases() {
  using A = g::Attribute;
  const std::vector<int64_t> act{1, 32, 64, 64};  // 512 KiB
  std::vector<Case> c = {
      {"MaxPool 2x2 s2 [1,32,64,64]", "MaxPool", {A::of_ints("kernel_shape", {2, 2}), A::of_ints("strides", {2, 2})}, act, {}},
      {"MaxPool 3x3 s2 p1 [1,32,64,64]", "MaxPool",
       {A::of_ints("kernel_shape", {3, 3}), A::of_ints("strides", {2, 2}), A::of_ints("pads", {1, 1, 1, 1})}, act, {}},
      {"MaxPool 3x3 s1 p1 [1,32,64,64]", "MaxPool", {A::of_ints("kernel_shape", {3, 3}), A::of_ints("pads", {1, 1, 1, 1})}, act, {}},
      {"AveragePool 2x2 s2 [1,32,64,64]", "AveragePool", {A::of_ints("kernel_shape", {2, 2}), A::of_ints("strides", {2, 2})}, act, {}},
      {"AveragePool 3x3 s1 p1 [1,32,64,64]", "AveragePool", {A::of_ints("kernel_shape", {3, 3}), A::of_ints("pads", {1, 1, 1, 1})}, act, {}},
      {"GlobalAveragePool [1,256,16,16]", "GlobalAveragePool", {}, {1, 256, 16, 16}, {}},
      {"Relu", "Relu", {}, act, {}},
      {"LeakyRelu", "LeakyRelu", {A::of_float("alpha", 0.1f)}, act, {}},
      {"Sigmoid", "Sigmoid", {}, act, {}},
      {"Tanh", "Tanh", {}, act, {}},
      {"HardSwish", "HardSwish", {}, act, {}},
      {"Add (same shape)", "Add", {}, act, {act}},
      {"Mul (per channel [1,32,1,1])", "Mul", {}, act, {{1, 32, 1, 1}}},
      {"Max (same shape)", "Max", {}, act, {act}},
  };
  return c;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 0.4;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seconds" && i + 1 < argc) seconds = std::atof(argv[++i]);
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
  }
  std::printf("bench_bandwidth: operator time against a memcpy of the same bytes (memcpy median / operator median; "
              "target >= 0.70), one thread\n");
  const om::kernels::Isa original = om::kernels::active_isa();
  for (om::kernels::Isa isa : {om::kernels::Isa::Avx512, om::kernels::Isa::Avx2, om::kernels::Isa::Neon}) {
    if (!om::kernels::isa_supported(isa)) continue;
    om::kernels::force_isa(isa);
    for (const Case& c : cases()) {
      if (!only.empty() && c.name.find(only) == std::string::npos) continue;
      g::Graph gr;
      g::ValueInfo x;
      x.name = "x";
      for (int64_t d : c.x) x.shape.push_back(g::Dim::fixed(d));
      gr.inputs = {x};
      g::Node n;
      n.op_type = c.op;
      n.name = "op";
      n.inputs = {"x"};
      n.outputs = {"y"};
      n.attributes = c.attrs;
      for (size_t i = 0; i < c.consts.size(); ++i) {
        size_t count = 1;
        for (int64_t d : c.consts[i]) count *= size_t(d);
        const std::string name = "c" + std::to_string(i);
        gr.initializers.push_back(g::TensorData::from_vector(name, c.consts[i], bench::values(count, uint32_t(7 + i), 4.0f)));
        n.inputs.push_back(name);
      }
      gr.nodes = {n};
      g::ValueInfo y;
      y.name = "y";
      gr.outputs = {y};
      for (om::ArithmeticMode mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
        om::SessionOptions o;
        o.mode = mode;
        o.threads = 1;
        om::Session s(gr, o);
        size_t numel = 1;
        for (int64_t d : c.x) numel *= size_t(d);
        std::vector<float> input = bench::values(numel, 3, 4.0f);
        om::TensorView in, out;
        in.name = "x";
        in.dtype = om::DType::f32;
        in.dims = c.x.data();
        in.rank = c.x.size();
        in.data = input.data();
        s.run(&in, 1, &out, 1);  // plan and warm up
        size_t bytes = numel * 4;
        for (const auto& k : c.consts) {
          size_t m = 4;
          for (int64_t d : k) m *= size_t(d);
          bytes += m;
        }
        size_t out_numel = 1;
        for (size_t i = 0; i < out.rank; ++i) out_numel *= size_t(out.dims[i]);
        bytes += out_numel * 4;
        std::vector<char> src(bytes / 2 + 64, 1), dst(bytes / 2 + 64, 0);
        std::vector<double> op_t, copy_t;
        const auto start = Clock::now();
        while (std::chrono::duration<double>(Clock::now() - start).count() < seconds || op_t.size() < 21) {
          auto t0 = Clock::now();
          s.run(&in, 1, &out, 1);
          op_t.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
          t0 = Clock::now();
          std::memcpy(dst.data(), src.data(), bytes / 2);
          asm volatile("" : : "r"(dst.data()) : "memory");
          copy_t.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
        }
        const double op = median(op_t), copy = median(copy_t);
        std::printf("%-7s %-5s %-36s %8.1f us  memcpy %7.1f us  ratio %.2f%s\n", om::kernels::isa_name(isa),
                    mode == om::ArithmeticMode::Exact ? "Exact" : "Fast", c.name.c_str(), op, copy, copy / op,
                    copy / op >= 0.7 ? "" : "  (below 0.70)");
      }
    }
  }
  om::kernels::force_isa(original);
  return 0;
}
