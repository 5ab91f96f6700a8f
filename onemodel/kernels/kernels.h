// The kernel library shared by the eager layer and the graph runtime. Every entry point has a
// scalar reference (kernels/scalar) and, where it pays, AVX2+FMA (kernels/avx2), AVX-512F
// (kernels/avx512, GEMM only) and NEON (kernels/neon) versions; the ISA is chosen once, at first use. All pointers may be unaligned.
//
// Exact mode contract (see docs/exactness.md): results depend only on the input values, never
// on ISA, tile sizes or alignment.
//   - dot products / GEMM: C[i,j] = fma chain over k = 0..K-1 in order, starting from 0 (or
//     from C[i,j] when accumulating); bias then activation applied after the full chain.
//   - sums of a sequence x[0..n): 8 lane partial sums (lane l takes x[k], k = l mod 8, for the
//     first 8*floor(n/8) elements, added in order), combined as
//     ((l0+l4)+(l2+l6))+((l1+l5)+(l3+l7)), then the tail added in order.
//   - exp, log, tanh, erf, sigmoid, gelu: the library's own functions (kernels/exact/math.h),
//     built from +, -, *, fma and bit operations only.
#pragma once
#include <cstddef>
#include <cstdint>

#include "onemodel/kernels/arithmetic_mode.h"

