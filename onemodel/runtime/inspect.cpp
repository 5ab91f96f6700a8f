// Graph inspection (onemodel/runtime/inspect.h).
#include "onemodel/runtime/inspect.h"

#include <map>

#include "onemodel/graph/op_registry.h"
#include "onemodel/runtime/plan.h"

namespace om {

bool is_known_operator(const std::string& domain, const std::string& op_type) {
  return graph::find_op(domain, op_type) != nullptr;
}

bool has_exact_kernel(const std::string& domain, const std::string& op_type) {
  const graph::OpDef* op = graph::find_op(domain, op_type);
  return op && graph::runs_in(*op, ArithmeticMode::Exact);
}

namespace {
// Two sets of small, distinct sizes for the symbols: an axis equal to the k-th size in both
// plans is the k-th symbol; an axis that differs otherwise is derived from symbols (unknown).
// Small values keep the trial plans' arenas small.
constexpr int64_t kFirst[] = {5, 7, 11, 13, 17, 19, 23, 29};
constexpr int64_t kSecond[] = {31, 37, 41, 43, 47, 53, 59, 61};
constexpr size_t kMaxSymbols = sizeof(kFirst) / sizeof(kFirst[0]);
}  // namespace

Status try_infer_shapes(const graph::Graph& g, std::vector<graph::ValueInfo>* out) {
  std::map<std::string, size_t> symbols;
  for (const auto& in : g.inputs)
    for (const auto& d : in.shape)
      if (d.is_symbolic() && !symbols.count(d.param)) {
        if (symbols.size() == kMaxSymbols)
          return Status::error(ErrorKind::Unsupported, msg("om::infer_shapes: more than ", kMaxSymbols, " symbolic axes"));
        const size_t k = symbols.size();
        symbols[d.param] = k;
      }
  OM_ASSIGN_OR_RETURN(std::vector<const graph::OpDef*> ops, runtime::resolve_ops(g, ArithmeticMode::Fast));
  OM_ASSIGN_OR_RETURN(runtime::CompiledGraph cg, runtime::compile_graph(g, std::move(ops)));
  std::unique_ptr<runtime::Plan> plans[2];
  for (int trial = 0; trial < 2; ++trial) {
    std::vector<std::vector<int64_t>> dims;
    for (const auto& in : g.inputs) {
      std::vector<int64_t> d;  // an initializer overrides an input of its name (ONNX): no dims
      for (const auto& dim : in.shape) {
        if (g.find_initializer(in.name)) break;
        if (dim.is_static()) d.push_back(dim.size);
        else if (dim.is_symbolic()) d.push_back((trial == 0 ? kFirst : kSecond)[symbols[dim.param]]);
        else d.push_back(1);
      }
      dims.push_back(std::move(d));
    }
    std::vector<char> fed(g.inputs.size());
    for (size_t i = 0; i < g.inputs.size(); ++i) fed[i] = g.find_initializer(g.inputs[i].name) ? 0 : 1;
    auto built = runtime::build_plan(cg, ArithmeticMode::Fast, dims, fed);
    if (!built.is_ok()) return built.status().with_context("om::infer_shapes: planning with trial sizes for the symbolic axes");
    plans[trial] = std::move(built).value();
  }
  std::vector<std::string> names(size_t(cg.num_values));
  for (const auto& [name, id] : cg.ids) names[size_t(id)] = name;
  out->clear();
  for (int id = 0; id < cg.num_values; ++id) {
    const graph::ValueDesc& a = plans[0]->values[size_t(id)];
    const graph::ValueDesc& b = plans[1]->values[size_t(id)];
    graph::ValueInfo vi;
    vi.name = names[size_t(id)];
    vi.dtype = a.dtype;
    vi.has_shape = a.shape.size() == b.shape.size();
    if (vi.has_shape)
      for (size_t k = 0; k < a.shape.size(); ++k) {
        graph::Dim d;
        if (a.shape[k] == b.shape[k]) d = graph::Dim::fixed(a.shape[k]);
        for (const auto& [sym, s] : symbols)
          if (a.shape[k] == kFirst[s] && b.shape[k] == kSecond[s]) d = graph::Dim::symbol(sym);
        vi.shape.push_back(d);
      }
    out->push_back(std::move(vi));
  }
  return Status::ok();
}

std::vector<graph::ValueInfo> infer_shapes(const graph::Graph& g) {
  std::vector<graph::ValueInfo> v;
  check(try_infer_shapes(g, &v));
  return v;
}

}  // namespace om
