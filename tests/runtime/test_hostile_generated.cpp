// The operator record drives its own hostile tests: for every registry operator, one-node graphs
// built from its working example (op_examples.h) with one hostile value each, derived from the
// record itself — every attribute of its schema (OpDef::attrs: 0, -1, huge, INT64_MIN/MAX,
// NaN/inf, empty lists, bad strings), every input (omitted when optional, empty, NaN/inf or
// integer extremes, i.e. out-of-range indices) and extra unnamed (omitted) outputs. Each runs
// through Session::create and try_run in Fast mode and, when declared, Exact mode. Every outcome
// must be a success whose outputs have sane dims (rank <= 8, dims >= 0, at most 2^48 elements,
// every byte readable), or an error Status naming the node and not an Internal one; under the
// sanitizer build (make sanitize-ci) any undefined behaviour fails too. A new operator is covered
// by construction: it needs an example in op_examples.h, and each of its attributes and inputs
// then gets its cases; an operator that gets none fails the test.
#include <doctest/doctest.h>

#include <climits>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

#include "onemodel/core/dtype_visit.h"
#include "onemodel/graph/op_registry.h"
#include "onemodel/kernels/checked.h"
#include "runtime/op_examples.h"

using namespace rt;
using namespace op_examples;
using g::Attribute;
using g::AttrKind;
using g::TensorData;

namespace {

struct Case {
  std::string what;
  Example e;
  size_t extra_outputs = 0;  // unnamed outputs after "y"
};

const int64_t kInts[] = {0, -1, 2, 4294967297LL, int64_t(1) << 40, INT64_MIN, INT64_MAX};
const float kFloats[] = {0.0f, -1.0f, NAN, INFINITY, -INFINITY, 1e30f, -1e30f};

std::vector<Attribute> hostile_attrs(const g::AttrSpec& spec) {
  const std::string n = spec.name;
  std::vector<Attribute> out;
  switch (spec.kind) {
    case AttrKind::Int:
    case AttrKind::PositiveInt:
      for (int64_t v : kInts) out.push_back(Attribute::of_int(n, v));
      break;
    case AttrKind::Float:
      for (float v : kFloats) out.push_back(Attribute::of_float(n, v));
      break;
    case AttrKind::String:
      out.push_back(Attribute::of_string(n, ""));
      out.push_back(Attribute::of_string(n, "no such value"));
      break;
    case AttrKind::Ints:
    case AttrKind::PositiveInts:
      for (const std::vector<int64_t>& v : std::vector<std::vector<int64_t>>{
               {}, {0}, {-1}, {INT64_MAX}, {INT64_MIN, INT64_MAX}, {int64_t(1) << 40, int64_t(1) << 40}, std::vector<int64_t>(10, 0),
               std::vector<int64_t>(6, -1), std::vector<int64_t>(4, INT64_MAX)})
        out.push_back(Attribute::of_ints(n, v));
      break;
    case AttrKind::Floats:
      for (const std::vector<float>& v : std::vector<std::vector<float>>{{}, {NAN}, {INFINITY, -INFINITY}, {1e30f, -1e30f, 0.0f, 0.0f}})
        out.push_back(Attribute::of_floats(n, v));
      break;
    case AttrKind::Strings: {
      Attribute none;
      none.name = n;
      none.type = g::AttrType::Strings;
      out.push_back(none);
      Attribute empty = none;
      empty.strings = {""};
      out.push_back(empty);
      break;
    }
    case AttrKind::Tensor:
      out.push_back(Attribute::of_tensor(n, TensorData::from_vector<float>("", {0}, {})));
      out.push_back(Attribute::of_tensor(n, TensorData::from_vector<float>("", {1}, {NAN})));
      out.push_back(Attribute::of_tensor(n, TensorData::from_vector<int64_t>("", {1}, {INT64_MIN})));
      break;
    case AttrKind::TypeProto:  // only Optional's, tested with the sequence operators
      break;
    case AttrKind::Graph: {
      // A branch with no nodes and no outputs, and one whose only output is never written.
      out.push_back(Attribute::of_graph(n, g::Graph{}));
      g::Graph dangling;
      g::ValueInfo y;
      y.name = "never_written";
      dangling.outputs.push_back(y);
      out.push_back(Attribute::of_graph(n, dangling));
      break;
    }
  }
  return out;
}

// `count` elements of dtype `dt`, every one the hostile value number `which` of that dtype's
// list (integers saturated into the dtype); false when the dtype has no such value.
bool hostile_bytes(om::DType dt, int64_t count, int which, std::vector<uint8_t>* bytes) {
  bool ok = true;
  om::visit_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T v{};
    if constexpr (om::is_float16_storage<T>::value) {
      if (which >= 3) ok = false;
      else v = om::float_to_storage<T>(kFloats[2 + which]);
    } else if constexpr (std::is_same_v<T, bool>) {
      ok = which == 0;
      v = true;
    } else if constexpr (std::is_floating_point_v<T>) {
      if (which >= 6) ok = false;
      else v = T(kFloats[1 + which]);
    } else {
      const int64_t ints[] = {INT64_MAX, INT64_MIN, -1, int64_t(1) << 40, 0};
      if (which >= 5) {
        ok = false;
      } else {
        const int64_t x = ints[which];
        using L = std::numeric_limits<T>;
        v = x > int64_t(std::min<uint64_t>(uint64_t(L::max()), uint64_t(INT64_MAX))) ? L::max()
            : (std::is_signed_v<T> ? x < int64_t(L::min()) : x < 0) ? L::min() : T(x);
      }
    }
    bytes->resize(size_t(count) * sizeof(T));
    for (int64_t i = 0; i < count; ++i) std::memcpy(bytes->data() + size_t(i) * sizeof(T), &v, sizeof(T));
  });
  return ok;
}

