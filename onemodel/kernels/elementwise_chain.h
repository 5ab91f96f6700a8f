// kernels.h's f32_chain written once over an ISA's lanes (exact/math_impl.h's interface) and Io
// (L, loadu, storeu, div): the steps run one after another over blocks of kChainBlock elements
// held on the stack, each a vector loop; the elements past the block's last whole vector take
// the one-lane form of the same operations (tail_step, compiled once with the baseline flags in
// kernels/chain.cpp: no ISA file holds a copy of it that a baseline caller could be linked to).
// Each ISA's file (kernels/<isa>/chain_<isa>.cpp) instantiates run() with its flags. Only
// FusedElementwise, the parametric activations run as one step (LeakyRelu, HardSigmoid,
// HardSwish, f32 Clip) and the convolutions (a FusedConv's chain, conv.h's ConvActivation) call
// f32_chain, so a program registering none of them links none of this.
#pragma once
#include <algorithm>
#include <cstddef>

#include "onemodel/kernels/exact/math.h"
#include "onemodel/kernels/kernels.h"

namespace om::kernels::chain {

constexpr size_t kChainBlock = 512;  // the kChainMaxSteps - 1 value blocks are 30 KB of stack

using exact::ScalarIo;

// Elements [i0, i1) of one step: a and b are the operands' values, null for the constant.
template <class V, class Io>
__attribute__((always_inline)) inline void step(const ChainStep& st, const float* a, const float* b, float* d, size_t i0,
                                                size_t i1) {
  using F = typename V::F;
  using Math = exact::MathImpl<V>;
  constexpr size_t L = Io::L;
  const F c0 = V::set(st.c0), c1 = V::set(st.c1), zero = V::set(0.0f), one = V::set(1.0f);
  auto clamp01 = [&](F u) { return V::select(V::lt(u, one), V::select(V::gt(u, zero), u, zero), one); };
  auto map = [&](auto f) {
    for (size_t i = i0; i < i1; i += L) Io::storeu(d + i, f(Io::loadu(a + i)));
  };
  auto zip = [&](auto f) {
    for (size_t i = i0; i < i1; i += L) Io::storeu(d + i, f(a ? Io::loadu(a + i) : c0, b ? Io::loadu(b + i) : c0));
  };
  switch (st.op) {
    case ChainOp::Add: return zip([](F x, F y) { return V::add(x, y); });
    case ChainOp::Sub: return zip([](F x, F y) { return V::sub(x, y); });
    case ChainOp::Mul: return zip([](F x, F y) { return V::mul(x, y); });
    case ChainOp::Div: return zip([](F x, F y) { return Io::div(x, y); });
    case ChainOp::Max:
    case ChainOp::Min: {
      const bool max = st.op == ChainOp::Max;
      const F nan = V::set(__builtin_nanf(""));
      return zip([&](F x, F y) {
        const F m = max ? V::select(V::lt(x, y), y, x) : V::select(V::lt(y, x), y, x);
        return V::select(V::isnan(y), nan, V::select(V::isnan(x), nan, m));
      });
    }
    case ChainOp::Relu: return map([&](F x) { return V::select(V::lt(x, zero), zero, x); });
    case ChainOp::Sigmoid: return map([](F x) { return Math::sigmoid(x); });
    case ChainOp::Tanh: return map([](F x) { return Math::tanh(x); });
    case ChainOp::Clip:
      return map([&](F x) {
        const F t = V::select(V::lt(x, c0), c0, x);
        return V::select(V::gt(t, c1), c1, t);
      });
    case ChainOp::LeakyRelu: return map([&](F x) { return V::select(V::lt(x, zero), V::mul(c0, x), x); });
    case ChainOp::HardSigmoid: return map([&](F x) { return clamp01(V::add(V::mul(c0, x), c1)); });
    case ChainOp::HardSwish:
      return map([&](F x) { return V::mul(x, clamp01(V::add(V::mul(x, V::set(1.0f / 6.0f)), V::set(0.5f)))); });
    case ChainOp::Count: return;
  }
}

// The one-lane form of step() over elements [i0, i1) (kernels/chain.cpp).
void tail_step(const ChainStep& st, const float* a, const float* b, float* d, size_t i0, size_t i1);

template <class V, class Io>
__attribute__((always_inline)) inline void run(const ChainProgram& p, const float* x, float* y, size_t n) {
  constexpr size_t L = Io::L;
  alignas(64) float vals[kChainMaxSteps - 1][kChainBlock];  // values 1..steps-1 of the current block
  for (size_t s0 = 0; s0 < n; s0 += kChainBlock) {
    const size_t nb = std::min(kChainBlock, n - s0), nv = nb / L * L;
    auto value = [&](int32_t v) -> const float* { return v == kChainConstant ? nullptr : v == 0 ? x + s0 : vals[v - 1]; };
    for (int32_t s = 0; s < p.steps; ++s) {
      const ChainStep& st = p.step[s];
      float* d = s + 1 == p.steps ? y + s0 : vals[s];
      const float* a = value(st.a);
      const float* b = st.b == kChainNone ? nullptr : value(st.b);
      step<V, Io>(st, a, b, d, 0, nv);
      if (L > 1 && nv < nb) tail_step(st, a, b, d, nv, nb);
    }
  }
}

}  // namespace om::kernels::chain
