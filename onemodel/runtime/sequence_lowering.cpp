// The sequence lowering (sequence_lowering.h): a graph with sequences and optionals becomes, per
// input structure, a graph of tensor nodes run by an inner Session. docs/onnx.md, "Sequences and
// optionals", says what is lowered and what is refused.
#include "onemodel/runtime/sequence_lowering.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "onemodel/graph/infer_check.h"
#include "onemodel/graph/op_registry.h"
#include "onemodel/kernels/sync.h"

namespace om::runtime {

using graph::Graph;
using graph::Node;
using graph::ValueKind;

namespace {

// A value while lowering: a tensor (one lowered name), a sequence (its elements' lowered names,
// in order) or an empty optional. An optional holding a value is that value.
struct Binding {
  enum Kind { Tensor, Sequence, None } kind = Tensor;
  std::vector<std::string> elems;
};

const char* binding_name(const Binding& b) {
  return b.kind == Binding::Tensor ? "a tensor" : b.kind == Binding::Sequence ? "a sequence" : "an empty optional";
}

// Names visible in a graph being lowered: its own, then its enclosing graphs' (ONNX's outer scope).
struct Scope {
  const Scope* parent = nullptr;
  std::unordered_map<std::string, Binding> names;
  const Binding* find(const std::string& name) const {
    for (const Scope* s = this; s; s = s->parent) {
      auto it = s->names.find(name);
      if (it != s->names.end()) return &it->second;
    }
    return nullptr;
  }
};

// A value the lowering knows when planning (a constant, a graph input it read, or computed).
struct Known {
  graph::ValueDesc desc;
  std::shared_ptr<const void> owner;
};

// The structure's graph inputs as the runner bound them, by source graph input.
struct BoundInput {
  const ValueView* view = nullptr;  // null: an overridable initializer not given
};

// Every name of g and its subgraphs.
void collect_names(const Graph& g, std::unordered_set<std::string>* out) {
  for (const auto& v : g.inputs) out->insert(v.name);
  for (const auto& t : g.initializers) out->insert(t.name);
  for (const auto& n : g.nodes) {
    for (const auto& s : n.inputs) out->insert(s);
    for (const auto& s : n.outputs) out->insert(s);
    for (const auto& a : n.attributes) {
      if (a.g) collect_names(*a.g, out);
      for (const auto& sub : a.graphs) collect_names(*sub, out);
    }
  }
}

bool is_op(const Node& n, const char* type) { return graph::is_default_domain(n.domain) && n.op_type == type; }

}  // namespace

// One lowered graph and how its inputs and outputs map to the source graph's.
struct Lowered {
  Graph graph;
  struct Feed {
    size_t input;    // source graph input
    size_t element;  // its element (0 for a tensor)
  };
  std::vector<Feed> feeds;  // per lowered graph input
  struct Out {
    ValueKind kind;
    bool present;
    std::vector<size_t> outputs;  // lowered graph outputs, the value's elements in order
  };
  std::vector<Out> outputs;  // per source graph output
  std::vector<std::pair<size_t, std::vector<uint8_t>>> reads;  // source inputs whose values decided it
};

namespace {

class Lowerer {
 public:
  Lowerer(const Graph& src, const SessionOptions& options, const std::vector<BoundInput>& inputs, bool unroll_loops)
      : src_(src), options_(options), inputs_(inputs), unroll_loops_(unroll_loops) {
    collect_names(src, &reserved_);
  }

  Result<Lowered> lower() {
    Lowered& L = result_;
    Graph& out = L.graph;
    out.name = src_.name;
    out.opsets = src_.opsets;
    out.ir_version = src_.ir_version;
    out.producer_name = src_.producer_name;
    out.producer_version = src_.producer_version;
    Scope top;
    for (const auto& t : src_.initializers) {
      claimed_.insert(t.name);
      initializer_[t.name] = out.initializers.size();
      out.initializers.push_back(t);
      top.names[t.name] = Binding{Binding::Tensor, {t.name}};
    }
    for (size_t j = 0; j < src_.inputs.size(); ++j) {
      const graph::ValueInfo& vi = src_.inputs[j];
      const ValueView* v = inputs_[j].view;
      if (!v) {  // an overridable initializer's value
        out.inputs.push_back(vi);
        continue;
      }
      if (!v->present) {
        top.names[vi.name] = Binding{Binding::None, {}};
        continue;
      }
      const bool seq = v->kind == ValueKind::Sequence || v->kind == ValueKind::OptionalSequence;
      Binding b{seq ? Binding::Sequence : Binding::Tensor, {}};
      for (size_t e = 0; e < v->count; ++e) {
        graph::ValueInfo li;
        li.name = seq ? fresh(vi.name, false) : vi.name;
        if (!seq) claimed_.insert(vi.name);
        li.dtype = v->elements[e].dtype;
        if (!seq && vi.kind == ValueKind::Tensor && vi.has_shape) li.shape = vi.shape;
        else li.shape.assign(v->elements[e].rank, graph::Dim{});  // elements' sizes differ: each its own
        input_slot_[li.name] = {j, e};
        L.feeds.push_back({j, e});
        b.elems.push_back(li.name);
        out.inputs.push_back(std::move(li));
      }
      top.names[vi.name] = std::move(b);
    }
    OM_TRY(lower_nodes(src_, top, true));
    for (const auto& vi : src_.outputs) {
      const Binding* b = top.find(vi.name);
      if (!b) return Status::error(ErrorKind::Format, msg("graph output '", vi.name, "' is not defined"));
      Lowered::Out o{vi.kind, b->kind != Binding::None, {}};
      const bool want_seq = vi.kind == ValueKind::Sequence || vi.kind == ValueKind::OptionalSequence;
      if (b->kind != Binding::None && want_seq != (b->kind == Binding::Sequence))
        return Status::error(ErrorKind::Format, msg("graph output '", vi.name, "' is declared ", graph::value_kind_name(vi.kind),
                                                          " but the graph gives ", binding_name(*b)));
      if (b->kind == Binding::None && (vi.kind == ValueKind::Tensor || vi.kind == ValueKind::Sequence))
        return Status::error(ErrorKind::Format,
                             msg("graph output '", vi.name, "' is declared ", graph::value_kind_name(vi.kind), " but is an empty optional"));
      for (const std::string& e : b->elems) {
        // An Identity per output element: an element may be a graph input, or given twice.
        Node id;
        id.op_type = "Identity";
        id.inputs = {e};
        id.outputs = {fresh(vi.name, false)};
        graph::ValueInfo lo;
        lo.name = id.outputs[0];
        lo.dtype = vi.dtype;
        lo.has_type = vi.has_type;
        lo.has_shape = false;
        o.outputs.push_back(out.outputs.size());
        out.outputs.push_back(std::move(lo));
        out.nodes.push_back(std::move(id));
      }
      L.outputs.push_back(std::move(o));
    }
    return std::move(result_);
  }

