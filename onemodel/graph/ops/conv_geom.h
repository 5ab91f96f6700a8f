// Spatial geometry of Conv, ConvTranspose and the pools (graph/ops/conv.cpp, graph/ops/pool.cpp):
// reads kernel_shape, strides, dilations, pads, auto_pad, ceil_mode, group, output_padding and
// output_shape, checks them against the input and weight shapes and computes the output extent.
// Used by shape inference (which reports errors naming the node) and again by the kernels (which
// run only on validated nodes); it allocates nothing.
#pragma once
#include <cstdint>
#include <string>

#include "onemodel/graph/op_registry.h"
#include "onemodel/kernels/conv.h"

namespace om::graph::ops {

enum class GeomKind { Conv, ConvTranspose, Pool };

// The depth axis of a 3-D pool ([N, C, D, H, W]); g then describes the (H, W) planes.
struct DepthGeom {
  int64_t D = 1, OD = 1, kD = 1, sD = 1, dD = 1;
  int64_t pad_front = 0, pad_back = 0;
};

struct SpatialGeom {
  kernels::ConvGeom g;         // 1-D spatial is H = 1, kH = 1
  int64_t pad_b = 0, pad_r = 0;  // end pads (bottom, right)
  size_t spatial = 2;          // 1 or 2; 3 for pools only
  DepthGeom depth;             // spatial == 3
};

// Reads an ints attribute of `n` values into out (`fallback` each when absent); false when
// present with another size or a value out of [lo, kMaxNumel].
bool read_ints(const Node& node, const char* name, size_t n, int64_t fallback, int64_t lo, int64_t* out);

// nullptr when valid, else a static reason; `x`/`w` are dims (w null for pools). Convolutions
// take 1 or 2 spatial axes, pools also 3.
const char* spatial_geom(const Node& node, GeomKind kind, const int64_t* x, size_t xrank, const int64_t* w, size_t wrank,
                         SpatialGeom* out);

// The full context for a geometry error: the reason, shapes and attributes, and the fix.
std::string geom_error_text(const Node& node, const char* reason, const std::vector<int64_t>& x, const std::vector<int64_t>* w);

}  // namespace om::graph::ops
