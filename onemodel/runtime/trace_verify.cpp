// Verification of a finished trace (docs/tracing.md, "Verification"). For each symbolic axis in
// turn: new inputs at a second size (random f32 values; other dtypes tile the example's values),
// the model re-run eagerly through the caller's callable, the traced graph run in a Fast
// Session, and the outputs compared. Nothing here changes the graph.
#include "onemodel/runtime/trace_verify.h"
#include "onemodel/trace/state.h"

#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "onemodel/core/error.h"
#include "onemodel/core/grad_mode.h"
#include "onemodel/core/store.h"
#include "onemodel/core/tensor_internal.h"
#include "onemodel/runtime/session.h"

namespace om::trace {
namespace {

struct Symbol {
  std::string name;
  int64_t example = 0;
  int64_t size = 0;  // for the re-run
  bool given = false;  // by TracerOptions::verify_sizes
  // Further sizes to try when the model cannot run at `size` at all (default sizes only).
  std::vector<int64_t> fallbacks;
};

// Sizes the model's strides and pools are likely to allow: above the example, keeping the
// largest power of two (up to 64) that divides it, so a U-Net traced at 20 is re-run at 24 or 28.
std::vector<int64_t> fallback_sizes(int64_t example, int64_t first, const std::set<int64_t>& taken) {
  int64_t g = 1;
  while (g < 64 && example % (g * 2) == 0) g *= 2;
  std::vector<int64_t> out;
  if (g == 1) return out;
  for (int64_t s = (first / g + 1) * g; out.size() < 3; s += g)
    if (!taken.count(s)) out.push_back(s);
  return out;
}

// Inputs for the re-run: each input's axes named `symbol` take `size`.
Result<std::vector<Tensor>> make_inputs(const VerifyPlan& plan, const Symbol& sym, Generator& gen) {
  std::vector<Tensor> out;
  for (const VerifyInput& in : plan.inputs) {
    Shape shape = in.example.shape();
    for (size_t k = 0; k < in.axes.size(); ++k)
      if (in.axes[k] == sym.name) shape[k] = sym.size;
    OM_TRY(check_shape(msg("verification input '", in.name, "'"), shape));
    if (in.example.dtype() == DType::f32) {
      out.push_back(randn(shape, gen));
      continue;
    }
    // integer and bool inputs (indices, masks): the example's values tiled or truncated
    OM_ASSIGN_OR_RETURN(Tensor src, detail::dense(in.example));
    OM_ASSIGN_OR_RETURN(Tensor t, detail::make_tensor(shape, in.example.dtype(), true, "verification"));
    const size_t es = dtype_size(t.dtype());
    const int64_t n = src.numel();
    if (n > 0)
      for (int64_t i = 0; i < t.numel(); ++i)
        std::memcpy(static_cast<char*>(detail::raw(t)) + size_t(i) * es, static_cast<const char*>(detail::raw(src)) + size_t(i % n) * es, es);
    out.push_back(t);
  }
  return out;
}

// Where a size read from a shape was most likely frozen into the graph (docs/tracing.md,
// "Verification"): the first node (in graph order) where a constant holding `size` meets a
// value that depends on a symbolic input axis — an integer constant operand (not the first
// input) holding the value `size`, else a constant with a dim of that size (a constant expanded
// to the example batch, concatenated with traced tokens). Without such a meeting, the first node
// with such a constant at all.
std::string baked_node(const graph::Graph& g, int64_t size) {
  // Values that vary with a symbolic axis: inputs with a dim_param and everything computed from them.
  std::set<std::string> varying;
  for (const graph::ValueInfo& in : g.inputs)
    for (const graph::Dim& d : in.shape)
      if (d.is_symbolic()) varying.insert(in.name);
  std::string by_value, by_dim, meets_dim;
  for (const graph::Node& n : g.nodes) {
    bool meets = false;
    for (const std::string& in : n.inputs) meets = meets || varying.count(in);
    if (meets)
      for (const std::string& out : n.outputs) varying.insert(out);
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const graph::TensorData* c = g.find_initializer(n.inputs[i]);
      if (!c) continue;
      if (i > 0 && (c->dtype == DType::i64 || c->dtype == DType::i32)) {
        const int64_t count = int64_t(c->numel());
        for (int64_t k = 0; k < count; ++k) {
          int64_t v = 0;
          if (c->dtype == DType::i64) std::memcpy(&v, c->bytes + k * 8, 8);
          else {
            int32_t w = 0;
            std::memcpy(&w, c->bytes + k * 4, 4);
            v = w;
          }
          if (v == size) {
            const std::string found = msg("node '", n.name, "' (", n.op_type, ") has a shape operand '", n.inputs[i], "' holding the constant ", size);
            if (meets) return found;
            if (by_value.empty()) by_value = found;
          }
        }
      }
      for (int64_t d : c->dims)
        if (d == size) {
          const std::string found = msg("node '", n.name, "' (", n.op_type, ") reads the constant '", n.inputs[i], "' of shape ", shape_str(c->dims));
          if (meets && meets_dim.empty()) meets_dim = found;
          if (by_dim.empty()) by_dim = found;
          break;
        }
    }
  }
  if (!meets_dim.empty()) return meets_dim;
  return by_value.empty() ? by_dim : by_value;
}

double scaled_error(const Tensor& eager, const Tensor& graph) {
  const std::vector<float> a = eager.contiguous().to_vector<float>(), b = graph.contiguous().to_vector<float>();
  double m = 0, scale = 1;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(double(a[i]) - double(b[i]));
    if (std::isnan(d) && !(std::isnan(a[i]) && std::isnan(b[i]))) return INFINITY;
    if (!std::isnan(d)) m = std::max(m, d);
    scale = std::max(scale, std::fabs(double(a[i])));
  }
  return m / scale;
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  Tensor x = a.contiguous(), y = b.contiguous();
  return std::memcmp(x.storage().data(), y.storage().data(), size_t(x.numel()) * dtype_size(x.dtype())) == 0 &&
         x.storage_offset() == 0 && y.storage_offset() == 0;
}

}  // namespace

