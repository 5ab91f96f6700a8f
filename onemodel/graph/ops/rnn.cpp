// Recurrent operators: LSTM, GRU and RNN with ONNX semantics (direction forward / reverse /
// bidirectional, layout 0 and 1, optional sequence_lens, initial states, GRU's
// linear_before_reset, default activations only). See docs/operators.md.
//
// One kernel serves both modes, because its order of operations is fixed (docs/exactness.md);
// Fast sessions only take the faster sigmoid and tanh forms (kernels::RecurrentStep::fast):
//   - the input projection of every time step is one GEMM, X [rows, I] x W^T -> proj, each
//     element the fma chain over k = 0..I-1;
//   - per step the recurrent GEMM continues that same chain over k = 0..H-1 (accumulate = true,
//     on R pre-packed once per session by the plan for one direction, else packed by each call
//     in scratch): pre = chain(x, W) then chain(h, R); on the step's projection rows in place
//     when every item runs all T steps, else on a copy gathered per item (the same chain);
//   - then, per item, one pass of kernels::f32_recurrent_step over the hidden elements does the
//     gate work below (GRU with linear_before_reset = 0 takes two, around the r * h chain): the
//     bias, (Wb + Rb) rounded once, is added, then the library sigmoid / tanh;
//   - LSTM: c = f*c' + i*g (two products, one sum), h = o * tanh(c);
//   - GRU: z, r as above; linear_before_reset = 1: n = tanh((chain(x, Wh) + Wbh) + r * (chain(h, Rh)
//     + Rbh)); = 0: n = tanh(chain(x, Wh) then chain(r*h, Rh), + (Wbh + Rbh)); h = (1 - z)*n + z*h';
//   - RNN: h = tanh(chain(x, W) then chain(h, R) + (Wb + Rb)).
// Every GEMM keeps its per-element fma chain on every ISA and path, so results are identical
// across ISAs. All buffers live in the plan's scratch: running allocates nothing.
#include <cstring>

#include "onemodel/graph/ops/op_util.h"
#include "onemodel/kernels/kernels.h"

