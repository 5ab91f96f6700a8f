// ISA selection (once, at first use) and the public entry points, which forward to the
// selected kernel table.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "onemodel/kernels/sync.h"
#include "onemodel/kernels/kernels_internal.h"
#include "onemodel/kernels/q8_gemm.h"
#include "onemodel/kernels/thread_pool.h"
#include "onemodel/kernels/scalar/elementwise.h"
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>  // getauxval: HWCAP_ASIMDDP is bit 20 of AT_HWCAP
#endif

#if defined(__x86_64__) || defined(_M_X64)
#include <cpuid.h>
#endif

namespace om::kernels {
namespace {

#if defined(ONEMODEL_HAVE_AVX2)
bool detect_avx2_fma() {
#if defined(__x86_64__) || defined(_M_X64)
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  const bool fma = c & (1u << 12), osxsave = c & (1u << 27), avx = c & (1u << 28),
             f16c = c & (1u << 29);
  if (!(fma && osxsave && avx && f16c)) return false;
  // The OS must save YMM state (XCR0 bits 1 and 2), else AVX instructions fault.
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  if ((lo & 0x6u) != 0x6u) return false;
  if (__get_cpuid_max(0, nullptr) < 7) return false;
  __cpuid_count(7, 0, a, b, c, d);
  return b & (1u << 5);
#else
  return false;
#endif
}
#endif

#if defined(ONEMODEL_HAVE_AVX2)
// CPUID and XGETBV trap to the hypervisor on virtual machines, so ask once.
bool cpu_has_avx2_fma() {
  static const bool yes = detect_avx2_fma();
  return yes;
}
#endif

#if defined(ONEMODEL_HAVE_AVX512)
// AVX-512F (CPUID leaf 7 EBX bit 16) with the OS saving SSE, YMM, opmask and both ZMM halves
// (XCR0 bits 1, 2, 5, 6, 7); FMA and F16C are required too because the table reuses the AVX2
// elementwise kernels.
bool detect_avx512f() {
#if defined(__x86_64__) || defined(_M_X64)
  if (!cpu_has_avx2_fma()) return false;
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  if ((lo & 0xe6u) != 0xe6u) return false;
  unsigned a, b, c, d;
  __cpuid_count(7, 0, a, b, c, d);
  return b & (1u << 16);
#else
  return false;
#endif
}
bool cpu_has_avx512f() {
  static const bool yes = detect_avx512f();
  return yes;
}
#endif

#if defined(ONEMODEL_HAVE_AVX512)
// AVX512_VNNI: CPUID leaf 7 ECX bit 11, on top of AVX-512F.
bool detect_avx512_vnni() {
#if defined(__x86_64__) || defined(_M_X64)
  if (!cpu_has_avx512f()) return false;
  unsigned a, b, c, d;
  __cpuid_count(7, 0, a, b, c, d);
  return (c & (1u << 11)) && (b & (1u << 30));  // with AVX512BW, which its files are built with (every VNNI CPU has it)
#else
  return false;
#endif
}

// AMX-TILE and AMX-INT8 (CPUID leaf 7 EDX bits 24 and 25) with the OS saving the tile state
// (XCR0 bits 17 and 18), on top of AVX-512F.
bool detect_amx_int8() {
#if defined(__x86_64__) || defined(_M_X64)
  if (!cpu_has_avx512f()) return false;
  unsigned a, b, c, d;
  __cpuid_count(7, 0, a, b, c, d);
  if (!(d & (1u << 24)) || !(d & (1u << 25))) return false;
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (lo & 0x60000u) == 0x60000u;
#else
  return false;
#endif
}
#endif

const KernelTable* table_for(Isa isa) {
  switch (isa) {
    case Isa::Scalar: return &scalar_table();
    case Isa::Avx2:
#if defined(ONEMODEL_HAVE_AVX2)
      if (cpu_has_avx2_fma()) return &avx2_table();
#endif
      return nullptr;
    case Isa::Avx512:
#if defined(ONEMODEL_HAVE_AVX512)
      if (cpu_has_avx512f()) return &avx512_table();
#endif
      return nullptr;
    case Isa::Neon:
#if defined(ONEMODEL_HAVE_NEON)
      return &neon_table();
#else
      return nullptr;
#endif
  }
  return nullptr;
}

const KernelTable* choose() {
  if (const char* env = std::getenv("ONEMODEL_ISA")) {
    const Isa wanted = std::strcmp(env, "avx2") == 0     ? Isa::Avx2
                       : std::strcmp(env, "avx512") == 0 ? Isa::Avx512
                       : std::strcmp(env, "neon") == 0   ? Isa::Neon
                                                          : Isa::Scalar;
    if (const KernelTable* t = table_for(wanted)) return t;
  }
  if (const KernelTable* t = table_for(Isa::Avx512)) return t;
  if (const KernelTable* t = table_for(Isa::Avx2)) return t;
  if (const KernelTable* t = table_for(Isa::Neon)) return t;
  return &scalar_table();
}

std::atomic<const KernelTable*> g_table{nullptr};

const KernelTable& table() {
  const KernelTable* t = g_table.load(std::memory_order_acquire);
  if (t == nullptr) {
    t = choose();
    g_table.store(t, std::memory_order_release);
  }
  return *t;
}

// The active ISA's integer table (a table() ISA the build has: table_for chose it).
const Q8KernelTable& q8_table() {
  switch (table().isa) {
#if defined(ONEMODEL_HAVE_AVX2)
    case Isa::Avx2: return avx2_q8_table();
#endif
#if defined(ONEMODEL_HAVE_AVX512)
    case Isa::Avx512: return avx512_q8_table();
#endif
#if defined(ONEMODEL_HAVE_NEON)
    case Isa::Neon: return neon_q8_table();
#endif
    default: return scalar_q8_table();
  }
}

float* thread_workspace(size_t floats) {
  // static: thread_local at block scope is static already, but OM_THREAD_LOCAL is empty where
  // there are no threads, and an automatic vector would die with the call (its data dangling).
  static OM_THREAD_LOCAL std::vector<float> buffer;
  if (buffer.size() < floats) buffer.resize(floats);
  return buffer.data();
}

}  // namespace

Isa active_isa() { return table().isa; }

bool cpu_has_avx512_vnni() {
#if defined(ONEMODEL_HAVE_AVX512)
  static const bool yes = detect_avx512_vnni();
  return yes;
#else
  return false;
#endif
}

// AVX-VNNI: CPUID leaf 7 sub-leaf 1 EAX bit 4 (the VEX-encoded vpdpbusd on 256-bit vectors).
// ONEMODEL_NO_AVX_VNNI=1 keeps the widening product (for tests and comparisons): the same integers.
bool cpu_has_avx_vnni() {
#if defined(ONEMODEL_HAVE_AVX2) && (defined(__x86_64__) || defined(_M_X64))
  static const bool yes = [] {
    unsigned a, b, c, d;
    if (__get_cpuid_max(0, nullptr) < 7) return false;
    __cpuid_count(7, 1, a, b, c, d);
    return (a & (1u << 4)) != 0 && !std::getenv("ONEMODEL_NO_AVX_VNNI");
  }();
  return yes;
#else
  return false;
#endif
}

bool cpu_has_amx_int8() {
#if defined(ONEMODEL_HAVE_AVX512)
  // ONEMODEL_NO_AMX=1 keeps the VNNI product (for tests and comparisons): the same integers.
  static const bool yes = detect_amx_int8() && !std::getenv("ONEMODEL_NO_AMX");
  return yes;
#else
  return false;
#endif
}

// AArch64 dot product: the kernel's HWCAP_ASIMDDP (Linux; elsewhere not detected, so the
// widening product). ONEMODEL_NO_DOTPROD=1 keeps the widening product: the same integers.
bool cpu_has_neon_dotprod() {
#if defined(ONEMODEL_HAVE_NEON) && defined(__aarch64__) && defined(__linux__)
  static const bool yes = (getauxval(AT_HWCAP) & (1ul << 20)) != 0 && !std::getenv("ONEMODEL_NO_DOTPROD");
  return yes;
#else
  return false;
#endif
}

void q8_dot(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t ps, size_t groups, size_t panels,
            int32_t* c, size_t ldc) {
  q8_table().q8_dot(a, lda, rows, b, ps, groups, panels, c, ldc);
}

void q8_requantize(const Q8Requant& q) { q8_table().q8_requantize(q); }

void q8_quantize(const float* x, size_t n, float scale, int32_t zp, int32_t lo, int32_t hi, void* out, bool out_signed) {
  q8_table().q8_quantize(x, n, scale, zp, lo, hi, out, out_signed);
}

void q8_range(const float* x, size_t n, float* lo, float* hi) { q8_table().q8_range(x, n, lo, hi); }

void q8_interleave4(const uint8_t* const rows[4], uint8_t flip, size_t n, uint32_t* out, size_t panel_words,
                    int32_t* sums) {
  q8_table().q8_interleave4(rows, flip, n, out, panel_words, sums);
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Scalar: return "scalar";
    case Isa::Avx2: return "avx2";
    case Isa::Avx512: return "avx512";
    case Isa::Neon: return "neon";
  }
  return "?";
}

