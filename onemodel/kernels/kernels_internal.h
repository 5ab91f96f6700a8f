// Internal to the kernel library: the per-ISA kernel table the dispatcher selects from, and the
// GEMM blocking shared by every ISA (so workspace sizes do not depend on the ISA).
#pragma once
#include <cstddef>
#include <cstdint>

#include "onemodel/kernels/kernels.h"

namespace om::kernels {

// What a micro-kernel applies to its tile in registers before storing it, when the driver passes
// one (only with the last K block, so after every element's complete chain): + row_bias[i] (one
// rounding; row_bias points at the tile's first row, read for i < mr only), then + addend[i * ldc
// + j] (one rounding; the tile's element of a C-shaped operand, read for i < mr, j < nr only: a
// convolution's residual), then Relu when relu (x < 0 ? 0 : x, NaN and -0 kept). The same
// operations in the same order as the separate passes: the same bits.
struct TileEpilogue {
  const float* row_bias;
  bool relu;
  const float* addend = nullptr;
};

// A tile's addend as a micro-kernel reads it, MR x NR floats `ld` apart: in place for a whole
// tile, else copied into a local full tile with zeros outside [mr, nr] (the staged tiles'
// padding), so the kernel's loads never leave the operand.
template <size_t MR, size_t NR>
struct StagedAddend {
  alignas(32) float local[MR * NR];
  const float* p = nullptr;
  size_t ld = 0;
  __attribute__((always_inline)) StagedAddend(const TileEpilogue* ep, size_t ldc, size_t mr, size_t nr) {
    if (!ep || !ep->addend) return;
    p = ep->addend;
    ld = ldc;
    if (mr == MR && nr == NR) return;
    for (size_t i = 0; i < MR; ++i)
      for (size_t j = 0; j < NR; ++j) local[i * NR + j] = (i < mr && j < nr) ? p[i * ldc + j] : 0.0f;
    p = local;
    ld = NR;
  }
};

// Packed-panel GEMM micro-kernel: C[mr, nr] (+)= Apanel[mr, kc] * Bpanel[kc, nr] where Apanel
// holds kc columns of MR floats (rows i of column k at a[k*MR + i]) and Bpanel kc rows of NR
// floats. `load_c` continues the fma chain from the values already in C; otherwise the chain
// starts from 0. mr <= MR and nr <= NR; partial tiles must not touch C outside [mr, nr]. `ep`
// (nullable): the tile epilogue.
using GemmMicroKernel = void (*)(size_t kc, const float* a, const float* b, float* c, size_t ldc,
                                 size_t mr, size_t nr, bool load_c, const TileEpilogue* ep);

// Small-M kernel (M <= kGemmSmallM, e.g. batch 1): C[m, n] (+)= A[m, kc] * B[kc, n] for any n,
// reading A in place (A[i,k] = a[i*a_rs + k*a_cs]) and B in place with unit column stride inside
// panels of the ISA's NR columns: B[k, j] = b[k*b_rs + (j / NR)*panel_stride + j % NR]. That one
// form covers a plain row-major B (b_rs = ldb, panel_stride = NR) and a packed K block
// (b_rs = NR, panel_stride = kc*NR). No rows are padded; each C element is still the in-order
// fma chain over k, continued from C when `load_c`.
using GemmSmallKernel = void (*)(size_t kc, size_t m, const float* a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                                 const float* b, ptrdiff_t b_rs, size_t panel_stride, float* c,
                                 size_t ldc, size_t n, bool load_c);
constexpr size_t kGemmSmallM = 4;

// The same tile with B read in place from `rows`: B[k, j] = rows[k][off + j], j < NR (always a
// full NR columns: each row holds them contiguously). A convolution's image serves as B this way
// without packing (gemm_rows_blocked); the fma chain of every element is the packed kernel's.
using GemmRowsKernel = void (*)(size_t kc, const float* a, const float* const* rows, ptrdiff_t off, float* c, size_t ldc,
                                size_t mr, bool load_c, const TileEpilogue* ep);
// Where the micro-kernels read row k of their B tile: a packed panel, or rows in place.
struct PanelB {
  const float* b;
  size_t nr;
  const float* row(size_t k) const { return b + k * nr; }
};
struct RowsB {
  const float* const* rows;
  ptrdiff_t off;
  const float* row(size_t k) const { return rows[k] + off; }
};

// A partial MR x NR tile runs through a full-size local tile, so a micro-kernel's loop and
// stores are the same for every tile: C's valid part is copied in (zeros elsewhere) and back
// out by done(). A full tile is computed straight in C. always_inline: every ISA folder
// compiles it with its own flags.
template <size_t MR, size_t NR>
struct StagedTile {
  alignas(32) float local[MR * NR];
  float* c;
  size_t ldc, mr, nr;
  bool full;
  float* cc;  // where the kernel loads and stores the tile, ldcc apart
  size_t ldcc;
  __attribute__((always_inline)) StagedTile(float* c_, size_t ldc_, size_t mr_, size_t nr_, bool load_c)
      : c(c_), ldc(ldc_), mr(mr_), nr(nr_), full(mr_ == MR && nr_ == NR), cc(c_), ldcc(ldc_) {
    if (full) return;
    cc = local;
    ldcc = NR;
    for (size_t i = 0; i < MR; ++i)
      for (size_t j = 0; j < NR; ++j) local[i * NR + j] = (load_c && i < mr && j < nr) ? c[i * ldc + j] : 0.0f;
  }
  __attribute__((always_inline)) void done() const {
    if (!full)
      for (size_t i = 0; i < mr; ++i)
        for (size_t j = 0; j < nr; ++j) c[i * ldc + j] = local[i * NR + j];
  }
};

// Packs one MR-row panel of a row-major A (unit column stride): rows [0, rows) of
// src[i*a_rs + k], k < kc, to dst[k*MR + i], zero rows from `rows` to MR. Optional (null: the
// driver's generic loop); a copy, so it cannot change any result.
using GemmPackA = void (*)(const float* src, ptrdiff_t a_rs, size_t rows, size_t kc, float* dst);

// One output plane of a depthwise convolution over a zero-padded input buffer: for rows r < rows
// and columns i < n, out[r*n + i] = the fma chain over taps t < taps, in order, of
// src[tap_off[t] + r*row_step + i] times w[t], starting from +0; then + *bias when bias is given
// (one rounding); then, when relu is set, UnaryOp::Relu's rule (x < 0 ? 0 : x, NaN and -0 kept).
// Every tap's run of n floats is contiguous (strided convolutions read a column-phase buffer).
// Written once in depthwise_plane.h.
struct DepthwisePlane {
  const float* src;
  const ptrdiff_t* tap_off;
  const float* w;
  size_t taps;
  ptrdiff_t row_step;
  size_t rows, n;
  const float* bias;
  bool relu;
  float* out;
  // K when the taps are a KxK window of adjacent columns whose rows are row_step apart (tap t at
  // tap_off[0] + (t / K) row_step + t % K: column stride and dilation 1, the row dilation equal
  // to the row stride; the forms that share input rows, depthwise_plane.h), else 0. Set once per
  // layer.
  size_t unit;
  // The in-place form (depthwise_plane.h): src is the input plane itself, rows x n, for a 3x3
  // stride-1 layer with one pad on every side; zeros holds n + 2 zeros. tap_off, row_step and unit
  // unused.
  bool same_3x3;
  const float* zeros;
};
using DepthwisePlaneKernel = void (*)(const DepthwisePlane&);
// Runs the active table's kernel (for conv.cpp, which does not see the table).
void f32_depthwise_plane(const DepthwisePlane& p);

// A block of a depthwise convolution's channels (depth multiplier 1) with the channels as lanes
// (depthwise_channels.h): the same outputs, and bits, as DepthwisePlane's kernel on each of
// their planes. The kernel takes the first min(its lanes, channels) channels from x, w, bias and
// y and returns how many; the scalar table's returns 0 (it has no lanes to fill). buf has room
// for Hp x Wp pixels of kDepthwiseChannelsMax floats (Hp, Wp: padded_rows and padded_cols), wt
// for kH kW kDepthwiseChannelsMax floats: the kernel's scratch, all of it written before read.
constexpr size_t kDepthwiseChannelsMax = 16;
struct ConvGeom;
struct DepthwiseChannels {
  const ConvGeom* g;
  const float* x;     // the first channel's input plane; planes H W apart
  const float* w;     // its kH kW taps; the next channel's follow
  const float* bias;  // its bias, or null
  float* y;           // its output plane; planes OH OW apart
  size_t channels;    // channels from here on
  int64_t Hp, Wp;
  float* buf;
  float* wt;
  bool relu;
};
using DepthwiseChannelsKernel = size_t (*)(const DepthwiseChannels&);
size_t f32_depthwise_channels(const DepthwiseChannels& d);

// The convolution's copies into its zero-padded planes and from them into the GEMM's packed B
// panels (conv_panels.h; ConvImage there), and the Winograd transforms (winograd_transforms.h;
// WinogradInput there). Copies, and additions in a fixed order: every ISA's entry gives the
// scalar one's bits, the ISA files compile them for their vector width.
struct ConvGeom;
struct ConvImage;
struct WinogradInput;
using ConvPackPanelsKernel = void (*)(const ConvImage& s, size_t k0, size_t kc, size_t j0, size_t nc, size_t nr,
                                      float* dst);
using ConvFillPaddedKernel = void (*)(const ConvGeom& g, const float* plane, float* pad);
// A window pool (MaxPool or AveragePool) over g.N * g.C planes (pool_window.h): the reference's
// steps per output, so every ISA's entry gives the scalar one's bits.
struct PoolWindow;
using PoolWindowKernel = void (*)(const ConvGeom& g, const PoolWindow& w, const float* x, float* y);
using WinogradInputKernel = void (*)(const WinogradInput& in);
using WinogradOutputKernel = void (*)(const float* m, size_t ms, int64_t n, float bias, bool relu, float* top,
                                      float* bottom, const float* rtop, const float* rbottom);
// Run the active table's kernels (for conv.cpp and conv_winograd.cpp, which do not see the table).
void f32_conv_pack_panels(const ConvImage& s, size_t k0, size_t kc, size_t j0, size_t nc, size_t nr, float* dst);
void f32_conv_fill_padded(const ConvGeom& g, const float* plane, float* pad);
void f32_pool_window(const ConvGeom& g, const PoolWindow& w, const float* x, float* y);
void f32_winograd_input(const WinogradInput& in);
void f32_winograd_output(const float* m, size_t ms, int64_t n, float bias, bool relu, float* top, float* bottom,
                         const float* rtop, const float* rbottom);

// The declarations of one ISA's convolution entries (defined by OM_CONV_ENTRIES, conv_entries.h),
// for the file that builds the ISA's table.
#define OM_CONV_ENTRY_DECLS(isa)                                                                          \
  void f32_conv_pack_panels__##isa(const ConvImage& s, size_t k0, size_t kc, size_t j0, size_t nc, size_t nr, \
                                   float* dst);                                                           \
  void f32_conv_fill_padded__##isa(const ConvGeom& g, const float* plane, float* pad);                    \
  void f32_pool_window__##isa(const ConvGeom& g, const PoolWindow& w, const float* x, float* y);          \
  void f32_winograd_input__##isa(const WinogradInput& in);                                                \
  void f32_winograd_output__##isa(const float* m, size_t ms, int64_t n, float bias, bool relu, float* top, \
                                  float* bottom, const float* rtop, const float* rbottom);                \
  void q8_pair_rows__##isa(const uint8_t* a, const uint8_t* b, size_t rows, size_t in_stride, size_t step,       \
                           int32_t zero, bool is_signed, size_t n, uint32_t* out, size_t out_stride);      \
  void q8_pair_dot__##isa(const uint32_t* const* src, const uint32_t* w, size_t taps, size_t n, size_t rows,    \
                          size_t src_stride, int32_t* acc)

