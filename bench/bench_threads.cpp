// Where splitting a kernel over threads starts to pay (docs/threads.md, "The threshold"): one-node
// Sessions at growing sizes, each run at 1 thread and at N threads with every work of two units
// or more split (the cost threshold off), medians of interleaved blocks. The smallest size where
// N threads win is the break-even point kernels::kMinPartCost stands for. Families: a memory-bound
// elementwise op (Relu), a row op (Softmax over rows of 256) and a product (MatMul [M,256]x[256,256]).
//
//   bench_threads [--threads N] [--seconds S]
#include <onemodel/onemodel.h>

#include "onemodel/kernels/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
namespace g = om::graph;

g::ValueInfo value(const std::string& name, std::vector<int64_t> dims) {
  g::ValueInfo v;
  v.name = name;
  v.dtype = om::DType::f32;
  v.has_shape = true;
  for (int64_t d : dims) v.shape.push_back(g::Dim::fixed(d));
  return v;
}

// One node `op` reading x [rows, cols] (and a constant [cols, cols] for MatMul), output y.
g::Graph one_node(const std::string& op, int64_t rows, int64_t cols) {
  g::Graph gr;
  gr.inputs.push_back(value("x", {rows, cols}));
  g::Node n;
  n.op_type = op;
  n.inputs = {"x"};
  n.outputs = {"y"};
  if (op == "MatMul") {
    std::vector<float> w(size_t(cols * cols));
    for (size_t i = 0; i < w.size(); ++i) w[i] = float(i % 7) * 0.01f - 0.03f;
    gr.initializers.push_back(g::TensorData::from_vector<float>("w", {cols, cols}, w));
    n.inputs.push_back("w");
  }
  gr.nodes.push_back(n);
  g::ValueInfo y;
  y.name = "y";
  gr.outputs.push_back(y);
  return gr;
}

double median_us(om::Session& s, om::TensorView& in, double seconds) {
  std::vector<double> t;
  om::TensorView out;
  const auto start = Clock::now();
  while (std::chrono::duration<double>(Clock::now() - start).count() < seconds || t.size() < 5) {
    const auto t0 = Clock::now();
    s.run(&in, 1, &out, 1);
    t.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2;
  double seconds = 0.05;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) threads = std::max(2, std::atoi(argv[++i]));
    else if (a == "--seconds" && i + 1 < argc) seconds = std::atof(argv[++i]);
    else {
      std::fprintf(stderr, "usage: bench_threads [--threads N] [--seconds S]\n");
      return 2;
    }
  }
  om::kernels::set_min_part_cost_for_testing(1);
  std::printf("1 thread against %d threads, every work split (no cost threshold); median us of interleaved blocks\n\n", threads);
  std::printf("| op | shape | cost (elements read+written or multiply-adds/8) | 1 thread us | %d threads us | speed-up |\n|---|---|---|---|---|---|\n",
              threads);
  struct Case {
    const char* op;
    int64_t cols;
  };
  for (Case c : {Case{"Relu", 256}, Case{"Softmax", 256}, Case{"MatMul", 256}}) {
    for (int64_t rows : {4, 16, 64, 256, 1024}) {
      om::SessionOptions one_opt, many_opt;
      one_opt.threads = 1;
      om::Session one(one_node(c.op, rows, c.cols), one_opt);
      many_opt.threads = threads;
      om::Session many(one_node(c.op, rows, c.cols), many_opt);
      std::vector<float> x(size_t(rows * c.cols), 0.5f);
      const int64_t dims[2] = {rows, c.cols};
      om::TensorView in;
      in.dims = dims;
      in.rank = 2;
      in.data = x.data();
      double a = 1e30, b = 1e30;
      for (int round = 0; round < 5; ++round) {
        a = std::min(a, median_us(one, in, seconds));
        b = std::min(b, median_us(many, in, seconds));
      }
      const double cost = std::string(c.op) == "MatMul" ? double(rows) * double(c.cols) * double(c.cols) / 8 : 2.0 * double(rows * c.cols);
      std::printf("| %s | %lldx%lld | %.0f | %.2f | %.2f | %.2f |\n", c.op, (long long)rows, (long long)c.cols, cost, a, b, a / b);
    }
  }
  return 0;
}