int64_t count_of(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// The same tensor, empty: its first axis 0 (a scalar becomes [0]).
std::vector<int64_t> emptied(std::vector<int64_t> dims) {
  if (dims.empty()) return {0};
  dims[0] = 0;
  return dims;
}

std::vector<Case> cases_of(const g::OpDef& op, const Example& base) {
  std::vector<Case> out;
  out.push_back({"the example", base});
  // Attributes: each schema entry replaced (or added) with each hostile value of its kind.
  for (size_t a = 0; a < op.num_attrs; ++a) {
    for (Attribute& v : hostile_attrs(op.attrs[a])) {
      Example e = base;
      bool replaced = false;
      for (Attribute& x : e.attrs)
        if (x.name == v.name) x = v, replaced = true;
      if (!replaced) e.attrs.push_back(v);
      std::ostringstream what;
      what << "attribute " << v.name << " = ";
      if (v.type == g::AttrType::Int) what << v.i;
      else if (v.type == g::AttrType::Float) what << v.f;
      else if (v.type == g::AttrType::String) what << "'" << v.s << "'";
      else if (v.type == g::AttrType::Ints) what << om::shape_str(v.ints.data(), v.ints.size());
      else what << "(list or tensor of " << (v.floats.size() + v.strings.size() + (v.t ? size_t(v.t->numel()) : 0)) << ")";
      out.push_back({what.str(), std::move(e)});
    }
  }
  // Inputs: omitted when optional, emptied, or filled with hostile values.
  Example all_optional_omitted = base;
  for (size_t i = 0; i < base.inputs.size(); ++i) {
    const std::string& name = base.inputs[i];
    if (name.empty()) continue;
    const std::string role = "input " + std::to_string(i) + " ('" + name + "')";
    if (int(i) >= op.min_inputs) {
      Example e = base;
      e.inputs[i] = "";
      out.push_back({role + " omitted", e});
      all_optional_omitted.inputs[i] = "";
    }
    for (size_t c = 0; c < base.consts.size(); ++c) {
      if (base.consts[c].name != name) continue;
      const TensorData& t = base.consts[c];
      {
        Example e = base;
        std::vector<uint8_t> none;
        e.consts[c] = TensorData::copy_of(name, t.dtype, emptied(t.dims), none.data(), 0);
        out.push_back({role + " empty", e});
      }
      std::vector<uint8_t> bytes;
      for (int w = 0; hostile_bytes(t.dtype, t.numel(), w, &bytes); ++w) {
        Example e = base;
        e.consts[c] = TensorData::copy_of(name, t.dtype, t.dims, bytes.data(), bytes.size());
        out.push_back({role + " hostile value " + std::to_string(w), e});
      }
    }
    for (size_t f = 0; f < base.feeds.size(); ++f) {
      if (base.feeds[f].name != name) continue;
      const Feed& feed = base.feeds[f];
      {
        Example e = base;
        e.feeds[f].dims = emptied(feed.dims);
        e.feeds[f].bytes.clear();
        out.push_back({role + " empty", e});
      }
      std::vector<uint8_t> bytes;
      for (int w = 0; hostile_bytes(feed.dtype, count_of(feed.dims), w, &bytes); ++w) {
        Example e = base;
        e.feeds[f].bytes = bytes;
        out.push_back({role + " hostile value " + std::to_string(w), e});
      }
    }
  }
  // Omitted outputs: unnamed outputs after the first, on the example and with every optional
  // input omitted (the form where optional outputs are sized from defaults).
  for (size_t extra : {size_t(1), size_t(2)}) {
    out.push_back({std::to_string(extra) + " unnamed outputs", base, extra});
    out.push_back({std::to_string(extra) + " unnamed outputs, optional inputs omitted", all_optional_omitted, extra});
  }
  return out;
}

g::Graph graph_of(const g::OpDef& op, const Case& c) {
  g::Graph gr = one_node_graph(op, c.e);
  for (size_t i = 0; i < c.extra_outputs; ++i) gr.nodes[0].outputs.push_back("");
  // Feeds no longer read by the node (an omitted input) stay declared and fed: harmless.
  return gr;
}

struct Tally {
  int cases = 0, ok = 0, refused = 0;
};

// Runs one case in one mode; returns a failure description, or "" when the outcome is clean.
std::string run_case(const g::OpDef& op, const Case& c, om::ArithmeticMode mode, Tally* tally) {
  const g::Graph gr = graph_of(op, c);
  const std::string node_name = gr.nodes[0].name;
  om::SessionOptions opt;
  opt.mode = mode;
  opt.max_arena_bytes = size_t(64) << 20;  // hostile sizes are refused, not allocated
  opt.max_folded_bytes = size_t(64) << 20;
  auto clean_error = [&](const om::Status& st, const char* stage) -> std::string {
    ++tally->refused;
    const std::string m = st.message();
    if (st.kind() == om::ErrorKind::Internal) return om::msg(stage, " gave an Internal error: ", m);
    if (m.find(node_name) == std::string::npos && m.find(op.op_type) == std::string::npos)
      return om::msg(stage, " error does not name the node '", node_name, "': ", m);
    return "";
  };
  om::Session s;
  om::Status st = om::Session::create(gr, opt, &s);
  if (!st.is_ok()) return clean_error(st, "create");
  const std::vector<std::string> names = s.input_names();
  std::vector<om::TensorView> in;
  for (const std::string& n : names)
    for (const Feed& f : c.e.feeds)
      if (f.name == n) {
        om::TensorView v;
        v.name = f.name.c_str();
        v.dtype = f.dtype;
        v.dims = f.dims.data();
        v.rank = f.dims.size();
        v.data = const_cast<uint8_t*>(f.bytes.data());
        in.push_back(v);
      }
  std::vector<om::TensorView> out(s.output_names().size());
  st = s.try_run(in.data(), in.size(), out.data(), out.size());
  if (!st.is_ok()) return clean_error(st, "run");
  ++tally->ok;
  for (const om::TensorView& o : out) {
    if (o.rank > g::kMaxRank) return om::msg("output rank ", o.rank, " exceeds ", g::kMaxRank);
    int64_t n = 0;
    if (!om::checked_numel(o.dims, o.rank, &n)) return om::msg("output dims ", om::shape_str(o.dims, o.rank), " are not sane");
    // Every byte is read: a wrong size or pointer shows under the sanitizer build.
    const uint8_t* p = static_cast<const uint8_t*>(o.data);
    volatile uint8_t sum = 0;
    for (size_t b = 0; b < size_t(n) * om::dtype_size(o.dtype); ++b) sum = uint8_t(sum + p[b]);
  }
  return "";
}

}  // namespace

