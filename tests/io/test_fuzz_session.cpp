// The Session fuzz target's seeds (fuzz/corpus/session): the hostile models of the issue
// "hostile input never crashes, hangs or silently corrupts", written here from graphs (there is
// no onnx Python package on the build machines), and a replay of that corpus through the fuzz
// harness (fuzz/session_harness.h) so every seed is exercised by CTest too.
//   Regenerate: build/test_io -tc="session fuzz seeds*" --no-skip
#include <doctest/doctest.h>

#include <climits>
#include <cmath>
#include <cstdio>
#include <set>
#include <filesystem>
#include <fstream>

#include "fuzz/session_harness.h"
#include "onemodel/graph/op_registry.h"
#include "onemodel/io/onnx.h"
#include "runtime/runtime_helpers.h"

namespace g = om::graph;
using om::DType;

namespace {

using rt::node;
using rt::sym_value;
using rt::value;

g::TensorData ints(std::string name, std::vector<int64_t> v) {
  return g::TensorData::from_vector<int64_t>(std::move(name), {int64_t(v.size())}, v);
}

std::vector<std::pair<std::string, g::Graph>> seeds() {
  std::vector<std::pair<std::string, g::Graph>> out;
  auto add = [&](const char* name, g::Graph gr) { out.emplace_back(name, std::move(gr)); };
  {  // Reshape whose product wraps to the input's count.
    g::Graph gr;
    gr.inputs = {value("x", DType::f32, {4})};
    gr.initializers = {ints("s", {5, 3689348814741910324LL})};
    gr.nodes = {node("Reshape", {"x", "s"}, {"r"}), node("ReduceSum", {"r"}, {"y"})};
    gr.outputs = {value("y", DType::f32, {})};
    gr.outputs[0].has_shape = false;
    add("reshape_wrap", gr);
  }
  {  // Expand to [2^32, 2^32], and to [-3] followed by Concat.
    g::Graph gr;
    gr.inputs = {value("x", DType::f32, {1})};
    gr.initializers = {ints("big", {int64_t(1) << 32, int64_t(1) << 32}), ints("neg", {-3})};
    gr.nodes = {node("Expand", {"x", "big"}, {"e"}), node("Relu", {"e"}, {"y"})};
    gr.outputs = {sym_value("y", DType::f32, {"", ""})};
    add("expand_huge", gr);
    gr.nodes = {node("Expand", {"x", "neg"}, {"e"}), node("Concat", {"e", "x"}, {"y"}, {g::Attribute::of_int("axis", 0)})};
    gr.outputs = {sym_value("y", DType::f32, {""})};
    add("expand_negative_concat", gr);
  }
  for (int64_t n : {2, 10}) {  // Slice with extreme steps, then Concat.
    g::Graph gr;
    gr.inputs = {value("x", DType::f32, {n})};
    gr.initializers = {ints("s0", {0}), ints("e0", {n}), ints("a", {0}), ints("pmax", {INT64_MAX}), ints("s1", {-1}),
                       ints("e1", {INT64_MIN}), ints("pmin", {INT64_MIN})};
    gr.nodes = {node("Slice", {"x", "s0", "e0", "a", "pmax"}, {"p"}), node("Slice", {"x", "s1", "e1", "a", "pmin"}, {"q"}),
                node("Concat", {"p", "q", "x"}, {"y"}, {g::Attribute::of_int("axis", 0)})};
    gr.outputs = {sym_value("y", DType::f32, {""})};
    add(n == 2 ? "slice_step_extremes_2" : "slice_step_extremes_10", gr);
  }
  for (DType dt : {DType::i64, DType::i32}) {  // INT_MIN / -1, by zero, wrap-around.
    g::Graph gr;
    gr.inputs = {sym_value("b", dt, {"n"})};
    if (dt == DType::i64) gr.initializers = {ints("a", {INT64_MIN})};
    else gr.initializers = {g::TensorData::from_vector<int32_t>("a", {1}, {INT32_MIN})};
    gr.nodes = {node("Div", {"a", "b"}, {"d"}), node("Mul", {"d", "a"}, {"m"}), node("Neg", {"m"}, {"k"}), node("Add", {"k", "a"}, {"y"})};
    gr.outputs = {sym_value("y", dt, {"n"})};
    add(dt == DType::i64 ? "int64_min_div" : "int32_min_div", gr);
  }
  {  // A symbol repeated in one input and across inputs.
    g::Graph gr;
    gr.inputs = {sym_value("x", DType::f32, {"N", "N"}), sym_value("z", DType::f32, {"N"})};
    gr.nodes = {node("Add", {"x", "z"}, {"y"})};
    gr.outputs = {sym_value("y", DType::f32, {"N", "N"})};
    add("repeated_symbol", gr);
  }
  {  // A huge declared input and a constant folded to [16384, 16384].
    g::Graph gr;
    gr.inputs = {value("x", DType::f32, {int64_t(1) << 62, 4})};
    gr.nodes = {node("ReduceSum", {"x"}, {"y"})};
    gr.outputs = {value("y", DType::f32, {})};
    gr.outputs[0].has_shape = false;
    add("input_2p62", gr);
    g::Graph f;
    f.inputs = {value("x", DType::f32, {1})};
    f.initializers = {g::TensorData::from_vector<float>("one", {1}, {1.0f}), ints("s", {16384, 16384})};
    f.nodes = {node("Expand", {"one", "s"}, {"e"}), node("Add", {"e", "x"}, {"y"})};
    f.outputs = {value("y", DType::f32, {16384, 16384})};
    add("fold_expand_16384", f);
  }
  {  // An initializer-backed input, and MatMul+Add+Relu pairs (fusion) with a Transpose.
    g::Graph gr;
    gr.inputs = {sym_value("x", DType::f32, {"batch", "3"}), value("w", DType::f32, {3, 3})};
    gr.initializers = {g::TensorData::from_vector<float>("w", {3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1}),
                       g::TensorData::from_vector<float>("v", {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
                       g::TensorData::from_vector<float>("b", {3}, {1, -1, 0})};
    gr.nodes = {node("MatMul", {"x", "w"}, {"h"}), node("Add", {"h", "b"}, {"a"}), node("Relu", {"a"}, {"r"}),
                node("Transpose", {"v"}, {"vt"}, {g::Attribute::of_ints("perm", {1, 0})}), node("MatMul", {"r", "vt"}, {"m"}),
                node("Add", {"m", "b"}, {"y"})};
    gr.outputs = {sym_value("y", DType::f32, {"batch", "3"})};
    add("overridable_and_fusion", gr);
  }
  {  // A Shape -> Gather -> Concat -> Reshape chain with a negative gather index.
    g::Graph gr;
    gr.inputs = {sym_value("x", DType::f32, {"n", "4"})};
    gr.initializers = {ints("i", {-1}), ints("m1", {-1})};
    gr.nodes = {node("Shape", {"x"}, {"s"}), node("Gather", {"s", "i"}, {"last"}), node("Concat", {"m1", "last"}, {"t"}, {g::Attribute::of_int("axis", 0)}),
                node("Reshape", {"x", "t"}, {"y"})};
    gr.outputs = {sym_value("y", DType::f32, {"", ""})};
    add("shape_chain", gr);
  }
  // The operator families of the second wave: each model once crashed, hung, hit undefined
  // behaviour or disagreed with ONNX (tests/runtime/test_hostile_ops.cpp checks the results).
  auto f32s = [](std::string name, std::vector<int64_t> dims, std::vector<float> v) {
    return g::TensorData::from_vector<float>(std::move(name), std::move(dims), v);
  };
  auto one = [&](const char* name, std::vector<g::ValueInfo> inputs, std::vector<g::TensorData> consts, g::Node n) {
    g::Graph gr;
    gr.inputs = std::move(inputs);
    gr.initializers = std::move(consts);
    for (const std::string& o : n.outputs)
      if (!o.empty()) {
        gr.outputs.push_back(value(o, DType::f32, {}));
        gr.outputs.back().has_shape = false;
      }
    gr.nodes = {std::move(n)};
    add(name, gr);
  };
  const float inf = INFINITY;
  one("dynamic_quantize_inf", {}, {f32s("x", {4}, {-inf, 1, NAN, inf})}, node("DynamicQuantizeLinear", {"x"}, {"y", "s", "z"}));
  one("conv_group_overflow", {value("x", DType::f32, {1, 0, 3, 3})}, {f32s("w", {1, 2, 1, 1}, {1, 1})},
      node("Conv", {"x", "w"}, {"y"}, {g::Attribute::of_int("group", int64_t(1) << 62)}));
  one("conv_integer_group_overflow", {value("x", DType::u8, {1, 0, 3, 3})},
      {g::TensorData::from_vector<uint8_t>("w", {1, 2, 1, 1}, {1, 1})},
      node("ConvInteger", {"x", "w"}, {"y"}, {g::Attribute::of_int("group", int64_t(1) << 62)}));
  one("roi_align_empty_plane", {value("x", DType::f32, {1, 1, 0, 4})}, {f32s("rois", {1, 4}, {0, 0, 1, 1}), ints("b", {0})},
      node("RoiAlign", {"x", "rois", "b"}, {"y"}, {g::Attribute::of_int("output_height", 2), g::Attribute::of_int("output_width", 2)}));
  one("roi_align_sampling_ratio_max", {value("x", DType::f32, {1, 1, 2, 2})}, {f32s("rois", {1, 4}, {0, 0, 1, 1}), ints("b", {0})},
      node("RoiAlign", {"x", "rois", "b"}, {"y"}, {g::Attribute::of_int("sampling_ratio", INT64_MAX)}));
  for (const char* mode : {"bilinear", "nearest", "bicubic"})
    one((std::string("grid_sample_reflect_huge_") + mode).c_str(), {value("x", DType::f32, {1, 1, 2, 3})},
        {f32s("grid", {1, 1, 3, 2}, {1e30f, -1e30f, 3e38f, 1e20f, -7e25f, 0.5f})},
        node("GridSample", {"x", "grid"}, {"y"}, {g::Attribute::of_string("mode", mode), g::Attribute::of_string("padding_mode", "reflection")}));
  one("einsum_two_output_ellipses", {value("a", DType::f32, {2, 3, 4})}, {},
      node("Einsum", {"a"}, {"y"}, {g::Attribute::of_string("equation", "...i->......i")}));
  one("eye_like_k_max", {value("x", DType::f32, {3, 4})}, {}, node("EyeLike", {"x"}, {"y"}, {g::Attribute::of_int("k", INT64_MAX)}));
  one("scatter_add_i64_wrap", {}, {ints("x", {INT64_MAX, 5}), ints("i", {0, 0}), ints("u", {1, 1})},
      node("ScatterElements", {"x", "i", "u"}, {"y"}, {g::Attribute::of_string("reduction", "add")}));
  one("scatter_max_nan", {}, {f32s("x", {2}, {2, 5}), ints("i", {0, 0}), f32s("u", {2}, {NAN, 1})},
      node("ScatterElements", {"x", "i", "u"}, {"y"}, {g::Attribute::of_string("reduction", "max")}));
  one("one_hot_depth_1e30", {value("i", DType::f32, {3})}, {f32s("d", {}, {1e30f}), f32s("v", {2}, {0, 1})}, node("OneHot", {"i", "d", "v"}, {"y"}));
  one("one_hot_nan_index", {}, {f32s("i", {3}, {0, NAN, inf}), f32s("d", {}, {3}), f32s("v", {2}, {0, 1})}, node("OneHot", {"i", "d", "v"}, {"y"}));
  one("range_i64_extremes", {}, {g::TensorData::from_vector<int64_t>("s", {}, {INT64_MIN}), g::TensorData::from_vector<int64_t>("l", {}, {INT64_MAX}),
                                 g::TensorData::from_vector<int64_t>("d", {}, {int64_t(1) << 62})},
      node("Range", {"s", "l", "d"}, {"y"}));
  one("range_i32_extremes", {}, {g::TensorData::from_vector<int32_t>("s", {}, {INT32_MIN}), g::TensorData::from_vector<int32_t>("l", {}, {INT32_MAX}),
                                 g::TensorData::from_vector<int32_t>("d", {}, {int32_t(1) << 30})},
      node("Range", {"s", "l", "d"}, {"y"}));
  one("split_unnamed_output", {value("x", DType::f32, {2, 4})}, {ints("split", {1, 3})},
      node("Split", {"x", "split"}, {"", "y"}, {g::Attribute::of_int("axis", 1)}));
  one("cast_to_2p32_plus_1", {value("x", DType::f32, {2})}, {}, node("Cast", {"x"}, {"y"}, {g::Attribute::of_int("to", 4294967297LL)}));
  one("unique_nan_signed_zero", {}, {f32s("x", {7}, {NAN, 1, NAN, 1, 2, -0.0f, 0})}, node("Unique", {"x"}, {"y", "first", "inverse", "counts"}));
  one("pow_i64_exact", {}, {ints("a", {INT64_MAX, -2, -1}), ints("b", {1, 63, -INT64_MAX})}, node("Pow", {"a", "b"}, {"y"}));
  one("stft_complex_default_onesided", {value("x", DType::f32, {1, 8, 2})},
      {g::TensorData::from_vector<int64_t>("step", {}, {4}), f32s("w", {4}, {1, 1, 1, 1})}, node("STFT", {"x", "step", "w"}, {"y"}));
  // Found by the generated hostile test (tests/runtime/test_hostile_generated.cpp) under UBSan.
  one("pad_int64_min", {value("x", DType::f32, {2, 3})}, {ints("pads", {INT64_MIN, 0, 0, 0})}, node("Pad", {"x", "pads"}, {"y"}));
  // If: branches reading the enclosing graph's x by name, on a bool value input, on a condition
  // folded from shapes (branches of different shapes), and with a branch that reads a name
  // defined nowhere.
  auto branch = [](const char* op, const char* in, const char* out) {
    g::Graph b;
    b.name = out;
    b.opsets.clear();
    b.nodes.push_back(node(op, {in}, {out}));
    g::ValueInfo v;
    v.name = out;
    v.has_type = false;
    b.outputs.push_back(v);
    return b;
  };
  auto if_node = [](const char* cond, g::Graph t, g::Graph e) {
    return node("If", {cond}, {"y"}, {g::Attribute::of_graph("then_branch", std::move(t)), g::Attribute::of_graph("else_branch", std::move(e))});
  };
  one("if_bool_input", {value("c", DType::boolean, {}), value("x", DType::f32, {2, 3})}, {},
      if_node("c", branch("Neg", "x", "t"), branch("Relu", "x", "r")));
  {
    g::Graph gr;
    gr.inputs = {sym_value("x", DType::f32, {"N", "3"})};
    gr.initializers = {ints("zero", {0}), ints("two", {2})};
    gr.nodes = {node("Shape", {"x"}, {"s"}), node("Gather", {"s", "zero"}, {"n"}), node("Equal", {"n", "two"}, {"c"}),
                if_node("c", branch("Neg", "x", "t"), branch("Flatten", "x", "f"))};
    gr.outputs = {value("y", DType::f32, {})};
    gr.outputs[0].has_shape = false;
    add("if_on_shape", gr);
  }
  one("if_undefined_outer_name", {value("c", DType::boolean, {}), value("x", DType::f32, {2, 3})}, {},
      if_node("c", branch("Neg", "nowhere", "t"), branch("Relu", "x", "r")));
  // If on a condition computed at run time (both branches planned); a Loop whose trip count is a
  // graph input (a fuzzer's huge one meets SessionOptions::max_loop_iterations) with a scan
  // output; a Scan over axis 1, backwards.
  {
    g::Graph gr;
    gr.inputs = {value("x", DType::f32, {100})};
    gr.nodes = {node("ReduceMax", {"x"}, {"m"}, {g::Attribute::of_int("keepdims", 0)}), node("Greater", {"m", "m"}, {"c"}),
                if_node("c", branch("Neg", "x", "t"), branch("Relu", "x", "r"))};
    gr.outputs = {value("y", DType::f32, {100})};
    add("if_run_time_condition", gr);
  }
  {
    g::Graph body;
    body.name = "body";
    body.opsets.clear();
    body.inputs = {value("i", DType::i64, {}), value("c", DType::boolean, {}), value("v", DType::f32, {3})};
    body.nodes = {node("Identity", {"c"}, {"c_out"}), node("Add", {"v", "x"}, {"v_out"}), node("Cast", {"i"}, {"col"}, {g::Attribute::of_int("to", 1)})};
    body.outputs = {value("c_out", DType::boolean, {}), value("v_out", DType::f32, {3}), value("col", DType::f32, {})};
    g::Graph gr;
    gr.inputs = {value("M", DType::i64, {}), value("x", DType::f32, {3})};
    gr.nodes = {node("Loop", {"M", "", "x"}, {"y", "cols"}, {g::Attribute::of_graph("body", std::move(body))})};
    gr.outputs = {value("y", DType::f32, {3}), value("cols", DType::f32, {})};
    gr.outputs[1].has_shape = false;
    add("loop_trip_count_input", gr);
  }
  {
    g::Graph body;
    body.name = "body";
    body.opsets.clear();
    body.inputs = {value("s", DType::f32, {2}), value("col", DType::f32, {2})};
    body.nodes = {node("Add", {"s", "col"}, {"s_out"}), node("Identity", {"s_out"}, {"out"})};
    body.outputs = {value("s_out", DType::f32, {2}), value("out", DType::f32, {2})};
    one("scan_axis1_reverse", {value("s0", DType::f32, {2}), value("x", DType::f32, {2, 5})}, {},
        node("Scan", {"s0", "x"}, {"y", "outs"},
             {g::Attribute::of_graph("body", std::move(body)), g::Attribute::of_int("num_scan_inputs", 1), g::Attribute::of_ints("scan_input_axes", {1}),
              g::Attribute::of_ints("scan_input_directions", {1}), g::Attribute::of_ints("scan_output_axes", {1})}));
  }
  // Sequences and optionals (the lowering: docs/onnx.md, "Sequences and optionals").
  auto seq = [](std::string name, std::vector<int64_t> dims) {
    g::ValueInfo v = value(std::move(name), DType::f32, std::move(dims));
    v.kind = g::ValueKind::Sequence;
    return v;
  };
  {  // A position from an integer input (the harness feeds -1..2) into a fed sequence.
    g::Graph gr;
    gr.inputs = {seq("s", {2}), value("p", DType::i64, {})};
    gr.nodes = {node("SequenceAt", {"s", "p"}, {"y"})};
    gr.outputs = {value("y", DType::f32, {2})};
    add("seq_at_input_position", gr);
  }
  {  // Erase at INT64_MIN; concatenate an empty sequence; the element of an empty optional.
    g::Graph gr;
    gr.inputs = {value("x", DType::f32, {4})};
    gr.initializers = {ints("split", {1, 3}), g::TensorData::from_vector<int64_t>("pmin", {}, {INT64_MIN})};
    gr.nodes = {node("SplitToSequence", {"x", "split"}, {"s"}), node("SequenceErase", {"s", "pmin"}, {"e"}),
                node("ConcatFromSequence", {"e"}, {"y"}, {g::Attribute::of_int("axis", 0)})};
    gr.outputs = {value("y", DType::f32, {4})};
    gr.outputs[0].has_shape = false;
    add("seq_erase_int64_min", gr);
    gr.initializers.clear();
    gr.nodes = {node("SequenceEmpty", {}, {"e"}), node("ConcatFromSequence", {"e"}, {"y"}, {g::Attribute::of_int("axis", 0)})};
    add("seq_concat_empty", gr);
    gr.nodes = {node("Optional", {}, {"o"}), node("OptionalGetElement", {"o"}, {"y"})};
    gr.nodes[0].attributes.push_back([] {
      g::Attribute a;
      a.name = "type";
      a.type = g::AttrType::TypeProto;
      a.tp = std::make_shared<g::ValueInfo>(value("", DType::f32, {4}));
      return a;
    }());
    add("optional_get_none", gr);
  }
  {  // TfIdfVectorizer: a table-backed step (Prepared::table) over fed i64 tokens, its skip count
     // huge (the lookups stay bounded by the row: the fuzzer's longer rows meet the lookup limit).
    g::Graph gr;
    gr.inputs = {value("x", DType::i64, {2, 6})};
    gr.nodes = {node("TfIdfVectorizer", {"x"}, {"y"},
                     {g::Attribute::of_int("min_gram_length", 1), g::Attribute::of_int("max_gram_length", 2),
                      g::Attribute::of_int("max_skip_count", INT64_MAX), g::Attribute::of_string("mode", "TFIDF"),
                      g::Attribute::of_ints("ngram_counts", {0, 4}), g::Attribute::of_ints("ngram_indexes", {0, 1, 2, 3, 4, 5, 6}),
                      g::Attribute::of_ints("pool_int64s", {2, 3, 5, 4, 5, 6, 7, 8, 6, 7}),
                      g::Attribute::of_floats("weights", {1, 2, 3, 4, 0.5f, 0.25f, 2})})};
    gr.outputs = {value("y", DType::f32, {2, 7})};
    add("tfidf_huge_skip", gr);
  }
  {  // A Loop carrying a sequence with a trip count of 2^40: the unrolling stops at its cap.
    g::Graph body;
    body.name = "body";
    body.opsets.clear();
    body.inputs = {value("i", DType::i64, {}), value("c", DType::boolean, {}), seq("acc", {2})};
    body.nodes = {node("Identity", {"c"}, {"c_out"}), node("SequenceInsert", {"acc", "x"}, {"acc_out"})};
    body.outputs = {value("c_out", DType::boolean, {}), seq("acc_out", {2})};
    g::Graph gr;
    gr.inputs = {value("x", DType::f32, {2})};
    gr.initializers = {g::TensorData::from_vector<int64_t>("m", {}, {int64_t(1) << 40})};
    gr.nodes = {node("SequenceEmpty", {}, {"start"}), node("Loop", {"m", "", "start"}, {"all"}, {g::Attribute::of_graph("body", std::move(body))}),
                node("SequenceLength", {"all"}, {"y"})};
    gr.outputs = {value("y", DType::i64, {})};
    add("seq_loop_huge_trip_count", gr);
  }
  return out;
}

}  // namespace

// The session fuzzer's dictionary (fuzz/session.dict, libFuzzer's -dict format), derived from the
// operator registry: every operator type and attribute name, the strings attributes select modes
// with, and the hostile values of test_hostile_generated.cpp as they appear in an ONNX file
// (protobuf varints of INT64_MIN/MAX, -1, 2^32 + 1, 2^40, 2^62; f32 NaN, infinities, -0, 1e30,
// FLT_MAX; raw little-endian i64 and i32 extremes).
static std::string dictionary_text() {
  std::string out = "# The Session fuzzer's dictionary, generated from the operator registry by tests/io/test_fuzz_session.cpp:\n"
                    "#   build/test_io -tc=\"session fuzz dictionary: write*\" --no-skip\n";
  auto entry = [&](const std::string& name, const std::string& bytes) {
    std::string v;
    for (unsigned char c : bytes) {
      char buf[8];
      if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') v += char(c);
      else std::snprintf(buf, sizeof buf, "\\x%02x", c), v += buf;
    }
    out += name + "=\"" + v + "\"\n";
  };
  auto varint = [](uint64_t v) {
    std::string b;
    do {
      b += char((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
      v >>= 7;
    } while (v);
    return b;
  };
  auto raw = [](const void* p, size_t n) { return std::string(static_cast<const char*>(p), n); };
  std::set<std::string> words;
  for (const g::OpDef* op : g::all_ops()) {
    words.insert(op->op_type);
    for (size_t a = 0; a < op->num_attrs; ++a) words.insert(op->attrs[a].name);
  }
  for (const char* w : {"add", "mul", "max", "min", "none", "reflection", "border", "zeros", "bicubic", "nearest", "linear", "...",
                        "->", "SAME_UPPER", "SAME_LOWER", "VALID", "output_half_pixel", "half_pixel", "LEFT", "RIGHT"})
    words.insert(w);
  int n = 0;
  for (const std::string& w : words) entry("word_" + std::to_string(n++), w);
  const std::pair<const char*, uint64_t> varints[] = {{"varint_0", 0},
                                                     {"varint_minus_1", uint64_t(-1)},
                                                     {"varint_int64_max", uint64_t(INT64_MAX)},
                                                     {"varint_int64_min", uint64_t(INT64_MIN)},
                                                     {"varint_2p32_plus_1", (uint64_t(1) << 32) + 1},
                                                     {"varint_2p40", uint64_t(1) << 40},
                                                     {"varint_2p62", uint64_t(1) << 62}};
  for (const auto& [name, v] : varints) entry(name, varint(v));
  const std::pair<const char*, float> floats[] = {{"f32_nan", NAN},     {"f32_inf", INFINITY},          {"f32_minus_inf", -INFINITY},
                                                  {"f32_minus_0", -0.0f}, {"f32_1e30", 1e30f},           {"f32_max", 3.4028235e38f},
                                                  {"f32_minus_1", -1.0f}};
  for (const auto& [name, v] : floats) entry(name, raw(&v, 4));
  const std::pair<const char*, int64_t> i64s[] = {{"i64_max", INT64_MAX}, {"i64_min", INT64_MIN}, {"i64_minus_1", -1}};
  for (const auto& [name, v] : i64s) entry(name, raw(&v, 8));
  const std::pair<const char*, int32_t> i32s[] = {{"i32_max", INT32_MAX}, {"i32_min", INT32_MIN}};
  for (const auto& [name, v] : i32s) entry(name, raw(&v, 4));
  return out;
}

TEST_CASE("session fuzz dictionary: write fuzz/session.dict" * doctest::skip()) {
  std::ofstream(OM_SOURCE_DIR "/fuzz/session.dict") << dictionary_text();
}

TEST_CASE("session fuzz dictionary: fuzz/session.dict is the one the registry gives") {
  std::ifstream f(OM_SOURCE_DIR "/fuzz/session.dict");
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  // Regenerate with the skipped test above when an operator or an attribute is added.
  CHECK(text == dictionary_text());
}

TEST_CASE("session fuzz seeds: write fuzz/corpus/session" * doctest::skip()) {
  const std::string dir = OM_SOURCE_DIR "/fuzz/corpus/session";
  std::filesystem::create_directories(dir);
  for (const auto& [name, gr] : seeds()) {
    // Not verified: a seed may be a graph verify() refuses (if_undefined_outer_name), which the
    // reader must refuse when the fuzzer feeds it.
    auto bytes = om::onnx::write_bytes(gr, g::GraphCheck::AlreadyVerified);
    INFO(name << ": " << bytes.status().message());
    REQUIRE(bytes.is_ok());
    std::ofstream(dir + "/" + name + ".onnx", std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.value().data()), std::streamsize(bytes.value().size()));
  }
}

TEST_CASE("session fuzz corpus replay: every seed of fuzz/corpus/session plans and runs to a Status") {
  int files = 0, runs = 0;
  for (const auto& e : std::filesystem::directory_iterator(OM_SOURCE_DIR "/fuzz/corpus/session")) {
    std::ifstream f(e.path(), std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    ++files;
    runs += om::fuzz::run_session_case(bytes.data(), bytes.size());
  }
  MESSAGE("session corpus: " << files << " files, " << runs << " successful runs");
  CHECK(files >= 40);
  CHECK(runs >= 4);  // the well-formed seeds (slices, fusion, shape chain) run in both modes
}
