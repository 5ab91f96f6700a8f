// onemodel dot MODEL: the graph as Graphviz DOT, symbolic shapes on the edges.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "cli.h"

namespace cli {
namespace {
const char* kHelp =
    "usage: onemodel dot MODEL [--after-passes] [--mode fast|exact] [--svg] [--out FILE]\n"
    "\n"
    "Writes the graph as Graphviz DOT (to stdout, or FILE): one box per node, initializers\n"
    "folded into their node's label, and each edge labelled with the value's dtype and shape\n"
    "(symbolic axes by name, ? for axes derived from them). --after-passes shows the graph a\n"
    "Session of --mode (default fast) runs, after its passes (docs/graph-passes.md). --svg renders\n"
    "with Graphviz's `dot` program, which must be installed (Debian: apt-get install graphviz).\n";

std::string quote(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {  // labels use DOT's own "\n" line breaks, so only quotes are escaped
    if (c == '"') q += '\\';
    q += c;
  }
  return q + "\"";
}

std::string to_dot(const om::graph::Graph& g, std::string* note) {
  std::map<std::string, om::graph::ValueInfo> shapes;
  std::vector<om::graph::ValueInfo> inferred;
  om::Status st = om::try_infer_shapes(g, &inferred);
  if (st.is_ok()) {
    for (auto& v : inferred) shapes[v.name] = v;
  } else {
    *note = "shapes of intermediate values unknown: " + st.message();
  }
  for (const auto& v : g.inputs) shapes.emplace(v.name, v);
  for (const auto& v : g.outputs) shapes.emplace(v.name, v);
  auto label = [&](const std::string& value) {
    auto it = shapes.find(value);
    return it == shapes.end() ? std::string("?") : std::string(om::dtype_name(it->second.dtype)) + dims_str(it->second);
  };

  std::ostringstream os;
  os << "digraph " << quote(g.name) << " {\n  rankdir=TB;\n  node [shape=box, fontname=\"Helvetica\"];\n"
     << "  edge [fontname=\"Helvetica\", fontsize=10];\n";
  std::map<std::string, std::string> producer;  // value -> dot node id
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const auto& v = g.inputs[i];
    if (g.find_initializer(v.name)) continue;
    const std::string id = "in" + std::to_string(i);
    os << "  " << id << " [shape=ellipse, label=" << quote(v.name) << "];\n";
    producer[v.name] = id;
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const auto& n = g.nodes[i];
    const std::string id = "n" + std::to_string(i);
    std::string text = n.domain.empty() ? n.op_type : n.domain + "." + n.op_type;
    for (const auto& in : n.inputs)
      if (const om::graph::TensorData* w = g.find_initializer(in)) {
        om::graph::ValueInfo vi;
        for (int64_t d : w->dims) vi.shape.push_back(om::graph::Dim::fixed(d));
        text += "\\n" + in + " " + om::dtype_name(w->dtype) + dims_str(vi);
      }
    // Subgraphs (If's branches) are summarised on their node; `onemodel info` counts their operators.
    for (const auto& at : n.attributes)
      if (at.type == om::graph::AttrType::Graph && at.g)
        text += "\\n" + at.name + ": " + std::to_string(at.g->nodes.size()) + " nodes";
    os << "  " << id << " [label=" << quote(text) << "];\n";
    for (const auto& in : n.inputs) {
      auto it = producer.find(in);
      if (in.empty() || it == producer.end()) continue;
      os << "  " << it->second << " -> " << id << " [label=" << quote(label(in)) << "];\n";
    }
    for (const auto& out : n.outputs) producer[out] = id;
  }
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const auto& v = g.outputs[i];
    const std::string id = "out" + std::to_string(i);
    os << "  " << id << " [shape=ellipse, label=" << quote(v.name) << "];\n";
    auto it = producer.find(v.name);
    if (it != producer.end()) os << "  " << it->second << " -> " << id << " [label=" << quote(label(v.name)) << "];\n";
  }
  os << "}\n";
  return os.str();
}
}  // namespace

int cmd_dot(int argc, char** argv) {
  Args a = parse(argc, argv, {"mode", "out"}, {"help", "after-passes", "svg"}, "dot");
  if (a.has("help")) return std::fputs(kHelp, stdout), 0;
  if (a.positional.size() != 1) throw UsageError{"expected one MODEL (.om or .onnx)"};
  om::graph::Graph g = load_graph(a.positional[0]);
  if (a.has("after-passes")) {
    om::SessionOptions o;
    o.mode = parse_mode(a.get("mode", "fast"), "dot");
    om::Session s(g, o);
    g = s.graph();
  }
  std::string note;
  const std::string dot = to_dot(g, &note);
  if (!note.empty()) std::fprintf(stderr, "onemodel dot: %s\n", note.c_str());
  const std::string out = a.get("out");
  if (!a.has("svg")) {
    if (out.empty()) return std::fputs(dot.c_str(), stdout), 0;
    std::ofstream f(out, std::ios::binary);
    if (!(f << dot)) throw om::Error(om::ErrorKind::Io, "cannot write '" + out + "'");
    return 0;
  }
  if (std::system("command -v dot >/dev/null 2>&1") != 0)
    throw om::Error(om::ErrorKind::Unsupported,
                    "--svg needs Graphviz's `dot` program, which is not on PATH; install it (Debian: apt-get install "
                    "graphviz) or drop --svg and render the DOT text elsewhere");
  FILE* p = popen(out.empty() ? "dot -Tsvg" : ("dot -Tsvg -o " + quote(out)).c_str(), "w");
  if (!p) throw om::Error(om::ErrorKind::Io, "cannot start `dot`");
  std::fputs(dot.c_str(), p);
  if (pclose(p) != 0) throw om::Error(om::ErrorKind::Io, "`dot -Tsvg` failed on the generated graph");
  return 0;
}

}  // namespace cli