namespace om::kernels {

enum class Isa { Scalar, Avx2, Neon, Avx512 };

// Chosen once at first use: ONEMODEL_ISA=scalar|avx2|avx512|neon overrides, else CPUID+XGETBV on
// x86 (AVX-512F with OS-enabled ZMM state, else AVX2 and FMA with OS-enabled YMM state), NEON on
// AArch64. The AVX-512 table has its own GEMM kernels and 16-lane transcendental maps and
// elementwise chains; it reuses the AVX2 reductions and the other elementwise kernels.
Isa active_isa();
const char* isa_name(Isa isa);
// For tests and benchmarks: run subsequent kernel calls on `isa` (must be supported here).
// Returns false when the machine cannot run it.
bool force_isa(Isa isa);
bool isa_supported(Isa isa);

// ---- elementwise ----
enum class BinaryOp { Add, Sub, Mul, Div, Max, Min, Pow };
// y[i] = a[i*a_step] op b[i*b_step]; a_step and b_step are 0 (scalar broadcast) or 1.
void f32_binary(BinaryOp op, const float* a, size_t a_step, const float* b, size_t b_step,
                float* y, size_t n);

enum class UnaryOp {
  Identity, Neg, Relu, Sigmoid, Tanh, GeluErf, GeluTanh, Exp, Log, Erf, Sqrt, Abs, Reciprocal,
};
// Same bits in Fast and Exact mode: transcendental functions are always the library's own.
void f32_unary(UnaryOp op, const float* x, float* y, size_t n);

// A chain of elementwise steps over one f32 tensor (com.onemodel FusedElementwise,
// graph/ops/elementwise_chain.h), evaluated in one pass: value 0 is x, value k the result of step
// k - 1, the last step's value is y. A step's operands a and b are value indices, or
// kChainConstant (its constant c0) or kChainNone (a one-operand step's b). Every step rounds as
// the node it replaces: Add Sub Mul Div as f32_binary, Relu Sigmoid Tanh as f32_unary, Clip
// (c0, c1) as v < c0 ? c0 : v then > c1 ? c1 : it, LeakyRelu v < 0 ? c0 * v : v, HardSigmoid
// clamp01(c0 * v + c1), HardSwish v * clamp01(v * (1/6) + 0.5), clamp01(u) = u < 1 ? (u > 0 ?
// u : 0) : 1, Max and Min as the variadic Max/Min nodes fold two operands (a < b ? b : a, resp.
// b < a ? b : a; the default NaN when either is NaN). The same bits on every ISA; y may be x.
enum class ChainOp : uint8_t { Add, Sub, Mul, Div, Relu, Sigmoid, Tanh, Clip, LeakyRelu, HardSigmoid, HardSwish, Max, Min, Count };
constexpr int kChainMaxSteps = 16;
constexpr int32_t kChainConstant = -1, kChainNone = -2;
constexpr bool chain_op_binary(ChainOp op) { return op <= ChainOp::Div || op == ChainOp::Max || op == ChainOp::Min; }
struct ChainStep {  // 12 bytes: a FusedConv's record holds a program beside the convolution's
  ChainOp op;
  int8_t a, b;
  float c0, c1;
};
struct ChainProgram {
  int32_t steps = 0;
  ChainStep step[kChainMaxSteps];
};
void f32_chain(const ChainProgram& p, const float* x, float* y, size_t n);

// The gate work of one recurrent step for one batch item (graph/ops/rnn.cpp), after its GEMM
// chains, in one call over the hidden elements j < n (kernels/recurrent_step.h). Gate block k of `gates` is gates[k*n + j]
// (ONNX order: LSTM i o f c, GRU z r h, RNN one), and `bias` has the same layout. With
// u_k = gates[k*n + j] + bias[k*n + j] (one rounding), primes marking the state read before the
// step, and sigmoid / tanh the library's own (f32_unary's bits), each element does exactly:
//   Lstm:      ui = u_0 [then + Pi*c'],  uf = u_2 [then + Pf*c']  (peep = (Pi, Po, Pf) or null);
//              i = sigmoid(ui), f = sigmoid(uf), g = tanh(u_3);
//              c = f*c' + i*g (two products, one sum; no fma); uo = u_1 [then + Po*c];
//              h = sigmoid(uo) * tanh(c).
//   GruGates:  (linear_before_reset = 0, before the h gate's chain over r*h)
//              gates[j] = z = sigmoid(u_0); rh[j] = sigmoid(u_1) * h'.
//   GruHidden: (linear_before_reset = 0, after it; x_h = the h gate's chain over x then r*h)
//              hn = tanh(x_h + bias[2n + j]); z = gates[j]; h = (1 - z)*hn + z*h'.
//   GruLinearBeforeReset: z = sigmoid(u_0), r = sigmoid(u_1);
//              hn = tanh((x_h + bias[2n + j]) + r * (gates[2n + j] + rec_bias[j]))
//              (x_h = the h gate's input chain, rec_bias = Rbh); h = (1 - z)*hn + z*h'.
//   Rnn:       h = tanh(u_0).
// Every product and sum rounds on its own (no fma contraction), so the bits are the same on
// every ISA and in both modes. The new h also goes to y when y is not null.
enum class RecurrentForm : int32_t { Lstm, GruGates, GruHidden, GruLinearBeforeReset, Rnn };
struct RecurrentStep {
  RecurrentForm form = RecurrentForm::Lstm;
  size_t n = 0;
  float* gates = nullptr;
  const float* bias = nullptr;
  const float* peep = nullptr;      // Lstm: (Pi, Po, Pf), 3n floats, or null
  const float* x_h = nullptr;       // GruHidden, GruLinearBeforeReset
  const float* rec_bias = nullptr;  // GruLinearBeforeReset
  float* c = nullptr;               // Lstm: the cell state, updated
  float* h = nullptr;               // the hidden state: updated (GruGates: read)
  float* y = nullptr;               // optional copy of the new h
  float* rh = nullptr;              // GruGates: r * h'
  // The gate maps: the library's exact sigmoid and tanh (Exact sessions, and Fast ones unless
  // set), or their Fast forms (recurrent_step.h, FastGateMaps: about half the work, within a few
  // 1e-7 of the exact values). Either form gives the same bits on every ISA.
  bool fast = false;
};
void f32_recurrent_step(const RecurrentStep& s);

// Scalar forms of the library's own transcendental functions (identical bits to f32_unary).
float exp_f32(float x);
float log_f32(float x);
float tanh_f32(float x);
float erf_f32(float x);
float sigmoid_f32(float x);
// The f64 forms (math_f64.cpp): the same bits on every machine, within 1 ulp or so.
double exp_f64(double x);
double log_f64(double x);

// ---- reductions ----
// Sum of x[0..n). Exact mode: the fixed order described at the top of this file.
float f32_sum(const float* x, size_t n, ArithmeticMode mode);
// x viewed as [outer, n, inner] (contiguous); y[o, i] = sum over the middle axis, with each
// output summed as the sequence x[o, 0..n, i] (exact rule above).
void f32_reduce_sum(const float* x, size_t outer, size_t n, size_t inner, float* y, ArithmeticMode mode);
float f32_max(const float* x, size_t n);
// Row-wise softmax / log-softmax of x viewed as [rows, n] (graph kernels; f32 accumulation in
// the exact order above, exp from exp_f32). x and y must not overlap: the exact log-softmax
// reads x again after writing exp values into y.
void f32_softmax_rows(const float* x, float* y, size_t rows, size_t n, bool log, ArithmeticMode mode);

// ---- GEMM ----
// C[M,N] (row-major, leading dimension ldc) = A[M,K] * B[K,N] (+ C when accumulate) (+ bias[n])
// then the activation. A[i,k] = a[i*a_rs + k*a_cs], B[k,n] = b[k*b_rs + n*b_cs], so transposed
// operands need no copy. `workspace` (may be null: a thread-local buffer is used) must hold
// gemm_workspace_floats(M, N, K) floats; callers that must not allocate pass their own.
//
// Implicit B: when `pack_b` is given, b / b_rs / b_cs are ignored and B is never read in place;
// the driver calls pack_b(pack_b_ctx, k0, kc, j0, nc, nr, dst) to write rows [k0, k0 + kc) x
// columns [j0, j0 + nc) of B as nr-column panels (panel q holds columns j0 + q*nr .. as
// dst[q*kc*nr + k*nr + j], zero past column nc). A convolution writes them straight from the
// image, without materialising im2col. Same bits as the materialised B: the k order is the same.
using GemmPackBFn = void (*)(const void* ctx, size_t k0, size_t kc, size_t j0, size_t nc, size_t nr, float* dst);
struct GemmArgs {
  size_t M = 0, N = 0, K = 0;
  const float* a = nullptr;
  ptrdiff_t a_rs = 0, a_cs = 1;
  const float* b = nullptr;
  ptrdiff_t b_rs = 0, b_cs = 1;
  float* c = nullptr;
  size_t ldc = 0;
  bool accumulate = false;
  const float* bias = nullptr;      // length N, or null: added to every row
  const float* row_bias = nullptr;  // length M, or null: added to row i (a convolution's channel bias)
  // M x N, row stride ldc, or null: added to C's element (a convolution's residual input).
  const float* addend = nullptr;
  // After the complete chains: + bias[j], + row_bias[i], + addend[i * ldc + j] (one rounding
  // each), then the activation. A row bias, an addend and Relu are applied in the micro-kernels'
  // registers, the rest as passes over C; the bits are the same either way.
  UnaryOp activation = UnaryOp::Identity;
  float* workspace = nullptr;
  GemmPackBFn pack_b = nullptr;
  const void* pack_b_ctx = nullptr;
  // Optional: A already packed by gemm_pack_a (the same A, M and K), for a caller multiplying one
  // A with many B (a convolution's weights over its images and pixel tiles). Used when it was
  // packed for the active ISA's tile, else A is packed from `a` as usual: same bits either way.
  const float* packed_a = nullptr;
};
size_t gemm_workspace_floats(size_t M, size_t N, size_t K);
// Packs args.a (M, K, a, a_rs, a_cs) for the active ISA into `packed`, which must hold
// gemm_packed_a_floats(M, K) floats (the same count for every ISA).
size_t gemm_packed_a_floats(size_t M, size_t K);
void gemm_pack_a(const GemmArgs& args, float* packed);
void f32_gemm(const GemmArgs& args, ArithmeticMode mode);

// Pre-packed right-hand operand, for GEMMs that reuse the same B (a constant weight): pack once
// (at plan time), multiply many times without repacking. The packed layout belongs to the ISA
// active when packing; `f32_gemm_prepacked` checks it and must give exactly the bits f32_gemm
// gives for the same operands in the same mode (exact mode: the same fma chain per element).
// `packed` must hold gemm_packed_b_floats(K, N) floats (the same count for every ISA: a small
// header recording the panel layout, then the panels), 64-byte aligned for best speed. Packed
// for another ISA (e.g. after force_isa), it is still computed correctly, repacking block by
// block into the workspace. With args.workspace given (gemm_workspace_floats(M, N, K) floats)
// nothing is allocated. A buffer not packed for this K and N aborts with a message.
size_t gemm_packed_b_floats(size_t K, size_t N);
void gemm_pack_b(const float* b, ptrdiff_t b_rs, ptrdiff_t b_cs, size_t K, size_t N, float* packed);
// args.b / b_rs / b_cs are ignored; args.K and args.N must equal the packed ones.
void f32_gemm_prepacked(const GemmArgs& args, const float* packed, ArithmeticMode mode);

// ---- conversions ----
void f16_to_f32(const uint16_t* x, float* y, size_t n);
void f32_to_f16(const float* x, uint16_t* y, size_t n);  // round to nearest even

}  // namespace om::kernels
