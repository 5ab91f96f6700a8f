// Linear algebra beyond the matrix products: Einsum and Det.
// Einsum with one or two operands, both f32 or both f64 (computed in double): explicit ("ij,jk->ik") or implicit output, repeated
// labels (diagonals), ellipsis with broadcasting, sums over the labels not in the output. Each
// output element is accumulated over the summed labels in row-major order (a fixed sequence of
// one multiply and one add), so the kernel is exact by nature. The equation is parsed into fixed
// arrays, so running allocates nothing. Det factors each matrix by LU with partial pivoting in
// element order: exact by nature.
#include <cmath>
#include <cstring>
#include <utility>

#include "onemodel/core/shape.h"
#include "onemodel/graph/ops/op_util.h"

namespace om::graph::ops {
namespace {

constexpr int kMaxLabels = 16;

struct EinsumSpec {
  int nops = 0;
  int num_labels = 0;
  int64_t size[kMaxLabels];
  int64_t stride[2][kMaxLabels];
  int out_rank = 0;
  int out_label[kMaxRank];
  int num_sum = 0;
  int sum_label[kMaxLabels];
};

// Parses `eq` for operands of the given dims; returns an error text or nullptr.
const char* parse_einsum(const char* eq, int nops, const int64_t* const* dims, const size_t* ranks, EinsumSpec* sp) {
  char terms[3][64];
  int nterms = 0, len = 0;
  bool arrow = false;
  for (const char* p = eq;; ++p) {
    const char c = *p;
    if (c == ' ') continue;
    if (c == ',' || c == '\0' || (c == '-' && p[1] == '>')) {
      if (nterms >= 3) return "too many terms";
      terms[nterms][len] = '\0';
      ++nterms;
      len = 0;
      if (c == '\0') break;
      if (c == '-') {
        if (arrow) return "more than one '->'";
        arrow = true;
        ++p;
        if (nterms != nops) return "the number of input terms differs from the number of inputs";
      }
      continue;
    }
    if (nterms >= 3) return "too many terms";  // a label after the last term a parse can hold
    if (len >= 63) return "a term is too long";
    terms[nterms][len++] = c;
  }
  if (nterms != nops + (arrow ? 1 : 0)) return "the number of input terms differs from the number of inputs";
  sp->nops = nops;
  // Ellipsis dims: as many as the largest operand needs, right-aligned.
  int ell_dims[2] = {0, 0}, ell_max = 0;
  for (int k = 0; k < nops; ++k) {
    int letters = 0;
    bool ell = false;
    for (const char* t = terms[k]; *t; ++t) {
      if (*t == '.') {
        if (std::strncmp(t, "...", 3) != 0 || ell) return "a malformed ellipsis";
        ell = true;
        t += 2;
      } else if ((*t >= 'a' && *t <= 'z') || (*t >= 'A' && *t <= 'Z')) {
        ++letters;
      } else {
        return "a label is not a letter";
      }
    }
    if (ell) ell_dims[k] = int(ranks[k]) - letters;
    if (ell_dims[k] < 0 || (!ell && letters != int(ranks[k]))) return "a term's labels do not match its input's rank";
    ell_max = ell_dims[k] > ell_max ? ell_dims[k] : ell_max;
  }
  int letter_id[128];
  for (int& v : letter_id) v = -1;
  sp->num_labels = ell_max;
  if (sp->num_labels > kMaxLabels) return "too many labels";
  for (int l = 0; l < kMaxLabels; ++l) sp->size[l] = -1, sp->stride[0][l] = 0, sp->stride[1][l] = 0;
  int count[kMaxLabels] = {};
  for (int k = 0; k < nops; ++k) {
    int64_t strides[kMaxRank];
    contiguous_strides(dims[k], ranks[k], strides);
    size_t d = 0;
    for (const char* t = terms[k]; *t; ++t) {
      int ids[kMaxRank];
      int n = 0;
      if (*t == '.') {
        for (int e = 0; e < ell_dims[k]; ++e) ids[n++] = ell_max - ell_dims[k] + e;
        t += 2;
      } else {
        int& id = letter_id[int(*t)];
        if (id < 0) {
          if (sp->num_labels >= kMaxLabels) return "too many labels";
          id = sp->num_labels++;
        }
        ids[n++] = id;
        ++count[id];
      }
      for (int j = 0; j < n; ++j, ++d) {
        const int l = ids[j];
        const int64_t size = dims[k][d];
        if (size != 1) {
          // A size of 1 broadcasts; any other size seen before (0 included) must match.
          if (sp->size[l] >= 0 && sp->size[l] != 1 && sp->size[l] != size) return "a label has two different sizes";
          sp->size[l] = size;
          sp->stride[k][l] += strides[d];
        } else if (sp->size[l] < 0) {
          sp->size[l] = 1;
        }
      }
    }
  }
  bool in_out[kMaxLabels] = {};
  sp->out_rank = 0;
  if (arrow) {
    bool out_ell = false;
    for (const char* t = terms[nops]; *t; ++t) {
      if (*t == '.') {
        if (std::strncmp(t, "...", 3) != 0) return "a malformed ellipsis";
        // A second one would list the ellipsis labels twice (an input term has one at most).
        if (out_ell) return "the output has more than one ellipsis";
        out_ell = true;
        for (int e = 0; e < ell_max; ++e) {
          if (sp->out_rank >= int(kMaxRank)) return "the output has too many axes";
          sp->out_label[sp->out_rank++] = e, in_out[e] = true;
        }
        t += 2;
        continue;
      }
      if (!((*t >= 'a' && *t <= 'z') || (*t >= 'A' && *t <= 'Z'))) return "a label is not a letter";
      const int id = letter_id[int(*t)];
      if (id < 0) return "an output label appears in no input";
      if (in_out[id]) return "an output label appears twice";
      if (sp->out_rank >= int(kMaxRank)) return "the output has too many axes";
      sp->out_label[sp->out_rank++] = id, in_out[id] = true;
    }
  } else {
    // Implicit output: the ellipsis, then the labels seen once, in alphabetical order.
    for (int e = 0; e < ell_max; ++e) sp->out_label[sp->out_rank++] = e, in_out[e] = true;
    for (int c = 0; c < 128; ++c) {
      const int id = letter_id[c];
      if (id < 0 || count[id] != 1) continue;
      if (sp->out_rank >= int(kMaxRank)) return "the output has too many axes";
      sp->out_label[sp->out_rank++] = id, in_out[id] = true;
    }
  }
  sp->num_sum = 0;
  for (int l = 0; l < sp->num_labels; ++l)
    if (!in_out[l]) sp->sum_label[sp->num_sum++] = l;
  return nullptr;
}

const char* equation_of(const Node& node) {
  const Attribute* a = node.attr("equation");
  return a && a->type == AttrType::String ? a->s.c_str() : nullptr;
}

Status infer_einsum(InferContext& ctx) {
  const int nops = int(ctx.num_inputs());
  if (nops < 1 || nops > 2) return ctx.error(ErrorKind::Unsupported, "onemodel runs Einsum with one or two inputs");
  const int64_t* dims[2] = {nullptr, nullptr};
  size_t ranks[2] = {0, 0};
  for (int k = 0; k < nops; ++k) {
    const ValueDesc* v = ctx.input(size_t(k));
    if (!v || (v->dtype != DType::f32 && v->dtype != DType::f64))
      return ctx.error(ErrorKind::DTypeMismatch, msg("input ", k, " must be f32 or f64"));
    if (v->dtype != ctx.input(0)->dtype)
      return ctx.error(ErrorKind::DTypeMismatch, msg("input ", k, " is ", dtype_name(v->dtype), ", input 0 is ", dtype_name(ctx.input(0)->dtype)));
    if (v->shape.size() > kMaxRank) return ctx.error(ErrorKind::Unsupported, msg("input ", k, " has rank above ", kMaxRank));
    dims[k] = v->shape.data();
    ranks[k] = v->shape.size();
  }
  const char* eq = equation_of(ctx.node);
  if (!eq) return ctx.error(ErrorKind::InvalidArgument, "the equation attribute (a string) is required");
  EinsumSpec sp;
  if (const char* err = parse_einsum(eq, nops, dims, ranks, &sp))
    return ctx.error(ErrorKind::InvalidArgument, msg("equation '", eq, "': ", err));
  // The work is one multiply-add per (output element, summed index): refuse what cannot finish.
  int64_t work = 1;
  for (int l = 0; l < sp.num_labels; ++l)
    if (!checked_mul(work, sp.size[l], &work) || work > (int64_t(1) << 40))
      return ctx.error(ErrorKind::Unsupported, msg("equation '", eq, "' needs more than 2^40 multiply-adds for these shapes"));
  std::vector<int64_t> shape;
  for (int i = 0; i < sp.out_rank; ++i) shape.push_back(sp.size[sp.out_label[i]]);
  ctx.set_output(0, ctx.input(0)->dtype, std::move(shape));
  return Status::ok();
}

// Einsum's record is the parsed equation. Work: the output elements.
Status prepare_einsum(const InferContext& ctx, Prepared& out) {
  const int nops = int(ctx.num_inputs());
  const int64_t* dims[2] = {ctx.input(0)->shape.data(), nops > 1 ? ctx.input(1)->shape.data() : nullptr};
  const size_t ranks[2] = {ctx.input(0)->shape.size(), nops > 1 ? ctx.input(1)->shape.size() : 0};
  if (const char* err = parse_einsum(equation_of(ctx.node), nops, dims, ranks, &out.record<EinsumSpec>()))
    return ctx.error(ErrorKind::InvalidArgument, err);
  out.work = ctx.outputs[0].numel();
  return Status::ok();
}

// T is f32 or f64; products and sums stay in T (f64 computes in double). The output index of
// element k.begin is unravelled once.
template <typename T>
Status einsum_typed(const KernelContext& k) {
  const EinsumSpec& sp = k.params<EinsumSpec>();
  const T* a = k.in(0).as<const T>();
  const T* b = sp.nops > 1 ? k.in(1).as<const T>() : nullptr;
  T* y = k.out(0).as<T>();
  int64_t sum_count = 1;
  for (int s = 0; s < sp.num_sum; ++s) sum_count *= sp.size[sp.sum_label[s]];
  int64_t oidx[kMaxRank] = {};
  int64_t rest = k.begin;
  for (int i = sp.out_rank; i-- > 0 && rest > 0;) {
    const int64_t n = sp.size[sp.out_label[i]];
    oidx[i] = rest % n;
    rest /= n;
  }
  for (int64_t o = k.begin; o < k.end; ++o) {
    int64_t base_a = 0, base_b = 0;
    for (int i = 0; i < sp.out_rank; ++i) {
      base_a += oidx[i] * sp.stride[0][sp.out_label[i]];
      base_b += oidx[i] * sp.stride[1][sp.out_label[i]];
    }
    int64_t sidx[kMaxLabels] = {};
    int64_t off_a = base_a, off_b = base_b;
    T acc = T(0);
    for (int64_t s = 0; s < sum_count; ++s) {
      acc = acc + (b ? a[off_a] * b[off_b] : a[off_a]);
      for (int j = sp.num_sum; j-- > 0;) {
        const int l = sp.sum_label[j];
        if (++sidx[j] < sp.size[l]) {
          off_a += sp.stride[0][l];
          off_b += sp.stride[1][l];
          break;
        }
        off_a -= sp.stride[0][l] * (sp.size[l] - 1);
        off_b -= sp.stride[1][l] * (sp.size[l] - 1);
        sidx[j] = 0;
      }
    }
    y[o] = acc;
    for (int i = sp.out_rank; i-- > 0;) {
      if (++oidx[i] < sp.size[sp.out_label[i]]) break;
      oidx[i] = 0;
    }
  }
  return Status::ok();
}

Status einsum_kernel(const KernelContext& k) {
  return k.in(0).dtype == DType::f64 ? einsum_typed<double>(k) : einsum_typed<float>(k);
}

// ---- Det: LU with partial pivoting per matrix, in element order ----

Status infer_det(InferContext& ctx) {
  const ValueDesc* x = ctx.input(0);
  if (!x || x->dtype != DType::f32) return ctx.error(ErrorKind::DTypeMismatch, "input must be f32");
  const auto& s = x->shape;
  if (s.size() < 2 || s[s.size() - 1] != s[s.size() - 2])
    return ctx.error(ErrorKind::InvalidArgument, msg("input must be [..., M, M], got ", shape_str(s)));
  ctx.set_output(0, DType::f32, std::vector<int64_t>(s.begin(), s.end() - 2));
  return Status::ok();
}

// Scratch: one M x M working copy per matrix, so the matrices factor independently.
size_t det_scratch(const InferContext& ctx) {
  return size_t(ctx.input(0)->numel()) * sizeof(float);
}

// Work: the matrices (output elements; M = 0 gives determinants of empty matrices, 1).
Status prepare_det(const InferContext& ctx, Prepared& out) {
  out.work = ctx.outputs[0].numel();
  return Status::ok();
}

Status det_kernel(const KernelContext& k) {
  const TensorArg& X = k.in(0);
  const int64_t m = X.dims[X.rank - 1];
  for (int64_t b = k.begin; b < k.end; ++b) {
    float* a = static_cast<float*>(k.scratch) + b * m * m;
    for (int64_t i = 0; i < m * m; ++i) a[i] = X.as<const float>()[b * m * m + i];
    float det = 1.0f;
    for (int64_t c = 0; c < m; ++c) {
      int64_t p = c;
      for (int64_t r = c + 1; r < m; ++r)
        if (std::fabs(a[r * m + c]) > std::fabs(a[p * m + c])) p = r;
      if (a[p * m + c] == 0.0f) { det = 0.0f; break; }
      if (p != c) {
        for (int64_t j = 0; j < m; ++j) std::swap(a[p * m + j], a[c * m + j]);
        det = -det;
      }
      det = det * a[c * m + c];
      for (int64_t r = c + 1; r < m; ++r) {
        const float f = a[r * m + c] / a[c * m + c];
        for (int64_t j = c; j < m; ++j) a[r * m + j] = a[r * m + j] - f * a[c * m + j];
      }
    }
    k.out(0).as<float>()[b] = det;
  }
  return Status::ok();
}

constexpr AttrSpec kEinsumAttrs[] = {{"equation", AttrKind::String}};

constexpr OpDef kOps[] = {
    op("Einsum").upgrades_from(12).inputs(1, 2).attributes(kEinsumAttrs).shapes(infer_einsum)
        .prepared(prepare_einsum).kernel(einsum_kernel)
        .doc("f32 f64, one or two inputs; explicit or implicit output, diagonals, ellipsis; summed in row-major order").with_flags(kOpF16InF32),
    op("Det").upgrades_from(11).inputs(1).shapes(infer_det).prepared(prepare_det).kernel(det_kernel)
        .with_scratch(det_scratch)
        .doc("f32 [..., M, M]; LU with partial pivoting in element order"),
};

}  // namespace

}  // namespace om::graph::ops

// The family's operators, one symbol each (onemodel/op_list.h).
#define OM_LINALG_OPS(X) X(Einsum) X(Det)
OM_OP_FAMILY_TABLE(linalg, OM_LINALG_OPS)
