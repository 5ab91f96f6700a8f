#include "onemodel/runtime/session.h"
#include "onemodel/trace/traced_model.h"

#include <algorithm>
#include <cstring>

#include "onemodel/core/shape.h"
#include "onemodel/graph/op_registry.h"
#include "onemodel/graph/passes/pass.h"
#include "onemodel/io/format_v1.h"
#include "onemodel/runtime/batch_split.h"
#include "onemodel/runtime/plan.h"
#include "onemodel/runtime/sequence_lowering.h"

namespace om {

namespace {

// One caller's per-run arrays, sized when the caller slot is made, so running allocates nothing.
struct Caller {
  // `parts`: the most parts a run's batch may split into (the pool's threads; 0 without).
  Caller(size_t inputs, size_t parts)
      : ordered(inputs, nullptr), input_data(inputs, nullptr), fed(inputs, 0), part_data(parts, input_data) {}
  std::vector<const TensorView*> ordered;
  std::vector<void*> input_data;
  std::vector<char> fed;  // per graph input: given by this run
  std::vector<std::vector<void*>> part_data;  // a split run's inputs: per part, its items of input_data
};

// A plan and the execution contexts of the runs using it at once: context 0 is the plan's own
// arena, the others are made when a concurrent run first needs one, and kept. No run writes the
// plan's args: each context patches its own copy.
struct PlanEntry {
  std::unique_ptr<runtime::Plan> plan;
  std::vector<std::unique_ptr<runtime::ExecContext>> contexts;
  std::vector<size_t> idle;  // contexts no run holds
  // Batches split between threads (runtime/batch_split.h): 0 not decided yet for this plan's
  // signature, 1 runs whole, k > 1 runs as k parts of the batch, one per thread: the first
  // `larger` parts with part_plans[0]'s items, the others with part_plans[1]'s, one fewer (one
  // plan when k divides the batch). Kept with this entry, so they live and go with it.
  int parts = 0;
  int larger = 0;
  std::shared_ptr<PlanEntry> part_plans[2];
  PlanEntry& part_plan(int part) const { return *part_plans[part < larger ? 0 : 1]; }
};

}  // namespace

struct Session::Impl {
  SessionOptions options;
  graph::Graph graph;
  std::vector<PassReport> passes;
  std::vector<std::string> input_names, output_names;
  std::vector<std::string> overridable_names;  // initializer-backed graph inputs
  std::vector<char> overridable;               // per graph input: backed by an initializer
  // Guards the plans, their contexts, the caller slots and `last`; held while planning, never
  // while a run executes (unless profiling: the step times are shared).
  Mutex mu;
  CondVar caller_free;
  std::shared_ptr<ThreadPool> pool;  // null: single-threaded
  runtime::CompiledGraph compiled;
  std::vector<std::shared_ptr<PlanEntry>> plans;  // least recently used first; a run holds its own
  size_t plans_built = 0;                         // numbers the plans (PlanStats::plan_number)
  std::shared_ptr<PlanEntry> last;
  std::vector<std::unique_ptr<Caller>> callers;  // at most options.max_concurrent_runs
  std::vector<Caller*> idle_callers;
  // A graph with sequences or optionals: run through the lowering (runtime/sequence_lowering.h).
  std::shared_ptr<runtime::SequenceRunner> runner;
  const runtime::SequenceHooks* sequences = nullptr;
  // Runs over a batch may split into one part per thread of the pool (SessionOptions::split_batch,
  // the program's operator list linking the split, a pool of two threads or more, no profile, no
  // caller arena, no control flow or value inputs): that many parts, else 0.
  size_t split_parts = 0;
  const runtime::BatchSplit* split = nullptr;
};

namespace {

// A caller slot for one run: a free one, a new one while fewer than max_concurrent_runs exist,
// else the next one freed.
class CallerLease {
 public:
  explicit CallerLease(Session::Impl& impl) : impl_(impl) {
    std::unique_lock<Mutex> lock(impl.mu);
    impl.caller_free.wait(lock, [&] { return !impl.idle_callers.empty() || impl.callers.size() < impl.options.max_concurrent_runs; });
    if (impl.idle_callers.empty()) {
      impl.callers.push_back(std::make_unique<Caller>(impl.graph.inputs.size(), impl.split_parts));
      impl.idle_callers.reserve(impl.callers.size());  // releasing never allocates
      caller_ = impl.callers.back().get();
    } else {
      caller_ = impl.idle_callers.back();
      impl.idle_callers.pop_back();
    }
  }
  ~CallerLease() {
    {
      std::lock_guard<Mutex> lock(impl_.mu);
      impl_.idle_callers.push_back(caller_);
    }
    impl_.caller_free.notify_one();
  }
  CallerLease(const CallerLease&) = delete;
  CallerLease& operator=(const CallerLease&) = delete;
  Caller& operator*() const { return *caller_; }
  Caller* operator->() const { return caller_; }

 private:
  Session::Impl& impl_;
  Caller* caller_ = nullptr;
};

// An execution context of `entry` for one run (the caller holds impl.mu): a free one, else a new
// one (the first concurrent run of this plan allocates its arena).
Result<size_t> acquire_context(PlanEntry& entry) {
  if (!entry.idle.empty()) {
    const size_t c = entry.idle.back();
    entry.idle.pop_back();
    return c;
  }
  OM_ASSIGN_OR_RETURN(std::unique_ptr<runtime::ExecContext> ctx, runtime::make_context(*entry.plan, true));
  entry.contexts.push_back(std::move(ctx));
  entry.idle.reserve(entry.contexts.size());
  return entry.contexts.size() - 1;
}

std::string dims_str(const graph::ValueInfo& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.shape.size(); ++i) {
    if (i) s += ", ";
    s += v.shape[i].is_static() ? std::to_string(v.shape[i].size) : v.shape[i].is_symbolic() ? v.shape[i].param : "?";
  }
  return s + "]";
}

}  // namespace

static Result<std::shared_ptr<PlanEntry>> find_or_plan(Session::Impl& impl, const Caller& caller);