Status verify_traced(const graph::Graph& g, const VerifyPlan& plan, const RerunFn& rerun, const TracerOptions& options, const char* call) {
  // The symbols, in order of first appearance, with their example sizes.
  std::vector<Symbol> symbols;
  for (const VerifyInput& in : plan.inputs)
    for (size_t k = 0; k < in.axes.size(); ++k) {
      if (in.axes[k].empty()) continue;
      bool seen = false;
      for (const Symbol& s : symbols) seen = seen || s.name == in.axes[k];
      if (!seen) symbols.push_back({in.axes[k], in.example.shape()[k], 0, false, {}});
    }
  if (symbols.empty()) return Status::ok();
  std::set<int64_t> taken = plan.static_sizes;
  for (const Symbol& s : symbols) taken.insert(s.example);
  for (Symbol& s : symbols) {
    for (const auto& [name, size] : options.verify_sizes)
      if (name == s.name) {
        s.size = size;
        s.given = true;
      }
    if (s.size == 0) {
      s.size = s.example + 1;
      while (taken.count(s.size)) ++s.size;
      s.fallbacks = fallback_sizes(s.example, s.size, taken);
    } else if (s.size < 2 || s.size == s.example) {
      return Status::error(ErrorKind::InvalidArgument, msg(call, ": TracerOptions::verify_sizes gives symbolic axis '", s.name, "' the size ", s.size,
                                                           "; choose a size of at least 2 that differs from its example size ", s.example));
    }
    taken.insert(s.size);
  }

  StoreScope scope;  // everything the re-runs allocate comes back at the end
  Generator gen(options.verify_seed);
  Session session(g);
  for (Symbol& s : symbols) {
    std::string head = msg(call, ": verification of symbolic axis '", s.name, "' failed (traced at size ", s.example, ", re-run at size ",
                                 s.size, "): ");
    std::string tail;
    {
      const std::string baked = baked_node(g, s.example);
      auto suspect = plan.suspects.find(s.name);
      if (!baked.empty()) tail = msg(". The likely cause: ", baked, ", the example size of '", s.name, "'");
      else if (suspect != plan.suspects.end()) tail = msg(". The likely cause: ", suspect->second, ", the example size of '", s.name, "'");
      tail += msg(". A size read from a tensor's shape was frozen into the graph (docs/tracing.md, \"Symbolic axes\"): compute it with tensor "
                  "operators, or trace with example sizes that differ from every fixed size of the model. TracerOptions::verify = false "
                  "switches this check off; verify_sizes chooses the sizes");
    }
    std::vector<Tensor> inputs;
    std::vector<Tensor> eager;
    std::vector<Tensor> traced;
#if defined(__cpp_exceptions)
    // The re-run is user code and the Session's edge throws: either failing names the axis. When
    // the model itself cannot run at a default size (the eager run fails, before the graph is
    // involved), the next sizes its strides and pools allow are tried.
    std::vector<int64_t> tried;
    for (;;) {
      OM_ASSIGN_OR_RETURN(inputs, make_inputs(plan, s, gen));
      try {
        NoGradGuard no_grad;
        eager = rerun(inputs);
        break;
      } catch (const Error& e) {
        tried.push_back(s.size);
        if (s.given)
          return Status::trace(TraceErrorKind::SymbolicShape, msg(head, "the eager re-run failed: ", e.what(), tail));
        if (s.fallbacks.empty()) {
          std::string sizes;
          for (int64_t t : tried) sizes += (sizes.empty() ? "" : ", ") + std::to_string(t);
          return Status::trace(TraceErrorKind::SymbolicShape,
                               msg(call, ": verification of symbolic axis '", s.name, "' (traced at size ", s.example,
                                   ") could not run the model itself at size", tried.size() > 1 ? "s " : " ", sizes,
                                   " (the eager run failed: ", e.what(), "); nothing is known to be wrong with the graph. Give a size the model "
                                   "accepts with TracerOptions::verify_sizes (for example {\"", s.name, "\", N}), or set verify = false"));
        }
        s.size = s.fallbacks.front();
        s.fallbacks.erase(s.fallbacks.begin());
        head = msg(call, ": verification of symbolic axis '", s.name, "' failed (traced at size ", s.example, ", re-run at size ", s.size, "): ");
      }
    }
    std::vector<std::pair<std::string, Tensor>> feeds;
    for (size_t i = 0; i < inputs.size(); ++i) feeds.push_back({plan.inputs[i].name, inputs[i]});
    try {
      traced = session.run(feeds);
    } catch (const Error& e) {
      return Status::trace(TraceErrorKind::SymbolicShape, msg(head, "the traced graph does not run at this size: ", e.what(), tail));
    }
#else
    // Without exceptions a failure goes to the error handler (docs/deploying.md).
    OM_ASSIGN_OR_RETURN(inputs, make_inputs(plan, s, gen));
    std::vector<std::pair<std::string, Tensor>> feeds;
    for (size_t i = 0; i < inputs.size(); ++i) feeds.push_back({plan.inputs[i].name, inputs[i]});
    {
      NoGradGuard no_grad;
      eager = rerun(inputs);
    }
    traced = session.run(feeds);
#endif
    if (eager.size() != traced.size())
      return Status::error(ErrorKind::InvalidArgument, msg(call, ": the re-run callable returned ", eager.size(), " outputs but the trace has ",
                                                           traced.size(), "; return them in the order given to finish"));
    for (size_t i = 0; i < eager.size(); ++i) {
      const std::string& name = g.outputs[i].name;
      if (!eager[i].defined() || eager[i].shape() != traced[i].shape() || eager[i].dtype() != traced[i].dtype())
        return Status::trace(TraceErrorKind::SymbolicShape,
                             msg(head, "output '", name, "' is ", eager[i].defined() ? eager[i].to_string() : std::string("undefined"),
                                 " eagerly but ", traced[i].to_string(), " in the traced graph", tail));
      if (eager[i].dtype() == DType::f32) {
        const double err = scaled_error(eager[i], traced[i]);
        if (!(err <= options.verify_tolerance))
          return Status::trace(TraceErrorKind::SymbolicShape, msg(head, "output '", name, "' differs from the eager result by ", err,
                                                                  " (scaled; the tolerance is ", options.verify_tolerance, ")", tail));
      } else if (!same_bytes(eager[i], traced[i])) {
        return Status::trace(TraceErrorKind::SymbolicShape, msg(head, "output '", name, "' (", dtype_name(eager[i].dtype()),
                                                                ") holds other values eagerly than in the traced graph", tail));
      }
    }
  }
  return Status::ok();
}

}  // namespace om::trace

namespace om {

// Declared with the tracer (trace/tracer.h); defined here because verification runs Sessions.
TracedModel Tracer::finish(const std::vector<std::pair<std::string, Tensor>>& outputs, const RerunFn& verify_with) {
  std::unique_ptr<trace::TraceState> state;
  TracedModel model = end_recording(outputs, &state);
  if (!verify_with || !state->options().verify) return model;
  const trace::VerifyPlan plan = state->verify_plan();
  const TracerOptions options = state->options();
  state.reset();
  check(trace::verify_traced(model.graph(), plan, verify_with, options, "om::Tracer::finish"));
  return model;
}

}  // namespace om
