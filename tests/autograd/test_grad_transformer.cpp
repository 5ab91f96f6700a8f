// Gradients of the transformer family against central finite differences: layer_norm (with and
// without weight/bias, trailing normalized_shape), embedding (padding row gets none), dropout
// (the drawn mask) and attention (every mask form, causal).
#include "autograd/gradcheck.h"

using gc::gradcheck;
using Ts = std::vector<om::Tensor>;

TEST_CASE("gradients of layer_norm") {
  om::Generator g(11);
  om::Tensor x = gc::random({3, 4, 5}, g), w = gc::random({5}, g, 0.5, 1.5), b = gc::random({5}, g);
  CHECK(gradcheck([](const Ts& t) { return om::layer_norm(t[0], {5}, t[1], t[2], 1e-5); }, {x, w, b}) == 0);
  CHECK(gradcheck([](const Ts& t) { return om::layer_norm(t[0], {5}); }, {x}) == 0);
  om::Tensor w2 = gc::random({4, 5}, g, 0.5, 1.5);
  CHECK(gradcheck([](const Ts& t) { return om::layer_norm(t[0], {4, 5}, t[1], om::Tensor(), 1e-3); }, {x, w2}) == 0);
}

TEST_CASE("gradients of embedding: the padding row gets none") {
  om::Generator g(12);
  om::Tensor w = gc::random({6, 3}, g);
  om::Tensor idx = om::from_vector<int64_t>({1, 4, 1, 0, 5, 2}, {2, 3});
  CHECK(gradcheck([&](const Ts& t) { return om::embedding(idx, t[0]); }, {w}) == 0);
  om::Tensor leaf = w.clone().requires_grad_();
  om::Tensor y = om::embedding(idx.to(om::DType::i32), leaf, 1);
  om::sum(y).backward();
  const std::vector<float> gw = leaf.grad().to_vector<float>();
  for (int j = 0; j < 3; ++j) {
    CHECK(gw[size_t(1 * 3 + j)] == 0.0f);  // padding row
    CHECK(gw[size_t(0 * 3 + j)] == 1.0f);
    CHECK(gw[size_t(3 * 3 + j)] == 0.0f);  // never picked
  }
}

TEST_CASE("gradient of dropout is the drawn, scaled mask") {
  om::Generator g(13);
  om::Tensor x = gc::random({4, 8}, g);
  CHECK(gradcheck([](const Ts& t) {
          om::Generator fixed(5);
          return om::dropout(t[0], 0.25, true, fixed);
        }, {x}) == 0);
}

TEST_CASE("gradients of attention with every mask form and causal") {
  om::Generator g(14);
  const int64_t B = 2, H = 2, L = 3, D = 4;
  om::Tensor q = gc::random({B, H, L, D}, g), k = gc::random({B, H, L, D}, g), v = gc::random({B, H, L, D}, g);
  CHECK(gradcheck([](const Ts& t) { return om::attention(t[0], t[1], t[2]); }, {q, k, v}) == 0);
  CHECK(gradcheck([](const Ts& t) { return om::attention(t[0], t[1], t[2], om::Tensor(), 0.3, true); }, {q, k, v}) == 0);
  for (const om::Shape& ms : {om::Shape{L, L}, om::Shape{B, L, L}, om::Shape{B, H, L, L}}) {
    om::Tensor m = gc::random(ms, g, -1, 1);
    CHECK(gradcheck([](const Ts& t) { return om::attention(t[0], t[1], t[2], t[3]); }, {q, k, v, m}) == 0);
  }
}