// A graph whose run-time inputs all have static shapes (and none decides shapes by its values)
// has exactly one signature: it is planned at creation, so shape and dtype errors the graph
// already shows are reported by the constructor, not by the first run; the plan is cached.
static Status plan_static_signature(Session::Impl& impl) {
  const graph::Graph& g = impl.graph;
  Caller& c = *impl.callers[0];
  std::vector<TensorView> views(g.inputs.size());
  std::vector<std::vector<int64_t>> dims(g.inputs.size());
  for (size_t j = 0; j < g.inputs.size(); ++j) {
    c.ordered[j] = nullptr;
    c.fed[j] = 0;
    c.input_data[j] = nullptr;
    if (impl.overridable[j]) continue;
    if (impl.compiled.value_input[j]) return Status::ok();
    for (const graph::Dim& d : g.inputs[j].shape) {
      if (!d.is_static()) return Status::ok();
      dims[j].push_back(d.size);
    }
    views[j].dtype = g.inputs[j].dtype;
    views[j].dims = dims[j].data();
    views[j].rank = dims[j].size();
    c.ordered[j] = &views[j];
    c.fed[j] = 1;
  }
  std::lock_guard<Mutex> lock(impl.mu);
  Result<std::shared_ptr<PlanEntry>> r = find_or_plan(impl, c);
  for (auto& p : c.ordered) p = nullptr;
  return r.status();
}

Session::Session() = default;
Session::~Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;

Session::Session(const graph::Graph& graph, SessionOptions options) { check(create(graph, options, this)); }

// A traced model's graph was verified when the trace finished.
Session::Session(const TracedModel& model, SessionOptions options) {
  check(create(model.graph(), options, this, graph::GraphCheck::AlreadyVerified));
}

Status Session::create(const graph::Graph& g, SessionOptions options, Session* out) {
  return create(g, options, out, graph::GraphCheck::Verify);
}

// A graph with sequences or optionals: each input structure's lowered graph gets a session of its
// own, made on the first run_values with that structure (runtime/sequence_lowering.h).
static Status prepare_lowered(Session::Impl* impl, bool unroll_loops = false, const std::string& why = "") {
  impl->sequences = runtime::sequence_hooks(impl->graph);
  if (!impl->sequences)
    return Status::error(ErrorKind::Unsupported, "om::Session: the graph has sequences or optionals, and this program registers none of "
                                                 "the sequence operators; register the sequence family (onemodel/op_list.h)");
  OM_ASSIGN_OR_RETURN(impl->runner, impl->sequences->create(impl->graph, impl->options, unroll_loops, why));
  for (const auto& v : impl->graph.inputs) {
    const bool init = impl->graph.find_initializer(v.name) != nullptr;
    impl->overridable.push_back(init);
    (init ? impl->overridable_names : impl->input_names).push_back(v.name);
  }
  for (const auto& v : impl->graph.outputs) impl->output_names.push_back(v.name);
  return Status::ok();
}