 private:
  // A new name in the lowered graph: `base` itself when it is a top-level source name defined
  // once (own), else base__k, avoiding every source name (a kept subgraph's included).
  std::string fresh(const std::string& base, bool own) {
    if (own && claimed_.insert(base).second) return base;
    // Each base counts on from its last suffix: unrolling makes a name per iteration in O(1).
    for (uint64_t& k = next_suffix_[base];;) {
      std::string c = base + "__" + std::to_string(++k);
      if (!reserved_.count(c) && claimed_.insert(c).second) return c;
    }
  }

  Status check_budget(const Node& n) {
    if (result_.graph.nodes.size() > kMaxLoweredNodes)
      return Status::error(ErrorKind::OutOfMemory, msg(n.label(), ": lowering the sequences makes more than ", kMaxLoweredNodes,
                                                       " nodes; unroll fewer iterations or elements"));
    return Status::ok();
  }

  Result<const Binding*> bind(const Scope& scope, const Node& n, const std::string& name) {
    const Binding* b = scope.find(name);
    if (!b) return Status::error(ErrorKind::Format, msg(n.label(), " reads '", name, "', which is not defined before it"));
    return b;
  }

  Result<std::string> tensor_in(const Scope& scope, const Node& n, size_t i) {
    OM_ASSIGN_OR_RETURN(const Binding* b, bind(scope, n, n.inputs[i]));
    if (b->kind != Binding::Tensor)
      return Status::error(ErrorKind::Format,
                           msg(n.label(), ": input ", i, " '", n.inputs[i], "' is ", binding_name(*b), "; this input takes a tensor"));
    return b->elems[0];
  }

  // A constant in the lowered graph, known from now on.
  std::string add_const(const std::string& base, DType dtype, std::vector<int64_t> dims, const void* data, size_t nbytes) {
    graph::TensorData t = graph::TensorData::copy_of(fresh(base, false), dtype, std::move(dims), data, nbytes);
    Known k;
    k.desc.dtype = t.dtype;
    k.desc.shape = t.dims;
    k.desc.data = nbytes ? static_cast<const void*>(t.bytes) : graph::kEmptyValue;
    k.owner = t.owner;
    known_[t.name] = std::move(k);
    std::string name = t.name;
    result_.graph.initializers.push_back(std::move(t));
    return name;
  }
  std::string const_i64(const std::string& base, int64_t v, bool scalar) {
    return add_const(base, DType::i64, scalar ? std::vector<int64_t>{} : std::vector<int64_t>{1}, &v, sizeof v);
  }
  std::string const_bool(const std::string& base, bool v) {
    const uint8_t b = v;
    return add_const(base, DType::boolean, {}, &b, 1);
  }

