// Gradients of the convolutional family against central finite differences.
#include <algorithm>
#include <numeric>

#include "autograd/gradcheck.h"

using gc::gradcheck;
using Ts = std::vector<om::Tensor>;

namespace {

// Distinct values 0.05 apart, shuffled: max-pool windows have no near ties for the differences.
om::Tensor spaced(const om::Shape& s, om::Generator& g) {
  const size_t n = size_t(om::shape_numel(s));
  std::vector<size_t> idx(n);
  std::iota(idx.begin(), idx.end(), size_t(0));
  for (size_t i = n; i > 1; --i) std::swap(idx[i - 1], idx[g.next_u32() % i]);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = 0.05f * float(idx[i]) - 0.025f * float(n);
  return om::from_vector<float>(v, s);
}

}  // namespace

TEST_CASE("conv2d gradients: padding (asymmetric), stride, dilation, groups, depthwise, bias") {
  om::Generator g(31);
  gc::Options o;
  o.eps = 5e-3;
  struct C {
    om::Shape x, w;
    om::Size2d stride, dilation;
    om::Pad2d pad;
    int64_t groups;
    bool bias;
  };
  const std::vector<C> cases = {
      {{2, 3, 5, 5}, {4, 3, 3, 3}, 1, 1, 1, 1, true},
      {{1, 2, 6, 5}, {3, 2, 2, 3}, {2, 1}, 1, {1, 0, 2, 1}, 1, true},
      {{1, 2, 7, 7}, {2, 2, 3, 2}, 1, {2, 3}, {2, 1}, 1, false},
      {{1, 4, 5, 5}, {6, 2, 3, 3}, 2, 1, 1, 2, true},
      {{2, 3, 5, 4}, {3, 1, 3, 3}, 1, 1, 1, 3, true},  // depthwise
      {{1, 4, 4, 4}, {8, 4, 1, 1}, 1, 1, 0, 1, true},  // pointwise
  };
  for (const C& c : cases) {
    INFO(om::shape_str(c.x), " ", om::shape_str(c.w));
    Ts in{gc::random(c.x, g), gc::random(c.w, g)};
    if (c.bias) in.push_back(gc::random({c.w[0]}, g));
    gradcheck([&](const Ts& t) { return om::conv2d(t[0], t[1], c.bias ? t[2] : om::Tensor(), c.stride, c.pad, c.dilation, c.groups); }, in, o);
  }
}

TEST_CASE("conv_transpose2d gradients: stride, padding, output_padding, groups, dilation") {
  om::Generator g(32);
  gc::Options o;
  o.eps = 5e-3;
  gradcheck([](const Ts& t) { return om::conv_transpose2d(t[0], t[1], t[2], 2, 1, 1); },
            {gc::random({1, 2, 3, 3}, g), gc::random({2, 3, 3, 3}, g), gc::random({3}, g)}, o);
  gradcheck([](const Ts& t) { return om::conv_transpose2d(t[0], t[1], om::Tensor(), {2, 1}, {0, 1, 1, 0}, 0, 2, {1, 2}); },
            {gc::random({2, 4, 3, 4}, g), gc::random({4, 1, 2, 3}, g)}, o);
}

TEST_CASE("pool gradients: max (dilation, ceil_mode), average (count_include_pad, ceil_mode), global average") {
  om::Generator g(33);
  gc::Options o;
  o.eps = 1e-3;
  o.atol = 5e-3;
  gradcheck([](const Ts& t) { return om::max_pool2d(t[0], 3, 2, 1); }, {spaced({2, 2, 7, 7}, g)}, o);
  gradcheck([](const Ts& t) { return om::max_pool2d(t[0], 2, 2, 0, 2, true); }, {spaced({1, 2, 8, 7}, g)}, o);
  gradcheck([](const Ts& t) { return om::avg_pool2d(t[0], 3, 2, 1, false, true); }, {gc::random({2, 2, 7, 6}, g)});
  gradcheck([](const Ts& t) { return om::avg_pool2d(t[0], 3, 2, 1, true, false); }, {gc::random({1, 2, 8, 8}, g)});
  gradcheck([](const Ts& t) { return om::global_avg_pool2d(t[0]); }, {gc::random({2, 3, 4, 5}, g)});
}

TEST_CASE("resize2d gradients: nearest, bilinear half-pixel and align_corners, up and down") {
  om::Generator g(34);
  gradcheck([](const Ts& t) { return om::resize2d(t[0], 7, 9); }, {gc::random({1, 2, 3, 4}, g)});
  gradcheck([](const Ts& t) { return om::resize2d(t[0], 3, 2); }, {gc::random({1, 2, 6, 5}, g)});
  gradcheck([](const Ts& t) { return om::resize2d(t[0], 7, 9, om::Interpolation::Bilinear); }, {gc::random({1, 2, 3, 4}, g)});
  gradcheck([](const Ts& t) { return om::resize2d(t[0], 4, 3, om::Interpolation::Bilinear); }, {gc::random({1, 2, 6, 5}, g)});
  gradcheck([](const Ts& t) { return om::resize2d(t[0], 7, 9, om::Interpolation::Bilinear, true); }, {gc::random({1, 2, 3, 4}, g)});
}

TEST_CASE("batch_norm2d gradients in training and evaluation mode") {
  om::Generator g(35);
  const om::Tensor rm = gc::random({3}, g), rv = gc::random({3}, g, 0.5, 2.0);
  gc::Options o;
  o.eps = 5e-3;
  gradcheck([&](const Ts& t) { return om::batch_norm2d(t[0], rm.clone(), rv.clone(), t[1], t[2], true); },
            {gc::random({2, 3, 3, 4}, g), gc::random({3}, g), gc::random({3}, g)}, o);
  gradcheck([&](const Ts& t) { return om::batch_norm2d(t[0], rm, rv, t[1], t[2], false); },
            {gc::random({2, 3, 3, 4}, g), gc::random({3}, g), gc::random({3}, g)}, o);
}