Status Session::create(const graph::Graph& g, SessionOptions options, Session* out, graph::GraphCheck check) {
  if (options.max_concurrent_runs == 0)
    return Status::error(ErrorKind::InvalidArgument, "om::Session: SessionOptions::max_concurrent_runs must be at least 1");
  if (options.max_cached_plans == 0)
    return Status::error(ErrorKind::InvalidArgument, "om::Session: SessionOptions::max_cached_plans must be at least 1 (the plan in use)");
  if (options.max_loop_iterations < 0)
    return Status::error(ErrorKind::InvalidArgument, msg("om::Session: SessionOptions::max_loop_iterations is ", options.max_loop_iterations,
                                                         "; give the iterations one Loop may run (0 or more)"));
  if (options.threads < 0)
    return Status::error(ErrorKind::InvalidArgument, msg("om::Session: SessionOptions::threads is ", options.threads,
                                                         "; give 0 (every core), 1 (single-threaded) or a thread count"));
  if (options.arena) {
    if (reinterpret_cast<uintptr_t>(options.arena) % 64 != 0)
      return Status::error(ErrorKind::InvalidArgument, msg("om::Session: SessionOptions::arena at ", options.arena,
                                                           " is not 64-byte aligned; align the buffer (alignas(64) or aligned_alloc)"));
    options.max_concurrent_runs = 1;  // every plan shares the one caller arena
  } else if (options.arena_bytes) {
    return Status::error(ErrorKind::InvalidArgument, msg("om::Session: SessionOptions::arena_bytes is ", options.arena_bytes,
                                                         " but SessionOptions::arena is null; give the buffer too, or 0 bytes"));
  }
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  if (options.thread_pool) impl->pool = options.thread_pool;
  else if (options.threads != 1 && (options.threads > 1 || kernels::hardware_threads() > 1))
    impl->pool = std::make_shared<ThreadPool>(options.threads);
  impl->options.thread_pool = impl->pool;
  impl->graph = g;
  if (check == graph::GraphCheck::Verify) OM_TRY(graph::verify(impl->graph).with_context("om::Session"));
  if (runtime::uses_sequences(impl->graph)) {
    OM_TRY(prepare_lowered(impl.get()));
    out->impl_ = std::move(impl);
    return Status::ok();
  }
  OM_ASSIGN_OR_RETURN(std::vector<const graph::OpDef*> ops, runtime::resolve_ops(impl->graph, options.mode));
  for (const auto& v : impl->graph.inputs) {
    if (!v.has_shape)
      return Status::error(ErrorKind::Unsupported, msg("om::Session: graph input '", v.name, "' has no rank; give it a shape"));
    if (v.shape.size() > graph::kMaxRank)
      return Status::error(ErrorKind::Unsupported, msg("om::Session: graph input '", v.name, "' has rank ", v.shape.size(),
                                                       ", above the supported ", graph::kMaxRank));
  }
  // Kernels run at creation (constant folding, the static signature's plan) use the session's
  // threads, never the eager layer's pool: threads = 1 stays single-threaded from the start.
  kernels::PoolScope threads(impl->pool.get());
  if (options.optimize) {
    std::vector<graph::passes::PassRun> runs;
    OM_TRY(graph::passes::run_passes(impl->graph, options.mode, &runs, options.max_folded_bytes).with_context("om::Session"));
    size_t changes = 0;
    for (const auto& r : runs) {
      impl->passes.push_back({r.name, r.rule == graph::passes::BitRule::Exact, r.changes});
      changes += r.changes;
    }
    // A rewritten graph is resolved again, once: its new nodes are checked like the model's.
    if (changes) {
      OM_ASSIGN_OR_RETURN(ops, runtime::resolve_ops(impl->graph, options.mode));
    }
  } else {
    // Without optimisation an f16 graph still runs: compute_f16_in_f32 is what its f16 nodes
    // mean here (f16 storage, f32 arithmetic), not an optimisation. A program that does not
    // register Cast, which it writes, does not link it (onemodel/op_list.h).
    size_t changes = 0;
    const graph::passes::Pass* f16 = graph::passes::find_pass("compute_f16_in_f32");
    if (f16 && graph::passes::pass_enabled(*f16))
      OM_TRY(f16->run(impl->graph, options.mode, &changes).with_context("om::Session"));
    if (changes) {
      OM_TRY(graph::verify(impl->graph).with_context("om::Session"));
      impl->passes.push_back({"compute_f16_in_f32", true, changes});
      OM_ASSIGN_OR_RETURN(ops, runtime::resolve_ops(impl->graph, options.mode));
    }
  }
  OM_ASSIGN_OR_RETURN(impl->compiled, runtime::compile_graph(impl->graph, std::move(ops)));
  Status operands = runtime::check_plan_time_operands(impl->compiled).with_context("om::Session");
  if (!operands.is_ok()) {
    // A shape decided inside a Loop by its iteration number: one plan cannot hold it, but the
    // loop unrolled for a known trip count can (docs/onnx.md, "Control flow"). Only where the
    // program links the lowering.
    bool loop = false;
    for (const auto& n : impl->graph.nodes) loop = loop || (graph::is_default_domain(n.domain) && n.op_type == "Loop");
    if (!loop || !runtime::sequence_hooks(impl->graph)) return operands;
    impl->overridable.clear();
    impl->overridable_names.clear();
    impl->input_names.clear();
    impl->output_names.clear();
    OM_TRY(prepare_lowered(impl.get(), true, operands.message()));
    out->impl_ = std::move(impl);
    return Status::ok();
  }
  for (const auto& v : impl->graph.inputs) {
    const bool init = impl->graph.find_initializer(v.name) != nullptr;
    impl->overridable.push_back(init);
    (init ? impl->overridable_names : impl->input_names).push_back(v.name);
  }
  for (const auto& v : impl->graph.outputs) impl->output_names.push_back(v.name);
  impl->split = graph::registered_op_list().batch_split;
  if (impl->split && options.split_batch && impl->pool && impl->pool->threads() >= 2 && !options.profile && !options.arena &&
      runtime::may_split_batch(impl->compiled) &&
      std::none_of(impl->compiled.value_input.begin(), impl->compiled.value_input.end(), [](char v) { return v != 0; }))
    impl->split_parts = size_t(impl->pool->threads());
  impl->callers.push_back(std::make_unique<Caller>(impl->graph.inputs.size(), impl->split_parts));
  impl->idle_callers.push_back(impl->callers[0].get());
  OM_TRY(plan_static_signature(*impl));
  out->impl_ = std::move(impl);
  return Status::ok();
}

Status Session::try_load(const std::string& path, SessionOptions options, Session* out) {
  OM_ASSIGN_OR_RETURN(graph::Graph g, format_v1::read_file(path, options.map_weights));
  return create(g, options, out, graph::GraphCheck::AlreadyVerified);  // the reader verified it
}

Status Session::try_from_bytes(const void* data, size_t size, SessionOptions options, Session* out) {
  auto g = format_v1::view_bytes(static_cast<const uint8_t*>(data), size);
  if (!g.is_ok()) return g.status().with_context("Session::try_from_bytes");
  return create(g.value(), options, out, graph::GraphCheck::AlreadyVerified);  // the reader verified it
}

Session Session::from_bytes(const void* data, size_t size, SessionOptions options) {
  Session s;
  check(try_from_bytes(data, size, options, &s));
  return s;
}

Session Session::load(const std::string& path, SessionOptions options) {
  Session s;
  check(try_load(path, options, &s));
  return s;
}

std::vector<std::string> Session::input_names() const { return impl_ ? impl_->input_names : std::vector<std::string>{}; }
std::vector<std::string> Session::overridable_input_names() const {
  return impl_ ? impl_->overridable_names : std::vector<std::string>{};
}
std::vector<std::string> Session::output_names() const { return impl_ ? impl_->output_names : std::vector<std::string>{}; }
namespace {
ValueInfo describe(const graph::ValueInfo& v) {
  ValueInfo out;
  out.name = v.name;
  out.dtype = v.dtype;
  out.kind = v.kind;
  out.has_shape = v.has_shape;
  for (const graph::Dim& d : v.shape) {
    out.dims.push_back(d.is_static() ? d.size : -1);
    out.dim_names.push_back(d.is_static() ? std::string() : d.param);
  }
  return out;
}
}  // namespace

std::vector<ValueInfo> Session::inputs() const {
  std::vector<ValueInfo> out;
  if (!impl_) return out;
  for (size_t i = 0; i < impl_->graph.inputs.size(); ++i)
    if (!impl_->overridable[i]) out.push_back(describe(impl_->graph.inputs[i]));
  return out;
}

std::vector<ValueInfo> Session::outputs() const {
  std::vector<ValueInfo> out;
  if (!impl_) return out;
  for (const auto& v : impl_->graph.outputs) out.push_back(describe(v));
  return out;
}

const graph::Graph& Session::graph() const {
  static const graph::Graph empty;
  return impl_ ? impl_->graph : empty;
}
const std::vector<PassReport>& Session::pass_reports() const {
  static const std::vector<PassReport> none;
  return impl_ ? impl_->passes : none;
}
const SessionOptions& Session::options() const {
  static const SessionOptions defaults;
  return impl_ ? impl_->options : defaults;
}
size_t Session::cached_plan_count() const {
  if (!impl_) return 0;
  if (impl_->runner) return impl_->sequences->cached(*impl_->runner);
  std::lock_guard<Mutex> lock(impl_->mu);
  return impl_->plans.size();
}

