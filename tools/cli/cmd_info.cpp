// onemodel info MODEL: what a model takes and gives, what it is made of, and what a Session
// of each mode would do with it.
#include <cstdio>
#include <functional>
#include <map>
#include <vector>

#include "cli.h"
#include "onemodel/graph/op_registry.h"

namespace cli {
namespace {

const char* kHelp =
    "usage: onemodel info MODEL [--arena NAME=D0,D1,...] [--mode fast|exact] [--threads N]\n"
    "                     [--max-arena BYTES] [--max-folded BYTES]\n"
    "\n"
    "Prints the inputs and outputs (symbolic axes by name), the opsets, a histogram of the\n"
    "operators with whether each has an exact kernel, the parameter count and bytes, and, for a\n"
    "Fast and an Exact Session (only the one --mode names, when given), the graph passes it\n"
    "would run (docs/graph-passes.md) and its plan for the declared input shapes (symbolic axes\n"
    "1; --arena sets an input's full shape): the activation arena against\n"
    "SessionOptions::max_arena_bytes, or why planning fails. The arena is the SessionOptions::arena_bytes\n"
    "a caller-owned arena needs for those shapes (Session::try_arena_bytes_for; docs/deploying.md).\n"
    "--max-arena and --max-folded set max_arena_bytes (default 256M) and max_folded_bytes\n"
    "(default 64M); BYTES takes a K, M or G suffix.\n";

// Plans the session for the --arena shapes, else the graph's declared input shapes (symbolic
// axes 1, as bench does); the data is not read.
void print_plan(const om::graph::Graph& g, om::Session& s, const char* label, const ShapeMap& shapes) {
  std::vector<std::vector<int64_t>> dims;
  std::vector<om::TensorView> views;
  const std::vector<std::string> names = s.input_names();
  dims.reserve(names.size());
  for (const std::string& n : names) {
    const om::graph::ValueInfo* vi = nullptr;
    for (const auto& v : g.inputs)
      if (v.name == n) vi = &v;
    std::vector<int64_t> d;
    if (shapes.count(n)) d = shapes.at(n);
    else if (vi)
      for (const auto& dim : vi->shape) d.push_back(dim.is_static() ? dim.size : 1);
    dims.push_back(d);
    om::TensorView v;
    v.name = n.c_str();
    v.dtype = vi ? vi->dtype : om::DType::f32;
    views.push_back(v);
  }
  for (size_t i = 0; i < views.size(); ++i) {
    views[i].dims = dims[i].data();
    views[i].rank = dims[i].size();
  }
  std::string which = "declared shapes";
  if (!shapes.empty()) {
    which.clear();
    for (size_t i = 0; i < names.size(); ++i) {
      which += (which.empty() ? "" : " ") + names[i] + "=[";
      for (size_t k = 0; k < dims[i].size(); ++k) which += (k ? "," : "") + std::to_string(dims[i][k]);
      which += "]";
    }
  }
  const om::Status st = s.try_prepare(views.data(), views.size());
  if (!st.is_ok()) {
    std::printf("  plan (%s, %s): cannot plan: %s\n", label, which.c_str(), st.message().c_str());
    return;
  }
  const om::PlanStats p = s.last_plan_stats();
  std::printf("  plan (%s, %s): arena %zu bytes (%s; limit %s, --max-arena), %zu kernel steps, %zu folded\n", label,
              which.c_str(), p.arena_bytes, human_bytes(p.arena_bytes).c_str(), human_bytes(s.options().max_arena_bytes).c_str(),
              p.steps, p.folded_nodes);
}

void print_passes(const om::graph::Graph& g, om::SessionOptions o, om::ArithmeticMode mode, const char* label,
                  const Args& a) {
  o.mode = mode;
  om::Session s;
  om::Status st = om::Session::create(g, o, &s);
  if (!st.is_ok()) {
    std::printf("passes (%s session): cannot create the session: %s\n", label, st.message().c_str());
    return;
  }
  std::printf("passes (%s session):", label);
  for (const om::PassReport& p : s.pass_reports())
    std::printf(" %s%s(%zu)", p.name.c_str(), p.exact_safe ? "" : "[fast-only]", p.changes);
  std::printf("\n  -> %zu nodes after the passes\n", s.graph().nodes.size());
  print_plan(g, s, label, parse_shapes(a, "arena", s.input_names()));
}

}  // namespace

int cmd_info(int argc, char** argv) {
  Args a = parse(argc, argv, with_session_options({"arena"}), {"help"}, "info");
  if (a.has("help")) return std::fputs(kHelp, stdout), 0;
  if (a.positional.size() != 1) throw UsageError{"expected one MODEL (.om or .onnx)"};
  std::string format;
  const om::SessionOptions options = session_options(a, "info");
  const om::graph::Graph g = load_graph(a.positional[0], &format);
  {  // a mistyped --arena input is refused before anything is printed
    std::vector<std::string> inputs;
    for (const auto& v : g.inputs)
      if (!g.find_initializer(v.name)) inputs.push_back(v.name);
    parse_shapes(a, "arena", inputs);
  }

  std::printf("model: %s (%s), producer %s %s, IR version %lld\n", a.positional[0].c_str(), format.c_str(),
              g.producer_name.c_str(), g.producer_version.c_str(), static_cast<long long>(g.ir_version));
  std::printf("opsets:");
  for (const auto& o : g.opsets) std::printf(" %s=%lld", o.domain.empty() ? "ai.onnx" : o.domain.c_str(), static_cast<long long>(o.version));
  // What a Session says it takes and gives (Session::inputs / outputs); the graph's own
  // declarations when no session can be made (an unsupported operator: listed below).
  om::Session session;
  const bool made = om::Session::create(g, options, &session).is_ok();
  auto row = [](const std::string& name, om::DType dtype, const std::string& dims) {
    std::printf("  %-20s %-5s %s\n", name.c_str(), om::dtype_name(dtype), dims.c_str());
  };
  std::printf("\ninputs:\n");
  if (made) {
    for (const om::ValueInfo& v : session.inputs()) row(v.name, v.dtype, dims_str(v));
  } else {
    for (const auto& v : g.inputs)
      if (!g.find_initializer(v.name)) row(v.name, v.dtype, dims_str(v));
  }
  std::printf("outputs:\n");
  if (made) {
    for (const om::ValueInfo& v : session.outputs()) row(v.name, v.dtype, dims_str(v));
  } else {
    for (const auto& v : g.outputs) row(v.name, v.dtype, dims_str(v));
  }

  // Subgraphs' nodes (If's branches) count with the main graph's.
  std::map<std::pair<std::string, std::string>, size_t> histogram;
  size_t nodes = 0, subgraphs = 0;
  std::function<void(const om::graph::Graph&)> count = [&](const om::graph::Graph& sub) {
    for (const auto& n : sub.nodes) {
      ++histogram[{n.domain, n.op_type}];
      ++nodes;
      for (const auto& at : n.attributes) {
        if (at.type == om::graph::AttrType::Graph && at.g) ++subgraphs, count(*at.g);
        if (at.type == om::graph::AttrType::Graphs)
          for (const auto& s : at.graphs) ++subgraphs, count(*s);
      }
    }
  };
  count(g);
  std::printf("operators: %zu nodes, %zu kinds", nodes, histogram.size());
  if (subgraphs) std::printf(" (%zu in %zu subgraphs)", nodes - g.nodes.size(), subgraphs);
  std::printf("\n");
  size_t without_exact = 0;
  for (const auto& [key, count] : histogram) {
    const bool known = om::is_known_operator(key.first, key.second);
    const bool exact = om::has_exact_kernel(key.first, key.second);
    without_exact += exact ? 0 : 1;
    const std::string name = key.first.empty() ? key.second : key.first + "." + key.second;
    const om::graph::OpDef* op = om::graph::find_op(key.first, key.second);
    const bool lowered = op && (op->flags & om::graph::kOpSequence);
    std::printf("  %-24s %5zu  %s\n", name.c_str(), count,
                !known ? "UNSUPPORTED" : lowered ? "sequence bookkeeping (lowered)" : exact ? "exact kernel" : "fast only (no exact kernel)");
  }
  std::printf("exact mode: %s\n", without_exact ? "not available (some operators have no exact kernel)" : "available (every operator has an exact kernel)");

  uint64_t values = 0, bytes = 0;
  for (const auto& t : g.initializers) {
    values += uint64_t(t.numel());
    bytes += t.nbytes;
  }
  std::printf("parameters: %llu values in %zu tensors, %llu bytes (%s)\n", static_cast<unsigned long long>(values),
              g.initializers.size(), static_cast<unsigned long long>(bytes), human_bytes(bytes).c_str());
  const bool one_mode = a.has("mode");
  if (!one_mode || options.mode == om::ArithmeticMode::Fast) print_passes(g, options, om::ArithmeticMode::Fast, "Fast", a);
  if (!one_mode || options.mode == om::ArithmeticMode::Exact) print_passes(g, options, om::ArithmeticMode::Exact, "Exact", a);
  return 0;
}

}  // namespace cli