namespace om::graph::ops {
namespace {

// The operator (LSTM, GRU, RNN), bound at registration.
enum class Cell { Lstm, Gru, Rnn };

int64_t gates_of(Cell c) { return c == Cell::Lstm ? 4 : c == Cell::Gru ? 3 : 1; }

// Input positions (ONNX): X, W, R, B, sequence_lens, initial_h, initial_c (LSTM), P (LSTM).
constexpr size_t kX = 0, kW = 1, kR = 2, kB = 3, kSeq = 4, kH0 = 5, kC0 = 6, kP = 7;

struct Dims {
  int64_t T = 0, B = 0, I = 0, H = 0, G = 1, D = 1;
  bool batch_major = false;  // layout = 1
  bool reverse = false;      // direction = reverse (one direction)
};

int directions_of(const Node& node) {
  const Attribute* a = node.attr("direction");
  if (!a || a->s.empty() || a->s == "forward") return 1;
  if (a->s == "reverse") return -1;
  if (a->s == "bidirectional") return 2;
  return 0;
}

// The activations the kernel implements: ONNX's defaults, given explicitly or not.
bool default_activations(const Node& node, Cell cell, int64_t D, std::string* got) {
  const Attribute* a = node.attr("activations");
  if (!a || a->strings.empty()) return true;
  static const char* const lstm[] = {"Sigmoid", "Tanh", "Tanh"};
  static const char* const gru[] = {"Sigmoid", "Tanh"};
  static const char* const rnn[] = {"Tanh"};
  const char* const* want = cell == Cell::Lstm ? lstm : cell == Cell::Gru ? gru : rnn;
  const size_t per = cell == Cell::Lstm ? 3 : cell == Cell::Gru ? 2 : 1;
  bool ok = a->strings.size() == per * size_t(D);
  for (size_t i = 0; ok && i < a->strings.size(); ++i) ok = a->strings[i] == want[i % per];
  for (size_t i = 0; i < a->strings.size(); ++i) *got += (i ? "," : "") + a->strings[i];
  return ok;
}

Status require_shape(const InferContext& ctx, size_t i, const char* name, const std::vector<int64_t>& want) {
  const ValueDesc* v = ctx.input(i);
  if (!v) return Status::ok();
  if (v->dtype != DType::f32)
    return ctx.error(ErrorKind::DTypeMismatch, msg(name, " must be f32, got ", dtype_name(v->dtype)));
  if (v->shape != want)
    return ctx.error(ErrorKind::ShapeMismatch, msg(name, " must be ", shape_str(want), ", got ", shape_str(v->shape)));
  return Status::ok();
}

Status rnn_dims(const InferContext& ctx, Cell cell, Dims* d) {
  const Node& node = ctx.node;
  d->G = gates_of(cell);
  const int dir = directions_of(node);
  if (dir == 0)
    return ctx.error(ErrorKind::InvalidArgument,
                     msg("direction '", node.attr("direction")->s, "' is not forward, reverse or bidirectional"));
  d->D = dir == 2 ? 2 : 1;
  d->reverse = dir == -1;
  const int64_t layout = node.attr_int("layout", 0);
  if (layout != 0 && layout != 1) return ctx.error(ErrorKind::InvalidArgument, msg("layout must be 0 or 1, got ", layout));
  d->batch_major = layout == 1;
  std::string acts;
  if (!default_activations(node, cell, d->D, &acts))
    return ctx.error(ErrorKind::Unsupported, msg("activations [", acts, "] are not supported; only the defaults (",
                                                 cell == Cell::Lstm ? "Sigmoid,Tanh,Tanh" : cell == Cell::Gru ? "Sigmoid,Tanh" : "Tanh",
                                                 " per direction) are"));
  if (node.attr("clip")) return ctx.error(ErrorKind::Unsupported, "the clip attribute is not supported; remove it");
  if (cell == Cell::Lstm && node.attr_int("input_forget", 0) != 0)
    return ctx.error(ErrorKind::Unsupported, "input_forget = 1 is not supported; use 0");
  const int64_t lbr = cell == Cell::Gru ? node.attr_int("linear_before_reset", 0) : 0;
  if (lbr != 0 && lbr != 1) return ctx.error(ErrorKind::InvalidArgument, msg("linear_before_reset must be 0 or 1, got ", lbr));

  const ValueDesc* x = ctx.input(kX);
  const ValueDesc* w = ctx.input(kW);
  const ValueDesc* r = ctx.input(kR);
  if (!x || !w || !r) return ctx.error(ErrorKind::InvalidArgument, "inputs X, W and R are required");
  if (x->dtype != DType::f32 || w->dtype != DType::f32 || r->dtype != DType::f32)
    return ctx.error(ErrorKind::DTypeMismatch, "X, W and R must be f32");
  if (x->shape.size() != 3) return ctx.error(ErrorKind::ShapeMismatch, msg("X must be 3-D, got ", shape_str(x->shape)));
  if (w->shape.size() != 3)
    return ctx.error(ErrorKind::ShapeMismatch, msg("W must be 3-D [num_directions, ", d->G, "*hidden_size, input_size], got ",
                                                   shape_str(w->shape)));
  if (r->shape.size() != 3) return ctx.error(ErrorKind::ShapeMismatch, msg("R must be 3-D, got ", shape_str(r->shape)));
  d->T = d->batch_major ? x->shape[1] : x->shape[0];
  d->B = d->batch_major ? x->shape[0] : x->shape[1];
  d->I = x->shape[2];
  d->H = node.attr_int("hidden_size", r->shape[2]);
  int64_t gh = 0;
  if (!checked_mul(d->G, d->H, &gh)) return ctx.error(ErrorKind::InvalidArgument, msg("hidden_size ", d->H, " is too large"));
  if (w->shape[0] != d->D || w->shape[1] != gh || w->shape[2] != d->I)
    return ctx.error(ErrorKind::ShapeMismatch,
                     msg("W ", shape_str(w->shape), " does not match hidden_size = ", d->H, ", ", d->D, " direction(s) and input size ",
                         d->I, ": expected [", d->D, ", ", gh, ", ", d->I, "]"));
  OM_TRY(require_shape(ctx, kR, "R", {d->D, gh, d->H}));
  OM_TRY(require_shape(ctx, kB, "B", {d->D, 2 * gh}));
  if (const ValueDesc* s = ctx.input(kSeq)) {
    if (s->dtype != DType::i32)
      return ctx.error(ErrorKind::DTypeMismatch, msg("sequence_lens must be i32 (int32), got ", dtype_name(s->dtype)));
    if (s->shape != std::vector<int64_t>{d->B})
      return ctx.error(ErrorKind::ShapeMismatch, msg("sequence_lens must be [", d->B, "], got ", shape_str(s->shape)));
    if (s->data)
      for (int64_t b = 0; b < d->B; ++b) {
        const int32_t len = static_cast<const int32_t*>(s->data)[b];
        if (len < 0 || len > d->T)
          return ctx.error(ErrorKind::InvalidArgument, msg("sequence_lens[", b, "] = ", len, " is outside [0, ", d->T, "]"));
      }
  }
  const std::vector<int64_t> state = d->batch_major ? std::vector<int64_t>{d->B, d->D, d->H} : std::vector<int64_t>{d->D, d->B, d->H};
  OM_TRY(require_shape(ctx, kH0, "initial_h", state));
  if (cell == Cell::Lstm) OM_TRY(require_shape(ctx, kC0, "initial_c", state));
  if (cell == Cell::Lstm) OM_TRY(require_shape(ctx, kP, "P (peepholes)", {d->D, 3 * d->H}));
  // Every buffer the kernel touches stays within the element limit.
  int64_t n = 0;
  if (!checked_mul(d->T, d->B, &n) || !checked_mul(n, gh, &n) || !checked_mul(n, d->D, &n) || !checked_mul(d->H, gh, &n))
    return ctx.error(ErrorKind::InvalidArgument, msg("sizes T = ", d->T, ", batch = ", d->B, ", hidden_size = ", d->H, " are too large"));
  return Status::ok();
}

template <Cell C>
Status infer_rnn(InferContext& ctx) {
  Dims d;
  OM_TRY(rnn_dims(ctx, C, &d));
  const size_t outs = ctx.node.outputs.size();
  const size_t max_outs = C == Cell::Lstm ? 3 : 2;
  if (outs > max_outs) return ctx.error(ErrorKind::InvalidArgument, msg("has ", outs, " outputs; it has at most ", max_outs));
  const std::vector<int64_t> state = d.batch_major ? std::vector<int64_t>{d.B, d.D, d.H} : std::vector<int64_t>{d.D, d.B, d.H};
  const std::vector<int64_t> y = d.batch_major ? std::vector<int64_t>{d.B, d.T, d.D, d.H} : std::vector<int64_t>{d.T, d.D, d.B, d.H};
  for (size_t o = 0; o < outs; ++o) ctx.set_output(o, DType::f32, o == 0 ? y : state);
  return Status::ok();
}

// Scratch regions, in floats, each rounded up to 16 floats (64 bytes).
struct Scratch {
  size_t proj = 0, gates = 0, aux = 0, rh = 0, h = 0, c = 0, bias = 0, packed_r = 0, packed_w = 0, work = 0, total = 0;
};

size_t round16(size_t n) { return (n + 15) / 16 * 16; }

Scratch scratch_layout(const Dims& d) {
  Scratch s;
  const size_t T = size_t(d.T), B = size_t(d.B), H = size_t(d.H), G = size_t(d.G), I = size_t(d.I);
  size_t at = 0;
  auto take = [&](size_t floats) { const size_t off = at; at += round16(floats); return off; };
  s.proj = take(T * B * G * H);
  s.gates = take(B * G * H);
  s.aux = take(B * H);
  s.rh = take(B * H);
  s.h = take(B * H);
  s.c = take(B * H);
  s.bias = take(2 * G * H);
  s.packed_r = take(kernels::gemm_packed_b_floats(H, G * H));  // used when the plan did not pack R
  s.packed_w = take(kernels::gemm_packed_b_floats(I, G * H));  // a part of the batch, seq-major: W packed once
  const size_t rows = std::max<size_t>(T * B, B);
  s.work = take(kernels::gemm_workspace_floats(rows + 8, G * H + 16, std::max(I, H)));
  s.total = at;
  return s;
}

template <Cell C>
size_t rnn_scratch(const InferContext& ctx) {
  Dims d;
  if (!rnn_dims(ctx, C, &d).is_ok()) return 0;
  return scratch_layout(d).total * sizeof(float);
}

struct Step {
  const KernelContext* k;
  Dims d;
  Cell cell;
  bool lbr = false;
  Scratch s;
  float* base = nullptr;
  float* at(size_t off) const { return base + off; }
};

// proj[row] = X[row] x W_d^T for the rows of items [b0, b1), rows in X's order. Each element is
// the fma chain over I from 0 whatever rows one GEMM covers, so the whole batch stays one GEMM
// over all T*B rows and a sub-range takes its contiguous rows: per time step t*B+b0..t*B+b1
// (seq-major), or b0*T..b1*T at once (batch-major).
void input_projection(const Step& st, int64_t dir, float* proj, int64_t b0, int64_t b1) {
  const KernelContext& k = *st.k;
  const Dims& d = st.d;
  const int64_t GH = d.G * d.H;
  const float* X = k.in(kX).as<const float>();
  const MatRef w{k.in(kW).as<const float>() + dir * GH * d.I, 1, d.I};
  auto rows = [&](int64_t r0, int64_t n) {  // rows [r0, r0 + n) of X and proj
    if (n == 0) return;
    if (d.I == 0) {
      std::memset(proj + r0 * GH, 0, size_t(n * GH) * sizeof(float));
      return;
    }
    kernels::f32_gemm(gemm_args(size_t(n), size_t(GH), size_t(d.I), MatRef{X + r0 * d.I, d.I, 1}, w, proj + r0 * GH, size_t(GH),
                                st.at(st.s.work)),
                      k.mode);
  };
  if (b0 == 0 && b1 == d.B) rows(0, d.T * d.B);
  else if (d.batch_major) rows(b0 * d.T, (b1 - b0) * d.T);
  else if (d.I == 0 || b1 == b0)
    for (int64_t t = 0; t < d.T; ++t) rows(t * d.B + b0, b1 - b0);
  else {
    // One GEMM per time step over this part's items: W packed once for all of them (the same
    // bits as packing it per product).
    float* packed = st.at(st.s.packed_w);
    kernels::gemm_pack_b(w.p, w.rs, w.cs, size_t(d.I), size_t(GH), packed);
    for (int64_t t = 0; t < d.T; ++t) {
      const int64_t r0 = t * d.B + b0;
      kernels::f32_gemm_prepacked(gemm_args(size_t(b1 - b0), size_t(GH), size_t(d.I), MatRef{X + r0 * d.I, d.I, 1}, w,
                                            proj + r0 * GH, size_t(GH), st.at(st.s.work)),
                                  packed, k.mode);
    }
  }
}

// c[M, N] (+)= h[M, H] x packed (chain continued when accumulate), M the call's batch items.
void recurrent(const Step& st, size_t M, const float* h, const float* packed, size_t N, float* c, size_t ldc, bool accumulate) {
  kernels::GemmArgs g;
  g.M = M;
  g.N = N;
  g.K = size_t(st.d.H);
  g.a = h;
  g.a_rs = st.d.H;
  g.a_cs = 1;
  g.c = c;
  g.ldc = ldc;
  g.accumulate = accumulate;
  g.workspace = st.at(st.s.work);
  if (g.M == 0) return;
  kernels::f32_gemm_prepacked(g, packed, st.k->mode);
}

// One direction for batch items [b0, b1): their rows of every scratch buffer (indexed by the
// item, as proj by X's row), their Y, Y_h and Y_c.
Status run_direction(const Step& st, int64_t dir, bool reverse, int64_t b0, int64_t b1) {
  const KernelContext& k = *st.k;
  const Dims& d = st.d;
  const int64_t T = d.T, B = d.B, H = d.H, G = d.G, GH = G * H, D = d.D;
  float* proj = st.at(st.s.proj);
  float* gates = st.at(st.s.gates);
  float* aux = st.at(st.s.aux);
  float* rh = st.at(st.s.rh);
  float* h = st.at(st.s.h);
  float* c = st.at(st.s.c);
  float* bias = st.at(st.s.bias);
  const int32_t* lens = k.has_input(kSeq) ? k.in(kSeq).as<const int32_t>() : nullptr;
  const float* peep = st.cell == Cell::Lstm && k.has_input(kP) ? k.in(kP).as<const float>() + dir * 3 * H : nullptr;

  input_projection(st, dir, proj, b0, b1);
  // Bias: (Wb + Rb) per gate, one rounding; GRU with linear_before_reset keeps Wbh and Rbh apart.
  const float* bb = k.has_input(kB) ? k.in(kB).as<const float>() + dir * 2 * GH : nullptr;
  for (int64_t j = 0; j < GH; ++j) {
    const bool apart = st.cell == Cell::Gru && st.lbr && j >= 2 * H;
    bias[j] = bb ? (apart ? bb[j] : bb[j] + bb[GH + j]) : 0.0f;
    bias[GH + j] = bb && apart ? bb[GH + j] : 0.0f;
  }
  // R_d^T as the recurrent GEMM's right operand, [H, G*H] with B[k, n] = R[n, k]: packed once per
  // session by the plan (one direction), else packed here by every call (the same bits).
  const float* R = k.in(kR).as<const float>() + dir * GH * H;
  const float* pr = k.packed_b && D == 1 ? k.packed_b : st.at(st.s.packed_r);
  if (H > 0 && pr != k.packed_b) kernels::gemm_pack_b(R, 1, H, size_t(H), size_t(GH), st.at(st.s.packed_r));
  // Initial states.
  auto state_off = [&](int64_t b) { return d.batch_major ? (b * D + dir) * H : (dir * B + b) * H; };
  for (int64_t b = b0; b < b1; ++b) {
    if (k.has_input(kH0)) std::memcpy(h + b * H, k.in(kH0).as<const float>() + state_off(b), size_t(H) * sizeof(float));
    else std::memset(h + b * H, 0, size_t(H) * sizeof(float));
    if (st.cell == Cell::Lstm) {
      if (k.has_input(kC0)) std::memcpy(c + b * H, k.in(kC0).as<const float>() + state_off(b), size_t(H) * sizeof(float));
      else std::memset(c + b * H, 0, size_t(H) * sizeof(float));
    }
  }
  float* Y = k.num_outputs > 0 ? k.out(0).as<float>() : nullptr;
  auto y_off = [&](int64_t t, int64_t b) { return d.batch_major ? ((b * T + t) * D + dir) * H : ((t * D + dir) * B + b) * H; };
  auto len_of = [&](int64_t b) { return lens ? int64_t(lens[b]) : T; };
  auto row_of = [&](int64_t b, int64_t t) { return d.batch_major ? b * T + t : t * B + b; };
  // When every item runs all T steps, each step reads one time index for all of them, whose
  // projection rows are evenly spaced: the recurrent GEMM continues their chains there in place
  // (the same chain as on a gathered copy). Otherwise each item's row is gathered into `gates`.
  bool in_place = true;
  for (int64_t b = b0; b < b1; ++b) in_place = in_place && len_of(b) == T;
  const int64_t ldg = in_place ? (d.batch_major ? T : 1) * GH : GH;  // floats between items' gate rows

  for (int64_t s = 0; s < T; ++s) {
    float* g0 = gates + b0 * GH;  // item b0's gate row; item b's is ldg * (b - b0) further
    if (in_place) g0 = proj + row_of(b0, reverse ? T - 1 - s : s) * GH;
    else
      for (int64_t b = b0; b < b1; ++b) {  // each sequence has its own time index when reversed
        const int64_t len = len_of(b);
        if (s >= len) std::memset(gates + b * GH, 0, size_t(GH) * sizeof(float));
        else std::memcpy(gates + b * GH, proj + row_of(b, reverse ? len - 1 - s : s) * GH, size_t(GH) * sizeof(float));
      }
    auto gates_of_item = [&](int64_t b) { return g0 + (b - b0) * ldg; };
    // GRU: the h gate's recurrent chain starts from +0 (linear_before_reset = 1: it is kept apart
    // and multiplied by r; = 0: this column block is discarded and recomputed from r * h below).
    if (st.cell == Cell::Gru)
      for (int64_t b = b0; b < b1; ++b) {
        float* gr = gates_of_item(b);
        std::memcpy(aux + b * H, gr + 2 * H, size_t(H) * sizeof(float));  // the h gate's input projection
        std::memset(gr + 2 * H, 0, size_t(H) * sizeof(float));
      }
    if (H > 0) recurrent(st, size_t(b1 - b0), h + b0 * H, pr, size_t(GH), g0, size_t(ldg), true);
    // The gate work after the chains, one kernels::f32_recurrent_step pass per item.
    kernels::RecurrentStep rs;
    rs.fast = k.mode == ArithmeticMode::Fast;
    rs.n = size_t(H);
    rs.bias = bias;
    rs.peep = peep;
    rs.rec_bias = bias + GH + 2 * H;
    if (st.cell == Cell::Gru && !st.lbr) {  // z and r * h of every item, then the h gate's chain over r * h
      rs.form = kernels::RecurrentForm::GruGates;
      for (int64_t b = b0; b < b1; ++b) {
        rs.gates = gates_of_item(b);
        rs.h = h + b * H;
        rs.rh = rh + b * H;
        kernels::f32_recurrent_step(rs);
      }
      if (H > 0 && b1 > b0) {
        kernels::GemmArgs g = gemm_args(size_t(b1 - b0), size_t(H), size_t(H), MatRef{rh + b0 * H, H, 1},
                                        MatRef{R + 2 * H * H, 1, H}, aux + b0 * H, size_t(H), st.at(st.s.work));
        g.accumulate = true;
        kernels::f32_gemm(g, k.mode);
      }
    }
    rs.form = st.cell == Cell::Lstm ? kernels::RecurrentForm::Lstm
              : st.cell == Cell::Rnn ? kernels::RecurrentForm::Rnn
              : st.lbr               ? kernels::RecurrentForm::GruLinearBeforeReset
                                     : kernels::RecurrentForm::GruHidden;
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t len = len_of(b);
      if (s >= len) continue;  // the state holds; Y stays 0 there
      rs.gates = gates_of_item(b);
      rs.x_h = aux + b * H;
      rs.c = c + b * H;
      rs.h = h + b * H;
      rs.y = Y ? Y + y_off(reverse ? len - 1 - s : s, b) : nullptr;
      kernels::f32_recurrent_step(rs);
    }
  }
  // Final states.
  for (size_t o = 1; o < k.num_outputs; ++o) {
    float* out = k.out(o).as<float>();
    const float* src = o == 1 ? h : c;
    for (int64_t b = b0; b < b1; ++b) {
      // A sequence of length 0 has final states 0, not its initial states (as ONNX Runtime does).
      if (len_of(b) == 0) std::memset(out + state_off(b), 0, size_t(H) * sizeof(float));
      else std::memcpy(out + state_off(b), src + b * H, size_t(H) * sizeof(float));
    }
  }
  return Status::ok();
}

// The recurrent operators' record: the sizes, layout and direction, GRU's linear_before_reset.
// Work unit: the batch item (both directions of it). Items' sequences are independent and every
// GEMM gives an element the same chain whatever rows it covers, so any range of items computes
// the same bits. Each range computes its own bias, packed R and projections in its scratch (on a
// thread pool every worker has a copy of its own).
struct RnnParams {
  Dims d;
  bool lbr = false;
};

template <Cell C>
Status prepare_rnn(const InferContext& ctx, Prepared& out) {
  RnnParams& p = out.record<RnnParams>();
  OM_TRY(rnn_dims(ctx, C, &p.d));
  p.lbr = C == Cell::Gru && ctx.node.attr_int("linear_before_reset", 0) != 0;
  out.work = p.d.B;
  // The input and recurrent products of every step and direction.
  out.cost = product_cost(count_mul(count_mul(p.d.T, p.d.B), p.d.D), count_mul(p.d.G, p.d.H), p.d.I + p.d.H);
  return Status::ok();
}

template <Cell C>
Status rnn_kernel(const KernelContext& k) {
  const RnnParams& p = k.params<RnnParams>();
  Step st;
  st.k = &k;
  st.cell = C;
  st.lbr = p.lbr;
  st.d = p.d;
  st.s = scratch_layout(st.d);
  st.base = static_cast<float*>(k.scratch);
  const int64_t b0 = k.begin, b1 = k.end;
  if (k.has_input(kSeq)) {
    const int32_t* lens = k.in(kSeq).as<const int32_t>();
    for (int64_t b = 0; b < st.d.B; ++b)
      if (lens[b] < 0 || lens[b] > st.d.T)
        return k.error(ErrorKind::InvalidArgument, msg("sequence_lens[", b, "] = ", lens[b], " is outside [0, ", st.d.T,
                                                       "] (the sequence length of X)"));
    if (k.num_outputs > 0) {  // Y past a sequence's end stays 0: this range's items only
      const Dims& d = st.d;
      float* Y = k.out(0).as<float>();
      if (d.batch_major)
        std::memset(Y + b0 * d.T * d.D * d.H, 0, size_t((b1 - b0) * d.T * d.D * d.H) * sizeof(float));
      else
        for (int64_t t = 0; t < d.T * d.D; ++t) std::memset(Y + (t * d.B + b0) * d.H, 0, size_t((b1 - b0) * d.H) * sizeof(float));
    }
  }
  if (st.d.D == 2) {
    OM_TRY(run_direction(st, 0, false, b0, b1));
    return run_direction(st, 1, true, b0, b1);
  }
  return run_direction(st, 0, st.d.reverse, b0, b1);
}

// The plan packs R (one direction) as the recurrent GEMM's right-hand operand: B[k, n] = R[0, n, k].
bool rnn_packable_r(const Node& node, const std::vector<const ValueDesc*>& inputs, PackableB* out) {
  if (inputs.size() < 3 || !inputs[kR] || inputs[kR]->dtype != DType::f32 || inputs[kR]->shape.size() != 3) return false;
  const std::vector<int64_t>& r = inputs[kR]->shape;
  if (r[0] != 1 || directions_of(node) == 2) return false;
  out->input = kR;
  out->K = size_t(r[2]);
  out->N = size_t(r[1]);
  out->rs = 1;
  out->cs = r[2];
  return true;
}

constexpr AttrSpec kRnnAttrs[] = {{"hidden_size", AttrKind::PositiveInt}, {"direction", AttrKind::String},
                                  {"layout", AttrKind::Int},              {"activations", AttrKind::Strings},
                                  {"activation_alpha", AttrKind::Floats}, {"activation_beta", AttrKind::Floats},
                                  {"clip", AttrKind::Float}};
constexpr AttrSpec kLstmAttrs[] = {{"hidden_size", AttrKind::PositiveInt}, {"direction", AttrKind::String},
                                   {"layout", AttrKind::Int},              {"activations", AttrKind::Strings},
                                   {"activation_alpha", AttrKind::Floats}, {"activation_beta", AttrKind::Floats},
                                   {"clip", AttrKind::Float},              {"input_forget", AttrKind::Int}};
constexpr AttrSpec kGruAttrs[] = {{"hidden_size", AttrKind::PositiveInt}, {"direction", AttrKind::String},
                                  {"layout", AttrKind::Int},              {"activations", AttrKind::Strings},
                                  {"activation_alpha", AttrKind::Floats}, {"activation_beta", AttrKind::Floats},
                                  {"clip", AttrKind::Float},              {"linear_before_reset", AttrKind::Int}};

constexpr OpDef kOps[] = {
    op("LSTM").inputs(3, 8).attributes(kLstmAttrs).shapes(infer_rnn<Cell::Lstm>).prepared(prepare_rnn<Cell::Lstm>)
        .kernel(rnn_kernel<Cell::Lstm>).with_scratch(rnn_scratch<Cell::Lstm>)
        .with_prepack(rnn_packable_r)
        .doc("f32; direction, layout 0/1, sequence_lens (i32), initial_h/c, outputs Y, Y_h, Y_c; peepholes P (added after the bias, one "
             "product and one rounding each); default activations only (no clip, input_forget); exact: fixed fma chain per gate "
             "(input then recurrent), bias after, library sigmoid/tanh"),
    op("GRU").inputs(3, 6).attributes(kGruAttrs).shapes(infer_rnn<Cell::Gru>).prepared(prepare_rnn<Cell::Gru>)
        .kernel(rnn_kernel<Cell::Gru>).with_scratch(rnn_scratch<Cell::Gru>)
        .with_prepack(rnn_packable_r)
        .doc("f32; as LSTM, linear_before_reset 0 and 1, outputs Y, Y_h; exact: fixed fma chain per gate, bias after"),
    op("RNN").inputs(3, 6).attributes(kRnnAttrs).shapes(infer_rnn<Cell::Rnn>).prepared(prepare_rnn<Cell::Rnn>)
        .kernel(rnn_kernel<Cell::Rnn>).with_scratch(rnn_scratch<Cell::Rnn>)
        .with_prepack(rnn_packable_r)
        .doc("f32; as LSTM, activation Tanh only, outputs Y, Y_h; exact: fixed fma chain, bias after"),
};

}  // namespace

}  // namespace om::graph::ops

// The family's operators, one symbol each (onemodel/op_list.h).
#define OM_RNN_OPS(X) X(LSTM) X(GRU) X(RNN)
OM_OP_FAMILY_TABLE(rnn, OM_RNN_OPS)