// One ISA's packed-panel and rows-in-place GEMM entries (f32_gemm_<tile>__<isa>,
// f32_gemm_rows_<tile>__<isa>) from its tile template tile_fn<B>(kc, a, B, c, ldc, mr, nr, load_c,
// ep): both read B through the same tile code, so their chains are the same. The declarations
// (with the small-M kernel's) are for the file that builds the table.
#define OM_GEMM_ENTRY_DECLS(tile, isa)                                                                    \
  void f32_gemm_##tile##__##isa(size_t kc, const float* a, const float* b, float* c, size_t ldc, size_t mr,  \
                                size_t nr, bool load_c, const TileEpilogue* ep);                         \
  void f32_gemm_rows_##tile##__##isa(size_t kc, const float* a, const float* const* rows, ptrdiff_t off,    \
                                     float* c, size_t ldc, size_t mr, bool load_c, const TileEpilogue* ep); \
  void f32_gemm_small__##isa(size_t kc, size_t m, const float* a, ptrdiff_t a_rs, ptrdiff_t a_cs, const float* b, \
                             ptrdiff_t b_rs, size_t ps, float* c, size_t ldc, size_t n, bool load_c)
#define OM_GEMM_TILE_ENTRIES(tile, isa, tile_fn, NR)                                                      \
  void f32_gemm_##tile##__##isa(size_t kc, const float* a, const float* b, float* c, size_t ldc, size_t mr,  \
                                size_t nr, bool load_c, const TileEpilogue* ep) {                        \
    tile_fn(kc, a, PanelB{b, NR}, c, ldc, mr, nr, load_c, ep);                                            \
  }                                                                                                       \
  void f32_gemm_rows_##tile##__##isa(size_t kc, const float* a, const float* const* rows, ptrdiff_t off,    \
                                     float* c, size_t ldc, size_t mr, bool load_c, const TileEpilogue* ep) { \
    tile_fn(kc, a, RowsB{rows, off}, c, ldc, mr, NR, load_c, ep);                                         \
  }