  // The value of lowered tensor `name` when planning, or null when it depends on what is only
  // known when running. Reading a graph input makes its value part of the structure's key.
  Result<const Known*> known(const std::string& name, int depth = 0) {
    auto it = known_.find(name);
    if (it != known_.end()) return &it->second;
    auto slot = input_slot_.find(name);
    if (slot != input_slot_.end()) {
      const ValueView& v = *inputs_[slot->second.first].view;
      const TensorView& t = v.elements[slot->second.second];
      // A sequence element's data, or a float's, is the run's: only integer and bool inputs (sizes,
      // positions, counts, flags) decide a structure.
      if (v.kind != ValueKind::Tensor && v.kind != ValueKind::Optional) return nullptr;
      if (t.dtype == DType::f32 || t.dtype == DType::f16 || t.dtype == DType::bf16 || t.dtype == DType::f64) return nullptr;
      const size_t bytes = size_t(t.numel()) * dtype_size(t.dtype);
      if (bytes > kMaxReadBytes) return nullptr;
      if (bytes && !t.data)
        return Status::error(ErrorKind::InvalidArgument, msg("Session::run_values: input '", src_.inputs[slot->second.first].name, "' has no data"));
      std::shared_ptr<void> buf = graph::aligned_buffer(bytes ? bytes : 1);
      if (!buf) return Status::error(ErrorKind::OutOfMemory, "Session::run_values: out of memory reading an input");
      if (bytes) std::memcpy(buf.get(), t.data, bytes);
      result_.reads.push_back({slot->second.first, std::vector<uint8_t>(static_cast<const uint8_t*>(t.data),
                                                                       static_cast<const uint8_t*>(t.data) + bytes)});
      Known k;
      k.desc.dtype = t.dtype;
      k.desc.shape.assign(t.dims, t.dims + t.rank);
      k.desc.data = bytes ? buf.get() : graph::kEmptyValue;
      k.owner = buf;
      return &(known_[name] = std::move(k));
    }
    auto init = initializer_.find(name);
    if (init != initializer_.end()) {
      const graph::TensorData& t = result_.graph.initializers[init->second];
      Known k;
      k.desc.dtype = t.dtype;
      k.desc.shape = t.dims;
      k.desc.data = t.nbytes ? static_cast<const void*>(t.bytes) : graph::kEmptyValue;
      k.owner = t.owner;
      return &(known_[name] = std::move(k));
    }
    auto p = producer_.find(name);
    if (p == producer_.end() || depth > kMaxKnownDepth) return nullptr;
    const Node n = result_.graph.nodes[p->second];  // a copy: evaluating may add nodes' values
    const graph::OpDef* op = graph::find_op(n.domain, n.op_type);
    if (!op || !graph::runs_in(*op, options_.mode) || (op->flags & graph::kOpControlFlow)) return nullptr;
    for (const auto& a : n.attributes)
      if (a.g || !a.graphs.empty()) return nullptr;
    std::vector<const graph::ValueDesc*> ins(n.inputs.size(), nullptr);
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i].empty()) continue;
      OM_ASSIGN_OR_RETURN(const Known* k, known(n.inputs[i], depth + 1));
      if (!k) return nullptr;
      ins[i] = &k->desc;
    }
    std::vector<graph::ValueDesc> shapes;
    if (!graph::infer_checked(n, *op, ins, &shapes).is_ok()) return nullptr;  // the inner session reports it
    size_t bytes = 0;
    for (const auto& d : shapes) bytes += d.nbytes();
    if (bytes > kMaxReadBytes) return nullptr;
    std::vector<graph::EvaluatedValue> results;
    if (!graph::evaluate_node(n, *op, options_.mode, ins, &results).is_ok()) return nullptr;
    for (size_t o = 0; o < n.outputs.size() && o < results.size(); ++o) {
      if (n.outputs[o].empty()) continue;
      known_[n.outputs[o]] = Known{results[o].desc, results[o].owner};
    }
    auto done = known_.find(name);
    return done == known_.end() ? nullptr : &done->second;
  }

  Result<int64_t> known_int(const Scope& scope, const Node& n, size_t i, const char* what) {
    OM_ASSIGN_OR_RETURN(std::string name, tensor_in(scope, n, i));
    OM_ASSIGN_OR_RETURN(const Known* k, known(name));
    if (!k)
      return Status::error(ErrorKind::Unsupported, msg(n.label(), ": ", what, " '", n.inputs[i],
                                                       "' is not known when planning; onemodel lowers sequences per input structure, so it must "
                                                       "be a constant or computed from constants, sequence lengths and integer graph inputs"));
    if (k->desc.numel() != 1 || (k->desc.dtype != DType::i64 && k->desc.dtype != DType::i32))
      return Status::error(ErrorKind::Format, msg(n.label(), ": ", what, " '", n.inputs[i], "' must be one i32 or i64 value, got ",
                                                        dtype_name(k->desc.dtype), " ", shape_str(k->desc.shape)));
    return k->desc.dtype == DType::i64 ? *static_cast<const int64_t*>(k->desc.data) : int64_t(*static_cast<const int32_t*>(k->desc.data));
  }

  Result<bool> known_bool(const std::string& lowered, const Node& n, const std::string& source, const char* what) {
    OM_ASSIGN_OR_RETURN(const Known* k, known(lowered));
    if (!k)
      return Status::error(ErrorKind::Unsupported, msg(n.label(), ": ", what, " '", source,
                                                       "' is not known when planning, and it decides sequences or optionals; it must be "
                                                       "a constant or computed from constants, sequence lengths and bool graph inputs"));
    if (k->desc.numel() != 1 || k->desc.dtype != DType::boolean)
      return Status::error(ErrorKind::Format, msg(n.label(), ": ", what, " '", source, "' must be one bool, got ",
                                                        dtype_name(k->desc.dtype), " ", shape_str(k->desc.shape)));
    return *static_cast<const uint8_t*>(k->desc.data) != 0;
  }

  // A tensor node in the lowered graph: inputs by their lowered names, outputs new names.
  Status emit(Node n, const std::vector<std::string>& ins, Scope& scope, bool top) {
    n.inputs = ins;
    for (auto& o : n.outputs) {
      if (o.empty()) continue;
      const std::string source = o;
      o = fresh(source, top);
      scope.names[source] = Binding{Binding::Tensor, {o}};
      producer_[o] = result_.graph.nodes.size();
    }
    result_.graph.nodes.push_back(std::move(n));
    return Status::ok();
  }

  // A kept subgraph's reads of enclosing names, renamed to their lowered names (deep copies).
  Status rename_free(Graph& g, std::unordered_set<std::string> bound, const Scope& scope, const Node& holder) {
    for (const auto& v : g.inputs) bound.insert(v.name);
    for (const auto& t : g.initializers) bound.insert(t.name);
    auto map = [&](std::string& name) -> Status {
      if (name.empty() || bound.count(name)) return Status::ok();
      const Binding* b = scope.find(name);
      if (!b) return Status::error(ErrorKind::Format, msg(holder.label(), ": a subgraph reads '", name, "', which is not defined"));
      if (b->kind != Binding::Tensor)
        return Status::error(ErrorKind::Unsupported, msg(holder.label(), ": a subgraph reads '", name, "', ", binding_name(*b),
                                                         "; only subgraphs that onemodel unrolls or inlines may read sequences"));
      name = b->elems[0];
      return Status::ok();
    };
    for (auto& n : g.nodes) {
      for (auto& s : n.inputs) OM_TRY(map(s));
      for (auto& a : n.attributes) {
        if (a.g) {
          a.g = std::make_shared<Graph>(*a.g);
          OM_TRY(rename_free(*a.g, bound, scope, holder));
        }
        for (auto& sub : a.graphs) {
          sub = std::make_shared<Graph>(*sub);
          OM_TRY(rename_free(*sub, bound, scope, holder));
        }
      }
      for (const auto& s : n.outputs) bound.insert(s);
    }
    for (auto& v : g.outputs) {
      if (bound.count(v.name)) continue;
      // A subgraph output that is an enclosing value directly: an Identity keeps its name.
      std::string outer = v.name;
      OM_TRY(map(outer));
      Node id;
      id.op_type = "Identity";
      id.inputs = {outer};
      id.outputs = {v.name};
      g.nodes.push_back(std::move(id));
    }
    return Status::ok();
  }

  Status lower_tensor_node(const Node& n, Scope& scope, bool top) {
    std::vector<std::string> ins(n.inputs.size());
    for (size_t i = 0; i < n.inputs.size(); ++i)
      if (!n.inputs[i].empty()) {
        OM_ASSIGN_OR_RETURN(ins[i], tensor_in(scope, n, i));
      }
    Node copy = n;
    for (auto& a : copy.attributes) {
      if (!a.g && a.graphs.empty()) continue;
      if (a.g) {
        if (uses_sequences(*a.g))
          return Status::error(ErrorKind::Unsupported, msg(n.label(), ": its subgraph '", a.name, "' uses sequences or optionals; onemodel "
                                                           "runs those only in If (a condition known when planning), Loop and SequenceMap"));
        a.g = std::make_shared<Graph>(*a.g);
        OM_TRY(rename_free(*a.g, {}, scope, n));
      }
      for (auto& sub : a.graphs) {
        sub = std::make_shared<Graph>(*sub);
        OM_TRY(rename_free(*sub, {}, scope, n));
      }
    }
    return emit(std::move(copy), ins, scope, top);
  }

  // A subgraph's nodes in a scope of their own, inlined into the lowered graph; its outputs'
  // bindings in `outs`.
  Status inline_graph(const Graph& body, Scope& inner, std::vector<Binding>* outs) {
    for (const auto& t : body.initializers) {
      graph::TensorData c = t;
      c.name = fresh(t.name, false);
      inner.names[t.name] = Binding{Binding::Tensor, {c.name}};
      initializer_[c.name] = result_.graph.initializers.size();
      result_.graph.initializers.push_back(std::move(c));
    }
    OM_TRY(lower_nodes(body, inner, false));
    outs->clear();
    for (const auto& v : body.outputs) {
      const Binding* b = inner.find(v.name);
      if (!b) return Status::error(ErrorKind::Format, msg("subgraph '", body.name, "': output '", v.name, "' is not defined"));
      outs->push_back(*b);
    }
    return Status::ok();
  }

  void bind_outputs(const Node& n, Scope& scope, std::vector<Binding> values) {
    for (size_t i = 0; i < n.outputs.size() && i < values.size(); ++i)
      if (!n.outputs[i].empty()) scope.names[n.outputs[i]] = std::move(values[i]);
  }

  Status lower_if(const Node& n, Scope& scope, bool top) {
    const Graph* then_g = nullptr;
    const Graph* else_g = nullptr;
    for (const auto& a : n.attributes) {
      if (a.name == "then_branch") then_g = a.g.get();
      if (a.name == "else_branch") else_g = a.g.get();
    }
    if (!then_g || !else_g) return Status::error(ErrorKind::Format, msg(n.label(), ": needs then_branch and else_branch"));
    if (!uses_sequences(*then_g) && !uses_sequences(*else_g)) return lower_tensor_node(n, scope, top);  // the session plans it
    OM_ASSIGN_OR_RETURN(std::string cond, tensor_in(scope, n, 0));
    OM_ASSIGN_OR_RETURN(bool c, known_bool(cond, n, n.inputs[0], "the condition"));
    Scope inner;
    inner.parent = &scope;
    std::vector<Binding> outs;
    OM_TRY(inline_graph(c ? *then_g : *else_g, inner, &outs));
    if (outs.size() != n.outputs.size())
      return Status::error(ErrorKind::Format, msg(n.label(), ": the branch gives ", outs.size(), " outputs, the node has ", n.outputs.size()));
    bind_outputs(n, scope, std::move(outs));
    return Status::ok();
  }

  Status count_iteration(const Node& n) {
    // Each unrolled iteration adds nodes and copies the sequences it carries: kMaxUnrolled bounds
    // what a hostile trip count costs, long before a large max_loop_iterations would.
    ++unrolled_;
    if (unrolled_ > options_.max_loop_iterations)
      return Status::error(ErrorKind::Unsupported, msg(n.label(), ": unrolling for sequences needs more than ", options_.max_loop_iterations,
                                                       " iterations in all, above SessionOptions::max_loop_iterations; raise it to allow more"));
    if (unrolled_ > kMaxUnrolled)
      return Status::error(ErrorKind::Unsupported, msg(n.label(), ": unrolling for sequences needs more than ", kMaxUnrolled,
                                                       " iterations in all, the lowering's cap (SessionOptions::max_loop_iterations is ",
                                                       options_.max_loop_iterations, "); loops over sequences must be short"));
    return check_budget(n);
  }

  // Stacks per-iteration tensors on a new axis 0 (a Loop's scan outputs).
  Result<Binding> stack(const Node& n, const std::vector<std::string>& parts, const std::string& base) {
    if (parts.empty())
      return Status::error(ErrorKind::Unsupported, msg(n.label(), ": scan output '", base,
                                                       "' of zero iterations has no element shape; onemodel needs one iteration at least"));
    const std::string axes = const_i64(base + "_axes", 0, false);
    Node concat;
    concat.op_type = "Concat";
    concat.attributes.push_back(graph::Attribute::of_int("axis", 0));
    for (const auto& p : parts) {
      Node u;
      u.op_type = "Unsqueeze";
      u.inputs = {p, axes};
      u.outputs = {fresh(base + "_row", false)};
      concat.inputs.push_back(u.outputs[0]);
      result_.graph.nodes.push_back(std::move(u));
    }
    concat.outputs = {fresh(base, false)};
    result_.graph.nodes.push_back(concat);
    return Binding{Binding::Tensor, {concat.outputs[0]}};
  }

  Status lower_loop(const Node& n, Scope& scope, bool top) {
    const Graph* body = nullptr;
    for (const auto& a : n.attributes)
      if (a.name == "body") body = a.g.get();
    if (!body) return Status::error(ErrorKind::Format, msg(n.label(), ": needs a body"));
    std::vector<Binding> carried;
    bool seq = uses_sequences(*body);
    for (size_t i = 2; i < n.inputs.size(); ++i) {
      OM_ASSIGN_OR_RETURN(const Binding* b, bind(scope, n, n.inputs[i]));
      seq = seq || b->kind != Binding::Tensor;
      carried.push_back(*b);
    }
    if (!seq && !unroll_loops_) return lower_tensor_node(n, scope, top);  // the session plans it
    const size_t num_carried = carried.size();
    if (body->inputs.size() != 2 + num_carried || body->outputs.size() < 1 + num_carried)
      return Status::error(ErrorKind::Format, msg(n.label(), ": the body takes ", body->inputs.size(), " inputs and gives ",
                                                        body->outputs.size(), " outputs for ", num_carried, " loop-carried values"));
    int64_t trips = -1;
    if (n.inputs.size() > 0 && !n.inputs[0].empty()) {
        OM_ASSIGN_OR_RETURN(trips, known_int(scope, n, 0, "the trip count"));
      }
    bool cond = true;
    std::string cond_name;
    if (n.inputs.size() > 1 && !n.inputs[1].empty()) {
      OM_ASSIGN_OR_RETURN(cond_name, tensor_in(scope, n, 1));
      OM_ASSIGN_OR_RETURN(cond, known_bool(cond_name, n, n.inputs[1], "the condition"));
    }
    const size_t num_scan = body->outputs.size() - 1 - num_carried;
    std::vector<std::vector<std::string>> scans(num_scan);
    for (int64_t k = 0; cond && (trips < 0 || k < trips); ++k) {
      OM_TRY(count_iteration(n));
      Scope inner;
      inner.parent = &scope;
      if (!body->inputs[0].name.empty()) inner.names[body->inputs[0].name] = Binding{Binding::Tensor, {const_i64("iter", k, true)}};
      if (!body->inputs[1].name.empty()) inner.names[body->inputs[1].name] = Binding{Binding::Tensor, {const_bool("cond", cond)}};
      for (size_t j = 0; j < num_carried; ++j) inner.names[body->inputs[2 + j].name] = carried[j];
      std::vector<Binding> outs;
      OM_TRY(inline_graph(*body, inner, &outs));
      if (outs[0].kind != Binding::Tensor)
        return Status::error(ErrorKind::Format, msg(n.label(), ": the body's condition output is ", binding_name(outs[0])));
      OM_ASSIGN_OR_RETURN(cond, known_bool(outs[0].elems[0], n, body->outputs[0].name, "the body's condition output"));
      for (size_t j = 0; j < num_carried; ++j) carried[j] = outs[1 + j];
      for (size_t j = 0; j < num_scan; ++j) {
        const Binding& s = outs[1 + num_carried + j];
        if (s.kind != Binding::Tensor)
          return Status::error(ErrorKind::Unsupported, msg(n.label(), ": scan output '", body->outputs[1 + num_carried + j].name, "' is ",
                                                           binding_name(s), "; scan outputs are tensors"));
        scans[j].push_back(s.elems[0]);
      }
    }
    std::vector<Binding> results = carried;
    for (size_t j = 0; j < num_scan; ++j) {
      const size_t o = num_carried + j;
      OM_ASSIGN_OR_RETURN(Binding b, stack(n, scans[j], o < n.outputs.size() && !n.outputs[o].empty() ? n.outputs[o] : "scan"));
      results.push_back(std::move(b));
    }
    bind_outputs(n, scope, std::move(results));
    return Status::ok();
  }

  Status lower_sequence_map(const Node& n, Scope& scope) {
    const Graph* body = nullptr;
    for (const auto& a : n.attributes)
      if (a.name == "body") body = a.g.get();
    if (!body) return Status::error(ErrorKind::Format, msg(n.label(), ": needs a body"));
    if (body->inputs.size() != n.inputs.size() || body->outputs.size() != n.outputs.size())
      return Status::error(ErrorKind::Format, msg(n.label(), ": the body takes ", body->inputs.size(), " inputs and gives ",
                                                        body->outputs.size(), " outputs; the node has ", n.inputs.size(), " and ",
                                                        n.outputs.size()));
    std::vector<const Binding*> ins;
    int64_t length = -1;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      OM_ASSIGN_OR_RETURN(const Binding* b, bind(scope, n, n.inputs[i]));
      if (b->kind == Binding::None)
        return Status::error(ErrorKind::Format, msg(n.label(), ": input ", i, " '", n.inputs[i], "' is an empty optional"));
      if (b->kind == Binding::Sequence) {
        if (length >= 0 && int64_t(b->elems.size()) != length)
          return Status::error(ErrorKind::ShapeMismatch, msg(n.label(), ": its sequences have ", length, " and ", b->elems.size(),
                                                             " elements; SequenceMap needs sequences of one length"));
        length = int64_t(b->elems.size());
      }
      ins.push_back(b);
    }
    if (ins.empty() || ins[0]->kind != Binding::Sequence)
      return Status::error(ErrorKind::Format, msg(n.label(), ": its first input must be a sequence"));
    std::vector<Binding> results(n.outputs.size(), Binding{Binding::Sequence, {}});
    for (int64_t k = 0; k < length; ++k) {
      OM_TRY(count_iteration(n));
      Scope inner;
      inner.parent = &scope;
      for (size_t i = 0; i < ins.size(); ++i)
        inner.names[body->inputs[i].name] =
            ins[i]->kind == Binding::Sequence ? Binding{Binding::Tensor, {ins[i]->elems[size_t(k)]}} : *ins[i];
      std::vector<Binding> outs;
      OM_TRY(inline_graph(*body, inner, &outs));
      for (size_t o = 0; o < outs.size(); ++o) {
        if (outs[o].kind != Binding::Tensor)
          return Status::error(ErrorKind::Unsupported, msg(n.label(), ": body output '", body->outputs[o].name, "' is ",
                                                           binding_name(outs[o]), "; SequenceMap collects tensors"));
        results[o].elems.push_back(outs[o].elems[0]);
      }
    }
    bind_outputs(n, scope, std::move(results));
    return Status::ok();
  }

  Result<const Binding*> sequence_in(const Scope& scope, const Node& n, size_t i) {
    OM_ASSIGN_OR_RETURN(const Binding* b, bind(scope, n, n.inputs[i]));
    if (b->kind != Binding::Sequence)
      return Status::error(ErrorKind::Format,
                           msg(n.label(), ": input ", i, " '", n.inputs[i], "' is ", binding_name(*b), "; this input takes a sequence"));
    return b;
  }

  // A position into a sequence of `size` elements: negative from the end, within [-size, size)
  // (or [-size, size] when inserting).
  Result<size_t> position(const Scope& scope, const Node& n, size_t i, size_t size, bool insert) {
    OM_ASSIGN_OR_RETURN(int64_t p, known_int(scope, n, i, "the position"));
    const int64_t s = int64_t(size);
    const int64_t hi = insert ? s : s - 1;
    if (p < -s || p > hi)
      return Status::error(ErrorKind::InvalidArgument, msg(n.label(), ": position ", p, " is outside [", -s, ", ", hi, "] for a sequence of ",
                                                           size, " elements"));
    return size_t(p < 0 ? p + s : p);
  }

  Status lower_sequence_op(const Node& n, Scope& scope) {
    const std::string& t = n.op_type;
    auto out = [&](Binding b) {
      if (!n.outputs.empty() && !n.outputs[0].empty()) scope.names[n.outputs[0]] = std::move(b);
    };
    if (t == "SequenceConstruct") {
      Binding b{Binding::Sequence, {}};
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        OM_ASSIGN_OR_RETURN(std::string e, tensor_in(scope, n, i));
        b.elems.push_back(e);
      }
      out(std::move(b));
    } else if (t == "SequenceEmpty") {
      out(Binding{Binding::Sequence, {}});
    } else if (t == "SequenceAt") {
      OM_ASSIGN_OR_RETURN(const Binding* s, sequence_in(scope, n, 0));
      OM_ASSIGN_OR_RETURN(size_t p, position(scope, n, 1, s->elems.size(), false));
      out(Binding{Binding::Tensor, {s->elems[p]}});
    } else if (t == "SequenceInsert") {
      OM_ASSIGN_OR_RETURN(const Binding* s, sequence_in(scope, n, 0));
      OM_ASSIGN_OR_RETURN(std::string e, tensor_in(scope, n, 1));
      Binding b = *s;
      size_t p = b.elems.size();
      if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
        OM_ASSIGN_OR_RETURN(p, position(scope, n, 2, b.elems.size(), true));
      }
      b.elems.insert(b.elems.begin() + std::ptrdiff_t(p), e);
      out(std::move(b));
    } else if (t == "SequenceErase") {
      OM_ASSIGN_OR_RETURN(const Binding* s, sequence_in(scope, n, 0));
      Binding b = *s;
      if (b.elems.empty()) return Status::error(ErrorKind::InvalidArgument, msg(n.label(), ": erasing from an empty sequence"));
      size_t p = b.elems.size() - 1;
      if (n.inputs.size() > 1 && !n.inputs[1].empty()) {
        OM_ASSIGN_OR_RETURN(p, position(scope, n, 1, b.elems.size(), false));
      }
      b.elems.erase(b.elems.begin() + std::ptrdiff_t(p));
      out(std::move(b));
    } else if (t == "SequenceLength") {
      OM_ASSIGN_OR_RETURN(const Binding* s, sequence_in(scope, n, 0));
      out(Binding{Binding::Tensor, {const_i64(n.outputs[0], int64_t(s->elems.size()), true)}});
    } else if (t == "SplitToSequence") {
      OM_ASSIGN_OR_RETURN(std::string x, tensor_in(scope, n, 0));
      const Known* split = nullptr;
      if (n.inputs.size() > 1 && !n.inputs[1].empty()) {
        OM_ASSIGN_OR_RETURN(std::string s, tensor_in(scope, n, 1));
        OM_ASSIGN_OR_RETURN(split, known(s));
      }
      if (!split || split->desc.shape.size() != 1 || split->desc.dtype != DType::i64)
        return Status::error(ErrorKind::Unsupported, msg(n.label(), ": onemodel needs a 1-D i64 split known when planning (it fixes the "
                                                         "sequence's length); without one, or with a scalar split, give the sizes as a 1-D constant"));
      const int64_t parts = split->desc.shape[0];
      Node sp;
      sp.op_type = "Split";
      sp.name = n.name;
      sp.attributes.push_back(graph::Attribute::of_int("axis", n.attr_int("axis", 0)));
      const std::string sizes = add_const(n.outputs[0] + "_split", DType::i64, {parts}, split->desc.data, size_t(parts) * sizeof(int64_t));
      sp.inputs = {x, sizes};
      Binding b{Binding::Sequence, {}};
      for (int64_t k = 0; k < parts; ++k) {
        sp.outputs.push_back(fresh(n.outputs[0], false));
        b.elems.push_back(sp.outputs.back());
      }
      OM_TRY(check_budget(n));
      result_.graph.nodes.push_back(std::move(sp));
      out(std::move(b));
    } else if (t == "ConcatFromSequence") {
      OM_ASSIGN_OR_RETURN(const Binding* s, sequence_in(scope, n, 0));
      if (s->elems.empty())
        return Status::error(ErrorKind::InvalidArgument, msg(n.label(), ": the sequence is empty; concatenating needs one element at least"));
      const int64_t axis = n.attr_int("axis", 0);
      Node c;
      c.op_type = "Concat";
      c.name = n.name;
      c.attributes.push_back(graph::Attribute::of_int("axis", axis));
      if (n.attr_int("new_axis", 0) != 0) {
        const std::string axes = const_i64(n.outputs[0] + "_axes", axis, false);
        for (const auto& e : s->elems) {
          Node u;
          u.op_type = "Unsqueeze";
          u.inputs = {e, axes};
          u.outputs = {fresh(n.outputs[0] + "_part", false)};
          c.inputs.push_back(u.outputs[0]);
          result_.graph.nodes.push_back(std::move(u));
        }
      } else {
        c.inputs = s->elems;
      }
      c.outputs = {fresh(n.outputs[0], false)};
      out(Binding{Binding::Tensor, {c.outputs[0]}});
      result_.graph.nodes.push_back(std::move(c));
      OM_TRY(check_budget(n));
    } else if (t == "SequenceMap") {
      return lower_sequence_map(n, scope);
    } else if (t == "Optional") {
      if (n.inputs.empty() || n.inputs[0].empty()) {
        out(Binding{Binding::None, {}});
      } else {
        OM_ASSIGN_OR_RETURN(const Binding* b, bind(scope, n, n.inputs[0]));
        out(*b);
      }
    } else if (t == "OptionalHasElement") {
      bool has = false;
      if (!n.inputs.empty() && !n.inputs[0].empty()) {
        OM_ASSIGN_OR_RETURN(const Binding* b, bind(scope, n, n.inputs[0]));
        has = b->kind != Binding::None;
      }
      out(Binding{Binding::Tensor, {const_bool(n.outputs[0], has)}});
    } else if (t == "OptionalGetElement") {
      OM_ASSIGN_OR_RETURN(const Binding* b, bind(scope, n, n.inputs[0]));
      if (b->kind == Binding::None)
        return Status::error(ErrorKind::InvalidArgument, msg(n.label(), ": '", n.inputs[0], "' is an empty optional; it has no element"));
      out(*b);
    } else {
      return Status::error(ErrorKind::Unsupported, msg(n.label(), ": the sequence lowering does not know this operator"));
    }
    return Status::ok();
  }

  Status lower_nodes(const Graph& g, Scope& scope, bool top) {
    if (++depth_ > graph::kMaxSubgraphDepth * 2) return Status::error(ErrorKind::Unsupported, "the sequence lowering nests too deep");
    for (const Node& n : g.nodes) {
      OM_TRY(check_budget(n));
      const graph::OpDef* op = graph::find_op(n.domain, n.op_type);
      if (op && (op->flags & graph::kOpSequence)) {
        OM_TRY(lower_sequence_op(n, scope));
      } else if (is_op(n, "Identity") && n.inputs.size() == 1) {
        OM_ASSIGN_OR_RETURN(const Binding* b, bind(scope, n, n.inputs[0]));
        if (b->kind == Binding::Tensor) OM_TRY(lower_tensor_node(n, scope, top));
        else if (!n.outputs.empty()) scope.names[n.outputs[0]] = *b;  // a sequence or optional passes through
      } else if (is_op(n, "If")) {
        OM_TRY(lower_if(n, scope, top));
      } else if (is_op(n, "Loop")) {
        OM_TRY(lower_loop(n, scope, top));
      } else {
        OM_TRY(lower_tensor_node(n, scope, top));
      }
    }
    --depth_;
    return Status::ok();
  }

  static constexpr size_t kMaxLoweredNodes = size_t(1) << 16;
  static constexpr int64_t kMaxUnrolled = 4096;  // Loop and SequenceMap iterations, all together
  static constexpr size_t kMaxReadBytes = size_t(1) << 16;  // the values a structure may depend on
  static constexpr int kMaxKnownDepth = 256;

  const Graph& src_;
  const SessionOptions& options_;
  const std::vector<BoundInput>& inputs_;
  const bool unroll_loops_;
  Lowered result_;
  std::unordered_set<std::string> reserved_, claimed_;
  std::unordered_map<std::string, Known> known_;
  std::unordered_map<std::string, size_t> producer_;
  std::unordered_map<std::string, size_t> initializer_;  // the lowered graph's initializers by name
  std::unordered_map<std::string, uint64_t> next_suffix_;
  std::unordered_map<std::string, std::pair<size_t, size_t>> input_slot_;
  int64_t unrolled_ = 0;
  int depth_ = 0;
};

}  // namespace

