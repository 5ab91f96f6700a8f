// sum mean softmax log_softmax concat and the losses against double references.
#include "ops/ref.h"

TEST_CASE("sum and mean over everything") {
  om::Generator g(31);
  for (const om::Shape& s : {om::Shape{}, om::Shape{1}, om::Shape{7}, om::Shape{3, 5}, om::Shape{2, 3, 17}, om::Shape{100, 9}}) {
    om::Tensor x = ref::random(s, g);
    double total = 0;
    for (double v : ref::of(x).v) total += v;
    for (om::ArithmeticMode mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
      om::ArithmeticModeGuard guard(mode);
      om::Tensor sm = om::sum(x), mn = om::mean(x);
      CHECK(sm.dim() == 0);
      CHECK(mn.dim() == 0);
      CHECK(sm.item<float>() == doctest::Approx(total).epsilon(1e-5));
      CHECK(mn.item<float>() == doctest::Approx(total / double(ref::numel(s))).epsilon(1e-5));
    }
  }
  om::Tensor m = om::arange(12, om::DType::f32).reshape({3, 4});
  CHECK(om::sum(m.t()).item<float>() == 66.0f);
  CHECK(om::sum(m.slice(1, 0, 4, 2)).item<float>() == 30.0f);
  CHECK(om::sum(om::zeros({0, 3})).item<float>() == 0.0f);
  CHECK(testutil::error_of([] { om::sum(om::zeros({2}, om::DType::i64)); }).kind() == om::ErrorKind::DTypeMismatch);
}

TEST_CASE("sum and mean along each axis, with and without keepdim") {
  om::Generator g(32);
  for (const om::Shape& s : {om::Shape{5}, om::Shape{3, 4}, om::Shape{2, 3, 4}, om::Shape{2, 1, 3, 9}}) {
    om::Tensor x = ref::random(s, g);
    for (const om::Tensor& t : {x, x.flip(0)}) {
      const ref::Nd r = ref::of(t);
      for (int64_t axis = 0; axis < t.dim(); ++axis) {
        for (bool keep : {false, true}) {
          INFO(t.to_string(), " axis ", axis, " keepdim ", keep);
          ref::check_close(om::sum(t, axis, keep), ref::reduce(r, axis, keep, false));
          ref::check_close(om::mean(t, axis, keep), ref::reduce(r, axis, keep, true));
          ref::check_close(om::sum(t, axis - t.dim(), keep), ref::reduce(r, axis, keep, false));
        }
      }
    }
  }
  om::Tensor p = ref::random({3, 4, 5}, g).permute({2, 0, 1});
  ref::check_close(om::mean(p, 1, true), ref::reduce(ref::of(p), 1, true, true));
  om::Error e = testutil::error_of([] { om::sum(om::zeros({2, 3}), 2); });
  CHECK(e.kind() == om::ErrorKind::InvalidArgument);
  CHECK(testutil::contains(e.what(), "om::sum"));
  CHECK(testutil::error_of([] { om::mean(om::zeros({2, 3}), -3); }).kind() == om::ErrorKind::InvalidArgument);
}

TEST_CASE("softmax and log_softmax along every dim") {
  om::Generator g(33);
  for (const om::Shape& s : {om::Shape{6}, om::Shape{3, 5}, om::Shape{2, 3, 4}, om::Shape{2, 1, 3, 7}}) {
    om::Tensor x = ref::random(s, g, -6, 6);
    for (const om::Tensor& t : {x, x.flip(-1)}) {
      const ref::Nd r = ref::of(t);
      for (int64_t axis = 0; axis < t.dim(); ++axis) {
        INFO(t.to_string(), " axis ", axis);
        ref::check_close(om::softmax(t, axis), ref::softmax(r, axis, false), 2e-6, 1e-7);
        ref::check_close(om::log_softmax(t, axis), ref::softmax(r, axis, true), 2e-6, 1e-6);
        ref::check_close(om::softmax(t, axis - t.dim()), ref::softmax(r, axis, false), 2e-6, 1e-7);
      }
    }
  }
  // Large logits do not overflow (the row maximum is subtracted).
  om::Tensor big = om::from_vector<float>({1000, 1001, 1002});
  ref::check_close(om::softmax(big), ref::softmax(ref::of(big), 0, false), 2e-6, 1e-7);
  ref::check_close(om::log_softmax(big), ref::softmax(ref::of(big), 0, true), 2e-6, 1e-6);
  om::Tensor neg = om::from_vector<float>({-1000, 0});
  CHECK(om::log_softmax(neg).get<float>({0}) == doctest::Approx(-1000.0));
  CHECK(testutil::error_of([] { om::softmax(om::zeros({2, 3}), 2); }).kind() == om::ErrorKind::InvalidArgument);
  CHECK(testutil::error_of([] { om::softmax(om::scalar_tensor(1)); }).kind() == om::ErrorKind::InvalidArgument);
}

