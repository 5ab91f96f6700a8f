// compute_f16_in_f32: f16 (and bf16) storage with f32 arithmetic (docs/graph-passes.md). The
// registry's float operators have f32 kernels only, so an f16 model is run as regions of f32
// computation: values enter a region exactly (every f16 is an f32: initializers are converted
// once, other values through an inserted Cast(to=f32)) and leave it rounded to nearest even by a
// Cast(to=f16) only where f16 is needed — a graph output, or a node of an operator whose record
// does not carry kOpF16InF32 (a Cast the model wrote, Shape...). Between two operators that carry
// it nothing is rounded. bf16 values (also exact in f32) go through the same rewrite, run once
// per storage dtype; below, "f16" stands for the one being rewritten.
#include <cstring>
#include <functional>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "onemodel/graph/op_registry.h"
#include "onemodel/graph/passes/pass.h"

namespace om::graph::passes {
namespace {

constexpr int64_t kOnnxFloat = 1;  // TensorProto.DataType code of Cast's `to` (DType's codes are ONNX's)

// A default-domain operator whose record says its f16 form is computed in f32 (kOpF16InF32):
// it joins regions. Split is the one such op whose every output is a float of T.
bool computed_in_f32(const Node& n) {
  if (!is_default_domain(n.domain)) return false;
  const OpDef* op = find_op(n.domain, n.op_type);
  return op && (op->flags & kOpF16InF32);
}

// An f16 value of the model and where its two forms live: `f16` names the value holding it in
// f16 ("" until an exit Cast makes one), `f32` its exact f32 equivalent ("" until an entry
// makes one). A region value (written by a listed op) starts with f32 only.
struct Forms {
  std::string f16, f32;
};

class F16Rewrite {
 public:
  // `storage`: f16 or bf16, the dtype this rewrite takes into f32 regions.
  F16Rewrite(Graph& g, DefUse& u, DType storage) : g_(g), u_(u), storage_(storage), code_(int64_t(storage)) {
    for (const auto& v : g.inputs)
      if (v.dtype == storage_) forms_[v.name].f16 = v.name;
    for (const auto& t : g.initializers)
      if (t.dtype == storage_) forms_[t.name].f16 = t.name;
    for (const auto& v : g.value_info)
      if (v.dtype == storage_) hinted_.insert(v.name);
  }

  size_t node(size_t i) {
    const Node& n = g_.nodes[i];
    if (is_default_domain(n.domain) && n.op_type == "Cast") return cast(i);
    if (computed_in_f32(n) && reads_f16(n)) return compute_in_f32(i);
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const std::string in = g_.nodes[i].inputs[k];  // a copy: an inserted Cast moves the nodes
      if (forms_.count(in)) {
        const std::string h = exit16(in);
        if (h != in) u_.set_input(i, k, h);
      }
    }
    const Node& m = g_.nodes[i];
    for (const auto& o : m.outputs)
      if (hinted_.count(o)) forms_[o].f16 = o;  // an op that writes f16 itself: a value the listed ops may read
    if (m.op_type == "Constant" && is_default_domain(m.domain) && !m.outputs.empty()) {
      const Attribute* a = m.attr("value");
      if (a && a->t && a->t->dtype == storage_) forms_[m.outputs[0]].f16 = m.outputs[0];
    }
    return 0;
  }

  // Region values keep their names with f32 contents: their value_info entries say so.
  void retype_value_info() {
    for (auto& v : g_.value_info)
      if (region_.count(v.name)) v.dtype = DType::f32;
  }

 private:
  bool reads_f16(const Node& n) const {
    for (const auto& in : n.inputs)
      if (!in.empty() && forms_.count(in)) return true;
    return false;
  }

  size_t compute_in_f32(size_t i) {
    const size_t num_inputs = g_.nodes[i].inputs.size();
    for (size_t k = 0; k < num_inputs; ++k) {
      const std::string in = g_.nodes[i].inputs[k];
      if (in.empty() || !forms_.count(in)) continue;
      const std::string f = entry32(in, i);
      if (f != in) u_.set_input(i, k, f);
    }
    const bool all = g_.nodes[i].op_type == "Split";
    const size_t num_outputs = all ? g_.nodes[i].outputs.size() : std::min<size_t>(1, g_.nodes[i].outputs.size());
    for (size_t k = 0; k < num_outputs; ++k) {
      const std::string o = g_.nodes[i].outputs[k];
      if (o.empty()) continue;
      Forms& f = forms_[o];
      f = Forms{};
      if (u_.is_output(o)) {
        // The graph output keeps its name and its f16 dtype: the node writes an f32 twin and an
        // exit Cast writes the output.
        f.f32 = u_.fresh_name(o + "_f32");
        u_.set_output(i, k, f.f32);
        u_.insert_after(i, cast_node(f.f32, o, code_));
        f.f16 = o;
      } else {
        f.f32 = o;
        region_.insert(o);
      }
      producer_of_f32_[f.f32] = i;
    }
    return 1;
  }

