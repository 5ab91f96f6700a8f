// Work units of the elementwise, selection, reduction and normalisation kernels: each node runs
// its work in 2 to 64 consecutive sub-ranges (graph::set_work_split_for_testing) and must write
// the bits of the whole-range run, in Fast and Exact mode. The shapes put range ends inside
// broadcast runs, inside the column slices of reductions over leading axes, on strided softmax
// rows and at lengths that are not multiples of the vector width.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "onemodel/graph/op_registry.h"
#include "runtime_helpers.h"

using namespace rt;
using om::graph::Attribute;

namespace {

struct Input {
  std::string name;
  DType dtype;
  std::vector<int64_t> dims;
};

std::vector<uint8_t> random_bytes(DType dt, int64_t n, uint32_t seed) {
  const std::vector<float> f = random_floats(size_t(n), seed, -4.0f, 4.0f);
  std::vector<uint8_t> b(size_t(n) * om::dtype_size(dt));
  for (int64_t i = 0; i < n; ++i) {
    const float v = f[size_t(i)];
    switch (dt) {
      case DType::f32: std::memcpy(&b[size_t(i) * 4], &v, 4); break;
      case DType::i32: { const int32_t x = int32_t(v * 4.0f); std::memcpy(&b[size_t(i) * 4], &x, 4); break; }
      case DType::i64: { const int64_t x = int64_t(v * 4.0f); std::memcpy(&b[size_t(i) * 8], &x, 8); break; }
      case DType::u8: b[size_t(i)] = uint8_t(int(v * 8.0f + 32.0f) & 7); break;  // also BitShift amounts
      case DType::boolean: b[size_t(i)] = v > 0.0f; break;
      default: break;
    }
  }
  return b;
}

// Runs `gr` whole, then split in every part count, comparing all outputs bit for bit.
void check_splits(const g::Graph& gr, const std::vector<Input>& inputs, om::ArithmeticMode mode) {
  om::Session s(gr, {mode});
  std::vector<Feed> feeds;
  uint32_t seed = 7;
  for (const Input& in : inputs) {
    Feed f;
    f.name = in.name;
    f.dtype = in.dtype;
    f.dims = in.dims;
    int64_t n = 1;
    for (int64_t d : in.dims) n *= d;
    f.bytes = random_bytes(in.dtype, n, seed++);
    // Divisors and Mod operands: never zero.
    if (in.name == "nz")
      for (size_t i = 0; i < f.bytes.size(); i += om::dtype_size(in.dtype)) f.bytes[i] |= 1;
    feeds.push_back(std::move(f));
  }
  const std::vector<Out> whole = run(s, feeds);  // also splits in 2 and 3
  const std::vector<om::TensorView> in = views(feeds);
  for (int parts : {4, 5, 7, 64}) {
    CAPTURE(parts);
    std::vector<om::TensorView> out(whole.size());
    om::graph::set_work_split_for_testing(parts);
    const om::Status st = s.try_run(in.data(), in.size(), out.data(), out.size());
    om::graph::set_work_split_for_testing(1);
    REQUIRE(st.is_ok());
    for (size_t o = 0; o < whole.size(); ++o) {
      CAPTURE(o);
      REQUIRE(size_t(out[o].numel()) * om::dtype_size(out[o].dtype) == whole[o].bytes.size());
      CHECK(std::memcmp(out[o].data, whole[o].bytes.data(), whole[o].bytes.size()) == 0);
    }
  }
}

// One node over the given inputs (graph inputs) and i64 constants, `outs` outputs.
g::Graph graph_of(const std::string& op, const std::vector<Input>& inputs, std::vector<Attribute> attrs = {},
                  const std::vector<std::vector<int64_t>>& consts = {}, size_t outs = 1) {
  std::vector<g::ValueInfo> vals;
  for (const Input& in : inputs) vals.push_back(value(in.name, in.dtype, in.dims));
  std::vector<g::TensorData> cs;
  for (size_t i = 0; i < consts.size(); ++i)
    cs.push_back(g::TensorData::from_vector<int64_t>("c" + std::to_string(i), {int64_t(consts[i].size())}, consts[i]));
  return single_node(op, vals, std::move(attrs), std::move(cs), outs);
}

void check_both(const g::Graph& gr, const std::vector<Input>& inputs, bool exact = true) {
  check_splits(gr, inputs, om::ArithmeticMode::Fast);
  if (exact) check_splits(gr, inputs, om::ArithmeticMode::Exact);
}

}  // namespace

