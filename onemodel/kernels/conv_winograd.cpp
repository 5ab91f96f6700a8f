// Winograd F(2x2, 3x3) convolution for Fast sessions (docs/performance.md, "Convolution"). A 3x3,
// stride-1, group-1 convolution computes every 2x2 block of outputs (a "tile") from the 4x4 input
// patch under it: the patch is transformed (V = Bt d B), the kernel too (U = G g Gt, once, when
// the weights are packed), the 16 positions are multiplied and summed over the input channels --
// 16 GEMMs U_xi [M x C] times V_xi [C x tiles], 16 products per channel pair and tile where the
// direct form needs 36 -- and the 4x4 sums are transformed back (Y = At m A). The transforms add
// and subtract only; the result rounds differently from the direct chain, so Exact sessions never
// take this path (conv.h).
//
// Tiles are numbered over (image, tile row, tile column) and processed in blocks small enough for
// the block's V and products to stay in the L2 cache. The input transform writes V straight into
// the GEMM's packed B panels (the active tile's NR columns), so B is never packed again; the
// weights were packed as the GEMM's left operand at plan time.
#include <algorithm>
#include <cstring>
#include <memory>
#include <new>

#include "onemodel/kernels/conv.h"
#include "onemodel/kernels/kernels_internal.h"
#include "onemodel/kernels/thread_pool.h"
#include "onemodel/kernels/winograd_transforms.h"