// A session over a graph with sequences: the lowered graphs, each with its inner session.
class SequenceRunner {
 public:
  struct Entry {
    std::vector<int64_t> key;
    Lowered lowered;
    Session session;
  };

  Graph graph;
  SessionOptions options;
  bool unroll_loops = false;
  std::string why;  // why every Loop is unrolled (empty when only sequences are lowered)
  std::vector<size_t> positional;  // the source inputs given without a name, in order
  Mutex mu;
  std::vector<std::shared_ptr<Entry>> entries;  // least recently used first
  std::shared_ptr<Entry> last;

  Status bind(const ValueView* inputs, size_t n, std::vector<BoundInput>* bound) const;
  Status run(const ValueView* inputs, size_t n, ValueSink sink, void* sink_ctx);
};

namespace {

bool kind_fits(ValueKind declared, const ValueView& v) {
  switch (declared) {
    case ValueKind::Tensor: return v.kind == ValueKind::Tensor;
    case ValueKind::Sequence: return v.kind == ValueKind::Sequence;
    case ValueKind::Optional: return v.kind == ValueKind::Optional || v.kind == ValueKind::Tensor;
    case ValueKind::OptionalSequence: return v.kind == ValueKind::OptionalSequence || v.kind == ValueKind::Sequence;
  }
  return false;
}

// The structure's key: per source input, what was given (kind, presence, per element the dtype
// and rank). The values the lowering read are compared apart.
std::vector<int64_t> structure_key(const std::vector<BoundInput>& bound) {
  std::vector<int64_t> key;
  for (const BoundInput& b : bound) {
    if (!b.view) {
      key.push_back(-1);
      continue;
    }
    key.push_back(int64_t(b.view->kind) * 2 + b.view->present);
    key.push_back(int64_t(b.view->count));
    for (size_t e = 0; e < b.view->count; ++e) key.push_back(int64_t(b.view->elements[e].dtype) * 64 + int64_t(b.view->elements[e].rank));
  }
  return key;
}

}  // namespace