// A table slot that must be given: it has no default, so an aggregate initialiser that leaves
// it out does not compile ("by declaration, never by omission"). It calls like the function
// pointer it holds.
template <typename Fn>
struct Required {
  Fn fn;
  template <typename F>
  constexpr Required(F f) : fn(f) {}  // NOLINT: implicit, so a table lists plain functions
  constexpr operator Fn() const { return fn; }
};

struct GemmTile {
  size_t mr;
  size_t nr;
  Required<GemmMicroKernel> kernel;
  Required<GemmSmallKernel> small;
  Required<GemmRowsKernel> rows;
  GemmPackA pack_a;  // optional: kGenericPackA = the driver's generic loop
};

// The raw integer product (q8_gemm.h's q8_dot); q8_dot__scalar is the reference every ISA's
// entry equals.
using Q8DotKernel = void (*)(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t panel_stride,
                             size_t groups, size_t panels, int32_t* c, size_t ldc);
void q8_dot__scalar(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t panel_stride, size_t groups,
                    size_t panels, int32_t* c, size_t ldc);
// The product over B' in place (q8_gemm.h's q8_dot_taps), from the same tiles as q8_dot.
struct Q8Walk;
using Q8DotTapsKernel = void (*)(const uint8_t* a, size_t lda, size_t rows, const int8_t* const* panels,
                                 size_t npanels, const Q8Walk& w, int32_t* c, size_t ldc, int8_t* scratch);
