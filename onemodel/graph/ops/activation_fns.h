// The parametric activations' per-element definitions, shared by their nodes' kernels
// (activations.cpp) and the fused elementwise chains (fused_elementwise.cpp): one formula each,
// so a chain step rounds exactly as the node it replaces. Written as selects, so the maps
// vectorise.
#pragma once

namespace om::graph::ops::act {

// max(0, min(1, u)): NaN gives 1 (fmin(1, NaN) is 1), -0 gives +0.
inline float clamp01(float u) { return u < 1.0f ? (u > 0.0f ? u : 0.0f) : 1.0f; }
inline float leaky_relu(float v, float alpha) { return v < 0.0f ? alpha * v : v; }
// Clip's f32 rule: below lo gives lo, then above hi gives hi; NaN passes through.
inline float clip(float v, float lo, float hi) {
  const float t = v < lo ? lo : v;
  return t > hi ? hi : t;
}
inline float hard_sigmoid(float v, float alpha, float beta) { return clamp01(alpha * v + beta); }
inline float hard_swish(float v) { return v * clamp01(v * (1.0f / 6.0f) + 0.5f); }

}  // namespace om::graph::ops::act