PlanStats Session::last_plan_stats() const {
  PlanStats s;
  if (!impl_) return s;
  if (impl_->runner) return impl_->sequences->last_stats(*impl_->runner);
  std::lock_guard<Mutex> lock(impl_->mu);
  if (!impl_->last) return s;
  const runtime::Plan& p = *impl_->last->plan;
  s.arena_bytes = p.arena_bytes;
  s.lower_bound_bytes = p.lower_bound_bytes;
  s.steps = p.steps.size();
  s.folded_nodes = p.folded_nodes;
  s.aliased_nodes = p.aliased_nodes;
  s.plan_number = p.number;
  for (const auto& st : p.steps) s.packed_weights += st.packed_b != nullptr;
  const PlanEntry& e = *impl_->last;
  s.batch_parts = size_t(e.parts);
  if (e.parts > 1)
    for (int k = 0; k < e.parts; ++k) s.part_arena_bytes += e.part_plan(k).plan->arena_bytes;
  return s;
}

std::vector<StepProfile> Session::step_profile() const {
  std::vector<StepProfile> out;
  if (!impl_) return out;
  std::lock_guard<Mutex> lock(impl_->mu);
  if (!impl_->last || !impl_->options.profile) return out;
  const runtime::Plan& p = *impl_->last->plan;
  for (size_t i = 0; i < p.steps.size() && i < p.step_ns.size(); ++i) {
    StepProfile s;
    const graph::Node& n = *impl_->compiled.nodes[p.steps[i].node];
    s.node = n.name.empty() ? n.op_type : n.name;
    s.op = n.op_type;
    s.total_us = double(p.step_ns[i]) / 1000.0;
    s.runs = p.profiled_runs;
    out.push_back(std::move(s));
  }
  return out;
}

// Orders the caller's inputs as the graph's and checks them against the declared inputs.
// Touches no heap unless it fails.
static Status bind_inputs(const Session::Impl& impl, Caller& c, const TensorView* inputs, size_t n, bool need_data) {
  const graph::Graph& g = impl.graph;
  int64_t numel_unused = 0;
  const size_t expected = impl.input_names.size();
  if (n < expected || n > expected + impl.overridable_names.size()) {
    std::string names;
    for (const auto& s : impl.input_names) names += (names.empty() ? "" : ", ") + s;
    std::string extra;
    if (!impl.overridable_names.empty()) {
      for (const auto& s : impl.overridable_names) extra += (extra.empty() ? "" : ", ") + s;
      extra = msg(", plus up to ", impl.overridable_names.size(), " overridable initializers given by name: ", extra);
    }
    return Status::error(ErrorKind::InvalidArgument,
                         msg("Session::run: got ", n, " inputs, the model takes ", expected, " (", names, ")", extra));
  }
  if (n > 0 && !inputs)
    return Status::error(ErrorKind::InvalidArgument, msg("Session::run: ", n, " inputs announced but the TensorView array is null"));
  for (auto& p : c.ordered) p = nullptr;
  size_t pos = 0;
  for (size_t i = 0; i < n; ++i) {
    const TensorView& t = inputs[i];
    size_t slot = g.inputs.size();
    if (t.name) {
      slot = g.find_input(t.name);
      if (slot == g.inputs.size()) {
        std::string names;
        for (const auto& s : impl.input_names) names += (names.empty() ? "" : ", ") + s;
        for (const auto& s : impl.overridable_names) names += (names.empty() ? "" : ", ") + s + " (overridable)";
        return Status::error(ErrorKind::InvalidArgument, msg("Session::run: no input named '", t.name, "'; the inputs are: ", names));
      }
    } else {
      // Positional: the i-th non-initializer input.
      size_t seen = 0;
      for (size_t j = 0; j < g.inputs.size(); ++j) {
        if (impl.overridable[j]) continue;
        if (seen++ == pos) { slot = j; break; }
      }
      if (slot == g.inputs.size())
        return Status::error(ErrorKind::InvalidArgument, msg("Session::run: input #", i, " has no name; overridable initializers (",
                                                             impl.overridable_names.size(), " of them) must be given by name"));
    }
    ++pos;
    if (c.ordered[slot])
      return Status::error(ErrorKind::InvalidArgument, msg("Session::run: input '", g.inputs[slot].name, "' is given twice"));
    c.ordered[slot] = &t;
  }
  for (size_t j = 0; j < g.inputs.size(); ++j) {
    const graph::ValueInfo& vi = g.inputs[j];
    const TensorView* t = c.ordered[j];
    c.fed[j] = t != nullptr;
    if (!t && impl.overridable[j]) continue;  // the initializer's value
    if (!t) return Status::error(ErrorKind::InvalidArgument, msg("Session::run: input '", vi.name, "' was not given"));
    if (t->rank > 0 && !t->dims)
      return Status::error(ErrorKind::InvalidArgument, msg("Session::run: input '", vi.name, "' has rank ", t->rank,
                                                           " but dims is null; point dims at ", t->rank, " sizes"));
    if (t->dtype != vi.dtype)
      return Status::error(ErrorKind::DTypeMismatch, msg("Session::run: input '", vi.name, "' expects dtype ", dtype_name(vi.dtype),
                                                         ", got ", dtype_name(t->dtype)));
    if (t->rank != vi.shape.size())
      return Status::error(ErrorKind::ShapeMismatch, msg("Session::run: input '", vi.name, "' expects rank ", vi.shape.size(), " ",
                                                         dims_str(vi), ", got rank ", t->rank, " ", om::shape_str(t->dims, t->rank)));
    if (!checked_numel(t->dims, t->rank, &numel_unused))
      return Status::error(ErrorKind::ShapeMismatch, check_shape(msg("Session::run: input '", vi.name, "'"), t->dims, t->rank).message());
    for (size_t d = 0; d < t->rank; ++d) {
      if (vi.shape[d].is_static() && vi.shape[d].size != t->dims[d])
        return Status::error(ErrorKind::ShapeMismatch, msg("Session::run: input '", vi.name, "' expects ", dims_str(vi), ", got ",
                                                           om::shape_str(t->dims, t->rank), " (axis ", d, " is fixed at ",
                                                           vi.shape[d].size, ")"));
    }
    // A symbol names one size within an input and across all inputs (ONNX Runtime requires the
    // same: a dim_param is one value).
    for (size_t d = 0; d < t->rank; ++d) {
      if (!vi.shape[d].is_symbolic()) continue;
      for (size_t e = 0; e < d; ++e)
        if (vi.shape[e].param == vi.shape[d].param && t->dims[e] != t->dims[d])
          return Status::error(ErrorKind::ShapeMismatch,
                               msg("Session::run: axis '", vi.shape[d].param, "' is ", t->dims[e], " at axis ", e, " of input '", vi.name,
                                   "' but ", t->dims[d], " at axis ", d, " (", dims_str(vi), " fed ", om::shape_str(t->dims, t->rank),
                                   "); a symbol names one size"));
      for (size_t k = 0; k < j; ++k) {
        const graph::ValueInfo& other = g.inputs[k];
        if (!c.ordered[k]) continue;
        for (size_t e = 0; e < other.shape.size(); ++e)
          if (other.shape[e].param == vi.shape[d].param && c.ordered[k]->dims[e] != t->dims[d])
            return Status::error(ErrorKind::ShapeMismatch,
                                 msg("Session::run: axis '", vi.shape[d].param, "' is ", c.ordered[k]->dims[e], " in input '", other.name,
                                     "' but ", t->dims[d], " in input '", vi.name, "'"));
      }
    }
    if (need_data && !t->data && t->numel() > 0)
      return Status::error(ErrorKind::InvalidArgument, msg("Session::run: input '", vi.name, "' has no data"));
    c.input_data[j] = t->data;
  }
  return Status::ok();
}