bool isa_supported(Isa isa) { return table_for(isa) != nullptr; }

bool force_isa(Isa isa) {
  const KernelTable* t = table_for(isa);
  if (t == nullptr) return false;
  g_table.store(t, std::memory_order_release);
  return true;
}

// A long elementwise map split over the current thread pool in runs of whole 64-element blocks
// (kernels::parts_for on the elements read and written): every element's result is the same
// whichever run computes it (the split tests run every elementwise kernel over arbitrary
// sub-ranges). This is what spreads the eager layer's elementwise ops over its threads; inside a
// part of a graph kernel it runs inline.
template <class F>
void split_elements(size_t n, size_t operands, F&& f) {
  ThreadPool* pool = n >= 128 ? current_pool() : nullptr;
  const size_t blocks = (n + 63) / 64;
  const double cost = double(n) * double(operands);
  const size_t parts = parts_for(pool, int64_t(blocks), cost > 1e18 ? int64_t(1e18) : int64_t(cost));
  if (parts <= 1) return f(size_t(0), n);
  parallel_for(parts, [&](size_t p, size_t) {
    const size_t begin = blocks * p / parts * 64, end = std::min(n, blocks * (p + 1) / parts * 64);
    if (begin < end) f(begin, end - begin);
  });
}

void f32_binary(BinaryOp op, const float* a, size_t a_step, const float* b, size_t b_step,
                float* y, size_t n) {
  split_elements(n, 3, [&](size_t i, size_t m) { table().binary(op, a + i * a_step, a_step, b + i * b_step, b_step, y + i, m); });
}

