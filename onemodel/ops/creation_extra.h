// Brace-friendly creation, *_like creation and scalar-first arithmetic.
//
//   om::Tensor a = om::tensor({1.f, 2.f, 3.f, 4.f}, {2, 2});   // f32
//   om::Tensor i = om::tensor({1, 2, 3});                        // i64 (as PyTorch)
//   om::Tensor y = 1.0 - a;  om::Tensor r = 1 / a;  om::Tensor z = om::zeros_like(a);
//
// Scalar-first operators record and trace like their tensor forms: `s + x` is add(x, s),
// `s - x` and `s / x` use a 0-d constant of x's dtype (broadcast), `s * x` is mul(x, s).
#pragma once
#include <cstdint>
#include <initializer_list>

#include "onemodel/core/tensor.h"

namespace om {

// Values in row-major order; the shape defaults to 1-D. The element count must match the shape.
Tensor tensor(std::initializer_list<float> values, const Shape& shape = {-1});
Tensor tensor(std::initializer_list<double> values, const Shape& shape = {-1});  // stored as f32
Tensor tensor(std::initializer_list<int> values, const Shape& shape = {-1});     // stored as i64
Tensor tensor(std::initializer_list<int64_t> values, const Shape& shape = {-1});
Tensor tensor(std::initializer_list<bool> values, const Shape& shape = {-1});

// Same shape as `like`; dtype as `like` unless given.
Tensor zeros_like(const Tensor& like);
Tensor zeros_like(const Tensor& like, DType dtype);
Tensor ones_like(const Tensor& like);
Tensor ones_like(const Tensor& like, DType dtype);
Tensor full_like(const Tensor& like, double value);
Tensor empty_like(const Tensor& like);

Tensor operator+(double a, const Tensor& b);
Tensor operator-(double a, const Tensor& b);
Tensor operator/(double a, const Tensor& b);

}  // namespace om