// The caller holds impl.mu.
// A plan for the caller's bound inputs, in the caller arena when `use_arena` (else in one of its
// own, to measure what the caller arena must hold).
static Result<std::unique_ptr<runtime::Plan>> build_for(Session::Impl& impl, const Caller& caller, bool use_arena) {
  const graph::Graph& g = impl.graph;
  std::vector<std::vector<int64_t>> dims(g.inputs.size());
  for (size_t j = 0; j < g.inputs.size(); ++j)
    if (caller.ordered[j]) dims[j].assign(caller.ordered[j]->dims, caller.ordered[j]->dims + caller.ordered[j]->rank);
  runtime::PlanLimits limits;
  limits.max_arena_bytes = impl.options.max_arena_bytes;
  limits.max_folded_bytes = impl.options.max_folded_bytes;
  limits.max_loop_iterations = impl.options.max_loop_iterations;
  if (use_arena) {
    limits.arena = impl.options.arena;
    limits.arena_bytes = impl.options.arena_bytes;
  }
  auto built = runtime::build_plan(impl.compiled, impl.options.mode, dims, caller.fed, impl.options.prepack_weights, limits,
                                   &caller.input_data);
  if (!built.is_ok()) {
    std::string sig;
    for (size_t j = 0; j < g.inputs.size(); ++j)
      if (caller.ordered[j]) sig += (sig.empty() ? "" : ", ") + g.inputs[j].name + "=" + om::shape_str(dims[j]);
    return built.status().with_context(msg("om::Session: planning for input shapes ", sig));
  }
  return built;
}

// A built plan with its own context (context 0) and its workers' scratch (runs allocate nothing).
// A part's plan (numbered false) is not one of the session's plans: PlanStats never names it.
static Result<std::shared_ptr<PlanEntry>> make_entry(Session::Impl& impl, std::unique_ptr<runtime::Plan> plan, bool numbered = true) {
  if (impl.pool && !impl.pool->reserve_scratch(plan->max_scratch_bytes))
    return Status::error(ErrorKind::OutOfMemory, msg("om::Session: cannot allocate ", plan->max_scratch_bytes,
                                                     " bytes of scratch per thread; lower SessionOptions::threads"));
  auto entry = std::make_shared<PlanEntry>();
  entry->plan = std::move(plan);
  if (numbered) entry->plan->number = ++impl.plans_built;
  if (impl.options.profile) entry->plan->step_ns.assign(entry->plan->steps.size(), 0);
  OM_ASSIGN_OR_RETURN(std::unique_ptr<runtime::ExecContext> own, runtime::make_context(*entry->plan, false));
  entry->contexts.push_back(std::move(own));  // context 0: the plan's own arena
  entry->idle.reserve(1);
  entry->idle.push_back(0);
  return entry;
}

static Result<std::shared_ptr<PlanEntry>> find_or_plan(Session::Impl& impl, const Caller& caller) {
  const graph::Graph& g = impl.graph;
  for (size_t pi = 0; pi < impl.plans.size(); ++pi) {
    const runtime::Plan& p = *impl.plans[pi]->plan;
    bool match = true;
    for (size_t j = 0; match && j < g.inputs.size(); ++j) {
      match = p.fed[j] == caller.fed[j];
      if (!match || !caller.ordered[j]) continue;
      const std::vector<int64_t>& s = p.signature[j];
      const TensorView& t = *caller.ordered[j];
      match = s.size() == t.rank && (t.rank == 0 || std::memcmp(s.data(), t.dims, t.rank * sizeof(int64_t)) == 0);
      // A value input's values are the rest of the key (no allocation: compared in place).
      if (match && j < p.input_values.size() && p.input_values[j] && p.input_value_bytes[j] > 0)
        match = t.data && std::memcmp(p.input_values[j].get(), t.data, p.input_value_bytes[j]) == 0;
    }
    if (!match) continue;
    // Least recently used last out: move the hit to the back (a rotation, no allocation).
    std::rotate(impl.plans.begin() + std::ptrdiff_t(pi), impl.plans.begin() + std::ptrdiff_t(pi) + 1, impl.plans.end());
    return impl.plans.back();
  }
  auto built = build_for(impl, caller, true);
  if (!built.is_ok()) return built.status();
  if (impl.plans.size() >= impl.options.max_cached_plans) {
    if (impl.last == impl.plans.front()) impl.last = nullptr;
    impl.plans.erase(impl.plans.begin());  // a run still using it holds it
  }
  OM_ASSIGN_OR_RETURN(std::shared_ptr<PlanEntry> entry, make_entry(impl, std::move(built).value()));
  impl.plans.push_back(entry);
  return entry;
}

