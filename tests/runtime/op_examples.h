// One working example per graph registry operator (inputs, constants, attributes), shared by the
// registry walk (test_op_registry.cpp) and the hostile tests generated from each operator's
// record (test_hostile_generated.cpp). An operator added to the registry without an example
// here fails both.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "onemodel/graph/op_registry.h"
#include "runtime/runtime_helpers.h"

namespace op_examples {

using namespace rt;
using g::Attribute;
using g::TensorData;

struct Example {
  std::vector<Feed> feeds;                 // graph inputs, fed at run time
  std::vector<TensorData> consts;          // initializers
  std::vector<std::string> inputs;         // the node's inputs by name ("" = omitted)
  std::vector<Attribute> attrs;
};

inline Feed f32(const std::string& name, std::vector<int64_t> dims, uint32_t seed = 1) {
  size_t n = 1;
  for (int64_t d : dims) n *= size_t(d);
  return Feed::of(name, std::move(dims), random_floats(n, seed));
}
inline TensorData i64(const std::string& name, std::vector<int64_t> v) {
  return TensorData::from_vector(name, {int64_t(v.size())}, v);
}
inline TensorData f32_const(const std::string& name, std::vector<int64_t> dims, uint32_t seed) {
  size_t n = 1;
  for (int64_t d : dims) n *= size_t(d);
  return TensorData::from_vector(name, dims, random_floats(n, seed));
}

// An optimizer step over two tensors (R, T, X1, X2, G1, G2, then `states` pairs of state).
inline Example optimizer_example(std::vector<Attribute> attrs, int states) {
  Example e{{}, {TensorData::from_vector<float>("R", {}, {0.1f}), TensorData::from_vector<int64_t>("T", {}, {3})}, {"R", "T"}, std::move(attrs)};
  for (const char* p : {"X", "G", "V", "H"}) {
    if ((p[0] == 'V' && states < 1) || (p[0] == 'H' && states < 2)) continue;
    for (int i = 1; i <= 2; ++i) {
      const std::string name = std::string(p) + std::to_string(i);
      e.feeds.push_back(p[0] == 'H' || p[0] == 'V' ? Feed::of(name, {2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6}) : f32(name, {2, 3}, uint32_t(i * 7 + p[0])));
      e.inputs.push_back(name);
    }
  }
  return e;
}

inline Example unary() { return {{f32("x", {2, 3})}, {}, {"x"}, {}}; }
inline Example binary() { return {{f32("a", {2, 3}), f32("b", {3}, 2)}, {}, {"a", "b"}, {}}; }
inline Example reduce() { return {{f32("x", {2, 3, 4})}, {i64("axes", {1})}, {"x", "axes"}, {Attribute::of_int("keepdims", 0)}}; }
inline Example unit() { return {{Feed::of("x", {3}, std::vector<float>{-0.5f, 0, 0.75f})}, {}, {"x"}, {}}; }
inline Example bools() {
  Example e{{Feed::of("a", {2, 3}, std::vector<uint8_t>{1, 0, 1, 0, 1, 1}), Feed::of("b", {3}, std::vector<uint8_t>{1, 1, 0})},
            {}, {"a", "b"}, {}};
  for (Feed& f : e.feeds) f.dtype = om::DType::boolean;
  return e;
}
inline Example matmul() { return {{f32("a", {2, 3})}, {f32_const("w", {3, 4}, 3)}, {"a", "w"}, {}}; }

// A recurrent node (LSTM gates = 4, GRU 3, RNN 1): X [5, 2, 3], hidden 4, bias, output Y.
inline Example rnn_example(int64_t gates) {
  return {{f32("x", {5, 2, 3})},
          {f32_const("W", {1, gates * 4, 3}, 5), f32_const("R", {1, gates * 4, 4}, 6), f32_const("B", {1, 2 * gates * 4}, 7)},
          {"x", "W", "R", "B"},
          {Attribute::of_int("hidden_size", 4)}};
}

// One example per registry operator, by op type.
inline const std::map<std::string, std::function<Example()>>& examples() {
  static const std::map<std::string, std::function<Example()>> m = {
      {"Add", binary}, {"Sub", binary}, {"Mul", binary}, {"Div", binary}, {"Pow", [] {
         Example e = binary();
         e.feeds[0] = Feed::of("a", {2, 3}, std::vector<float>{0.5f, 1, 2, 3, 4, 5});
         return e;
       }},
      {"Equal", binary}, {"Less", binary}, {"Greater", binary},
      {"Where", [] {
         Example e = binary();
         e.feeds.insert(e.feeds.begin(), Feed::of("c", {3}, std::vector<uint8_t>{1, 0, 1}));
         e.feeds.front().dtype = om::DType::boolean;
         e.inputs = {"c", "a", "b"};
         return e;
       }},
      {"Neg", unary}, {"Relu", unary}, {"Sigmoid", unary}, {"Tanh", unary}, {"Erf", unary}, {"Exp", unary},
      {"Abs", unary}, {"Reciprocal", unary}, {"Identity", unary},
      {"If", [] {
         // The condition is a bool value input (one plan per value); each branch reads the
         // enclosing graph's x by name.
         Example e{{Feed::of("c", {}, std::vector<uint8_t>{1}), f32("x", {2, 3})}, {}, {"c"}, {}};
         e.feeds[0].dtype = om::DType::boolean;
         auto branch = [](const char* op, const char* out) {
           g::Graph b;
           b.name = out;
           b.nodes.push_back(node(op, {"x"}, {out}));
           g::ValueInfo v;
           v.name = out;
           b.outputs.push_back(v);
           return b;
         };
         e.attrs = {Attribute::of_graph("then_branch", branch("Neg", "t")), Attribute::of_graph("else_branch", branch("Relu", "r"))};
         return e;
       }},
      {"Loop", [] {
         // Three iterations of v += x (x read from the enclosing graph); the condition is
         // omitted and passed through.
         Example e{{f32("x", {2, 3})}, {TensorData::from_vector<int64_t>("M", {}, {3}), f32_const("v0", {2, 3}, 4)}, {"M", "", "v0"}, {}};
         g::Graph body;
         body.name = "loop_body";
         body.inputs = {value("i", om::DType::i64, {}), value("c", om::DType::boolean, {}), value("v", om::DType::f32, {2, 3})};
         body.nodes.push_back(node("Identity", {"c"}, {"c_out"}));
         body.nodes.push_back(node("Add", {"v", "x"}, {"v_out"}));
         body.outputs = {value("c_out", om::DType::boolean, {}), value("v_out", om::DType::f32, {2, 3})};
         e.attrs = {Attribute::of_graph("body", std::move(body))};
         return e;
       }},
      {"Scan", [] {
         // The running sum of x's four rows, from a constant start.
         Example e{{f32("x", {4, 3})}, {f32_const("s0", {3}, 4)}, {"s0", "x"}, {Attribute::of_int("num_scan_inputs", 1)}};
         g::Graph body;
         body.name = "scan_body";
         body.inputs = {value("s", om::DType::f32, {3}), value("row", om::DType::f32, {3})};
         body.nodes.push_back(node("Add", {"s", "row"}, {"s_out"}));
         body.outputs = {value("s_out", om::DType::f32, {3})};
         e.attrs.push_back(Attribute::of_graph("body", std::move(body)));
         return e;
       }},
      {"ReverseSequence", [] {
         Example e{{f32("x", {4, 2, 3})}, {TensorData::from_vector<int64_t>("lens", {2}, {3, 1})}, {"x", "lens"}, {}};
         return e;
       }},
      {"Sqrt", [] { return Example{{Feed::of("x", {3}, std::vector<float>{0.25f, 1, 9})}, {}, {"x"}, {}}; }},
      {"Log", [] { return Example{{Feed::of("x", {3}, std::vector<float>{0.25f, 1, 9})}, {}, {"x"}, {}}; }},
      {"Gelu", [] { Example e = unary(); e.attrs = {Attribute::of_string("approximate", "tanh")}; return e; }},
      {"LeakyRelu", [] { Example e = unary(); e.attrs = {Attribute::of_float("alpha", 0.1f)}; return e; }},
      {"Clip", [] {
         return Example{{f32("x", {2, 3})},
                        {TensorData::from_vector<float>("lo", {}, {-0.5f}), TensorData::from_vector<float>("hi", {}, {0.5f})},
                        {"x", "lo", "hi"}, {}};
       }},
      {"Slice", [] {
         return Example{{f32("x", {4, 5})}, {i64("s", {1}), i64("e", {4}), i64("ax", {1}), i64("st", {2})}, {"x", "s", "e", "ax", "st"}, {}};
       }},
      {"Gather", [] {
         return Example{{f32("x", {4, 3})}, {i64("idx", {3, 0, -1})}, {"x", "idx"}, {Attribute::of_int("axis", 0)}};
       }},
      {"Concat", [] { return Example{{f32("a", {2, 3}), f32("b", {1, 3}, 2)}, {}, {"a", "b"}, {Attribute::of_int("axis", 0)}}; }},
      {"Cast", [] { Example e = unary(); e.attrs = {Attribute::of_int("to", int64_t(om::DType::i32))}; return e; }},
      {"MatMul", matmul},
      {"Gemm", [] {
         Example e = matmul();
         e.consts.push_back(f32_const("c", {4}, 4));
         e.inputs.push_back("c");
         e.attrs = {Attribute::of_float("alpha", 0.5f), Attribute::of_float("beta", 2.0f)};
         return e;
       }},
      {"FusedMatMul", [] {
         Example e = matmul();
         e.consts.push_back(f32_const("bias", {4}, 4));
         e.inputs.push_back("bias");
         e.attrs = {Attribute::of_string("activation", "Relu")};
         return e;
       }},
      {"ReduceSum", reduce}, {"ReduceMean", reduce}, {"ReduceMax", reduce},
      {"Softmax", [] { Example e = unary(); e.attrs = {Attribute::of_int("axis", 0)}; return e; }},
      {"LogSoftmax", [] { Example e = unary(); e.attrs = {Attribute::of_int("axis", -1)}; return e; }},
      {"Reshape", [] { return Example{{f32("x", {2, 3})}, {i64("shape", {3, -1})}, {"x", "shape"}, {}}; }},
      {"Flatten", [] { return Example{{f32("x", {2, 3, 4})}, {}, {"x"}, {Attribute::of_int("axis", 2)}}; }},
      {"Squeeze", [] { return Example{{f32("x", {2, 1, 3})}, {i64("axes", {1})}, {"x", "axes"}, {}}; }},
      {"Unsqueeze", [] { return Example{{f32("x", {2, 3})}, {i64("axes", {0, 3})}, {"x", "axes"}, {}}; }},
      {"Shape", [] { return Example{{f32("x", {2, 3, 4})}, {}, {"x"}, {Attribute::of_int("start", 1)}}; }},
      {"Constant", [] {
         return Example{{}, {}, {}, {Attribute::of_tensor("value", TensorData::from_vector<float>("", {2}, {1.5f, -2.0f}))}};
       }},
      {"Expand", [] { return Example{{f32("x", {3, 1})}, {i64("shape", {2, 3, 4})}, {"x", "shape"}, {}}; }},
      {"Transpose", [] { return Example{{f32("x", {2, 3, 4})}, {}, {"x"}, {Attribute::of_ints("perm", {2, 0, 1})}}; }},
      {"LSTM", [] { return rnn_example(4); }},
      {"GRU", [] { Example e = rnn_example(3); e.attrs.push_back(Attribute::of_int("linear_before_reset", 1)); return e; }},
      {"RNN", [] { return rnn_example(1); }},
      // appended: training (graph/ops/select.cpp)
      {"Max", binary}, {"Min", binary},
      {"ArgMax", [] { Example e = unary(); e.attrs = {Attribute::of_int("axis", 1), Attribute::of_int("keepdims", 0)}; return e; }},
      {"ArgMin", [] { Example e = unary(); e.attrs = {Attribute::of_int("axis", 0)}; return e; }},
      {"TopK", [] { return Example{{f32("x", {2, 5})}, {i64("k", {3})}, {"x", "k"}, {Attribute::of_int("axis", -1)}}; }},
      {"LayerNormalization", [] {
         return Example{{f32("x", {2, 3, 4})}, {f32_const("scale", {4}, 5), f32_const("bias", {4}, 6)}, {"x", "scale", "bias"},
                        {Attribute::of_int("axis", -1), Attribute::of_float("epsilon", 1e-5f)}};
       }},
      {"Range", [] {
         return Example{{}, {TensorData::from_vector<float>("s", {}, {1.0f}), TensorData::from_vector<float>("l", {}, {4.0f}),
                             TensorData::from_vector<float>("d", {}, {0.5f})}, {"s", "l", "d"}, {}};
       }},
      {"Attention", [] {
         return Example{{f32("q", {2, 3, 5, 4}), f32("k", {2, 3, 6, 4}, 2), f32("v", {2, 3, 6, 3}, 3), f32("m", {5, 6}, 4)}, {},
                        {"q", "k", "v", "m"}, {Attribute::of_float("scale", 0.5f)}};
       }},
      {"Conv", [] {
         return Example{{f32("x", {1, 2, 5, 5})}, {f32_const("w", {3, 2, 3, 3}, 3), f32_const("b", {3}, 4)}, {"x", "w", "b"},
                        {Attribute::of_ints("pads", {1, 1, 1, 1})}};
       }},
      {"ConvTranspose", [] {
         return Example{{f32("x", {1, 2, 3, 3})}, {f32_const("w", {2, 3, 3, 3}, 3)}, {"x", "w"}, {Attribute::of_ints("strides", {2, 2})}};
       }},
      {"MaxPool", [] {
         return Example{{f32("x", {1, 2, 5, 5})}, {}, {"x"}, {Attribute::of_ints("kernel_shape", {2, 2}), Attribute::of_ints("strides", {2, 2})}};
       }},
      {"AveragePool", [] {
         return Example{{f32("x", {1, 2, 5, 5})}, {}, {"x"},
                        {Attribute::of_ints("kernel_shape", {3, 3}), Attribute::of_ints("pads", {1, 1, 1, 1}), Attribute::of_int("count_include_pad", 1)}};
       }},
      {"GlobalAveragePool", [] { return Example{{f32("x", {2, 3, 4, 4})}, {}, {"x"}, {}}; }},
      {"GlobalMaxPool", [] { return Example{{f32("x", {2, 3, 4, 4})}, {}, {"x"}, {}}; }},
      {"BatchNormalization", [] {
         return Example{{f32("x", {2, 3, 4})},
                        {f32_const("s", {3}, 3), f32_const("b", {3}, 4), f32_const("m", {3}, 5),
                         TensorData::from_vector<float>("v", {3}, {0.5f, 1.0f, 2.0f})},
                        {"x", "s", "b", "m", "v"}, {}};
       }},
      {"Resize", [] {
         return Example{{f32("x", {1, 2, 3, 4})}, {TensorData::from_vector<float>("scales", {4}, {1, 1, 2, 2})}, {"x", "", "scales"},
                        {Attribute::of_string("mode", "linear")}};
       }},
      {"Pad", [] {
         return Example{{f32("x", {2, 3})}, {i64("pads", {1, 0, 1, 2})}, {"x", "pads"}, {Attribute::of_string("mode", "reflect")}};
       }},
      {"FusedElementwise", [] {  // Add(x, 0.5), then Relu
         return Example{{f32("x", {2, 3})}, {}, {"x"},
                        {Attribute::of_ints("ops", {0, 4}), Attribute::of_ints("operands", {0, -1, 1, -2}),
                         Attribute::of_floats("consts", {0.5f, 0.0f, 0.0f, 0.0f})}};
       }},
      {"FusedConv", [] {
         return Example{{f32("x", {1, 2, 5, 5})}, {f32_const("w", {4, 2, 3, 3}, 3), f32_const("b", {4}, 4)}, {"x", "w", "b"},
                        {Attribute::of_ints("pads", {1, 1, 1, 1}), Attribute::of_string("activation", "Relu")}};
       }},
      {"ReduceMin", reduce}, {"ReduceProd", reduce}, {"ReduceL1", reduce}, {"ReduceL2", reduce},
      {"ReduceSumSquare", reduce}, {"ReduceLogSumExp", reduce},
      {"ReduceLogSum", [] { Example e = reduce(); e.feeds[0] = Feed::of("x", {2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6}); return e; }},
      {"And", bools}, {"Or", bools}, {"Xor", bools},
      {"Not", [] { Example e = bools(); e.feeds.resize(1); e.inputs = {"a"}; return e; }},
      {"Mod", [] { Example e = binary(); e.attrs = {Attribute::of_int("fmod", 1)}; return e; }},
      {"Sign", unary}, {"Floor", unary}, {"Ceil", unary}, {"Round", unary}, {"Cos", unary}, {"Sin", unary},
      {"PRelu", binary}, {"Elu", unary}, {"Selu", unary}, {"Softplus", unary}, {"Softsign", unary},
      {"HardSigmoid", unary}, {"HardSwish", unary}, {"Sum", binary}, {"Mean", binary},
      {"Size", unary},
      {"Trilu", [] { return Example{{f32("x", {2, 3, 4})}, {TensorData::from_vector<int64_t>("k", {}, {1})}, {"x", "k"}, {}}; }},
      {"Split", [] { return Example{{f32("x", {2, 5})}, {i64("split", {5})}, {"x", "split"}, {Attribute::of_int("axis", 1)}}; }},
      {"Tile", [] { return Example{{f32("x", {2, 3})}, {i64("reps", {2, 1})}, {"x", "reps"}, {}}; }},
      {"DepthToSpace", [] {
         return Example{{f32("x", {1, 8, 2, 3})}, {}, {"x"}, {Attribute::of_int("blocksize", 2), Attribute::of_string("mode", "CRD")}};
       }},
      {"SpaceToDepth", [] { return Example{{f32("x", {1, 2, 4, 6})}, {}, {"x"}, {Attribute::of_int("blocksize", 2)}}; }},
      {"Dropout", unary},
      {"GatherElements", [] {
         return Example{{f32("x", {3, 2})}, {TensorData::from_vector<int64_t>("idx", {2, 2}, {0, 2, -1, 1})}, {"x", "idx"},
                        {Attribute::of_int("axis", 0)}};
       }},
      {"ScatterElements", [] {
         return Example{{f32("x", {3, 2})},
                        {TensorData::from_vector<int64_t>("idx", {1, 2}, {2, 0}), f32_const("u", {1, 2}, 5)},
                        {"x", "idx", "u"}, {Attribute::of_int("axis", 0), Attribute::of_string("reduction", "add")}};
       }},
      {"Scatter", [] {
         return Example{{f32("x", {3, 2})},
                        {TensorData::from_vector<int64_t>("idx", {1, 2}, {2, 0}), f32_const("u", {1, 2}, 5)},
                        {"x", "idx", "u"}, {Attribute::of_int("axis", 0)}};
       }},
      {"Hardmax", [] { Example e = unary(); e.attrs = {Attribute::of_int("axis", 0)}; return e; }},
      {"CumSum", [] {
         return Example{{f32("x", {2, 3})}, {TensorData::from_vector<int64_t>("axis", {}, {1})}, {"x", "axis"},
                        {Attribute::of_int("reverse", 1)}};
       }},
      {"InstanceNormalization", [] {
         return Example{{f32("x", {2, 3, 4})}, {f32_const("scale", {3}, 5), f32_const("bias", {3}, 6)}, {"x", "scale", "bias"}, {}};
       }},
      {"Einsum", [] {
         return Example{{f32("a", {2, 3}), f32("b", {3, 4}, 2)}, {}, {"a", "b"}, {Attribute::of_string("equation", "ij,jk->ik")}};
       }},
      {"Acos", unit}, {"Asin", unit}, {"Atan", unary}, {"Acosh", [] {
         return Example{{Feed::of("x", {3}, std::vector<float>{1, 2, 9})}, {}, {"x"}, {}};
       }},
      {"Asinh", unary}, {"Atanh", unit}, {"Tan", unary}, {"Sinh", unary}, {"Cosh", unary},
      {"GreaterOrEqual", binary}, {"LessOrEqual", binary}, {"IsNaN", unary}, {"IsInf", unary},
      {"ThresholdedRelu", unary}, {"Shrink", unary}, {"Celu", unary},
      {"GatherND", [] { return Example{{f32("x", {2, 3})}, {TensorData::from_vector<int64_t>("i", {2, 1}, {1, 0})}, {"x", "i"}, {}}; }},
      {"ScatterND", [] {
         return Example{{f32("x", {2, 3})}, {TensorData::from_vector<int64_t>("i", {1, 1}, {1}), f32_const("u", {1, 3}, 4)}, {"x", "i", "u"}, {}};
       }},
      {"OneHot", [] {
         return Example{{}, {TensorData::from_vector<int64_t>("i", {3}, {0, 2, -1}), TensorData::from_vector<int64_t>("d", {}, {4}),
                             TensorData::from_vector<float>("v", {2}, {0, 1})}, {"i", "d", "v"}, {}};
       }},
      {"EyeLike", [] { Example e = unary(); e.attrs = {Attribute::of_int("k", 1)}; return e; }},
      {"Compress", [] {
         TensorData c = TensorData::from_vector<uint8_t>("c", {3}, {1, 0, 1});
         c.dtype = om::DType::boolean;
         return Example{{f32("x", {2, 3})}, {c}, {"x", "c"}, {Attribute::of_int("axis", 1)}};
       }},
      {"NonZero", unary},
      {"CastLike", [] { return Example{{f32("x", {2, 3})}, {i64("like", {1})}, {"x", "like"}, {}}; }},
      {"LRN", [] { return Example{{f32("x", {1, 4, 2, 2})}, {}, {"x"}, {Attribute::of_int("size", 3)}}; }},
      {"MeanVarianceNormalization", [] { return Example{{f32("x", {2, 3, 2, 2})}, {}, {"x"}, {}}; }},
      {"Det", [] { return Example{{f32("x", {2, 3, 3})}, {}, {"x"}, {}}; }},
      {"TfIdfVectorizer", [] {
         return Example{{Feed::of("x", {2, 6}, std::vector<int32_t>{1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8})}, {}, {"x"},
                        {Attribute::of_int("min_gram_length", 1), Attribute::of_int("max_gram_length", 2), Attribute::of_int("max_skip_count", 1),
                         Attribute::of_string("mode", "TFIDF"), Attribute::of_ints("ngram_counts", {0, 4}),
                         Attribute::of_ints("ngram_indexes", {0, 1, 2, 3, 4, 5, 6}), Attribute::of_ints("pool_int64s", {2, 3, 5, 4, 5, 6, 7, 8, 6, 7}),
                         Attribute::of_floats("weights", {1, 2, 3, 4, 0.5f, 0.25f, 2})}};
       }},
      {"Unique", [] { return Example{{Feed::of("x", {5}, std::vector<float>{2, 1, 2, 3, 1})}, {}, {"x"}, {}}; }},
      {"BitShift", [] {
         return Example{{Feed::of("a", {3}, std::vector<uint8_t>{1, 2, 255}), Feed::of("b", {3}, std::vector<uint8_t>{1, 7, 9})}, {},
                        {"a", "b"}, {Attribute::of_string("direction", "LEFT")}};
       }},
      {"GridSample", [] { return Example{{f32("x", {1, 2, 3, 4}), f32("grid", {1, 2, 2, 2}, 2)}, {}, {"x", "grid"}, {}}; }},
      {"RoiAlign", [] {
         return Example{{f32("x", {1, 2, 5, 5})},
                        {TensorData::from_vector("rois", {2, 4}, std::vector<float>{0, 0, 3, 3, 1, 1, 4, 2}), i64("idx", {0, 0})},
                        {"x", "rois", "idx"}, {Attribute::of_int("output_height", 2), Attribute::of_int("output_width", 2)}};
       }},
      {"NonMaxSuppression", [] {
         return Example{{Feed::of("boxes", {1, 3, 4}, std::vector<float>{0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 2, 1, 3}),
                         Feed::of("scores", {1, 1, 3}, std::vector<float>{0.9f, 0.8f, 0.7f})},
                        {i64("max", {2}), TensorData::from_vector("iou", {1}, std::vector<float>{0.5f})},
                        {"boxes", "scores", "max", "iou"}, {}};
       }},
      {"MaxUnpool", [] {
         return Example{{f32("x", {1, 1, 2, 2})}, {TensorData::from_vector<int64_t>("i", {1, 1, 2, 2}, {5, 7, 13, 15})}, {"x", "i"},
                        {Attribute::of_ints("kernel_shape", {2, 2}), Attribute::of_ints("strides", {2, 2})}};
       }},
      {"ConstantOfShape", [] {
         return Example{{}, {i64("shape", {2, 3})}, {"shape"},
                        {Attribute::of_tensor("value", TensorData::from_vector<int32_t>("v", {1}, {7}))}};
       }},
      // appended: quantization and signal windows (graph/ops/quant.cpp, graph/ops/signal.cpp)
      {"QuantizeLinear", [] {
         return Example{{f32("x", {2, 3})}, {f32_const("s", {3}, 3), TensorData::from_vector<int8_t>("z", {3}, {-3, 0, 5})},
                        {"x", "s", "z"}, {Attribute::of_int("axis", 1)}};
       }},
      {"DequantizeLinear", [] {
         return Example{{Feed::of("x", {2, 3}, std::vector<uint8_t>{0, 7, 128, 200, 255, 3})},
                        {TensorData::from_vector<float>("s", {}, {0.25f}), TensorData::from_vector<uint8_t>("z", {}, {128})},
                        {"x", "s", "z"}, {}};
       }},
      {"DynamicQuantizeLinear", unary},
      {"MatMulInteger", [] {
         return Example{{Feed::of("a", {2, 3}, std::vector<uint8_t>{1, 2, 3, 250, 251, 252})},
                        {TensorData::from_vector<int8_t>("b", {3, 2}, {-1, 2, -3, 4, -128, 127}),
                         TensorData::from_vector<uint8_t>("za", {2}, {1, 250})},
                        {"a", "b", "za"}, {}};
       }},
      {"QLinearMatMul", [] {
         return Example{{Feed::of("a", {2, 3}, std::vector<uint8_t>{1, 2, 3, 250, 251, 252})},
                        {TensorData::from_vector<float>("sa", {}, {0.5f}), TensorData::from_vector<uint8_t>("za", {}, {128}),
                         TensorData::from_vector<int8_t>("b", {3, 2}, {-1, 2, -3, 4, -128, 127}),
                         TensorData::from_vector<float>("sb", {2}, {0.25f, 0.125f}), TensorData::from_vector<int8_t>("zb", {2}, {0, 1}),
                         TensorData::from_vector<float>("sy", {}, {4.0f}), TensorData::from_vector<int8_t>("zy", {}, {-2})},
                        {"a", "sa", "za", "b", "sb", "zb", "sy", "zy"}, {}};
       }},
      {"QLinearMatMulBias", [] {
         return Example{{Feed::of("a", {2, 3}, std::vector<uint8_t>{1, 2, 3, 250, 251, 252})},
                        {TensorData::from_vector<float>("sa", {}, {0.5f}), TensorData::from_vector<uint8_t>("za", {}, {128}),
                         TensorData::from_vector<int8_t>("b", {3, 2}, {-1, 2, -3, 4, -128, 127}),
                         TensorData::from_vector<float>("sb", {2}, {0.25f, 0.125f}), TensorData::from_vector<int8_t>("zb", {2}, {0, 1}),
                         TensorData::from_vector<float>("sy", {}, {4.0f}), TensorData::from_vector<int8_t>("zy", {}, {-2}),
                         TensorData::from_vector<int32_t>("bias", {2}, {-40, 300})},
                        {"a", "sa", "za", "b", "sb", "zb", "sy", "zy", "bias"}, {}};
       }},
      {"MatMulIntegerScaled", [] {
         return Example{{Feed::of("a", {2, 3}, std::vector<uint8_t>{1, 2, 3, 250, 251, 252})},
                        {TensorData::from_vector<int8_t>("b", {3, 2}, {-1, 2, -3, 4, -128, 127}),
                         TensorData::from_vector<uint8_t>("za", {}, {128}), TensorData::from_vector<int8_t>("zb", {}, {0}),
                         TensorData::from_vector<float>("s", {}, {0.01f}), TensorData::from_vector<float>("bias", {2}, {-0.5f, 2.0f})},
                        {"a", "b", "za", "zb", "s", "bias"}, {Attribute::of_int("relu", 1)}};
       }},
      {"ConvIntegerScaled", [] {
         std::vector<uint8_t> x(50), w(54);
         for (size_t i = 0; i < x.size(); ++i) x[i] = uint8_t(i * 37);
         for (size_t i = 0; i < w.size(); ++i) w[i] = uint8_t(i * 11);
         return Example{{Feed::of("x", {1, 2, 5, 5}, x)},
                        {TensorData::from_vector("w", {3, 2, 3, 3}, w), TensorData::from_vector<uint8_t>("zx", {}, {9}),
                         TensorData::from_vector<uint8_t>("zw", {3}, {1, 2, 3}), TensorData::from_vector<float>("s", {}, {1e-3f}),
                         TensorData::from_vector<float>("bias", {3}, {0.25f, -0.5f, 1.0f})},
                        {"x", "w", "zx", "zw", "s", "bias"}, {Attribute::of_ints("pads", {1, 1, 1, 1}), Attribute::of_int("relu", 1)}};
       }},
      {"ConvInteger", [] {
         std::vector<uint8_t> x(50), w(54);
         for (size_t i = 0; i < x.size(); ++i) x[i] = uint8_t(i * 37);
         for (size_t i = 0; i < w.size(); ++i) w[i] = uint8_t(i * 11);
         return Example{{Feed::of("x", {1, 2, 5, 5}, x)},
                        {TensorData::from_vector("w", {3, 2, 3, 3}, w), TensorData::from_vector<uint8_t>("zx", {}, {9}),
                         TensorData::from_vector<uint8_t>("zw", {3}, {1, 2, 3})},
                        {"x", "w", "zx", "zw"}, {Attribute::of_ints("pads", {1, 1, 1, 1})}};
       }},
      {"QLinearConv", [] {
         std::vector<uint8_t> x(50);
         std::vector<int8_t> w(54);
         for (size_t i = 0; i < x.size(); ++i) x[i] = uint8_t(i * 37);
         for (size_t i = 0; i < w.size(); ++i) w[i] = int8_t(i * 11);
         return Example{{Feed::of("x", {1, 2, 5, 5}, x)},
                        {TensorData::from_vector<float>("sx", {}, {0.1f}), TensorData::from_vector<uint8_t>("zx", {}, {9}),
                         TensorData::from_vector("w", {3, 2, 3, 3}, w), TensorData::from_vector<float>("sw", {3}, {0.5f, 0.25f, 1.0f}),
                         TensorData::from_vector<int8_t>("zw", {3}, {0, 0, 0}), TensorData::from_vector<float>("sy", {}, {8.0f}),
                         TensorData::from_vector<uint8_t>("zy", {}, {100}), TensorData::from_vector<int32_t>("bias", {3}, {-50, 0, 70})},
                        {"x", "sx", "zx", "w", "sw", "zw", "sy", "zy", "bias"}, {Attribute::of_ints("strides", {2, 2})}};
       }},
      {"HannWindow", [] { return Example{{}, {TensorData::from_vector<int32_t>("n", {}, {8})}, {"n"}, {}}; }},
      {"HammingWindow", [] {
         return Example{{}, {TensorData::from_vector<int64_t>("n", {}, {8})}, {"n"}, {Attribute::of_int("periodic", 0)}};
       }},
      {"BlackmanWindow", [] { return Example{{}, {TensorData::from_vector<int32_t>("n", {}, {8})}, {"n"}, {}}; }},
      {"MelWeightMatrix", [] {
         return Example{{},
                        {TensorData::from_vector<int64_t>("bins", {}, {4}), TensorData::from_vector<int64_t>("dft", {}, {16}),
                         TensorData::from_vector<int64_t>("rate", {}, {8000}), TensorData::from_vector<float>("lo", {}, {0.0f}),
                         TensorData::from_vector<float>("hi", {}, {4000.0f})},
                        {"bins", "dft", "rate", "lo", "hi"}, {}};
       }},
      {"DFT", [] {
         return Example{{f32("x", {2, 5, 3, 1})}, {TensorData::from_vector<int64_t>("n", {}, {6})}, {"x", "n"},
                        {Attribute::of_int("axis", 1), Attribute::of_int("onesided", 1)}};
       }},
      {"STFT", [] {
         return Example{{f32("x", {2, 20, 2})}, {TensorData::from_vector<int64_t>("step", {}, {3}), f32_const("w", {8}, 4)},
                        {"x", "step", "w"}, {Attribute::of_int("onesided", 0)}};
       }},
      {"NegativeLogLikelihoodLoss", [] {
         return Example{{f32("x", {3, 4, 2})}, {TensorData::from_vector<int64_t>("t", {3, 2}, {0, 3, 1, -1, 2, 2}), f32_const("w", {4}, 5)},
                        {"x", "t", "w"}, {Attribute::of_int("ignore_index", -1)}};
       }},
      {"SoftmaxCrossEntropyLoss", [] {
         return Example{{f32("x", {3, 4})}, {TensorData::from_vector<int64_t>("t", {3}, {0, 3, 1})}, {"x", "t"},
                        {Attribute::of_string("reduction", "sum")}};
       }},
      {"Upsample", [] {
         return Example{{f32("x", {1, 2, 2, 3})}, {TensorData::from_vector<float>("scales", {4}, {1, 1, 2, 1.5f})}, {"x", "scales"}, {}};
       }},
      {"Adagrad", [] { return optimizer_example({Attribute::of_float("decay_factor", 0.1f)}, 1); }},
      {"Momentum", [] {
         return optimizer_example({Attribute::of_float("alpha", 0.9f), Attribute::of_float("beta", 0.1f),
                                   Attribute::of_string("mode", "nesterov"), Attribute::of_float("norm_coefficient", 0.01f)},
                                  1);
       }},
      {"Adam", [] { return optimizer_example({Attribute::of_float("alpha", 0.9f)}, 2); }},
  };
  return m;
}

inline g::Graph one_node_graph(const g::OpDef& op, const Example& e) {
  g::Graph gr;
  gr.name = std::string("one_") + op.op_type;
  for (const Feed& f : e.feeds) gr.inputs.push_back(value(f.name, f.dtype, f.dims));
  gr.initializers = e.consts;
  g::Node n = node(op.op_type, e.inputs, {"y"}, e.attrs);
  n.domain = op.domain;
  gr.nodes.push_back(n);
  g::ValueInfo y;
  y.name = "y";
  gr.outputs.push_back(y);
  if (!g::is_default_domain(op.domain)) gr.opsets.push_back(g::OpsetImport{op.domain, 1});
  return gr;
}

}  // namespace op_examples