void f32_unary(UnaryOp op, const float* x, float* y, size_t n) {
  split_elements(n, 2, [&](size_t i, size_t m) { table().unary(op, x + i, y + i, m); });
}

float exp_f32(float x) { return exact::exp(x); }
float log_f32(float x) { return exact::log(x); }
float tanh_f32(float x) { return exact::tanh(x); }
float erf_f32(float x) { return exact::erf(x); }
float sigmoid_f32(float x) { return exact::sigmoid(x); }

float f32_sum(const float* x, size_t n, ArithmeticMode mode) {
  const KernelTable& t = table();
  return mode == ArithmeticMode::Exact ? t.sum_exact(x, n) : t.sum_fast(x, n);
}

void f32_reduce_sum(const float* x, size_t outer, size_t n, size_t inner, float* y,
                    ArithmeticMode mode) {
  const KernelTable& t = table();
  if (n == 0) {  // empty sums are +0; an empty input may have no storage (x null)
    for (size_t i = 0; i < outer * inner; ++i) y[i] = 0.0f;
    return;
  }
  for (size_t o = 0; o < outer; ++o) {
    const float* xo = x + o * n * inner;
    if (inner == 1) {
      y[o] = mode == ArithmeticMode::Exact ? t.sum_exact(xo, n) : t.sum_fast(xo, n);
    } else {
      t.reduce_sum_inner(xo, n, inner, y + o * inner);
    }
  }
}

float f32_max(const float* x, size_t n) { return table().max(x, n); }

void f32_softmax_rows(const float* x, float* y, size_t rows, size_t n, bool log, ArithmeticMode mode) {
  const KernelTable& t = table();
  if (mode == ArithmeticMode::Exact) {
    t.softmax_rows(x, y, rows, n, log);
  } else {
    t.softmax_rows_fast(x, y, rows, n, log);
  }
}