// Decides whether runs of `whole` split their batch (the caller holds impl.mu; the caller slot
// holds this run's inputs): a batch of n items splits into k parts, k the pool's threads, when
// n >= k; the parts' plans (of n / k items, and one more) are checked against the whole plan. A
// part that cannot be planned, or a graph whose items mix, runs whole: never an error.
static void plan_parts(Session::Impl& impl, const Caller& caller, PlanEntry& whole) {
  whole.parts = 1;
  const graph::Graph& g = impl.graph;
  const int64_t k = int64_t(impl.split_parts);
  int64_t n = -1;
  for (size_t j = 0; j < g.inputs.size(); ++j) {
    if (!caller.fed[j]) continue;
    if (impl.overridable[j] || !caller.ordered[j] || caller.ordered[j]->rank == 0) return;
    const int64_t items = caller.ordered[j]->dims[0];
    if (n >= 0 && items != n) return;
    n = items;
  }
  if (k < 2 || n < k || !runtime::nodes_have_batch_rules(impl.compiled, *whole.plan)) return;
  const int64_t larger = n % k;
  const int64_t items[2] = {n / k + (larger ? 1 : 0), n / k};
  std::shared_ptr<PlanEntry> plans[2];
  for (int h = 0; h < 2; ++h) {
    if (h == 1 && items[1] == items[0]) {
      plans[1] = plans[0];
      break;
    }
    Caller part(g.inputs.size(), 0);
    std::vector<TensorView> views(g.inputs.size());
    std::vector<std::vector<int64_t>> dims(g.inputs.size());
    for (size_t j = 0; j < g.inputs.size(); ++j) {
      part.fed[j] = caller.fed[j];
      if (!caller.fed[j]) continue;
      views[j] = *caller.ordered[j];
      dims[j].assign(views[j].dims, views[j].dims + views[j].rank);
      dims[j][0] = items[h];
      views[j].dims = dims[j].data();
      part.ordered[j] = &views[j];
    }
    auto built = build_for(impl, part, true);
    if (!built.is_ok() || !runtime::splits_batch(impl.compiled, *whole.plan, *built.value(), n, items[h])) return;
    auto entry = make_entry(impl, std::move(built).value(), false);
    if (!entry.is_ok()) return;
    plans[h] = std::move(entry).value();
  }
  whole.part_plans[0] = std::move(plans[0]);
  whole.part_plans[1] = std::move(plans[1]);
  whole.larger = int(larger);
  whole.parts = int(k);
}

// What a graph with sequences cannot do ahead of its first run: its plans depend on the input
// structure, which only run_values sees.
static Status lowered_only(const char* call) {
  return Status::error(ErrorKind::Unsupported, msg(call, ": the graph has sequences or optionals, planned per input structure on its "
                                                         "first Session::run_values with it; run it instead"));
}

Status Session::try_arena_bytes_for(const TensorView* inputs, size_t num_inputs, size_t* bytes) {
  if (!impl_) return Status::error(ErrorKind::InvalidArgument, "Session::arena_bytes_for: the session is empty (default-constructed or moved from)");
  if (!bytes) return Status::error(ErrorKind::InvalidArgument, "Session::arena_bytes_for: bytes is null");
  if (impl_->runner) return lowered_only("Session::arena_bytes_for");
  CallerLease caller(*impl_);
  OM_TRY(bind_inputs(*impl_, *caller, inputs, num_inputs, false));
  kernels::PoolScope threads(impl_->pool.get());
  std::lock_guard<Mutex> lock(impl_->mu);
  OM_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Plan> plan, build_for(*impl_, *caller, false));
  *bytes = plan->arena_bytes;
  return Status::ok();
}

Status Session::try_prepare(const TensorView* inputs, size_t num_inputs) {
  if (!impl_) return Status::error(ErrorKind::InvalidArgument, "Session::prepare: the session is empty (default-constructed or moved from)");
  if (impl_->runner) return lowered_only("Session::prepare");
  CallerLease caller(*impl_);
  OM_TRY(bind_inputs(*impl_, *caller, inputs, num_inputs, false));
  kernels::PoolScope threads(impl_->pool.get());  // plan-time evaluation on the session's threads
  std::lock_guard<Mutex> lock(impl_->mu);
  OM_ASSIGN_OR_RETURN(impl_->last, find_or_plan(*impl_, *caller));
  return Status::ok();
}

