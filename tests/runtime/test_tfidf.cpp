// TfIdfVectorizer against a reference written the way the ONNX specification describes the
// counting (a trie of the pool walked from every start at every skip distance, unigrams once),
// over random pools, rows and attributes; and its refusals.
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime_helpers.h"

using namespace rt;
using om::DType;
using g::Attribute;

namespace {

struct Trie {
  std::map<int64_t, std::unique_ptr<Trie>> next;
  int64_t id = -1;  // the n-gram ending here, in pool order (-1: a prefix only)
};

struct Spec {
  int64_t min_n, max_n, max_skip;
  std::string mode;
  std::vector<int64_t> counts, indexes, pool;
  std::vector<float> weights;
};

// rows x cols tokens -> rows x out_size.
std::vector<float> reference(const Spec& s, const std::vector<int64_t>& x, int64_t rows, int64_t cols) {
  Trie root;
  int64_t id = 0;
  for (size_t i = 0; i < s.counts.size(); ++i) {
    const int64_t n = int64_t(i) + 1, b = s.counts[i], e = i + 1 < s.counts.size() ? s.counts[i + 1] : int64_t(s.pool.size());
    for (int64_t t = b; t < e; t += n, ++id) {
      if (n < s.min_n || n > s.max_n) continue;
      Trie* m = &root;
      for (int64_t j = 0; j < n; ++j) {
        auto& p = m->next[s.pool[size_t(t + j)]];
        if (!p) p = std::make_unique<Trie>();
        m = p.get();
      }
      m->id = id;  // a repeated n-gram: the last one's
    }
  }
  int64_t out_size = 0;
  for (int64_t v : s.indexes) out_size = std::max(out_size, v + 1);
  std::vector<float> y(size_t(rows * out_size), 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<int64_t> f(size_t(out_size), 0);
    int64_t start_n = s.min_n;
    for (int64_t d = 1; d <= s.max_skip + 1; ++d) {
      for (int64_t st = 0; st < cols; ++st) {
        const Trie* m = &root;
        for (int64_t n = 1, at = st; n <= s.max_n && at < cols; ++n, at += d) {
          auto it = m->next.find(x[size_t(r * cols + at)]);
          if (it == m->next.end()) break;
          m = it->second.get();
          if (n >= start_n && m->id >= 0) ++f[size_t(s.indexes[size_t(m->id)])];
        }
      }
      if (start_n == 1) start_n = 2;
      if (start_n > s.max_n) break;
    }
    for (int64_t c = 0; c < out_size; ++c) {
      const float w = s.weights.empty() ? 1.0f : s.weights[size_t(c)];
      const float v = float(f[size_t(c)]);
      y[size_t(r * out_size + c)] = s.mode == "TF" ? v : s.mode == "IDF" ? (v > 0 ? w : 0.0f) : v * w;
    }
  }
  return y;
}

std::vector<Attribute> attrs_of(const Spec& s) {
  std::vector<Attribute> a = {Attribute::of_int("min_gram_length", s.min_n), Attribute::of_int("max_gram_length", s.max_n),
                              Attribute::of_int("max_skip_count", s.max_skip), Attribute::of_string("mode", s.mode),
                              Attribute::of_ints("ngram_counts", s.counts), Attribute::of_ints("ngram_indexes", s.indexes),
                              Attribute::of_ints("pool_int64s", s.pool)};
  if (!s.weights.empty()) a.push_back(Attribute::of_floats("weights", s.weights));
  return a;
}

uint32_t next(uint32_t& state) {
  state = state * 1664525u + 1013904223u;
  return state >> 8;
}

}  // namespace

TEST_CASE("TfIdfVectorizer: random pools and rows against a trie walk, every mode, i32 and i64, rank 1 and 2") {
  uint32_t rng = 12345;
  for (int trial = 0; trial < 60; ++trial) {
    CAPTURE(trial);
    Spec s;
    const int64_t sizes = 1 + int64_t(next(rng) % 3);  // pool n-gram sizes 1..3
    int64_t ngrams = 0;
    for (int64_t n = 1; n <= sizes; ++n) {
      s.counts.push_back(int64_t(s.pool.size()));
      const int64_t k = int64_t(next(rng) % 5);  // may be empty
      for (int64_t i = 0; i < k * n; ++i) s.pool.push_back(int64_t(next(rng) % 4));  // small alphabet: repeats happen
      ngrams += k;
    }
    if (ngrams == 0) {
      s.pool.push_back(1);  // one unigram
      s.counts.assign(size_t(sizes), 1);
      s.counts[0] = 0;
      ngrams = 1;
    }
    for (int64_t i = 0; i < ngrams; ++i) s.indexes.push_back(int64_t(next(rng) % uint32_t(ngrams)));  // columns may repeat
    s.indexes[0] = ngrams - 1;  // so every column has a weight
    s.min_n = 1 + int64_t(next(rng) % 2);
    s.max_n = s.min_n + int64_t(next(rng) % 3);
    s.max_skip = int64_t(next(rng) % 4);
    const char* modes[] = {"TF", "IDF", "TFIDF"};
    s.mode = modes[next(rng) % 3];
    if (next(rng) % 2)
      for (int64_t i = 0; i < ngrams; ++i) s.weights.push_back(0.25f * float(1 + next(rng) % 8));
    const bool rank1 = next(rng) % 3 == 0;
    const int64_t rows = rank1 ? 1 : 1 + int64_t(next(rng) % 4), cols = int64_t(next(rng) % 12);
    std::vector<int64_t> x(size_t(rows * cols));
    for (auto& v : x) v = int64_t(next(rng) % 5);
    const std::vector<float> want = reference(s, x, rows, cols);
    const std::vector<int64_t> dims = rank1 ? std::vector<int64_t>{cols} : std::vector<int64_t>{rows, cols};
    for (DType dt : {DType::i64, DType::i32})
      for (auto mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
        g::Graph gr = single_node("TfIdfVectorizer", {value("x", dt, dims)}, attrs_of(s));
        const Feed feed = dt == DType::i64 ? Feed::of("x", dims, x) : Feed::of("x", dims, std::vector<int32_t>(x.begin(), x.end()));
        const auto out = run_graph(gr, {feed}, {mode});
        REQUIRE(out[0].dtype == DType::f32);
        CHECK(out[0].dims.size() == dims.size());
        CHECK(out[0].as<float>() == want);
      }
  }
}