namespace om::kernels {
namespace {

using winograd::plane_cols;
using winograd::plane_rows;
using winograd::tile_cols;
using winograd::tile_rows;

constexpr int kPositions = 16;                     // the 4x4 transformed patch
constexpr uint32_t kWinogradMagic = 0x4e495750u;   // header of a Winograd weight buffer
constexpr uint32_t kGemmFormMagic = 0x4d474350u;   // header of a GEMM-form weight buffer
constexpr uint32_t kTransposedMagic = 0x4d475450u;  // header of a transposed-form weight buffer
constexpr size_t kHeaderFloats = 16;               // keeps the packed panels 64-byte aligned
struct PackHeader {
  uint32_t magic;
  uint32_t reserved;
  uint64_t M, K;  // K: C for the Winograd form, C*kH*kW for the GEMM form
};
static_assert(sizeof(PackHeader) <= kHeaderFloats * sizeof(float), "header fits");

size_t round16(size_t n) { return (n + 15) / 16 * 16; }
size_t round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }

PackHeader header_of(const float* packed) {
  PackHeader h;
  std::memcpy(&h, packed, sizeof h);
  return h;
}

// Floats of one position's packed left operand (U_xi, M x C) inside a Winograd buffer.
size_t position_floats(int64_t M, int64_t C) { return round16(gemm_packed_a_floats(size_t(M), size_t(C))); }

// u = G g Gt for one 3x3 kernel g, G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1].
void transform_kernel(const float* g, float* u) {
  float t[4][3];
  for (int j = 0; j < 3; ++j) {
    const float a = g[j], b = g[3 + j], c = g[6 + j];
    t[0][j] = a;
    t[1][j] = 0.5f * (a + b + c);
    t[2][j] = 0.5f * (a - b + c);
    t[3][j] = c;
  }
  for (int i = 0; i < 4; ++i) {
    const float a = t[i][0], b = t[i][1], c = t[i][2];
    u[i * 4 + 0] = a;
    u[i * 4 + 1] = 0.5f * (a + b + c);
    u[i * 4 + 2] = 0.5f * (a - b + c);
    u[i * 4 + 3] = c;
  }
}

// Tiles per block: the block's V (16 x C) and products (16 x M) stay within about 512 KiB; whole
// 32-column GEMM panels (at least one), at most one GEMM column block.
int64_t block_tiles(const ConvGeom& g) {
  const int64_t total = g.N * tile_rows(g) * tile_cols(g);
  const int64_t fit = 131072 / (kPositions * (g.C + g.M)) / 32 * 32;  // whole panels of every ISA
  return std::min(total, std::max<int64_t>(32, std::min<int64_t>(fit, int64_t(kGemmNC))));
}

constexpr size_t kPieceFloats = 7 * sizeof(int64_t) / sizeof(float);  // one WinogradPiece
static_assert(sizeof(WinogradPiece) == kPieceFloats * sizeof(float), "kPieceFloats is one WinogradPiece");

// The scratch: V panels (16 positions, each C rows of the block's tiles rounded up to whole
// panels), the products (16 x M x block), the padded plane of one channel, two output rows, the
// GEMM workspace, the block's pieces.
struct Scratch {
  size_t v_stride, m_stride, plane_floats, out_floats, total;
  float *v, *m, *plane, *out, *ws;
  WinogradPiece* pieces;
};
size_t max_pieces(const ConvGeom& g);
Scratch layout(const ConvGeom& g, float* base) {
  const size_t tb = size_t(block_tiles(g));
  Scratch s{};
  // One cache line more than whole 64-byte lines: the 16 positions, written and read side by
  // side, would otherwise often sit a multiple of 4 KiB apart and share cache sets.
  s.v_stride = round16(size_t(g.C) * round_up(tb, kGemmNRMultiple)) + 16;
  s.m_stride = round16(size_t(g.M) * tb) + 16;
  s.plane_floats = round16(2 * plane_rows(g) * plane_cols(g) + 8);  // + 8: whole-vector reads at the end
  s.out_floats = round16(2 * size_t(tile_cols(g)));
  const size_t v = 0, m = v + kPositions * s.v_stride, plane = m + kPositions * s.m_stride, out = plane + s.plane_floats,
               ws = out + 2 * s.out_floats;
  const size_t pieces = ws + gemm_workspace_floats(size_t(g.M), tb, size_t(g.C));
  s.total = pieces + round16(max_pieces(g) * kPieceFloats);
  if (base) {
    s.pieces = reinterpret_cast<WinogradPiece*>(base + pieces);
    s.v = base + v;
    s.m = base + m;
    s.plane = base + plane;
    s.out = base + out;
    s.ws = base + ws;
  }
  return s;
}

// Calls f(n, th, tw0, len, j) for every run of tiles of [t0, t1) within one tile row, j being the
// block-local index of tile (n, th, tw0).
template <class F>
void for_tile_runs(const ConvGeom& g, int64_t t0, int64_t t1, F&& f) {
  const int64_t TW = tile_cols(g), per_image = tile_rows(g) * TW;
  for (int64_t t = t0; t < t1;) {
    const int64_t n = t / per_image, th = (t % per_image) / TW, tw0 = t % TW;
    const int64_t len = std::min(TW - tw0, t1 - t);
    f(n, th, tw0, len, t - t0);
    t += len;
  }
}

// The pieces of tiles [t0, t1) in order (at most 2 + (t1 - t0) / 2: runs and panels are
// multiples of 4 tiles wide). The divisions happen here, once per block.
size_t block_pieces(const ConvGeom& g, int64_t t0, int64_t t1, size_t NR, WinogradPiece* out) {
  const int64_t Wq = int64_t(plane_cols(g));
  size_t count = 0;
  for_tile_runs(g, t0, t1, [&](int64_t n, int64_t th, int64_t tw0, int64_t len, int64_t j) {
    for (int64_t k = 0; k < len;) {
      const size_t col = size_t(j + k), lane = col % NR;
      const int64_t run = std::min<int64_t>(len - k, int64_t(NR - lane));
      out[count++] = WinogradPiece{n, th, 2 * th * Wq, tw0 + k, run, int64_t(col / NR), int64_t(lane)};
      k += run;
    }
  });
  return count;
}
size_t max_pieces(const ConvGeom& g) { return 2 + size_t(block_tiles(g)) / 2; }

// V for tiles [t0, t1) (the table's winograd_input), with the lanes past the last tile zeroed.
void transform_block(const ConvGeom& g, const float* x, int64_t t0, int64_t t1, const Scratch& s, size_t NR) {
  const size_t nc = size_t(t1 - t0), ncr = round_up(nc, NR);
  const size_t count = block_pieces(g, t0, t1, NR, s.pieces);
  f32_winograd_input(WinogradInput{&g, x, s.pieces, count, ncr, NR, s.plane, s.v, s.v_stride});
  // Lanes past the last tile of the last panel: zero, so the GEMM reads defined values.
  if (ncr > nc)
    for (int xi = 0; xi < kPositions; ++xi)
      for (size_t k0 = 0; k0 < size_t(g.C); k0 += kGemmKC) {
        const size_t kc = std::min(kGemmKC, size_t(g.C) - k0);
        float* last = s.v + size_t(xi) * s.v_stride + k0 * ncr + (nc / NR) * kc * NR;
        for (size_t r = 0; r < kc; ++r) std::memset(last + r * NR + nc % NR, 0, (NR - nc % NR) * sizeof(float));
      }
}

// Y for tiles [t0, t1): runs whose outputs all lie inside the image are written in place, the
// others (the last run of a row, and the bottom row of an odd output height) through the two
// output rows of the scratch. The bias, a residual (Y-shaped) and a ReLU go with the transform
// for the runs written in place; other activations, and a residual of the other runs, follow on
// the rows just written.
void untransform_block(const ConvGeom& g, int64_t t0, int64_t t1, const Scratch& s, const float* bias, ConvActivation act,
                       float* y, const float* residual) {
  const size_t tb = size_t(t1 - t0);
  const int64_t P = g.OH * g.OW;
  float* top_tmp = s.out;
  float* bottom_tmp = s.out + s.out_floats;
  for_tile_runs(g, t0, t1, [&](int64_t n, int64_t th, int64_t tw0, int64_t len, int64_t j) {
    const int64_t ow0 = 2 * tw0, cols = std::min(g.OW - ow0, 2 * len), oh = 2 * th;
    if (cols <= 0) return;  // only the padding tiles of the row
    const bool whole = cols == 2 * len, two_rows = oh + 1 < g.OH;
    const bool rows_residual = residual && !whole;  // added after the copy below, before the activation
    const bool fused = act.op == UnaryOp::Relu && !rows_residual;
    for (int64_t m = 0; m < g.M; ++m) {
      float* dst = y + (n * g.M + m) * P + oh * g.OW + ow0;
      float* top = whole ? dst : top_tmp;
      float* bottom = whole && two_rows ? dst + g.OW : bottom_tmp;
      const float* r = residual ? residual + (dst - y) : nullptr;
      const float* rtop = whole ? r : nullptr;  // the in-place rows' residual, read by the transform
      f32_winograd_output(s.m + size_t(m) * tb + size_t(j), s.m_stride, len, bias ? bias[m] : 0.0f, fused, top, bottom,
                          rtop, rtop && two_rows ? rtop + g.OW : nullptr);
      if (!whole) {
        std::memcpy(dst, top, size_t(cols) * sizeof(float));
        if (two_rows) std::memcpy(dst + g.OW, bottom, size_t(cols) * sizeof(float));
      }
      if (rows_residual) {
        f32_binary(BinaryOp::Add, dst, 1, r, 1, dst, size_t(cols));
        if (two_rows) f32_binary(BinaryOp::Add, dst + g.OW, 1, r + g.OW, 1, dst + g.OW, size_t(cols));
      }
      if (!fused && act.op != UnaryOp::Identity) {
        f32_unary(act.op, dst, dst, size_t(cols));
        if (two_rows) f32_unary(act.op, dst + g.OW, dst + g.OW, size_t(cols));
      }
      act.chain_rows(dst, two_rows ? 2 : 1, size_t(g.OW), size_t(cols));
    }
  });
}

}  // namespace