namespace {

// Concatenation in double: out[..., j, ...] reads the part whose range along `axis` holds j.
ref::Nd concat_ref(const std::vector<ref::Nd>& xs, int64_t axis) {
  om::Shape s = xs[0].shape;
  s[size_t(axis)] = 0;
  for (const ref::Nd& x : xs) s[size_t(axis)] += x.shape[size_t(axis)];
  ref::Nd out = ref::zeros(s);
  for (int64_t i = 0; i < ref::numel(s); ++i) {
    auto idx = ref::unravel(i, s);
    int64_t j = idx[size_t(axis)];
    for (const ref::Nd& x : xs) {
      if (j < x.shape[size_t(axis)]) {
        idx[size_t(axis)] = j;
        out.v[size_t(i)] = x.at(idx);
        break;
      }
      j -= x.shape[size_t(axis)];
    }
  }
  return out;
}

}  // namespace

TEST_CASE("concat along every dim, with views and empty parts") {
  om::Generator g(34);
  for (int64_t axis = 0; axis < 3; ++axis) {
    om::Shape sa{2, 3, 4}, sb{2, 3, 4}, sc{2, 3, 4};
    sb[size_t(axis)] = 1;
    sc[size_t(axis)] = 0;
    om::Tensor a = ref::random(sa, g), b = ref::random(sb, g), c = ref::random(sc, g);
    om::Tensor d = ref::random({4, 3, 2}, g).permute({2, 1, 0});  // [2,3,4] strided
    INFO("axis ", axis);
    ref::check_close(om::cat({a, b, c, d}, axis), concat_ref({ref::of(a), ref::of(b), ref::of(c), ref::of(d)}, axis), 0, 0);
    ref::check_close(om::cat({d, a}, axis - 3), concat_ref({ref::of(d), ref::of(a)}, axis), 0, 0);
  }
  om::Tensor one = om::cat({om::arange(3, om::DType::f32)});
  CHECK(one.to_vector<float>() == std::vector<float>{0, 1, 2});
  om::Tensor ints = om::cat({om::arange(2, om::DType::i64), om::arange(3, om::DType::i64)});
  CHECK(ints.to_vector<int64_t>() == std::vector<int64_t>{0, 1, 0, 1, 2});
  om::Error e = testutil::error_of([] { om::cat({om::zeros({2, 3}), om::zeros({3, 3})}, 1); });
  CHECK(e.kind() == om::ErrorKind::ShapeMismatch);
  CHECK(testutil::contains(e.what(), "om::cat"));
  CHECK(testutil::error_of([] { om::cat({}); }).kind() == om::ErrorKind::InvalidArgument);
  CHECK(testutil::error_of([] { om::cat({om::zeros({2}), om::zeros({2}, om::DType::i64)}); }).kind() == om::ErrorKind::DTypeMismatch);
  CHECK(testutil::error_of([] { om::cat({om::zeros({2}), om::zeros({2, 1})}); }).kind() == om::ErrorKind::ShapeMismatch);
  CHECK(testutil::error_of([] { om::cat({om::zeros({2})}, 1); }).kind() == om::ErrorKind::InvalidArgument);
}

TEST_CASE("stack and index_select: values, dtypes, views, errors") {
  om::Tensor a = om::tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {2, 3}), b = om::tensor({7.f, 8.f, 9.f, 10.f, 11.f, 12.f}, {2, 3});
  CHECK(om::stack({a, b}).shape() == om::Shape{2, 2, 3});
  CHECK(om::stack({a, b}, 1).to_vector<float>() == std::vector<float>{1, 2, 3, 7, 8, 9, 4, 5, 6, 10, 11, 12});
  CHECK(om::stack({a, b}, -1).to_vector<float>() == std::vector<float>{1, 7, 2, 8, 3, 9, 4, 10, 5, 11, 6, 12});
  CHECK(testutil::contains(testutil::error_of([&] { om::stack({a, b.t()}); }).what(), "does not have the shape of tensor 0"));
  CHECK(testutil::contains(testutil::error_of([&] { om::stack({a}, 3); }).what(), "valid: [-3, 2]"));
  // index_select: repeats, negative indices, a strided input, integer dtypes, an empty index
  CHECK(om::index_select(a, 1, om::tensor({2, -3, 2})).to_vector<float>() == std::vector<float>{3, 1, 3, 6, 4, 6});
  CHECK(om::index_select(a.t(), 0, om::from_vector<int32_t>({1})).to_vector<float>() == std::vector<float>{2, 5});
  om::Tensor labels = om::tensor({5, 6, 7, 8});
  CHECK(om::index_select(labels, 0, om::tensor({3, 0})).to_vector<int64_t>() == std::vector<int64_t>{8, 5});
  CHECK(om::index_select(a, 0, om::from_vector<int64_t>({})).shape() == om::Shape{0, 3});
  std::string m = testutil::error_of([&] { om::index_select(a, 1, om::tensor({3})); }).what();
  CHECK(testutil::contains(m, "index 3 (element 0) is out of range for dim 1"));
  CHECK(testutil::contains(testutil::error_of([&] { om::index_select(a, 0, om::tensor({0.f})); }).what(), "cast with .to(om::DType::i64)"));
  CHECK(testutil::contains(testutil::error_of([&] { om::index_select(a, 0, om::scalar_tensor(0, om::DType::i64)); }).what(), "reshape it to [n]"));
}

