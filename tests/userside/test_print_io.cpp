// The user's side of tensors: .npy files for every dtype, printing with values, brace creation,
// scalar-first arithmetic and *_like.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>

#include "onemodel/onemodel.h"
#include "test_util.h"

using testutil::contains;

namespace {
std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("om_userside_" + name)).string();
}
}  // namespace

TEST_CASE("save_npy / load_npy round-trip every dtype, strided tensors in logical order") {
  const std::string path = temp_path("t.npy");
  const om::DType all[] = {om::DType::f32, om::DType::f16, om::DType::i64, om::DType::i32,
                           om::DType::i8,  om::DType::u8,  om::DType::boolean};
  for (om::DType dt : all) {
    om::Tensor t = om::tensor({0.0, 1.0, 2.0, 3.0, 0.0, 5.0}, {2, 3}).to(dt);
    om::save_npy(path, t);
    om::Tensor back = om::load_npy(path);
    CHECK(back.dtype() == dt);
    CHECK(back.shape() == om::Shape{2, 3});
    CHECK(back.to(om::DType::f32).to_vector<float>() == t.to(om::DType::f32).to_vector<float>());
  }
  om::Tensor base = om::arange(6, om::DType::f32).reshape({2, 3});
  om::save_npy(path, base.t());  // a transposed view: written in its logical (C) order
  om::Tensor back = om::load_npy(path);
  CHECK(back.shape() == om::Shape{3, 2});
  CHECK(back.to_vector<float>() == std::vector<float>{0, 3, 1, 4, 2, 5});
  std::remove(path.c_str());
}

TEST_CASE("load_npy names the file when it cannot be read") {
  om::Error e = testutil::error_of([] { om::load_npy("/nonexistent/dir/x.npy"); });
  CHECK(contains(e.what(), "om::load_npy(/nonexistent/dir/x.npy)"));
}

TEST_CASE("printing shows values, shape and dtype; large tensors are summarised") {
  CHECK(om::to_string(om::tensor({1.f, -2.5f, 0.5f, 3.f}, {2, 2})) ==
        "tensor([[ 1.0000, -2.5000],\n"
        "        [ 0.5000,  3.0000]], shape=[2, 2], dtype=f32)");
  CHECK(om::to_string(om::tensor({1.f, 2.f})) == "tensor([1., 2.], shape=[2], dtype=f32)");
  CHECK(om::to_string(om::tensor({1, 2, 3})) == "tensor([1, 2, 3], shape=[3], dtype=i64)");
  CHECK(om::to_string(om::tensor({true, false})) == "tensor([ true, false], shape=[2], dtype=bool)");
  CHECK(om::to_string(om::scalar_tensor(2.5)) == "tensor(2.5000, shape=[], dtype=f32)");
  CHECK(om::to_string(om::Tensor()) == "tensor(undefined)");
  CHECK(contains(om::to_string(om::tensor({1e-6f, 1.f})), "e-06"));

  std::ostringstream os;
  os << om::arange(2000, om::DType::f32).reshape({40, 50});
  const std::string s = os.str();
  CHECK(contains(s, "tensor([[   0.,    1.,    2., ...,   47.,   48.,   49.],"));
  CHECK(contains(s, "        ...,\n"));
  CHECK(contains(s, "[1950., 1951., 1952., ..., 1997., 1998., 1999.]], shape=[40, 50], dtype=f32)"));
  CHECK(s.size() < 600);

  om::Tensor w = om::ones({2}).requires_grad_();
  CHECK(contains(om::to_string(w), "requires_grad=true"));
  // The short form for messages is unchanged.
  CHECK(w.to_string() == "f32[2]");
}

TEST_CASE("brace creation checks the element count against the shape") {
  om::Tensor a = om::tensor({1.f, 2.f, 3.f, 4.f}, {2, 2});
  CHECK(a.dtype() == om::DType::f32);
  CHECK(a.get<float>({1, 0}) == 3.f);
  CHECK(om::tensor({1, 2}).dtype() == om::DType::i64);
  CHECK(om::tensor({int64_t(7)}, {1, 1}).shape() == om::Shape{1, 1});
  om::Error e = testutil::error_of([] { om::tensor({1.f, 2.f, 3.f}, {2, 2}); });
  CHECK(e.kind() == om::ErrorKind::ShapeMismatch);
  CHECK(contains(e.what(), "3 values do not fill shape [2, 2]"));
}

TEST_CASE("scalar-first arithmetic and *_like") {
  om::Tensor x = om::tensor({1.f, 2.f, 4.f});
  CHECK((1.0 - x).to_vector<float>() == std::vector<float>{0.f, -1.f, -3.f});
  CHECK((1 + x).to_vector<float>() == std::vector<float>{2.f, 3.f, 5.f});
  CHECK((2 * x).to_vector<float>() == std::vector<float>{2.f, 4.f, 8.f});
  CHECK((1 / x).to_vector<float>() == std::vector<float>{1.f, 0.5f, 0.25f});
  om::Tensor z = om::zeros_like(x);
  CHECK(z.shape() == x.shape());
  CHECK(z.to_vector<float>() == std::vector<float>{0, 0, 0});
  CHECK(om::ones_like(x, om::DType::i32).dtype() == om::DType::i32);
  CHECK(om::ones_like(x).to_vector<float>() == std::vector<float>{1, 1, 1});

  // Gradients flow through the scalar-first forms: d/dx sum(1 - x + 1/x) = -1 - 1/x^2
  om::Tensor p = om::tensor({1.f, 2.f}).requires_grad_();
  om::sum((1.0 - p) + (1.0 / p)).backward();
  CHECK(p.grad().to_vector<float>() == std::vector<float>{-2.f, -1.25f});
}