  size_t cast(size_t i) {
    const Node& n = g_.nodes[i];
    if (n.inputs.empty() || n.outputs.empty()) return 0;
    const std::string in = n.inputs[0], out = n.outputs[0];
    const int64_t to = n.attr_int("to", -1);
    if (to == code_) {
      // f16 -> f16 in the model reads the region's f32 value: rounding it is the region's exit.
      std::string src = in;
      if (forms_.count(in) && !forms_[in].f32.empty()) src = forms_[in].f32;
      if (src != in) u_.set_input(i, 0, src);
      auto w = widened_.find(src);
      if (w == widened_.end()) {
        forms_[out] = Forms{out, std::string()};
        return 0;
      }
      // Cast(to=f16) of an exact widening of an f16 value s is s itself: f16 -> f32 -> f16 is
      // the identity, so the pair folds (never f32 -> f16 -> f32, which rounds).
      if (u_.is_output(out)) {
        forms_[out] = Forms{out, src};
        return 0;
      }
      forms_[out] = Forms{w->second, src};
      u_.drop(i);
      return 1;
    }
    if (!forms_.count(in)) return 0;
    // Any other Cast sees f16, as the model wrote it: a region value leaves rounded.
    const std::string h = exit16(in);
    if (h != in) u_.set_input(i, 0, h);
    if (to == kOnnxFloat) {
      widened_[out] = h;
      if (forms_[h].f32.empty()) forms_[h].f32 = out;  // later listed readers of h reuse the model's widening
    }
    return 0;
  }

  // The f32 form of f16 value `v`, made for node i (the final sort places inserted Casts).
  std::string entry32(const std::string& v, size_t i) {
    Forms& f = forms_[v];
    if (!f.f32.empty()) return f.f32;
    const std::string src = f.f16;
    if (const TensorData* t = u_.constant(src)) {
      // Converted once, exactly: every f16 (and bf16) is an f32.
      std::vector<float> vals(size_t(t->numel()));
      for (size_t k = 0; k < vals.size(); ++k) {
        uint16_t bits;
        std::memcpy(&bits, t->bytes + 2 * k, 2);
        vals[k] = storage_ == DType::bf16 ? bf16_to_float(bfloat16{bits}) : half_to_float(half{bits});
      }
      const std::string name = u_.fresh_name(src + "_f32");
      u_.add_initializer(TensorData::from_vector(name, t->dims, vals));
      f.f32 = name;
    } else {
      const std::string name = u_.fresh_name(src + "_f32");
      const size_t p = u_.producer(src);
      u_.insert_after(p != DefUse::kNone && p < first_inserted_ ? p : i, cast_node(src, name, kOnnxFloat));
      f.f32 = name;
    }
    forms_[v].f32 = f.f32;
    widened_[f.f32] = src;
    return f.f32;
  }

  // The f16 form of `v`: a region value rounds to nearest even once, at its first reader that
  // needs f16, and every later such reader shares that Cast.
  std::string exit16(const std::string& v) {
    Forms& f = forms_[v];
    if (!f.f16.empty()) return f.f16;
    const std::string name = u_.fresh_name(v + "_" + dtype_name(storage_));
    u_.insert_after(producer_of_f32_.at(f.f32), cast_node(f.f32, name, code_));
    forms_[v].f16 = name;
    forms_[name].f16 = name;
    return name;
  }

  Node cast_node(const std::string& in, const std::string& out, int64_t to) {
    Node c;
    c.op_type = "Cast";
    c.name = u_.fresh_name(out + "_cast");
    c.inputs = {in};
    c.outputs = {out};
    c.attributes = {Attribute::of_int("to", to)};
    return c;
  }

 public:
  size_t first_inserted_ = SIZE_MAX;  // node indices from here on are the pass's own Casts

 private:
  Graph& g_;
  DefUse& u_;
  DType storage_;
  int64_t code_;  // Cast's `to` for storage_
  std::unordered_map<std::string, Forms> forms_;
  std::unordered_map<std::string, std::string> widened_;  // f32 value -> the f16 value it exactly widens
  std::unordered_map<std::string, size_t> producer_of_f32_;
  std::unordered_set<std::string> region_, hinted_;
};

// Inserted entry Casts of graph inputs and initializers follow the node that first needed
// them; this stable topological order (lowest position first among the ready nodes) moves
// them just before it and leaves every other node where it was.
void sort_stable(Graph& g) {
  const size_t n = g.nodes.size();
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < n; ++i)
    for (const auto& o : g.nodes[i].outputs)
      if (!o.empty()) producer[o] = i;
  std::vector<std::vector<size_t>> next(n);
  std::vector<size_t> waiting(n, 0);
  for (size_t i = 0; i < n; ++i)
    for (const auto& in : g.nodes[i].inputs) {
      auto it = in.empty() ? producer.end() : producer.find(in);
      if (it == producer.end() || it->second == i) continue;
      next[it->second].push_back(i);
      ++waiting[i];
    }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
  for (size_t i = 0; i < n; ++i)
    if (!waiting[i]) ready.push(i);
  std::vector<Node> sorted;
  sorted.reserve(n);
  while (!ready.empty()) {
    const size_t i = ready.top();
    ready.pop();
    sorted.push_back(std::move(g.nodes[i]));
    for (size_t j : next[i])
      if (--waiting[j] == 0) ready.push(j);
  }
  if (sorted.size() == n) g.nodes = std::move(sorted);  // otherwise verify() reports the graph as it is
}

}  // namespace

Status compute_f16_in_f32(Graph& g, ArithmeticMode, size_t* changes) {
  for (const DType storage : {DType::f16, DType::bf16}) {
    bool any = false;
    for (const auto& v : g.inputs) any = any || v.dtype == storage;
    for (const auto& t : g.initializers) any = any || t.dtype == storage;
    for (const auto& n : g.nodes) any = any || (n.op_type == "Cast" && n.attr_int("to", -1) == int64_t(storage)) || n.op_type == "Constant";
    if (!any) continue;
    DefUse u(g);
    F16Rewrite r(g, u, storage);
    const size_t original = g.nodes.size();
    r.first_inserted_ = original;
    size_t made = 0;
    for (size_t i = 0; i < original; ++i)
      if (!u.dropped(i)) made += r.node(i);
    u.finish();
    r.retype_value_info();
    if (made) sort_stable(g);
    *changes += made;
  }
  return Status::ok();
}

}  // namespace om::graph::passes
