// Text features: TfIdfVectorizer, the n-gram counts of rows of integer tokens, weighted by TF,
// IDF or TFIDF. Its pool of n-grams is an attribute that may hold thousands of tokens, too many
// for a prepared record: prepare sorts it into the plan's table (Prepared::table), where the
// kernel finds each n-gram by binary search. String pools are refused (onemodel has no string
// dtype; docs/onnx.md, "Conformance").
#include <algorithm>
#include <numeric>

#include "onemodel/graph/ops/op_util.h"

namespace om::graph::ops {
namespace {

enum class TfIdfMode : int { TF, IDF, TFIDF };

// What the attributes say, checked (tfidf_spec).
struct TfIdfSpec {
  TfIdfMode mode = TfIdfMode::TF;
  int64_t min_n = 1, max_n = 1;  // max_n: at most the pool's largest n-gram size
  int64_t max_skip = 0;
  int64_t out_size = 0;          // 1 + the largest of ngram_indexes
  const std::vector<int64_t>* pool = nullptr;
  const std::vector<int64_t>* counts = nullptr;   // ngram_counts: where each size's n-grams start
  const std::vector<int64_t>* indexes = nullptr;  // ngram_indexes: each n-gram's output column
  const std::vector<float>* weights = nullptr;    // null when absent
};

// Lookups a row may take at most (rows × starts × skips × sizes): a larger product is refused
// when planning, so a hostile skip count over a long row cannot hang a run.
constexpr int64_t kMaxTfIdfLookups = int64_t(1) << 32;

Status tfidf_spec(const InferContext& ctx, TfIdfSpec* s) {
  const Node& node = ctx.node;
  const Attribute* pool = node.attr("pool_int64s");
  if (!pool || pool->ints.empty()) {
    if (node.attr("pool_strings"))
      return ctx.error(ErrorKind::Unsupported, "pool_strings: onemodel has no string dtype; give the pool as pool_int64s over integer tokens");
    return ctx.error(ErrorKind::InvalidArgument, "pool_int64s is missing or empty: it holds the n-grams to count");
  }
  s->pool = &pool->ints;
  const std::string_view mode = node.attr_text("mode", "");
  if (mode == "TF") s->mode = TfIdfMode::TF;
  else if (mode == "IDF") s->mode = TfIdfMode::IDF;
  else if (mode == "TFIDF") s->mode = TfIdfMode::TFIDF;
  else return ctx.error(ErrorKind::InvalidArgument, msg("mode must be TF, IDF or TFIDF, got '", std::string(mode), "'"));
  for (const char* name : {"min_gram_length", "max_gram_length", "max_skip_count"})
    if (!node.attr(name)) return ctx.error(ErrorKind::InvalidArgument, msg(name, " is missing (a required attribute)"));
  s->min_n = node.attr_int("min_gram_length", 1);
  s->max_n = node.attr_int("max_gram_length", 1);
  s->max_skip = node.attr_int("max_skip_count", 0);
  if (s->min_n < 1 || s->max_n < s->min_n || s->max_skip < 0)
    return ctx.error(ErrorKind::InvalidArgument, msg("needs 1 <= min_gram_length <= max_gram_length and max_skip_count >= 0, got ",
                                                     s->min_n, ", ", s->max_n, " and ", s->max_skip));
  const Attribute* counts = node.attr("ngram_counts");
  const Attribute* indexes = node.attr("ngram_indexes");
  if (!counts || counts->ints.empty() || !indexes || indexes->ints.empty())
    return ctx.error(ErrorKind::InvalidArgument, "ngram_counts and ngram_indexes must both be given and not empty");
  s->counts = &counts->ints;
  s->indexes = &indexes->ints;
  const int64_t P = int64_t(s->pool->size());
  int64_t ngrams = 0;
  for (size_t i = 0; i < s->counts->size(); ++i) {
    const int64_t begin = (*s->counts)[i], end = i + 1 < s->counts->size() ? (*s->counts)[i + 1] : P;
    const int64_t n = int64_t(i) + 1;
    if (begin < 0 || end < begin || end > P)
      return ctx.error(ErrorKind::InvalidArgument, msg("ngram_counts must rise from 0 to at most the pool's ", P,
                                                       " tokens; entry ", i, " spans [", begin, ", ", end, ")"));
    if ((end - begin) % n != 0)
      return ctx.error(ErrorKind::InvalidArgument, msg("the ", n, "-grams of the pool span ", end - begin, " tokens, not a multiple of ", n));
    ngrams += (end - begin) / n;
  }
  if (int64_t(s->indexes->size()) != ngrams)
    return ctx.error(ErrorKind::InvalidArgument, msg("ngram_indexes has ", s->indexes->size(), " entries; the pool holds ", ngrams,
                                                     " n-grams (one output column each)"));
  int64_t largest = -1;
  for (int64_t v : *s->indexes) {
    if (v < 0 || v >= kMaxNumel)
      return ctx.error(ErrorKind::InvalidArgument, msg("ngram_indexes holds ", v, "; an output column must be in [0, ", kMaxNumel, ")"));
    largest = std::max(largest, v);
  }
  s->out_size = largest + 1;
  s->max_n = std::min<int64_t>(s->max_n, int64_t(s->counts->size()));
  const Attribute* w = node.attr("weights");
  if (w && !w->floats.empty()) {
    // Weights are read per output column (as ONNX Runtime reads them), so every column needs one.
    if (int64_t(w->floats.size()) != ngrams || s->out_size > int64_t(w->floats.size()))
      return ctx.error(ErrorKind::InvalidArgument, msg("weights has ", w->floats.size(), " entries; it needs one per n-gram (", ngrams,
                                                       ") covering every output column (", s->out_size, ")"));
    s->weights = &w->floats;
  }
  return Status::ok();
}

// X as [rows, cols].
void tfidf_rows(const ValueDesc& x, int64_t* rows, int64_t* cols) {
  *rows = x.shape.size() == 2 ? x.shape[0] : 1;
  *cols = x.shape.back();
}

Status infer_tfidf(InferContext& ctx) {
  const ValueDesc* x = ctx.input(0);
  if (!x || (x->dtype != DType::i32 && x->dtype != DType::i64))
    return ctx.error(ErrorKind::DTypeMismatch, msg("input must be i32 or i64 tokens, got ", x ? dtype_name(x->dtype) : "nothing"));
  if (x->shape.size() != 1 && x->shape.size() != 2)
    return ctx.error(ErrorKind::ShapeMismatch, msg("input must be [C] or [N, C], got rank ", x->shape.size()));
  TfIdfSpec s;
  OM_TRY(tfidf_spec(ctx, &s));
  if (x->shape.size() == 1) ctx.set_output(0, DType::f32, {s.out_size});
  else ctx.set_output(0, DType::f32, {x->shape[0], s.out_size});
  return Status::ok();
}

// The table, in int64 words: per n-gram size n (1..max_n) its entries' first word and count,
// then the entries of each size, sorted by their tokens, each n tokens and its output column;
// then the weights (one float per output column) when there are any.
struct TfIdfParams {
  int64_t rows = 0, cols = 0, out_size = 0;
  int64_t min_n = 1, max_n = 0, skips = 1;  // skips: the skip distances worth trying, 1..skips
  TfIdfMode mode = TfIdfMode::TF;
  bool weighted = false;
  int64_t weights_word = 0;  // where the weights start in the table
};

Status prepare_tfidf(const InferContext& ctx, Prepared& out) {
  TfIdfSpec s;
  OM_TRY(tfidf_spec(ctx, &s));
  TfIdfParams& p = out.record<TfIdfParams>();
  tfidf_rows(*ctx.input(0), &p.rows, &p.cols);
  p.out_size = s.out_size;
  p.min_n = s.min_n;
  p.max_n = s.max_n;
  p.mode = s.mode;
  p.weighted = s.weights != nullptr;
  // A skip distance d fits an n-gram of the smallest size counted at d (2 when d > 1) only while
  // d * (n - 1) < cols: no longer distance is worth trying.
  const int64_t n2 = std::max<int64_t>(s.min_n, 2);
  const int64_t fitting = p.cols <= 1 ? 1 : (p.cols - 1) / (n2 - 1);
  p.skips = std::max<int64_t>(1, s.max_skip >= fitting ? fitting : s.max_skip + 1);
  // Lookups over the whole input: for each skip distance, each start and each size.
  const int64_t sizes = std::max<int64_t>(s.max_n - s.min_n + 1, 1);
  const int64_t lookups = count_mul(count_mul(count_mul(p.rows, p.cols), p.skips), sizes);
  if (lookups > kMaxTfIdfLookups)
    return ctx.error(ErrorKind::InvalidArgument, msg("rows of ", p.cols, " tokens with max_skip_count ", s.max_skip, " over ", sizes,
                                                     " n-gram sizes would take ", lookups, " lookups, above the limit of ", kMaxTfIdfLookups,
                                                     "; lower max_skip_count or split the rows"));
  out.work = p.rows;
  out.cost = std::max<int64_t>(lookups * 8, 1);

  // Each n-gram's id in pool order (counted over every size, the sizes outside
  // [min_n, max_n] too, as ngram_indexes is), its size and its first token.
  struct Gram {
    int64_t n, first, id;
  };
  std::vector<Gram> grams;
  const int64_t P = int64_t(s.pool->size());
  int64_t id = 0;
  for (size_t i = 0; i < s.counts->size(); ++i) {
    const int64_t n = int64_t(i) + 1, begin = (*s.counts)[i], end = i + 1 < s.counts->size() ? (*s.counts)[i + 1] : P;
    for (int64_t t = begin; t < end; t += n, ++id)
      if (n >= s.min_n && n <= s.max_n) grams.push_back({n, t, id});
  }
  const int64_t* pool = s.pool->data();
  // By size, then tokens; equal n-grams by id, so that the last (whose column a repeated
  // n-gram counts into, as ONNX Runtime's trie keeps it) ends each run of equals.
  auto token_less = [&](const Gram& a, const Gram& b) {
    if (a.n != b.n) return a.n < b.n;
    for (int64_t j = 0; j < a.n; ++j)
      if (pool[a.first + j] != pool[b.first + j]) return pool[a.first + j] < pool[b.first + j];
    return false;
  };
  std::stable_sort(grams.begin(), grams.end(), token_less);
  std::vector<Gram> unique;
  for (size_t i = 0; i < grams.size(); ++i)
    if (i + 1 == grams.size() || token_less(grams[i], grams[i + 1])) unique.push_back(grams[i]);

  const int64_t header = 2 * p.max_n;
  int64_t words = header;
  for (const Gram& g : unique) words += g.n + 1;
  p.weights_word = words;
  const int64_t weight_words = p.weighted ? (p.out_size + 1) / 2 : 0;
  std::vector<int64_t> table(size_t(words + weight_words), 0);
  int64_t at = header;
  for (const Gram& g : unique) {
    int64_t* h = &table[size_t(2 * (g.n - 1))];
    if (h[1] == 0) h[0] = at;
    ++h[1];
    std::copy(pool + g.first, pool + g.first + g.n, &table[size_t(at)]);
    table[size_t(at + g.n)] = (*s.indexes)[size_t(g.id)];
    at += g.n + 1;
  }
  if (p.weighted) std::memcpy(&table[size_t(words)], s.weights->data(), size_t(p.out_size) * sizeof(float));
  out.table.resize(table.size() * sizeof(int64_t));
  if (!table.empty()) std::memcpy(out.table.data(), table.data(), out.table.size());
  return Status::ok();
}

// The output column of the n-gram x[s], x[s + d], ... x[s + (n - 1) d] (n tokens of the
// table's size-n entries), or -1 when the pool does not hold it.
template <typename T>
int64_t find_gram(const int64_t* table, int64_t n, const T* x, int64_t s, int64_t d) {
  const int64_t* h = table + 2 * (n - 1);
  const int64_t* e = table + h[0];
  int64_t lo = 0, hi = h[1];
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    const int64_t* g = e + mid * (n + 1);
    int c = 0;
    for (int64_t j = 0; j < n && c == 0; ++j) {
      const int64_t v = int64_t(x[s + j * d]);
      c = v < g[j] ? -1 : v > g[j] ? 1 : 0;
    }
    if (c == 0) return g[n];
    if (c < 0) hi = mid;
    else lo = mid + 1;
  }
  return -1;
}

template <typename T>
void tfidf_typed(const KernelContext& k, const TfIdfParams& p) {
  const T* x = k.in(0).as<const T>();
  float* y = k.out(0).as<float>();
  const int64_t* table = static_cast<const int64_t*>(k.table);
  const float* w = p.weighted ? reinterpret_cast<const float*>(table + p.weights_word) : nullptr;
  for (int64_t r = k.begin; r < k.end; ++r) {
    const T* row = x + r * p.cols;
    float* out = y + r * p.out_size;
    std::fill(out, out + p.out_size, 0.0f);
    // Unigrams once (skipping does not change them); larger n-grams at every skip distance.
    for (int64_t d = 1; d <= p.skips; ++d) {
      const int64_t lo = d == 1 ? p.min_n : std::max<int64_t>(p.min_n, 2);
      for (int64_t s = 0; s < p.cols; ++s)
        for (int64_t n = lo; n <= p.max_n && s + (n - 1) * d < p.cols; ++n) {
          if (table[2 * (n - 1) + 1] == 0) continue;
          const int64_t col = find_gram(table, n, row, s, d);
          if (col >= 0) out[col] += 1.0f;
        }
    }
    for (int64_t c = 0; c < p.out_size; ++c) {
      const float weight = w ? w[c] : 1.0f;
      if (p.mode == TfIdfMode::IDF) out[c] = out[c] > 0 ? weight : 0.0f;
      else if (p.mode == TfIdfMode::TFIDF) out[c] = out[c] * weight;
    }
  }
}

Status tfidf_kernel(const KernelContext& k) {
  const TfIdfParams& p = k.params<TfIdfParams>();
  if (p.max_n < p.min_n || p.cols == 0) {  // nothing the pool holds can be counted
    float* y = k.out(0).as<float>();
    std::fill(y + k.begin * p.out_size, y + k.end * p.out_size, 0.0f);
    return Status::ok();
  }
  if (k.in(0).dtype == DType::i64) tfidf_typed<int64_t>(k, p);
  else tfidf_typed<int32_t>(k, p);
  return Status::ok();
}

constexpr AttrSpec kTfIdfAttrs[] = {{"max_gram_length", AttrKind::Int}, {"min_gram_length", AttrKind::Int},
                                    {"max_skip_count", AttrKind::Int},  {"mode", AttrKind::String},
                                    {"ngram_counts", AttrKind::Ints},   {"ngram_indexes", AttrKind::Ints},
                                    {"pool_int64s", AttrKind::Ints},    {"pool_strings", AttrKind::Strings},
                                    {"weights", AttrKind::Floats}};

constexpr OpDef kOps[] = {
    op("TfIdfVectorizer").since_opset(9).inputs(1).attributes(kTfIdfAttrs).shapes(infer_tfidf).prepared(prepare_tfidf)
        .kernel(tfidf_kernel)
        .doc("i32 i64 tokens [C] or [N, C] -> f32 counts; pool_int64s (pool_strings refused), ngram_counts, ngram_indexes, "
             "min/max_gram_length, max_skip_count, mode TF IDF TFIDF, weights per output column; exact (counts)"),
};

}  // namespace
}  // namespace om::graph::ops

// The family's operators, one symbol each (onemodel/op_list.h).
#define OM_TEXT_OPS(X) X(TfIdfVectorizer)
OM_OP_FAMILY_TABLE(text, OM_TEXT_OPS)