TEST_CASE("hostile inputs generated from every operator's record: a clean Status or sane outputs, never a crash") {
  std::map<std::string, int> per_op;
  Tally tally;
  for (const g::OpDef* op : g::all_ops()) {
    CAPTURE(std::string(op->op_type));
    if (op->flags & g::kOpSequence) continue;  // hostile positions, lengths and kinds: test_sequence_ops.cpp
    auto it = examples().find(op->op_type);
    if (it == examples().end()) {
      FAIL_CHECK(("no example for " + std::string(op->op_type) + " in tests/runtime/op_examples.h: add one"));
      continue;
    }
    for (const Case& c : cases_of(*op, it->second())) {
      for (om::ArithmeticMode mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
        if (!g::runs_in(*op, mode)) continue;
        ++tally.cases;
        ++per_op[op->op_type];
        const std::string bad = run_case(*op, c, mode, &tally);
        if (!bad.empty())
          FAIL_CHECK((std::string(op->op_type) + " (" + c.what + ", " + (mode == om::ArithmeticMode::Fast ? "Fast" : "Exact") + "): " + bad));
      }
    }
  }
  int fewest = INT_MAX;
  for (const g::OpDef* op : g::all_ops()) {
    if (op->flags & g::kOpSequence) continue;
    CAPTURE(std::string(op->op_type));
    CHECK(per_op[op->op_type] > 0);  // an operator the generator reached with no case
    fewest = std::min(fewest, per_op[op->op_type]);
  }
  MESSAGE("hostile cases: ", tally.cases, " over ", per_op.size(), " operators (fewest per operator: ", fewest, "); ", tally.ok,
          " ran, ", tally.refused, " were refused cleanly");
  // Both outcomes must occur: a generator whose every case is refused would prove nothing.
  CHECK(tally.ok > 0);
  CHECK(tally.refused > 0);
}