// The epilogue as passes over C, when the micro-kernels did not apply it.
void gemm_epilogue(const GemmArgs& g, const KernelTable& t) {
  for (size_t i = 0; i < g.M; ++i) {
    float* c = g.c + i * g.ldc;
    if (g.bias) t.binary(BinaryOp::Add, c, 1, g.bias, 1, c, g.N);
    if (g.row_bias) t.binary(BinaryOp::Add, c, 1, g.row_bias + i, 0, c, g.N);
    if (g.addend) t.binary(BinaryOp::Add, c, 1, g.addend + i * g.ldc, 1, c, g.N);
    if (g.activation != UnaryOp::Identity) t.unary(g.activation, c, c, g.N);
  }
}

namespace {
// The active ISA's convolution and pooling table (a table() ISA the build has: table_for chose it).
const ConvKernelTable& conv_table() {
  switch (table().isa) {
#if defined(ONEMODEL_HAVE_AVX2)
    case Isa::Avx2: return avx2_conv_table();
#endif
#if defined(ONEMODEL_HAVE_AVX512)
    case Isa::Avx512: return avx512_conv_table();
#endif
#if defined(ONEMODEL_HAVE_NEON)
    case Isa::Neon: return neon_conv_table();
#endif
    default: return scalar_conv_table();
  }
}
}  // namespace

void f32_depthwise_plane(const DepthwisePlane& p) { conv_table().depthwise_plane(p); }
size_t f32_depthwise_channels(const DepthwiseChannels& d) { return conv_table().depthwise_channels(d); }
void q8_pair_rows(const uint8_t* a, const uint8_t* b, size_t rows, size_t in_stride, size_t step, int32_t zero,
                  bool is_signed, size_t n, uint32_t* out, size_t out_stride) {
  q8_table().q8_pair_rows(a, b, rows, in_stride, step, zero, is_signed, n, out, out_stride);
}
void q8_pair_dot(const uint32_t* const* src, const uint32_t* w, size_t taps, size_t n, size_t rows, size_t src_stride,
                 int32_t* acc) {
  q8_table().q8_pair_dot(src, w, taps, n, rows, src_stride, acc);
}

void q8_dot_taps(const uint8_t* a, size_t lda, size_t rows, const int8_t* const* panels, size_t npanels,
                 const Q8Walk& w, int32_t* c, size_t ldc, int8_t* scratch) {
  q8_table().q8_dot_taps(a, lda, rows, panels, npanels, w, c, ldc, scratch);
}
void f32_conv_pack_panels(const ConvImage& s, size_t k0, size_t kc, size_t j0, size_t nc, size_t nr, float* dst) {
  conv_table().conv_pack_panels(s, k0, kc, j0, nc, nr, dst);
}
void f32_conv_fill_padded(const ConvGeom& g, const float* plane, float* pad) { conv_table().conv_fill_padded(g, plane, pad); }
void f32_pool_window(const ConvGeom& g, const PoolWindow& w, const float* x, float* y) { conv_table().pool_window(g, w, x, y); }
void f32_winograd_input(const WinogradInput& in) { conv_table().winograd_input(in); }
void f32_winograd_output(const float* m, size_t ms, int64_t n, float bias, bool relu, float* top, float* bottom,
                         const float* rtop, const float* rbottom) {
  conv_table().winograd_output(m, ms, n, bias, relu, top, bottom, rtop, rbottom);
}

// A product's output columns split over the current thread pool: parts_for on its
// multiply-adds (weighted an eighth of a memory-bound element: kMinPartCost then stands for about
// 260K of them, tens of microseconds), at whole kGemmNRMultiple columns. compute(ws, cols) runs
// one part; a worker's part gets the pool's scratch for it (reserved by a plan) or its thread's
// buffer. Returns part 0's result (every part's is the same: it depends on the arguments only).
template <class Compute>
bool gemm_parallel(const GemmArgs& g, float* ws, Compute compute) {
  ThreadPool* pool = current_pool();
  const size_t units = (g.N + kGemmNRMultiple - 1) / kGemmNRMultiple;
  const double macs = double(g.M) * double(g.N) * double(g.K) / 8;
  const size_t parts = parts_for(pool, int64_t(units), macs > 1e18 ? int64_t(1e18) : int64_t(macs));
  if (parts <= 1) return compute(ws, GemmColumns{});
  const size_t need = gemm_workspace_floats(g.M, g.N, g.K);
  bool tiles = false;
  parallel_for(parts, [&](size_t part, size_t slot) {
    const GemmColumns cols{units * part / parts * kGemmNRMultiple, units * (part + 1) / parts * kGemmNRMultiple};
    float* w = ws;
    if (slot != 0)
      w = pool->slot_scratch_bytes() >= need * sizeof(float) ? static_cast<float*>(pool->slot_scratch(slot))
                                                              : thread_workspace(need);
    const bool r = compute(w, cols);
    if (part == 0) tiles = r;
  });
  return tiles;
}

