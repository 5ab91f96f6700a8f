// The library's own sin and cos of a float (defined with the Sin and Cos operators in
// graph/ops/arithmetic.cpp): double Cody-Waite reduction and Taylor polynomials, one
// rounding, the same bits on every IEEE machine, so Exact kernels may call them
// (docs/exactness.md). The signal windows (graph/ops/signal.cpp) use cos.
#pragma once

namespace om::graph::ops {

float library_cos_f32(float x);
float library_sin_f32(float x);

}  // namespace om::graph::ops