TEST_CASE("TfIdfVectorizer: the specification's example, skips and weights worked by hand") {
  // Unigrams {2, 3, 5, 4}, bigrams {(5, 6), (7, 8), (6, 7)}; the row [1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8].
  Spec s{1, 2, 0, "TF", {0, 4}, {0, 1, 2, 3, 4, 5, 6}, {2, 3, 5, 4, 5, 6, 7, 8, 6, 7}, {}};
  const std::vector<int64_t> x{1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8};
  auto run1 = [&](const Spec& sp) {
    g::Graph gr = single_node("TfIdfVectorizer", {value("x", DType::i64, {12})}, attrs_of(sp));
    return run_graph(gr, {Feed::of("x", {12}, x)})[0].as<float>();
  };
  // 3 three times, 5 once; bigrams (7, 8), (6, 7) and (5, 6) once each.
  CHECK(run1(s) == std::vector<float>{0, 3, 1, 0, 1, 1, 1});
  // Skips add bigrams whose tokens lie further apart (unigrams are not counted again).
  s.max_skip = 3;
  CHECK(run1(s) == reference(s, x, 1, 12));
  s.mode = "TFIDF";
  s.weights = {1, 2, 3, 4, 0.5f, 0.25f, 2};
  CHECK(run1(s) == reference(s, x, 1, 12));
  s.mode = "IDF";
  s.max_skip = 0;
  CHECK(run1(s) == std::vector<float>{0, 2, 3, 0, 0.5f, 0.25f, 2});
}

TEST_CASE("TfIdfVectorizer: malformed attributes and unbounded work are refused naming the node") {
  const Spec good{1, 2, 0, "TF", {0, 4}, {0, 1, 2, 3, 4, 5, 6}, {2, 3, 5, 4, 5, 6, 7, 8, 6, 7}, {}};
  auto refused = [&](const Spec& s, std::vector<int64_t> dims, const char* part) {
    CAPTURE(part);
    g::Graph gr = single_node("TfIdfVectorizer", {value("x", DType::i64, dims)}, attrs_of(s));
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    CHECK_THROWS_WITH_AS(run_graph(gr, {Feed::of("x", dims, std::vector<int64_t>(size_t(n), 3))}), doctest::Contains(part), om::Error);
  };
  Spec s = good;
  s.mode = "BM25";
  refused(s, {4}, "mode must be TF, IDF or TFIDF");
  s = good;
  s.counts = {0, 5};  // 5 tokens of bigrams
  refused(s, {4}, "not a multiple of 2");
  s = good;
  s.indexes = {0, 1, 2};
  refused(s, {4}, "ngram_indexes has 3 entries");
  s = good;
  s.indexes[3] = -1;
  refused(s, {4}, "ngram_indexes holds -1");
  s = good;
  s.weights = {1, 2};
  refused(s, {4}, "weights has 2 entries");
  s = good;
  s.counts = {0, 11};
  refused(s, {4}, "ngram_counts must rise");
  s = good;
  s.max_skip = int64_t(1) << 40;  // every distance up to the row's length: about 2^35 lookups
  refused(s, {1, 1 << 17}, "lookups");
  g::Graph strings = single_node("TfIdfVectorizer", {value("x", DType::i64, {4})},
                                 {Attribute::of_int("min_gram_length", 1), Attribute::of_int("max_gram_length", 1),
                                  Attribute::of_int("max_skip_count", 0), Attribute::of_string("mode", "TF"),
                                  Attribute::of_ints("ngram_counts", {0}), Attribute::of_ints("ngram_indexes", {0})});
  g::Attribute ps;
  ps.name = "pool_strings";
  ps.type = g::AttrType::Strings;
  ps.strings = {"a"};
  strings.nodes[0].attributes.push_back(ps);
  CHECK_THROWS_WITH_AS(run_graph(strings, {Feed::of("x", {4}, std::vector<int64_t>{1, 2, 3, 4})}), doctest::Contains("no string dtype"), om::Error);
}