// The public products' common frame: empty products, K = 0 (C zeroed unless accumulating,
// then the epilogue), the thread's workspace when none is given, the columns split over the
// thread pool, and the epilogue as passes when `compute` (gemm_compute or its prepacked form)
// did not apply it in the tiles.
template <class Compute>
void gemm_frame(const GemmArgs& g, Compute compute) {
  if (g.M == 0 || g.N == 0) return;
  const KernelTable& t = table();
  if (g.K == 0) {
    if (!g.accumulate)
      for (size_t i = 0; i < g.M; ++i) std::memset(g.c + i * g.ldc, 0, g.N * sizeof(float));
  } else {
    float* ws = g.workspace ? g.workspace : thread_workspace(gemm_workspace_floats(g.M, g.N, g.K));
    if (gemm_parallel(g, ws, [&](float* w, GemmColumns cols) { return compute(t, w, cols); })) return;
  }
  gemm_epilogue(g, t);
}

void f32_gemm(const GemmArgs& g, ArithmeticMode) {
  gemm_frame(g, [&](const KernelTable& t, float* ws, GemmColumns cols) { return gemm_compute(g, t, ws, cols); });
}

void gemm_pack_a(const GemmArgs& g, float* packed) { gemm_pack_a_for(table(), g, packed); }

bool gemm_image_rows(const GemmArgs& g, const float* const* rows, GemmPanelOffFn panel_off, const void* ctx) {
  const KernelTable& t = table();
  const bool other_epilogue =
      (g.bias || g.row_bias || g.addend || g.activation != UnaryOp::Identity) && !gemm_tile_epilogue(g);
  if (g.K == 0 || g.packed_a == nullptr || g.pack_b == nullptr || g.workspace == nullptr || other_epilogue ||
      !gemm_packed_a_matches(g.packed_a, t.gemm.mr, g.M, g.K))
    return false;
  if (g.M > 0 && g.N > 0 && g.K > 0)
    gemm_parallel(g, g.workspace, [&](float* w, GemmColumns cols) {
      gemm_rows_blocked(g, t.gemm, w, rows, panel_off, ctx, cols);
      return true;
    });
  return true;
}

size_t gemm_active_nr() { return table().gemm.nr; }
bool gemm_packed_a_fits(const float* packed, size_t M, size_t K) {
  return gemm_packed_a_matches(packed, table().gemm.mr, M, K);
}
void gemm_from_panels(const GemmArgs& g, const float* panels) {
  if (g.M == 0 || g.N == 0 || g.K == 0) return;
  const KernelTable& t = table();
  gemm_parallel(g, g.workspace, [&](float* w, GemmColumns cols) {
    gemm_blocked(g, t.gemm, w, panels, t.gemm.nr, cols);
    return true;
  });
}

void gemm_pack_b(const float* b, ptrdiff_t b_rs, ptrdiff_t b_cs, size_t K, size_t N, float* packed) {
  gemm_pack_b_for(table(), b, b_rs, b_cs, K, N, packed);
}

void f32_gemm_prepacked(const GemmArgs& g, const float* packed, ArithmeticMode) {
  gemm_frame(g, [&](const KernelTable& t, float* ws, GemmColumns cols) {
    return gemm_compute_prepacked(g, t, packed, ws, cols);
  });
}

void f16_to_f32(const uint16_t* x, float* y, size_t n) { table().f16_to_f32(x, y, n); }
void f32_to_f16(const float* x, uint16_t* y, size_t n) { table().f32_to_f16(x, y, n); }

}  // namespace om::kernels