void q8_dot_taps__scalar(const uint8_t* a, size_t lda, size_t rows, const int8_t* const* panels, size_t npanels,
                         const Q8Walk& w, int32_t* c, size_t ldc, int8_t* scratch);
#if defined(__ARM_FEATURE_SIMD32)
// The M-profile DSP form (kernels/dsp/q8_dsp.cpp): the scalar table's entry on such targets.
void q8_dot__dsp(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t panel_stride, size_t groups,
                 size_t panels, int32_t* c, size_t ldc);
void q8_dot_taps__dsp(const uint8_t* a, size_t lda, size_t rows, const int8_t* const* panels, size_t npanels,
                      const Q8Walk& w, int32_t* c, size_t ldc, int8_t* scratch);
#endif
struct Q8Requant;
using Q8RequantKernel = void (*)(const Q8Requant&);
void q8_requantize__scalar(const Q8Requant& q);
using Q8QuantizeKernel = void (*)(const float* x, size_t n, float scale, int32_t zp, int32_t lo, int32_t hi, void* out,
                                  bool out_signed);
void q8_quantize__scalar(const float* x, size_t n, float scale, int32_t zp, int32_t lo, int32_t hi, void* out,
                         bool out_signed);
using Q8RangeKernel = void (*)(const float* x, size_t n, float* lo, float* hi);
void q8_range__scalar(const float* x, size_t n, float* lo, float* hi);
using Q8InterleaveKernel = void (*)(const uint8_t* const rows[4], uint8_t flip, size_t n, uint32_t* out,
                                   size_t panel_words, int32_t* sums);
