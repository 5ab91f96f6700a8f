#include "onemodel/graph/op_registry.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <unordered_map>

#include "onemodel/graph/ops/op_util.h"
#include "onemodel/kernels/checked.h"
#include "onemodel/kernels/thread_pool.h"

namespace om::graph {

// Saturates just above the element limit, so a hostile shape asked for its size (a scratch
// request before the shape checks refuse it) overflows nothing.
int64_t ValueDesc::numel() const {
  // A zero anywhere makes the tensor empty, even after dims whose product is out of range.
  for (int64_t d : shape)
    if (d == 0) return 0;
  int64_t n = 1;
  for (int64_t d : shape)
    if (!checked_mul(n, d, &n)) return kMaxNumel + 1;
  return n;
}

Status InferContext::error(ErrorKind kind, const std::string& what) const {
  return Status::error(kind, msg(node.label(), ": ", what));
}

namespace {
alignas(64) const unsigned char kEmptyBytes[64] = {};
}
const void* const kEmptyValue = kEmptyBytes;

Status KernelContext::error(ErrorKind kind, const std::string& what) const {
  return Status::error(kind, msg(label, ": ", what));
}

void InferContext::set_output(size_t i, DType dtype, std::vector<int64_t> shape) {
  if (i >= outputs.size()) return;
  outputs[i].dtype = dtype;
  outputs[i].shape = std::move(shape);
}

const char* unknown_op_hint() {
  return registered_op_list().selective
             ? "this program registers only the operators of its own list (docs/deploying.md, \"Selective operator "
               "registration\"): add them to it, e.g. regenerate it with `onemodel ops MODEL`"
             : "docs/operators.md lists the supported ones";
}

namespace {

// (domain, op type) as views of the registry's own strings: a lookup builds no string. The
// default domain is "" whether a model spells it so or "ai.onnx".
struct OpKey {
  std::string_view domain, op_type;
  bool operator==(const OpKey& o) const { return domain == o.domain && op_type == o.op_type; }
};
struct OpKeyHash {
  size_t operator()(const OpKey& k) const {
    return std::hash<std::string_view>()(k.op_type) * 31u + std::hash<std::string_view>()(k.domain);
  }
};

std::string_view domain_key(std::string_view domain) { return domain == "ai.onnx" ? std::string_view() : domain; }

}  // namespace
Status check_attributes(const OpDef& op, const Node& node, ErrorKind kind) {
  for (const Attribute& a : node.attributes) {
    for (size_t k = 0; k < op.num_attrs; ++k) {
      const AttrSpec& spec = op.attrs[k];
      if (a.name != spec.name) continue;
      const std::string who = msg("node '", node.name, "' (", node.op_type, "): attribute '", a.name, "'");
      if (a.type != attr_type_of(spec.kind))
        return Status::error(kind, msg(who, " must be of type ", attr_kind_name(spec.kind), ", the node gives type code ", int(a.type)));
      if (spec.kind == AttrKind::PositiveInt && a.i < 1) return Status::error(kind, msg(who, " is ", a.i, "; it must be at least 1"));
      if (spec.kind == AttrKind::PositiveInts)
        for (int64_t v : a.ints)
          if (v < 1) return Status::error(kind, msg(who, " holds ", v, "; every value must be at least 1"));
    }
  }
  return Status::ok();
}

const OpDef* find_op(const std::string& domain, const std::string& op_type) {
  static const std::unordered_map<OpKey, const OpDef*, OpKeyHash> index = [] {
    std::unordered_map<OpKey, const OpDef*, OpKeyHash> m;
    for (const OpDef* d : all_ops()) m.emplace(OpKey{domain_key(d->domain), d->op_type}, d);  // the first entry wins
    return m;
  }();
  const auto it = index.find(OpKey{domain_key(domain), op_type});
  return it == index.end() ? nullptr : it->second;
}

bool packable_b(const OpDef& op, const Node& node, const std::vector<const ValueDesc*>& inputs, PackableB* out) {
  return op.prepack && op.prepack(node, inputs, out);
}

AttrType attr_type_of(AttrKind kind) {
  switch (kind) {
    case AttrKind::Int: case AttrKind::PositiveInt: return AttrType::Int;
    case AttrKind::Float: return AttrType::Float;
    case AttrKind::String: return AttrType::String;
    case AttrKind::Ints: case AttrKind::PositiveInts: return AttrType::Ints;
    case AttrKind::Floats: return AttrType::Floats;
    case AttrKind::Strings: return AttrType::Strings;
    case AttrKind::Tensor: return AttrType::Tensor;
    case AttrKind::Graph: return AttrType::Graph;
    case AttrKind::TypeProto: return AttrType::TypeProto;
  }
  return AttrType::Int;
}

const char* attr_kind_name(AttrKind kind) {
  switch (kind) {
    case AttrKind::Int: case AttrKind::PositiveInt: return "int";
    case AttrKind::Float: return "float";
    case AttrKind::String: return "string";
    case AttrKind::Ints: case AttrKind::PositiveInts: return "ints";
    case AttrKind::Floats: return "floats";
    case AttrKind::Strings: return "strings";
    case AttrKind::Tensor: return "tensor";
    case AttrKind::Graph: return "graph";
    case AttrKind::TypeProto: return "type";
  }
  return "?";
}

std::shared_ptr<void> aligned_buffer(size_t nbytes) {
  const size_t size = (nbytes + 63) / 64 * 64 + 64;  // never zero, so every buffer has an address
  void* p = ::aligned_alloc(64, size);
  if (!p) return nullptr;  // callers turn this into an OutOfMemory status
  std::memset(p, 0, size);
  return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
}

Status prepare_node(const InferContext& ctx, const OpDef& op, Prepared* out) {
  out->work = 1;
  out->cost = 0;
  out->size = 0;
  if (!op.prepare) return Status::ok();
  OM_TRY(op.prepare(ctx, *out));
  if (out->cost <= 0) {  // the elements read and written: what a memory-bound kernel costs
    int64_t elements = 0;  // capped so no sum of counts (each just above kMaxNumel at most) overflows
    auto add = [&](const ValueDesc& v) { elements = std::min(elements + ops::dims_product(v.shape.data(), 0, v.shape.size()), 4 * kMaxNumel); };
    for (const ValueDesc* in : ctx.inputs)
      if (in) add(*in);
    for (const ValueDesc& o : ctx.outputs) add(o);
    out->cost = elements;
  }
  if (out->work < 0) return ctx.error(ErrorKind::Internal, msg("prepare gave a negative work size ", out->work));
  // Outputs without elements leave nothing to compute, whatever the work the record describes
  // (an empty tensor may have huge dims beside its zero).
  bool empty = !ctx.outputs.empty();
  for (const ValueDesc& o : ctx.outputs) empty = empty && o.numel() == 0;
  if (empty) out->work = 0;
  return Status::ok();
}

namespace {
std::atomic<int> g_split_parts{1};
}

void set_work_split_for_testing(int parts) { g_split_parts.store(parts < 1 ? 1 : parts, std::memory_order_relaxed); }

Status run_kernel(KernelFn fn, KernelContext& k, int64_t work, int64_t cost) {
  const int64_t split = g_split_parts.load(std::memory_order_relaxed);
  if (work <= 0) return Status::ok();  // nothing to compute (an empty output)
  if (split > 1 && work >= 2) {
    for (int64_t p = 0; p < split; ++p) {
      k.begin = work * p / split;
      k.end = work * (p + 1) / split;
      if (k.begin < k.end) OM_TRY(fn(k));
    }
    return Status::ok();
  }
  kernels::ThreadPool* pool = kernels::current_pool();
  const size_t parts = kernels::parts_for(pool, work, cost);
  if (parts <= 1 || (k.scratch_bytes > 0 && pool->slot_scratch_bytes() < k.scratch_bytes)) {
    k.begin = 0;
    k.end = work;
    return fn(k);
  }
  struct Job {
    KernelFn fn;
    const KernelContext* k;
    kernels::ThreadPool* pool;
    int64_t work;
    size_t parts;
    Status status[kernels::ThreadPool::kMaxThreads];  // per part
  } job{fn, &k, pool, work, parts, {}};
  pool->run(parts, [](void* c, size_t part, size_t slot) {
    Job& j = *static_cast<Job*>(c);
    KernelContext kp = *j.k;
    kp.begin = j.work * int64_t(part) / int64_t(j.parts);
    kp.end = j.work * int64_t(part + 1) / int64_t(j.parts);
    if (slot != 0 && kp.scratch_bytes > 0) kp.scratch = j.pool->slot_scratch(slot);
    j.status[part] = j.fn(kp);
  }, &job);
  for (size_t p = 0; p < parts; ++p) OM_TRY(std::move(job.status[p]));
  return Status::ok();
}

Status evaluate_node(const Node& node, const OpDef& op, ArithmeticMode mode,
                     const std::vector<const ValueDesc*>& inputs, std::vector<EvaluatedValue>* outputs) {
  InferContext ctx{node, inputs, std::vector<ValueDesc>(node.outputs.size())};
  ctx.mode = mode;
  OM_TRY(op.infer(ctx));
  KernelFn fn = mode == ArithmeticMode::Exact ? op.exact : op.fast;
  if (!fn) return ctx.error(ErrorKind::Unsupported, "no exact kernel; run the session in ArithmeticMode::Fast");
  std::vector<TensorArg> in_args(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) continue;
    TensorArg& a = in_args[i];
    a.present = true;
    a.dtype = inputs[i]->dtype;
    a.dims = inputs[i]->shape.data();
    a.rank = inputs[i]->shape.size();
    a.numel = inputs[i]->numel();
    a.data = const_cast<void*>(inputs[i]->data);
  }
  outputs->clear();
  outputs->resize(ctx.outputs.size());
  std::vector<TensorArg> out_args(ctx.outputs.size());
  for (size_t i = 0; i < ctx.outputs.size(); ++i) {
    EvaluatedValue& ev = (*outputs)[i];
    ev.desc = ctx.outputs[i];
    if (ev.desc.shape.size() > kMaxRank)
      return ctx.error(ErrorKind::Unsupported, msg("output rank ", ev.desc.shape.size(), " exceeds ", kMaxRank));
    std::shared_ptr<void> buf = aligned_buffer(ev.desc.nbytes());
    if (!buf) return ctx.error(ErrorKind::OutOfMemory, msg("cannot allocate ", ev.desc.nbytes(), " bytes for output ", i));
    ev.desc.data = buf.get();
    ev.owner = buf;
    TensorArg& a = out_args[i];
    a.present = true;
    a.dtype = ev.desc.dtype;
    a.dims = ev.desc.shape.data();
    a.rank = ev.desc.shape.size();
    a.numel = ev.desc.numel();
    a.data = buf.get();
  }
  Prepared prepared;
  OM_TRY(prepare_node(ctx, op, &prepared));
  std::shared_ptr<void> scratch;
  size_t scratch_bytes = op.scratch ? op.scratch(ctx) : 0;
  if (scratch_bytes && !(scratch = aligned_buffer(scratch_bytes)))
    return ctx.error(ErrorKind::OutOfMemory, msg("cannot allocate ", scratch_bytes, " bytes of scratch"));
  const std::string label = node.label();
  KernelContext k;
  k.label = label.c_str();
  k.mode = mode;
  k.inputs = in_args.data();
  k.num_inputs = in_args.size();
  k.outputs = out_args.data();
  k.num_outputs = out_args.size();
  k.scratch = scratch.get();
  k.scratch_bytes = scratch_bytes;
  k.params_data = prepared.size ? prepared.bytes : nullptr;
  k.params_bytes = prepared.size;
  k.table = prepared.table.empty() ? nullptr : prepared.table.data();
  k.table_bytes = prepared.table.size();
  return run_kernel(fn, k, prepared.work, prepared.cost);
}

}  // namespace om::graph
