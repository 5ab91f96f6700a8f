// sink_transposes (Exact): Transposes move down through layout-agnostic nodes until they meet
// their inverse and both vanish. tf2onnx and Keras exports keep TensorFlow's NHWC layout around
// ONNX's NCHW convolutions: Transpose(NHWC -> NCHW) -> Conv -> Transpose(NCHW -> NHWC) -> Relu ->
// Add -> Transpose(NHWC -> NCHW) -> Conv... Every pair between two convolutions copies the whole
// activation twice and hides the Conv -> Relu / Add patterns from the epilogue fusion.
//
// A Transpose T (explicit perm p) whose output only one node reads moves below that node E when E
// computes each output element from the elements at the same index of its inputs:
//   - a one-input elementwise node (Relu, Sigmoid, Clip with constant bounds, Cast...): E(T(x)) =
//     T(E(x));
//   - a two-input elementwise node (Add, Mul, Max, PRelu...) whose other operand is a constant
//     (transposed once into a new initializer by the inverse permutation, after the ones
//     broadcasting prepends) or the output of a Transpose with the same perm read only there
//     (its input is used instead);
//   - a Concat whose every input is such a Transpose (the axis becomes p[axis]).
// It keeps moving while it can; when it meets a Transpose with perm p2 they compose, and an
// identity composition removes both (the second one's readers read T's input; when it wrote a
// graph output, the last node T moved below writes it). Each element is
// still computed by the same operation from the same operand values, and a Transpose only moves
// bytes, so no output bit changes.
#include <algorithm>
#include <cstring>
#include <map>
#include <utility>

#include "onemodel/core/dtype.h"
#include "onemodel/graph/op_registry.h"
#include "onemodel/graph/passes/pass.h"