void q8_interleave4__scalar(const uint8_t* const rows[4], uint8_t flip, size_t n, uint32_t* out, size_t panel_words,
                            int32_t* sums);
// Whether this CPU runs AVX-512 VNNI, and AMX-INT8 with its tile state enabled by the OS (the
// AVX-512 table's integer products need them; else it takes the AVX2 one, the same integers), and
// AVX-VNNI (the AVX2 table's integer product needs it; else the widening one, the same integers).
bool cpu_has_avx512_vnni();
bool cpu_has_amx_int8();
bool cpu_has_avx_vnni();
// Whether this AArch64 CPU has the ARMv8.2 dot-product instructions (the NEON table's integer
// product takes them; else the widening one, the same integers).
bool cpu_has_neon_dotprod();

// The integer depthwise convolution's steps (q8_depthwise.h), in the convolution table.
using Q8PairRowsKernel = void (*)(const uint8_t* a, const uint8_t* b, size_t rows, size_t in_stride, size_t step,
                                  int32_t zero, bool is_signed, size_t n, uint32_t* out, size_t out_stride);
using Q8PairDotKernel = void (*)(const uint32_t* const* src, const uint32_t* w, size_t taps, size_t n, size_t rows,
                                 size_t src_stride, int32_t* acc);
void q8_pair_rows__scalar(const uint8_t* a, const uint8_t* b, size_t rows, size_t in_stride, size_t step, int32_t zero,
                          bool is_signed, size_t n, uint32_t* out, size_t out_stride);
void q8_pair_dot__scalar(const uint32_t* const* src, const uint32_t* w, size_t taps, size_t n, size_t rows,
                         size_t src_stride, int32_t* acc);

struct KernelTable {
  Isa isa;
  Required<void (*)(BinaryOp, const float*, size_t, const float*, size_t, float*, size_t)> binary;
  Required<void (*)(UnaryOp, const float*, float*, size_t)> unary;
  Required<float (*)(const float*, size_t)> sum_exact;
  Required<float (*)(const float*, size_t)> sum_fast;
  // Adds x[0..n) columnwise: y[i] = sum over r of x[r*inner + i] (exact order), for i < inner.
  Required<void (*)(const float*, size_t n, size_t inner, float*)> reduce_sum_inner;
  Required<float (*)(const float*, size_t)> max;
  Required<void (*)(const float*, float*, size_t, size_t, bool)> softmax_rows;
  // Fast mode (any summation order, faster exp); the scalar table reuses the exact kernel.
  Required<void (*)(const float*, float*, size_t, size_t, bool)> softmax_rows_fast;
  GemmTile gemm;
  Required<void (*)(const uint16_t*, float*, size_t)> f16_to_f32;
  Required<void (*)(const float*, uint16_t*, size_t)> f32_to_f16;
};

// The convolution and pooling kernels, in a table of their own beside each ISA's KernelTable (the
// same ISA: conv_table() follows table()): only the Conv, ConvTranspose and pool operators reach
// it, so a program that registers none of them (onemodel/op_list.h) links none of these kernels.
struct ConvKernelTable {
  Required<DepthwisePlaneKernel> depthwise_plane;
  Required<DepthwiseChannelsKernel> depthwise_channels;
  Required<ConvPackPanelsKernel> conv_pack_panels;
  Required<ConvFillPaddedKernel> conv_fill_padded;
  Required<PoolWindowKernel> pool_window;
  Required<WinogradInputKernel> winograd_input;
  Required<WinogradOutputKernel> winograd_output;
};

