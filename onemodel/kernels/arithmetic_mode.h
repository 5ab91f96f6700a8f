// Arithmetic modes. Fast lets kernels choose the quickest order; Exact fixes summation order and
// uses the library's own transcendental functions so results are bit-identical on every ISA
// (docs/exactness.md). Declared with the kernels, the lowest layer, because every kernel entry
// point takes one; the eager layer's thread-local mode lives in core/mode.h.
#pragma once

namespace om {

enum class ArithmeticMode { Fast, Exact };

}  // namespace om