TEST_CASE("split work: broadcasting elementwise operators") {
  const std::vector<std::vector<int64_t>> a_shapes{{3, 1, 37}, {2, 3, 5}, {37}, {}};
  const std::vector<std::vector<int64_t>> b_shapes{{4, 1}, {3, 1}, {5, 37}, {2, 1, 5}};
  for (size_t c = 0; c < a_shapes.size(); ++c) {
    CAPTURE(c);
    const std::vector<int64_t> a = a_shapes[c], b = b_shapes[c];
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Equal", "Less", "Greater", "GreaterOrEqual", "LessOrEqual", "PRelu"}) {
      CAPTURE(op);
      if (std::string(op) == "PRelu" && c != 1) continue;  // the slope broadcasts to X only
      check_both(graph_of(op, {{"a", DType::f32, a}, {"b", DType::f32, b}}), {{"a", DType::f32, a}, {"b", DType::f32, b}});
    }
    for (DType dt : {DType::i32, DType::i64}) {
      check_both(graph_of("Div", {{"a", dt, a}, {"nz", dt, b}}), {{"a", dt, a}, {"nz", dt, b}});
      check_both(graph_of("Mod", {{"a", dt, a}, {"nz", dt, b}}), {{"a", dt, a}, {"nz", dt, b}});
      check_both(graph_of("Pow", {{"a", dt, a}, {"b", DType::f32, b}}), {{"a", dt, a}, {"b", DType::f32, b}}, false);  // Exact refuses
      check_both(graph_of("Pow", {{"a", dt, a}, {"b", dt, b}}), {{"a", dt, a}, {"b", dt, b}});
    }
    check_both(graph_of("BitShift", {{"a", DType::u8, a}, {"b", DType::u8, b}}, {Attribute::of_string("direction", "LEFT")}),
               {{"a", DType::u8, a}, {"b", DType::u8, b}});
    check_both(graph_of("And", {{"a", DType::boolean, a}, {"b", DType::boolean, b}}), {{"a", DType::boolean, a}, {"b", DType::boolean, b}});
    check_both(graph_of("Where", {{"c", DType::boolean, b}, {"a", DType::f32, a}, {"b", DType::f32, {1}}}),
               {{"c", DType::boolean, b}, {"a", DType::f32, a}, {"b", DType::f32, {1}}});
    for (const char* op : {"Sum", "Mean", "Max", "Min"})
      check_both(graph_of(op, {{"a", DType::f32, a}, {"b", DType::f32, b}, {"d", DType::f32, {1}}}),
                 {{"a", DType::f32, a}, {"b", DType::f32, b}, {"d", DType::f32, {1}}});
  }
}

TEST_CASE("split work: maps and activations") {
  const std::vector<int64_t> sh{3, 37};
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Exp", "Erf", "Abs", "Neg", "Floor", "Round", "Cos", "Sin", "Softplus",
                         "Softsign", "HardSwish", "Sign", "IsNaN", "Gelu", "Elu", "Selu", "HardSigmoid", "LeakyRelu",
                         "ThresholdedRelu", "Shrink", "Celu", "IsInf", "Clip"}) {
    CAPTURE(op);
    check_both(graph_of(op, {{"x", DType::f32, sh}}), {{"x", DType::f32, sh}});
  }
  check_both(graph_of("Gelu", {{"x", DType::f32, sh}}, {Attribute::of_string("approximate", "tanh")}), {{"x", DType::f32, sh}});
  check_both(graph_of("Not", {{"x", DType::boolean, sh}}), {{"x", DType::boolean, sh}});
  check_both(graph_of("Tan", {{"x", DType::f32, sh}}), {{"x", DType::f32, sh}}, false);
}

TEST_CASE("split work: reductions over adjacent, leading, scattered and all axes") {
  const std::vector<int64_t> sh{3, 4, 5, 6};
  const std::vector<std::vector<int64_t>> axes{{1}, {0}, {0, 1}, {2, 3}, {0, 2}, {1, 3}, {}, {-1}};
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                         "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"}) {
    CAPTURE(op);
    for (const auto& ax : axes)
      for (int keep : {0, 1}) {
        CAPTURE(ax.size());
        CAPTURE(keep);
        g::Graph gr = graph_of(op, {{"x", DType::f32, sh}}, {Attribute::of_int("keepdims", keep)}, ax.empty() ? std::vector<std::vector<int64_t>>{}
                                                                                                           : std::vector<std::vector<int64_t>>{ax});
        check_both(gr, {{"x", DType::f32, sh}});
      }
    check_both(graph_of(op, {{"x", DType::f32, sh}}, {Attribute::of_int("noop_with_empty_axes", 1)}), {{"x", DType::f32, sh}});
  }
}

TEST_CASE("split work: softmax rows, arg and top-k lines, normalisations") {
  const std::vector<int64_t> sh{3, 4, 5};
  for (const char* op : {"Softmax", "LogSoftmax"})
    for (int64_t axis : {0, 1, 2, -1}) check_both(graph_of(op, {{"x", DType::f32, sh}}, {Attribute::of_int("axis", axis)}), {{"x", DType::f32, sh}});
  for (const char* op : {"ArgMax", "ArgMin"})
    for (int64_t axis : {0, 1, 2})
      for (int last : {0, 1})
        check_both(graph_of(op, {{"x", DType::f32, sh}}, {Attribute::of_int("axis", axis), Attribute::of_int("select_last_index", last)}),
                   {{"x", DType::f32, sh}});
  for (int64_t axis : {0, 1, 2})
    for (int largest : {0, 1})
      check_both(graph_of("TopK", {{"x", DType::f32, sh}}, {Attribute::of_int("axis", axis), Attribute::of_int("largest", largest)}, {{2}}, 2),
                 {{"x", DType::f32, sh}});
  for (int64_t axis : {1, 2}) {
    const std::vector<int64_t> norm(sh.begin() + axis, sh.end());
    check_both(graph_of("LayerNormalization", {{"x", DType::f32, sh}, {"s", DType::f32, norm}, {"b", DType::f32, norm}},
                        {Attribute::of_int("axis", axis)}, {}, 3),
               {{"x", DType::f32, sh}, {"s", DType::f32, norm}, {"b", DType::f32, norm}});
  }
  const std::vector<int64_t> img{2, 5, 3, 4};
  check_both(graph_of("LRN", {{"x", DType::f32, img}}, {Attribute::of_int("size", 3)}), {{"x", DType::f32, img}});
  check_both(graph_of("MeanVarianceNormalization", {{"x", DType::f32, img}}), {{"x", DType::f32, img}});
  check_both(graph_of("MeanVarianceNormalization", {{"x", DType::f32, img}}, {Attribute::of_ints("axes", {1, 3})}), {{"x", DType::f32, img}});
}