bool conv_winograd_fits(const ConvGeom& g) {
  // Channel counts and extents far beyond any real network are left to the direct form: with
  // these bounds every size in layout() stays far below 2^62 bytes without checked arithmetic.
  constexpr int64_t kMaxChannels = int64_t(1) << 20, kMaxExtent = int64_t(1) << 20;
  if (g.C > kMaxChannels || g.M > kMaxChannels || g.OH > kMaxExtent || g.OW > kMaxExtent || g.N > kMaxExtent) return false;
  return g.group == 1 && g.kH == 3 && g.kW == 3 && g.sH == 1 && g.sW == 1 && g.dH == 1 && g.dW == 1 &&
         g.C >= kConvWinogradMinChannels && g.M >= kConvWinogradMinChannels;
}

size_t conv_winograd_scratch_floats(const ConvGeom& g) {
  if (!conv_winograd_fits(g)) return 0;
  return layout(g, nullptr).total;
}

size_t conv_packed_weights_floats(const ConvWeightPack& p) {
  if (p.winograd) return kHeaderFloats + kPositions * position_floats(p.M, p.K);
  if (p.transposed) return kHeaderFloats + round16(gemm_packed_b_floats(size_t(p.K), size_t(p.M)));
  return kHeaderFloats + round16(gemm_packed_a_floats(size_t(p.M), size_t(p.K)));
}

void conv_pack_weights(const ConvWeightPack& p, const float* w, float* packed) {
  std::memset(packed, 0, kHeaderFloats * sizeof(float));
  GemmArgs a;
  a.M = size_t(p.M);
  a.K = size_t(p.K);
  a.a_rs = p.K;
  a.a_cs = 1;
  if (p.transposed) {
    gemm_pack_b(w, 1, p.K, size_t(p.K), size_t(p.M), packed + kHeaderFloats);  // W^T[k, m] = w[m * K + k]
  } else if (!p.winograd) {
    a.a = w;
    gemm_pack_a(a, packed + kHeaderFloats);
  } else {
    // U_xi[m, c] for every position, then each packed as a left operand.
    const size_t plane = size_t(p.M) * size_t(p.K);
    std::unique_ptr<float[]> u(new (std::nothrow) float[kPositions * plane]);
    if (!u) return;  // no header: f32_conv2d then runs the direct form
    float t[kPositions];
    for (size_t mc = 0; mc < plane; ++mc) {
      transform_kernel(w + mc * 9, t);
      for (int xi = 0; xi < kPositions; ++xi) u[size_t(xi) * plane + mc] = t[xi];
    }
    for (int xi = 0; xi < kPositions; ++xi) {
      a.a = u.get() + size_t(xi) * plane;
      gemm_pack_a(a, packed + kHeaderFloats + size_t(xi) * position_floats(p.M, p.K));
    }
  }
  const uint32_t magic = p.winograd ? kWinogradMagic : p.transposed ? kTransposedMagic : kGemmFormMagic;
  const PackHeader h{magic, 0, uint64_t(p.M), uint64_t(p.K)};
  std::memcpy(packed, &h, sizeof h);
}