TEST_CASE("from_blob wraps caller memory without copying") {
  alignas(8) float buf[6] = {1, 2, 3, 4, 5, 6};
  {
    om::Tensor t = om::from_blob(buf, {2, 3});
    CHECK(t.data<float>() == buf);
    CHECK(om::sum(t).item<float>() == 21);
    t.fill_(0.5);  // writes go to the caller's memory
    CHECK(buf[4] == 0.5f);
    buf[0] = 9;
    CHECK(t.get<float>({0, 0}) == 9);
    {
      om::StoreScope scope;  // scopes never release caller memory
      om::Tensor u = om::from_blob(buf, {6});
      CHECK(om::mul(u, 2.0).to_vector<float>()[0] == 18);
    }
    CHECK(t.get<float>({0, 1}) == 0.5f);
  }
  int64_t ints[2] = {4, 5};
  CHECK(om::from_blob(ints, {2}, om::DType::i64).to_vector<int64_t>() == std::vector<int64_t>{4, 5});
  std::string m = testutil::error_of([&] { om::from_blob(reinterpret_cast<char*>(buf) + 1, {2}); }).what();
  CHECK(testutil::contains(m, "is not aligned to the 4 bytes of f32"));
  CHECK(testutil::contains(testutil::error_of([] { om::from_blob(nullptr, {2}); }).what(), "data is null"));
  CHECK(om::from_blob(nullptr, {0}).numel() == 0);
}

TEST_CASE("nll_loss, cross_entropy and mse_loss") {
  om::Generator g(35);
  om::Tensor logits = ref::random({5, 4}, g, -3, 3);
  om::Tensor target = om::from_vector<int64_t>({3, 0, 2, 2, 1});
  const ref::Nd lp = ref::softmax(ref::of(logits), 1, true);
  const std::vector<int64_t> t = {3, 0, 2, 2, 1};
  double sum = 0;
  std::vector<double> per;
  for (int64_t i = 0; i < 5; ++i) {
    per.push_back(-lp.at({i, t[size_t(i)]}));
    sum += per.back();
  }
  om::Tensor logp = om::log_softmax(logits, 1);
  CHECK(om::nll_loss(logp, target).item<float>() == doctest::Approx(sum / 5).epsilon(1e-5));
  CHECK(om::nll_loss(logp, target, om::Reduction::Sum).item<float>() == doctest::Approx(sum).epsilon(1e-5));
  ref::check_close(om::nll_loss(logp, target, om::Reduction::None), ref::Nd{{5}, per});
  CHECK(om::cross_entropy(logits, target).item<float>() == doctest::Approx(sum / 5).epsilon(1e-5));
  CHECK(om::cross_entropy(logits, target, om::Reduction::Sum).item<float>() == doctest::Approx(sum).epsilon(1e-5));
  // ignore_index: skipped rows count neither in the sum nor in the mean's denominator.
  om::Tensor masked = om::from_vector<int64_t>({3, -100, 2, -100, 1});
  const double kept = per[0] + per[2] + per[4];
  CHECK(om::nll_loss(logp, masked).item<float>() == doctest::Approx(kept / 3).epsilon(1e-5));
  om::Tensor none = om::nll_loss(logp, masked, om::Reduction::None);
  CHECK(none.get<float>({1}) == 0.0f);
  CHECK(om::nll_loss(logp, om::from_vector<int64_t>({0, 1, 2, 3, 0}), om::Reduction::Mean, 0).item<float>() ==
        doctest::Approx((-lp.at({1, 1}) - lp.at({2, 2}) - lp.at({3, 3})) / 3).epsilon(1e-5));
  // errors
  om::Error bad = testutil::error_of([&] { om::nll_loss(logp, om::from_vector<int64_t>({0, 1, 4, 0, 0})); });
  CHECK(bad.kind() == om::ErrorKind::InvalidArgument);
  CHECK(testutil::contains(bad.what(), "target[2] = 4"));
  CHECK(testutil::error_of([&] { om::nll_loss(logp, om::from_vector<int64_t>({0, 1})); }).kind() == om::ErrorKind::InvalidArgument);
  CHECK(testutil::error_of([&] { om::nll_loss(logp, om::zeros({5})); }).kind() == om::ErrorKind::InvalidArgument);
  CHECK(testutil::error_of([&] { om::nll_loss(om::zeros({5}), target); }).kind() == om::ErrorKind::InvalidArgument);
  // mse
  om::Tensor p = ref::random({3, 4}, g), q = ref::random({3, 4}, g);
  double mse = 0;
  const ref::Nd rp = ref::of(p), rq = ref::of(q);
  for (size_t i = 0; i < rp.v.size(); ++i) mse += (rp.v[i] - rq.v[i]) * (rp.v[i] - rq.v[i]);
  CHECK(om::mse_loss(p, q).item<float>() == doctest::Approx(mse / 12).epsilon(1e-5));
  CHECK(om::mse_loss(p, q.select(0, 1)).dim() == 0);  // broadcasting target
}
