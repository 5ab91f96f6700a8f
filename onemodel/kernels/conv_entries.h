// One ISA's convolution entries (f32_conv_pack_panels__<isa>, f32_conv_fill_padded__<isa>,
// f32_winograd_input__<isa>, f32_winograd_output__<isa>): the copies of conv_panels.h and the
// transforms of winograd_transforms.h compiled with the including file's flags. (The pools'
// entry, f32_pool_window__<isa>, needs the ISA's vector Ops: its GEMM file defines it.) `wide` selects
// the transforms' sixteen-tile form (only where 32 registers hold its sums). The helpers they
// call are always_inline, so each ISA's entries hold their own code.
#pragma once
#include "onemodel/kernels/conv_panels.h"
#include "onemodel/kernels/winograd_transforms.h"

#define OM_CONV_ENTRIES(isa, wide)                                                                        \
  void f32_conv_pack_panels__##isa(const ConvImage& s, size_t k0, size_t kc, size_t j0, size_t nc, size_t nr, \
                                   float* dst) {                                                          \
    panels::pack(s, k0, kc, j0, nc, nr, dst);                                                             \
  }                                                                                                       \
  void f32_conv_fill_padded__##isa(const ConvGeom& g, const float* plane, float* pad) {                   \
    panels::fill_padded(g, plane, pad);                                                                   \
  }                                                                                                       \
  void f32_winograd_input__##isa(const WinogradInput& in) { winograd::block_in<wide>(in); }              \
  void f32_winograd_output__##isa(const float* m, size_t ms, int64_t n, float bias, bool relu, float* top, \
                                  float* bottom, const float* rtop, const float* rbottom) {               \
    winograd::output_transform<wide>(m, ms, n, bias, relu, top, bottom, rtop, rbottom);                   \
  }