namespace {
const float* packed_form(const ConvGeom& g, const float* packed, uint32_t magic) {
  if (!packed || g.group != 1) return nullptr;
  const PackHeader h = header_of(packed);
  const int64_t K = g.C * g.kH * g.kW;
  if (h.magic != magic || h.M != uint64_t(g.M) || h.K != uint64_t(K)) return nullptr;
  return packed + kHeaderFloats;  // the GEMM checks that it fits the active tile
}
}  // namespace

const float* conv_packed_gemm_weights(const ConvGeom& g, const float* packed) { return packed_form(g, packed, kGemmFormMagic); }
const float* conv_packed_transposed_weights(const ConvGeom& g, const float* packed) {
  return packed_form(g, packed, kTransposedMagic);
}

bool conv_winograd(const ConvGeom& g, const float* x, const float* packed, const float* bias, ConvActivation act, float* y,
                   float* scratch, const float* residual) {
  if (!packed || !conv_winograd_fits(g)) return false;
  const PackHeader h = header_of(packed);
  if (h.magic != kWinogradMagic || h.M != uint64_t(g.M) || h.K != uint64_t(g.C)) return false;
  const float* u = packed + kHeaderFloats;
  const size_t ustride = position_floats(g.M, g.C);
  for (int xi = 0; xi < kPositions; ++xi)
    if (!gemm_packed_a_fits(u + size_t(xi) * ustride, size_t(g.M), size_t(g.C))) return false;  // another ISA's tile
  const size_t NR = gemm_active_nr();
  const int64_t total = g.N * tile_rows(g) * tile_cols(g);
  // Blocks of tiles are independent (each writes its own outputs from its own scratch), so they
  // split over the thread pool: a worker's part uses the pool's scratch for it, reserved by the
  // plan (without enough of it, one part). Every output's chain is the same whatever the blocks:
  // a tile's transforms and each output's product over the channels do not depend on them.
  ThreadPool* pool = current_pool();
  const size_t need = conv_winograd_scratch_floats(g) * sizeof(float);
  const int64_t cost = int64_t(std::min<double>(1e18, double(total) * double(g.M) * double(g.C) * kPositions / 8));
  const bool split = pool && pool->slot_scratch_bytes() >= need;
  // A small image (a late 16x16 map: 64 tiles, one block) is cut into smaller blocks, down to one
  // panel, when the cost pays for more parts than blocks (smaller blocks fit the same scratch).
  int64_t tb = block_tiles(g);
  if (split) {
    const int64_t want = int64_t(parts_for(pool, total, cost));
    if (want > 1 && (total + tb - 1) / tb < want) tb = std::max<int64_t>(32, ((total + want - 1) / want + 31) / 32 * 32);
  }
  const int64_t blocks = (total + tb - 1) / tb;
  const size_t parts = split ? parts_for(pool, blocks, cost) : 1;
  parallel_for(parts, [&](size_t part, size_t slot) {
    const Scratch s = layout(g, slot == 0 ? scratch : static_cast<float*>(pool->slot_scratch(slot)));
    std::memset(s.plane, 0, s.plane_floats * sizeof(float));  // the padding stays 0 (fill_rows)
    GemmArgs a;
    a.M = size_t(g.M);
    a.K = size_t(g.C);
    a.workspace = s.ws;
    const int64_t b0 = blocks * int64_t(part) / int64_t(parts), b1 = blocks * int64_t(part + 1) / int64_t(parts);
    for (int64_t t0 = b0 * tb; t0 < std::min(total, b1 * tb); t0 += tb) {
      const int64_t t1 = std::min(total, t0 + tb);
      transform_block(g, x, t0, t1, s, NR);
      a.N = size_t(t1 - t0);
      a.ldc = size_t(t1 - t0);
      for (int xi = 0; xi < kPositions; ++xi) {
        a.packed_a = u + size_t(xi) * ustride;
        a.c = s.m + size_t(xi) * s.m_stride;
        gemm_from_panels(a, s.v + size_t(xi) * s.v_stride);
      }
      untransform_block(g, t0, t1, s, bias, act, y, residual);
    }
  });
  return true;
}

}  // namespace om::kernels
