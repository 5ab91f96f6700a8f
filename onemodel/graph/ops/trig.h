// The library's own trigonometric, inverse and hyperbolic functions of a float (graph/ops/trig.cpp):
// computed in double with +, -, *, /, sqrt and exact scalings only (the library is compiled
// without fma contraction), then rounded once to float, so every IEEE machine gives the same bits
// and Exact kernels may call them (docs/exactness.md). The Sin, Cos, Tan, Asin, Acos, Atan, Sinh,
// Cosh, Asinh, Acosh and Atanh operators (graph/ops/arithmetic.cpp) and the signal windows
// (graph/ops/signal.cpp) use them.
#pragma once

namespace om::graph::ops {

float library_cos_f32(float x);
float library_sin_f32(float x);
float library_tan_f32(float x);
float library_asin_f32(float x);
float library_acos_f32(float x);
float library_atan_f32(float x);
float library_sinh_f32(float x);
float library_cosh_f32(float x);
float library_asinh_f32(float x);
float library_acosh_f32(float x);
float library_atanh_f32(float x);

}  // namespace om::graph::ops