// try_run on a graph with sequences whose inputs and outputs are tensors: through the lowering.
static Status run_lowered(Session::Impl& impl, const TensorView* inputs, size_t num_inputs, TensorView* outputs, size_t num_outputs,
                          void (*sink)(void*, const TensorView*, size_t), void* sink_ctx) {
  for (const auto& v : impl.graph.inputs)
    if (v.kind != graph::ValueKind::Tensor)
      return Status::error(ErrorKind::InvalidArgument, msg("Session::run: input '", v.name, "' is ", graph::value_kind_name(v.kind),
                                                           "; run the model with Session::run_values"));
  for (const auto& v : impl.graph.outputs)
    if (v.kind != graph::ValueKind::Tensor)
      return Status::error(ErrorKind::InvalidArgument, msg("Session::run: output '", v.name, "' is ", graph::value_kind_name(v.kind),
                                                           "; run the model with Session::run_values"));
  if (num_inputs > 0 && !inputs)
    return Status::error(ErrorKind::InvalidArgument, msg("Session::run: ", num_inputs, " inputs announced but the TensorView array is null"));
  std::vector<ValueView> values(num_inputs);
  for (size_t i = 0; i < num_inputs; ++i) {
    values[i].name = inputs[i].name;
    values[i].elements = &inputs[i];
    values[i].count = 1;
  }
  struct Ctx {
    TensorView* outputs;
    size_t n;
    void (*sink)(void*, const TensorView*, size_t);
    void* sink_ctx;
    Status status;
  } c{outputs, num_outputs, sink, sink_ctx, Status::ok()};
  OM_TRY(impl.sequences->run(*impl.runner, values.data(), values.size(), [](void* p, const ValueView* views, size_t n) {
    Ctx& c = *static_cast<Ctx*>(p);
    for (size_t i = 0; i < n && i < c.n && c.status.is_ok(); ++i) {
      const TensorView& src = views[i].elements[0];
      TensorView& t = c.outputs[i];
      const size_t bytes = size_t(src.numel()) * dtype_size(src.dtype);
      if (t.data && t.capacity > 0) {
        if (t.capacity < bytes) {
          c.status = Status::error(ErrorKind::InvalidArgument, msg("Session::run: output '", views[i].name, "' needs ", bytes,
                                                                   " bytes, its buffer holds ", t.capacity));
          return;
        }
        if (bytes) std::memcpy(t.data, src.data, bytes);
        const auto data = t.data;
        const auto capacity = t.capacity;
        t = src;
        t.data = data;
        t.capacity = capacity;
      } else {
        t = src;
        t.capacity = 0;
      }
      t.name = views[i].name;
    }
    if (c.status.is_ok() && c.sink) c.sink(c.sink_ctx, c.outputs, c.n);
  }, &c));
  return c.status;
}

Status Session::try_run_values(const ValueView* inputs, size_t num_inputs, ValueSink sink, void* sink_ctx) {
  if (!impl_) return Status::error(ErrorKind::InvalidArgument, "Session::run_values: the session is empty (default-constructed or moved from)");
  Impl& impl = *impl_;
  if (impl.runner) return impl.sequences->run(*impl.runner, inputs, num_inputs, sink, sink_ctx);
  // A graph of tensors: each value is one tensor.
  if (num_inputs > 0 && !inputs)
    return Status::error(ErrorKind::InvalidArgument, msg("Session::run_values: ", num_inputs, " inputs announced but the array is null"));
  std::vector<TensorView> views(num_inputs);
  for (size_t i = 0; i < num_inputs; ++i) {
    const ValueView& v = inputs[i];
    if (!v.present || v.count != 1 || !v.elements || (v.kind != graph::ValueKind::Tensor && v.kind != graph::ValueKind::Optional))
      return Status::error(ErrorKind::InvalidArgument, msg("Session::run_values: input ", v.name ? msg("'", v.name, "'") : msg("#", i),
                                                           " must be one tensor: the model's inputs are tensors"));
    views[i] = v.elements[0];
    views[i].name = v.name;
  }
  std::vector<TensorView> outs(impl.output_names.size());
  struct Ctx {
    ValueSink sink;
    void* ctx;
  } c{sink, sink_ctx};
  return run_with(views.data(), views.size(), outs.data(), outs.size(), [](void* p, const TensorView* t, size_t n) {
    const Ctx& c = *static_cast<const Ctx*>(p);
    std::vector<ValueView> values(n);
    for (size_t i = 0; i < n; ++i) {
      values[i].name = t[i].name;
      values[i].elements = &t[i];
      values[i].count = 1;
    }
    if (c.sink) c.sink(c.ctx, values.data(), n);
  }, &c);
}

Status Session::try_run(const TensorView* inputs, size_t num_inputs, TensorView* outputs, size_t num_outputs) {
  return run_with(inputs, num_inputs, outputs, num_outputs, nullptr, nullptr);
}

// A split run: part 0 on this thread, the others on the pool's workers (all on this thread when
// the pool is running another caller's job), each part in its own context. Kernels inside a part
// run on its thread alone (a part's parallel work runs inline).
static Status run_parts(Session::Impl& impl, Caller& caller, PlanEntry& whole, runtime::ExecContext* const* part_ctx) {
  const graph::Graph& g = impl.graph;
  for (size_t j = 0; j < g.inputs.size(); ++j) {
    char* at = static_cast<char*>(caller.input_data[j]);
    const TensorView* t = caller.fed[j] ? caller.ordered[j] : nullptr;
    const size_t item_bytes = t ? size_t(t->numel() / t->dims[0]) * dtype_size(t->dtype) : 0;
    for (int k = 0; k < whole.parts; ++k) {
      caller.part_data[size_t(k)][j] = t ? at : caller.input_data[j];
      if (t) at += item_bytes * size_t(whole.part_plan(k).plan->signature[j][0]);
    }
  }
  struct Job {
    PlanEntry& whole;
    runtime::ExecContext* const* ctx;
    Caller& caller;
    ArithmeticMode mode;
    Status status[ThreadPool::kMaxThreads];
  } job{whole, part_ctx, caller, impl.options.mode, {}};
  impl.pool->run(size_t(whole.parts), [](void* p, size_t part, size_t) {
    Job& j = *static_cast<Job*>(p);
    j.status[part] = runtime::execute_plan(*j.whole.part_plan(int(part)).plan, j.mode, j.caller.part_data[part].data(), false, j.ctx[part]);
  }, &job);
  for (int k = 0; k < whole.parts; ++k) OM_TRY(job.status[k]);
  return Status::ok();
}

namespace runtime {
// Referenced only by the operator lists that link the split (onemodel/op_list.h): a program
// without it keeps neither these functions nor runtime/batch_split.cpp's checks.
struct BatchSplit {
  void (*plan)(Session::Impl& impl, const Caller& caller, PlanEntry& whole);
  Status (*run)(Session::Impl& impl, Caller& caller, PlanEntry& whole, ExecContext* const* part_ctx);
};
const BatchSplit batch_split{&plan_parts, &run_parts};
}  // namespace runtime