namespace om::graph::passes {
namespace {

constexpr const char* kUnary[] = {"Relu",     "LeakyRelu", "Sigmoid", "Tanh",  "HardSigmoid", "HardSwish", "Elu",
                                  "Selu",     "Celu",      "Softplus", "Softsign", "Gelu",     "Erf",       "Exp",
                                  "Log",      "Sqrt",      "Neg",     "Abs",   "Reciprocal",  "Floor",     "Ceil",
                                  "Round",    "Sign",      "Not",     "Cast",  "Clip",        "Sin",       "Cos",
                                  "IsNaN",    "IsInf",     "Mish",    "ThresholdedRelu"};
constexpr const char* kBinary[] = {"Add",  "Sub",     "Mul",  "Div",   "Pow",  "Max",   "Min",          "PRelu",
                                   "Equal", "Less",   "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"};

bool listed(const Node& n, const char* const* begin, const char* const* end) {
  return is_default_domain(n.domain) && n.outputs.size() == 1 &&
         std::any_of(begin, end, [&](const char* t) { return n.op_type == t; });
}

std::vector<int64_t> inverse(const std::vector<int64_t>& p) {
  std::vector<int64_t> q(p.size());
  for (size_t k = 0; k < p.size(); ++k) q[size_t(p[k])] = int64_t(k);
  return q;
}

// c (rank at most p's, ones prepended to p's rank) transposed by inverse(p): what E reads at x's
// index where it read c at T(x)'s. False for a type without fixed-size elements.
bool transposed_constant(const TensorData& c, const std::vector<int64_t>& p, std::string name, TensorData* out) {
  const size_t r = p.size(), es = dtype_size(c.dtype);
  if (c.dims.size() > r || es == 0 || size_t(c.numel()) * es != c.nbytes) return false;
  std::vector<int64_t> in(r - c.dims.size(), 1);
  in.insert(in.end(), c.dims.begin(), c.dims.end());
  const std::vector<int64_t> q = inverse(p);
  std::vector<int64_t> dims(r), in_stride(r, 1);
  for (size_t k = r; k-- > 1;) in_stride[k - 1] = in_stride[k] * in[k];
  for (size_t m = 0; m < r; ++m) dims[m] = in[size_t(q[m])];
  std::vector<uint8_t> bytes(c.nbytes);
  std::vector<int64_t> j(r, 0);  // the output index, row-major
  for (size_t o = 0; o < size_t(c.numel()); ++o) {
    int64_t src = 0;
    for (size_t m = 0; m < r; ++m) src += j[m] * in_stride[size_t(q[m])];
    std::memcpy(bytes.data() + o * es, c.bytes + size_t(src) * es, es);
    for (size_t m = r; m-- > 0;) {
      if (++j[m] < dims[m]) break;
      j[m] = 0;
    }
  }
  *out = TensorData::copy_of(std::move(name), c.dtype, std::move(dims), bytes.data(), bytes.size());
  return true;
}

// Constants already transposed back in this pass, by (constant, perm): a bias or scale that
// several transposed branches read is copied once, not once per reader.
using TransposedConstants = std::map<std::pair<std::string, std::vector<int64_t>>, std::string>;

// Node e with the transposed value t (T(x), perm p) as one of its inputs, rewritten to read
// below T: x for t, a transposed Transpose's input, constants transposed back. False (nothing
// changed) when some operand cannot be.
bool below(DefUse& u, const Node& e, const std::string& t, const std::string& x, const std::vector<int64_t>& p,
           TransposedConstants* done, Node* out) {
  const bool unary = listed(e, std::begin(kUnary), std::end(kUnary));
  const bool binary = listed(e, std::begin(kBinary), std::end(kBinary)) && e.inputs.size() == 2;
  const bool concat = is_default_domain(e.domain) && e.op_type == "Concat" && e.outputs.size() == 1;
  if (!unary && !binary && !concat) return false;
  *out = e;
  std::vector<size_t> bypassed;   // other Transposes read only here, now dead
  std::vector<TensorData> moved;  // constants transposed back, added when every operand is
  for (size_t k = 0; k < e.inputs.size(); ++k) {
    const std::string& v = e.inputs[k];
    if (v == t) {
      out->inputs[k] = x;
      continue;
    }
    if (v.empty() || (unary && k > 0 && u.constant(v))) continue;  // Clip's bounds, absent inputs
    if (const TensorData* c = u.constant(v); c && binary) {
      int64_t ones = 1;
      for (int64_t d : c->dims) ones = ones && d == 1;
      if (ones && c->dims.size() <= p.size()) continue;  // one element, rank not above T's: as it is
      if (auto it = done->find({v, p}); it != done->end()) {
        out->inputs[k] = it->second;
        continue;
      }
      moved.emplace_back();
      if (!transposed_constant(*c, p, u.fresh_name(v + "_untransposed"), &moved.back())) return false;
      out->inputs[k] = moved.back().name;
      continue;
    }
    const Node* pn = u.producer_node(v);
    const std::vector<int64_t>* pp = pn ? transpose_perm(*pn) : nullptr;
    if (!pp || *pp != p || !u.single_internal_use(v)) return false;
    out->inputs[k] = pn->inputs[0];
    bypassed.push_back(u.producer(v));
  }
  if (concat) {
    const int64_t r = int64_t(p.size());
    int64_t axis = e.attr_int("axis", 0);
    if (axis < -r || axis >= r) return false;
    if (axis < 0) axis += r;
    for (Attribute& a : out->attributes)
      if (a.name == "axis") a = Attribute::of_int("axis", p[size_t(axis)]);
  }
  for (size_t d : bypassed) u.drop(d);
  for (size_t k = 0, m = 0; k < e.inputs.size() && m < moved.size(); ++k)
    if (out->inputs[k] == moved[m].name) done->emplace(std::make_pair(e.inputs[k], p), moved[m++].name);
  for (TensorData& c : moved) u.add_initializer(std::move(c));
  return true;
}

}  // namespace

Status sink_transposes(Graph& g, ArithmeticMode, size_t* changes) {
  TransposedConstants done;
  return rewrite_scan(g, changes, [&g, &done](DefUse& u, size_t i) -> size_t {
    const std::vector<int64_t>* perm = transpose_perm(g.nodes[i]);
    if (!perm) return 0;
    const std::vector<int64_t> p = *perm;
    std::string x = g.nodes[i].inputs[0], t = g.nodes[i].outputs[0];
    const std::string name = g.nodes[i].name;
    size_t last = i, moved = 0;
    while (u.single_internal_use(t)) {
      const size_t r = u.reader(t);
      const Node& e = g.nodes[r];
      if (const std::vector<int64_t>* p2 = transpose_perm(e); p2 && p2->size() == p.size()) {
        // T(p2)(T(p)(x)) = T(p o p2): an identity vanishes; another composition stops here.
        const std::vector<int64_t> c = compose_perms(p, *p2);
        bool identity = true;
        for (size_t k = 0; k < c.size(); ++k) identity &= c[k] == int64_t(k);
        if (!identity) break;
        const std::string y = e.outputs[0];
        if (u.is_output(y)) {  // the last node moved below writes the output itself (none: a copy stays)
          if (moved == 0) break;
          u.set_output(last, 0, y);
        } else {
          for (size_t reader : std::vector<size_t>(u.readers(y)))
            for (size_t s = 0; s < g.nodes[reader].inputs.size(); ++s)
              if (g.nodes[reader].inputs[s] == y) u.set_input(reader, s, x);
        }
        u.drop(r);
        u.drop(i);
        return moved + 1;
      }
      Node below_node;
      if (!below(u, e, t, x, p, &done, &below_node)) break;
      const std::string out = e.outputs[0];
      x = u.fresh_name(out + "_untransposed");
      below_node.outputs[0] = x;
      u.replace(r, std::move(below_node));
      t = out;
      last = r;
      ++moved;
    }
    if (moved == 0) return 0;
    Node tn;
    tn.op_type = "Transpose";
    tn.name = name;
    tn.inputs = {x};
    tn.outputs = {t};
    tn.attributes.push_back(Attribute::of_ints("perm", p));
    u.drop(i);
    u.insert_after(last, std::move(tn));
    return moved;
  });
}

}  // namespace om::graph::passes