// The integer kernels (products, requantization, quantization, the depthwise steps), in a table of
// their own beside each ISA's KernelTable (the same ISA: q8_table() follows table()): only the
// quantized operators reach it, so a float program (onemodel/op_list.h) links none of them.
struct Q8KernelTable {
  Required<Q8DotKernel> q8_dot;
  Required<Q8DotTapsKernel> q8_dot_taps;  // the integer convolutions' product; its tiles are q8_dot's
  Required<Q8RequantKernel> q8_requantize;
  Required<Q8InterleaveKernel> q8_interleave4;
  Required<Q8QuantizeKernel> q8_quantize;
  Required<Q8RangeKernel> q8_range;
  Required<Q8PairRowsKernel> q8_pair_rows;
  Required<Q8PairDotKernel> q8_pair_dot;
};

// Every slot of every ISA's table is filled: a kernel of the ISA or, by declaration, the scalar
// one. Required slots cannot be left out of a table's initialiser (it does not compile); the
// one optional slot is GemmTile::pack_a, written kGenericPackA where the driver's generic loop is
// meant. table_complete also refuses a slot given as nullptr (the test over every ISA runs it);
// the size check makes a new slot come here first.
constexpr GemmPackA kGenericPackA = nullptr;
inline bool table_complete(const KernelTable& t) {
  return t.binary.fn && t.unary.fn && t.sum_exact.fn && t.sum_fast.fn && t.reduce_sum_inner.fn && t.max.fn &&
         t.softmax_rows.fn && t.softmax_rows_fast.fn && t.gemm.mr && t.gemm.nr && t.gemm.kernel.fn && t.gemm.small.fn &&
         t.f16_to_f32.fn && t.f32_to_f16.fn;
}
static_assert(sizeof(KernelTable) == sizeof(void*) * 11 + sizeof(GemmTile),
              "KernelTable gained a slot: add it to table_complete");
inline bool table_complete(const ConvKernelTable& t) {
  return t.depthwise_plane.fn && t.depthwise_channels.fn && t.conv_pack_panels.fn && t.conv_fill_padded.fn &&
         t.pool_window.fn && t.winograd_input.fn && t.winograd_output.fn;
}
static_assert(sizeof(ConvKernelTable) == sizeof(void*) * 7, "ConvKernelTable gained a slot: add it to table_complete");
inline bool table_complete(const Q8KernelTable& t) {
  return t.q8_dot.fn && t.q8_dot_taps.fn && t.q8_requantize.fn && t.q8_interleave4.fn && t.q8_quantize.fn &&
         t.q8_range.fn && t.q8_pair_rows.fn && t.q8_pair_dot.fn;
}
static_assert(sizeof(Q8KernelTable) == sizeof(void*) * 8, "Q8KernelTable gained a slot: add it to table_complete");

// Defined only where the build compiles the ISA (x86-64: AVX2 and AVX-512; AArch64: NEON).
const KernelTable& scalar_table();
const KernelTable& avx2_table();
const KernelTable& avx512_table();
const KernelTable& neon_table();
const ConvKernelTable& scalar_conv_table();
const ConvKernelTable& avx2_conv_table();
const ConvKernelTable& avx512_conv_table();
const ConvKernelTable& neon_conv_table();
const Q8KernelTable& scalar_q8_table();
const Q8KernelTable& avx2_q8_table();
const Q8KernelTable& avx512_q8_table();
const Q8KernelTable& neon_q8_table();

// Cache blocking (floats). MC is a multiple of every MR, NC of every NR.
constexpr size_t kGemmMC = 144;
constexpr size_t kGemmKC = 256;
constexpr size_t kGemmNC = 1024;
// Packed B blocks of at most kGemmRowsOuterMaxK rows and kGemmRowsOuterFloats floats (256 KB, in
// L2) are swept once per row panel (gemm_blocked; measured on pointwise convolutions).
constexpr size_t kGemmRowsOuterMaxK = 64;
constexpr size_t kGemmRowsOuterFloats = 64 * 1024;
// Every ISA's MR divides kGemmMRMultiple and every NR divides kGemmNRMultiple, so the
// workspace size computed with them covers all tiles.
// Tiles: scalar 4x4, AVX2 6x16, NEON 8x8, AVX-512 12x32.
constexpr size_t kGemmMRMultiple = 24;
constexpr size_t kGemmNRMultiple = 32;
static_assert(kGemmMC % kGemmMRMultiple == 0 && kGemmNC % kGemmNRMultiple == 0, "blocks hold whole tiles");