Status SequenceRunner::bind(const ValueView* inputs, size_t n, std::vector<BoundInput>* bound) const {
  bound->assign(graph.inputs.size(), BoundInput{});
  if (n > 0 && !inputs) return Status::error(ErrorKind::InvalidArgument, "Session::run_values: inputs announced but the array is null");
  size_t pos = 0;
  for (size_t i = 0; i < n; ++i) {
    const ValueView& v = inputs[i];
    size_t slot = graph.inputs.size();
    if (v.name) {
      slot = graph.find_input(v.name);
      if (slot == graph.inputs.size())
        return Status::error(ErrorKind::InvalidArgument, msg("Session::run_values: no input named '", v.name, "'"));
    } else {
      if (pos >= positional.size())
        return Status::error(ErrorKind::InvalidArgument, msg("Session::run_values: got more than the ", positional.size(), " inputs the model takes"));
      slot = positional[pos++];
    }
    const graph::ValueInfo& vi = graph.inputs[slot];
    if ((*bound)[slot].view) return Status::error(ErrorKind::InvalidArgument, msg("Session::run_values: input '", vi.name, "' is given twice"));
    if (!kind_fits(vi.kind, v))
      return Status::error(ErrorKind::InvalidArgument, msg("Session::run_values: input '", vi.name, "' is ", graph::value_kind_name(vi.kind),
                                                           ", got ", graph::value_kind_name(v.kind)));
    const bool optional = vi.kind == ValueKind::Optional || vi.kind == ValueKind::OptionalSequence;
    if (!v.present && !optional)
      return Status::error(ErrorKind::InvalidArgument, msg("Session::run_values: input '", vi.name, "' is not optional; give its value"));
    const bool seq = v.kind == ValueKind::Sequence || v.kind == ValueKind::OptionalSequence;
    const size_t want = !v.present ? 0 : seq ? v.count : 1;
    if (v.count != want)
      return Status::error(ErrorKind::InvalidArgument, msg("Session::run_values: input '", vi.name, "' gives ", v.count, " tensors, a ",
                                                           v.present ? graph::value_kind_name(v.kind) : "empty optional", " has ",
                                                           seq ? "any number" : std::to_string(want)));
    if (v.count > 0 && !v.elements)
      return Status::error(ErrorKind::InvalidArgument, msg("Session::run_values: input '", vi.name, "' has a null element array"));
    for (size_t e = 0; e < v.count; ++e) {
      const TensorView& t = v.elements[e];
      if (vi.has_type && t.dtype != vi.dtype)
        return Status::error(ErrorKind::DTypeMismatch, msg("Session::run_values: input '", vi.name, "' element ", e, " must be ",
                                                           dtype_name(vi.dtype), ", got ", dtype_name(t.dtype)));
      if (t.rank > graph::kMaxRank || (t.rank > 0 && !t.dims))
        return Status::error(ErrorKind::InvalidArgument, msg("Session::run_values: input '", vi.name, "' element ", e, " has rank ", t.rank,
                                                             t.rank > graph::kMaxRank ? ", above the supported maximum" : " but no dims"));
      int64_t numel = 0;
      if (!checked_numel(t.dims, t.rank, &numel))
        return Status::error(ErrorKind::ShapeMismatch, check_shape(msg("Session::run_values: input '", vi.name, "'"), t.dims, t.rank).message());
    }
    (*bound)[slot].view = &v;
  }
  for (size_t j = 0; j < graph.inputs.size(); ++j)
    if (!(*bound)[j].view && !graph.find_initializer(graph.inputs[j].name))
      return Status::error(ErrorKind::InvalidArgument, msg("Session::run_values: input '", graph.inputs[j].name, "' was not given"));
  return Status::ok();
}