Status Session::run_with(const TensorView* inputs, size_t num_inputs, TensorView* outputs, size_t num_outputs, OutputSink sink,
                         void* sink_ctx) {
  if (!impl_) return Status::error(ErrorKind::InvalidArgument, "Session::run: the session is empty (default-constructed or moved from)");
  Impl& impl = *impl_;
  if (num_outputs != impl.output_names.size())
    return Status::error(ErrorKind::InvalidArgument, msg("Session::run: got room for ", num_outputs, " outputs, the model has ",
                                                         impl.output_names.size()));
  if (num_outputs > 0 && !outputs)
    return Status::error(ErrorKind::InvalidArgument, "Session::run: the output TensorView array is null; pass one view per output");
  if (impl.runner) return run_lowered(impl, inputs, num_inputs, outputs, num_outputs, sink, sink_ctx);
  CallerLease caller(impl);
  OM_TRY(bind_inputs(impl, *caller, inputs, num_inputs, true));
  kernels::PoolScope threads(impl.pool.get());
  std::shared_ptr<PlanEntry> entry;
  size_t context = 0;
  runtime::ExecContext* ctx = nullptr;  // stays put when another run adds a context
  size_t part_context[ThreadPool::kMaxThreads];
  runtime::ExecContext* part_ctx[ThreadPool::kMaxThreads];
  {
    std::lock_guard<Mutex> lock(impl.mu);
    OM_ASSIGN_OR_RETURN(entry, find_or_plan(impl, *caller));
    impl.last = entry;
    OM_ASSIGN_OR_RETURN(context, acquire_context(*entry));
    ctx = entry->contexts[context].get();
    if (entry->parts == 0) {
      if (impl.split_parts) impl.split->plan(impl, *caller, *entry);
      else entry->parts = 1;
    }
    for (int k = 0; entry->parts > 1 && k < entry->parts; ++k) {
      Result<size_t> c = acquire_context(entry->part_plan(k));
      if (!c.is_ok()) {
        for (int r = 0; r < k; ++r) entry->part_plan(r).idle.push_back(part_context[r]);
        entry->idle.push_back(context);
        return c.status();
      }
      part_context[k] = c.value();
      part_ctx[k] = entry->part_plan(k).contexts[part_context[k]].get();
    }
  }
  struct ContextLease {  // back to the plans' idle contexts, whatever happens below
    Impl& impl;
    PlanEntry& entry;
    size_t context;
    const size_t* part_context;
    ~ContextLease() {
      std::lock_guard<Mutex> lock(impl.mu);
      entry.idle.push_back(context);
      for (int k = 0; entry.parts > 1 && k < entry.parts; ++k) entry.part_plan(k).idle.push_back(part_context[k]);
    }
  } lease{impl, *entry, context, part_context};
  runtime::Plan& plan = *entry->plan;
  if (entry->parts > 1) {
    OM_TRY(impl.split->run(impl, *caller, *entry, part_ctx));
  } else if (impl.options.profile) {
    std::lock_guard<Mutex> lock(impl.mu);  // the step times are the plan's
    OM_TRY(runtime::execute_plan(plan, impl.options.mode, caller->input_data.data(), true, ctx));
  } else {
    OM_TRY(runtime::execute_plan(plan, impl.options.mode, caller->input_data.data(), false, ctx));
  }
  for (size_t i = 0; i < num_outputs; ++i) {
    const runtime::Plan::Output& o = plan.outputs[i];
    TensorView& t = outputs[i];
    const void* src = o.input >= 0 ? caller->input_data[size_t(o.input)] : ctx->rebase(plan, o.data);
    t.name = impl.output_names[i].c_str();
    t.dtype = o.desc->dtype;
    t.dims = o.desc->shape.data();
    t.rank = o.desc->shape.size();
    const size_t bytes = o.desc->nbytes();
    const bool given = t.data && t.capacity > 0;
    if (given && t.capacity < bytes)
      return Status::error(ErrorKind::InvalidArgument, msg("Session::run: output '", impl.output_names[i], "' needs ", bytes,
                                                           " bytes, its buffer holds ", t.capacity));
    if (entry->parts > 1 && o.input < 0) {
      // The parts' outputs, one after the other, into the caller's buffer or the whole plan's.
      char* dst = static_cast<char*>(given ? t.data : const_cast<void*>(src));
      for (int k = 0; k < entry->parts; ++k) {
        const runtime::Plan& pp = *entry->part_plan(k).plan;
        const size_t part = pp.outputs[i].desc->nbytes();
        if (part) std::memcpy(dst, part_ctx[k]->rebase(pp, pp.outputs[i].data), part);
        dst += part;
      }
    } else if (given && bytes) {
      std::memcpy(t.data, src, bytes);
    }
    if (!given) {
      t.data = const_cast<void*>(src);
      t.capacity = 0;
    }
  }
  if (sink) sink(sink_ctx, outputs, num_outputs);  // before the context is free for another run
  return Status::ok();
}

void Session::run(const TensorView* inputs, size_t num_inputs, TensorView* outputs, size_t num_outputs) {
  check(try_run(inputs, num_inputs, outputs, num_outputs));
}

namespace runtime {

namespace {
bool has_sequence_parts(const graph::Graph& g, const graph::OpDef** lowering) {
  bool found = false;
  for (const auto& v : g.inputs) found = found || v.kind != graph::ValueKind::Tensor;
  for (const auto& v : g.outputs) found = found || v.kind != graph::ValueKind::Tensor;
  for (const auto& n : g.nodes) {
    const graph::OpDef* op = graph::find_op(n.domain, n.op_type);
    if (op && (op->flags & graph::kOpSequence)) {
      found = true;
      if (lowering && !*lowering) *lowering = op;
    }
    for (const auto& a : n.attributes) {
      if (a.g) found = has_sequence_parts(*a.g, lowering) || found;
      for (const auto& sub : a.graphs) found = has_sequence_parts(*sub, lowering) || found;
    }
  }
  return found;
}
}  // namespace

bool uses_sequences(const graph::Graph& g) { return has_sequence_parts(g, nullptr); }

const SequenceHooks* sequence_hooks(const graph::Graph& g) {
  const graph::OpDef* op = nullptr;
  has_sequence_parts(g, &op);
  if (!op) op = graph::find_op("", "SequenceConstruct");
  return op ? op->sequences : nullptr;
}

}  // namespace runtime

}  // namespace om