// The output columns [begin, end) one part of a product computes (end is clamped to N); begin is
// a multiple of kGemmNRMultiple. Any partition of the columns gives the bits of the whole: each
// element's chain is the same, only which thread runs it changes (gemm_parallel).
struct GemmColumns {
  size_t begin = 0, end = SIZE_MAX;
};

// Floats of the workspace that hold packed A (packed B follows them).
size_t gemm_workspace_a_floats(size_t M, size_t K);

// The blocked driver every ISA shares: packs A and B into `workspace` and calls tile.kernel.
// With `packed_b` (the data of a gemm_pack_b buffer, packed with panels of `packed_nr` columns)
// B is taken from it: directly when packed_nr == tile.nr, else repacked block by block.
void gemm_blocked(const GemmArgs& args, const GemmTile& tile, float* workspace,
                  const float* packed_b = nullptr, size_t packed_nr = 0, GemmColumns cols = {});

// Whether the blocked drivers apply the epilogue (GemmArgs::row_bias, activation) in the
// micro-kernels' registers: a row bias and/or Relu, no column bias, no other activation.
bool gemm_tile_epilogue(const GemmArgs& args);

// The product on table t: the small-M kernel when it applies, else the blocked driver. True
// when the epilogue was applied too (gemm_tile_epilogue and the blocked driver ran); else the
// caller runs it over C. `workspace` holds gemm_workspace_floats(M, N, K).
bool gemm_compute(const GemmArgs& args, const KernelTable& t, float* workspace, GemmColumns cols = {});
// The same from a gemm_pack_b buffer (header included). Any layout mismatch with t (another
// ISA's panels) is handled by repacking block by block into the workspace: same bits, slower.
bool gemm_compute_prepacked(const GemmArgs& args, const KernelTable& t, const float* packed,
                            float* workspace, GemmColumns cols = {});
// Packs A for table t's tile into `packed` (header + panels; see GemmArgs::packed_a).
void gemm_pack_a_for(const KernelTable& t, const GemmArgs& args, float* packed);
// Packs B for table t's tile into `packed` (header + panels).
void gemm_pack_b_for(const KernelTable& t, const float* b, ptrdiff_t b_rs, ptrdiff_t b_cs, size_t K,
                     size_t N, float* packed);

// The product with B partly read in place (an implicit-GEMM convolution): B[k, j + i], i < NR,
// is rows[k][panel_off(ctx, j, NR) + i] when panel_off gives an offset >= 0, else those columns
// are packed by args.pack_b. Requires args.packed_a fitting `tile` (gemm_pack_a);
// every element's chain is the blocked driver's. Applies a tile epilogue (gemm_tile_epilogue).
using GemmPanelOffFn = ptrdiff_t (*)(const void* ctx, size_t j, size_t nr);
void gemm_rows_blocked(const GemmArgs& args, const GemmTile& tile, float* workspace, const float* const* rows,
                       GemmPanelOffFn panel_off, const void* ctx, GemmColumns cols = {});
// The same on the active table when args.packed_a fits it and any epilogue is a tile epilogue;
// false (nothing computed) otherwise.
bool gemm_image_rows(const GemmArgs& args, const float* const* rows, GemmPanelOffFn panel_off, const void* ctx);

// For kernels that write B's panels themselves (the Winograd convolution): the active tile's NR;
// whether a gemm_pack_a buffer fits the active tile for this M and K; and the product (with a
// tile epilogue only) from `panels` laid out as a gemm_pack_b buffer's data with the active NR, with
// args.packed_a such a fitting buffer.
size_t gemm_active_nr();
bool gemm_packed_a_fits(const float* packed, size_t M, size_t K);
void gemm_from_panels(const GemmArgs& args, const float* panels);
bool gemm_packed_a_matches(const float* packed, size_t mr, size_t M, size_t K);

// Epilogue applied to a finished row segment of C (bias add, then activation), identical bits on
// every ISA because it goes through the table's unary kernel.
void gemm_epilogue(const GemmArgs& args, const KernelTable& t);

}  // namespace om::kernels