Status SequenceRunner::run(const ValueView* inputs, size_t n, ValueSink sink, void* sink_ctx) {
  std::vector<BoundInput> bound;
  OM_TRY(bind(inputs, n, &bound));
  const std::vector<int64_t> key = structure_key(bound);
  std::shared_ptr<Entry> entry;
  {
    std::lock_guard<Mutex> lock(mu);
    for (size_t i = 0; i < entries.size() && !entry; ++i) {
      const Entry& e = *entries[i];
      bool match = e.key == key;
      for (const auto& r : e.lowered.reads) {
        if (!match) break;
        const TensorView& t = bound[r.first].view->elements[0];
        match = size_t(t.numel()) * dtype_size(t.dtype) == r.second.size() &&
                (r.second.empty() || std::memcmp(t.data, r.second.data(), r.second.size()) == 0);
      }
      if (match) {
        entry = entries[i];
        std::rotate(entries.begin() + std::ptrdiff_t(i), entries.begin() + std::ptrdiff_t(i) + 1, entries.end());
      }
    }
    if (!entry) {
      Lowerer lowerer(graph, options, bound, unroll_loops);
      auto lowered = lowerer.lower();
      if (!lowered.is_ok() && unroll_loops)
        return Status::error(lowered.status().kind(), msg(why, "; unrolling the loops for the inputs given failed too: ", lowered.status().message()));
      if (!lowered.is_ok()) return lowered.status().with_context("om::Session: lowering sequences and optionals");
      entry = std::make_shared<Entry>();
      entry->key = key;
      entry->lowered = std::move(lowered).value();
      SessionOptions inner = options;
      OM_TRY(Session::create(entry->lowered.graph, inner, &entry->session).with_context("om::Session: the lowered graph"));
      if (entries.size() >= options.max_cached_plans) entries.erase(entries.begin());
      entries.push_back(entry);
    }
    last = entry;
  }
  const Lowered& L = entry->lowered;
  std::vector<TensorView> ins(L.feeds.size());
  for (size_t i = 0; i < L.feeds.size(); ++i) {
    ins[i] = bound[L.feeds[i].input].view->elements[L.feeds[i].element];
    ins[i].name = L.graph.inputs[i].name.c_str();
  }
  // A fed overridable initializer is among the feeds (a tensor input keeps its name).
  std::vector<TensorView> outs(L.graph.outputs.size());
  struct Ctx {
    const Lowered* lowered;
    const Graph* source;
    ValueSink sink;
    void* ctx;
  } c{&L, &graph, sink, sink_ctx};
  return entry->session.run_with(
      ins.data(), ins.size(), outs.data(), outs.size(),
      [](void* p, const TensorView* views, size_t) {
        const Ctx& c = *static_cast<const Ctx*>(p);
        std::vector<std::vector<TensorView>> elems(c.lowered->outputs.size());
        std::vector<ValueView> values(c.lowered->outputs.size());
        for (size_t i = 0; i < values.size(); ++i) {
          const Lowered::Out& o = c.lowered->outputs[i];
          for (size_t k : o.outputs) elems[i].push_back(views[k]);
          for (auto& e : elems[i]) e.name = c.source->outputs[i].name.c_str();
          values[i].name = c.source->outputs[i].name.c_str();
          values[i].kind = o.kind;
          values[i].present = o.present;
          values[i].elements = elems[i].data();
          values[i].count = elems[i].size();
        }
        if (c.sink) c.sink(c.ctx, values.data(), values.size());
      },
      &c);
}

namespace {

Result<std::shared_ptr<SequenceRunner>> create_runner(const Graph& g, const SessionOptions& options, bool unroll_loops,
                                                      const std::string& why) {
  auto r = std::make_shared<SequenceRunner>();
  r->graph = g;
  r->options = options;
  r->unroll_loops = unroll_loops;
  r->why = why;
  for (size_t j = 0; j < g.inputs.size(); ++j)
    if (!g.find_initializer(g.inputs[j].name)) r->positional.push_back(j);
  return r;
}

Status run_runner(SequenceRunner& r, const ValueView* inputs, size_t n, ValueSink sink, void* ctx) { return r.run(inputs, n, sink, ctx); }

size_t cached_runner(const SequenceRunner& r) {
  std::lock_guard<Mutex> lock(const_cast<SequenceRunner&>(r).mu);
  return r.entries.size();
}

PlanStats last_runner_stats(const SequenceRunner& r) {
  std::shared_ptr<SequenceRunner::Entry> e;
  {
    std::lock_guard<Mutex> lock(const_cast<SequenceRunner&>(r).mu);
    e = r.last;
  }
  return e ? e->session.last_plan_stats() : PlanStats{};
}

}  // namespace

extern const SequenceHooks kSequenceHooks;
const SequenceHooks kSequenceHooks{&create_runner, &run_runner, &cached_runner, &last_runner_stats};

}  // namespace om::runtime
