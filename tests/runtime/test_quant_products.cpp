// The integer products through the Session (graph/ops/quant.cpp on kernels/q8_gemm.h) against
// element loops written here: ConvInteger and QLinearConv over groups (depthwise too),
// strides, dilations, pads and pixel counts around the 64-pixel blocks; MatMulInteger and
// QLinearMatMul with batch broadcasting and sizes around the tiles; all four u8/s8 pairs;
// per-channel, per-row and per-column zero points. Each runs with its weights as a constant
// (packed once by the plan) and as a graph input (packed per run), and rt::run checks every
// split of the work. One EXACT_HASH over all outputs compares machines and thread counts.
#include <doctest/doctest.h>

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <random>

#include "onemodel/kernels/kernels.h"
#include "runtime/runtime_helpers.h"

using namespace rt;
using g::Attribute;
using g::TensorData;
using om::DType;
using om::kernels::Isa;

namespace {

struct Bytes {
  std::vector<uint8_t> v;
  bool is_signed;
  int32_t at(size_t i) const { return is_signed ? int32_t(int8_t(v[i])) : int32_t(v[i]); }
};

Bytes random_bytes(size_t n, bool is_signed, std::mt19937& rng) {
  Bytes b{std::vector<uint8_t>(n), is_signed};
  for (auto& x : b.v) x = uint8_t(rng());
  return b;
}

TensorData bytes_tensor(const std::string& name, std::vector<int64_t> dims, const Bytes& b) {
  return TensorData::copy_of(name, b.is_signed ? DType::i8 : DType::u8, std::move(dims), b.v.data(), b.v.size());
}
Feed bytes_feed(const std::string& name, std::vector<int64_t> dims, const Bytes& b) {
  Feed f;
  f.name = name;
  f.dtype = b.is_signed ? DType::i8 : DType::u8;
  f.dims = std::move(dims);
  f.bytes = b.v;
  return f;
}

// QLinear's requantization as the operators document it.
int32_t requantize(int32_t acc, float s_in, float s_w, float s_y, int32_t zp, bool out_signed) {
  const float m = s_in * s_w / s_y;
  const float q = std::nearbyint(float(acc) * m);
  const int32_t lo = out_signed ? -128 : 0, hi = out_signed ? 127 : 255;
  if (q <= float(lo - zp)) return lo;
  if (q >= float(hi - zp)) return hi;
  return int32_t(q) + zp;
}

uint64_t hash_bytes(uint64_t h, const std::vector<uint8_t>& b) {
  for (uint8_t x : b) {
    h ^= x;
    h *= 0x100000001b3ull;
  }
  return h;
}

// The fused (Fast) outputs against the QDQ graph's (Exact): at most one step of ys apart, and
// such a last-step difference rare.
void check_within_one_step(om::Session& fast, om::Session& exact, const std::vector<Feed>& feeds, float ys) {
  const auto a = run(fast, feeds)[0].as<float>(), e = run(exact, feeds)[0].as<float>();
  REQUIRE(a.size() == e.size());
  size_t differ = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(std::fabs(a[i] - e[i]) <= ys * 1.001f);
    differ += a[i] != e[i];
  }
  CHECK(differ * 20 <= a.size());
}

struct ConvCase {
  int64_t N, C, H, W, M, group, k, stride, pad, dil;
};

}  // namespace

TEST_CASE("depthwise ConvInteger at the pads' edges: column pairs at stride 2, copied rows otherwise, extreme zero points, every ISA") {
  // Stride 2 pairs tap columns from an even input column: an odd left pad pairs taps (kw - 1, kw)
  // (tap -1 a zero weight) and puts whole words of padding before the image; an odd width leaves
  // one word of its last column and the padding. Left and right pads differ, so that the side
  // the pairing starts from is the left one; a row stride of 1 and 2, a row dilation of 2. Other
  // column strides pair rows, copied between rows of zero-point bytes: pads above and below of 0
  // to more than the kernel reaches, row dilations 1 and 2, column strides 1 and 3. The zero
  // points at both ends of each range. Each ISA against the element loop.
  struct Case {
    int64_t H, W, kH, kW, sH, sW, dH, pt, pl, pb, pr;
  };
  const Case cases[] = {{7, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1}, {6, 17, 3, 3, 2, 2, 1, 1, 1, 0, 2}, {5, 9, 3, 1, 1, 2, 1, 0, 1, 0, 0},
                        {5, 10, 2, 2, 2, 2, 1, 1, 1, 0, 0}, {6, 13, 3, 4, 1, 2, 2, 2, 3, 1, 2}, {4, 11, 1, 5, 1, 2, 1, 0, 3, 0, 4},
                        {5, 8, 3, 3, 2, 2, 1, 3, 3, 3, 3}, {3, 3, 3, 3, 2, 2, 1, 1, 2, 1, 0}, {9, 34, 3, 3, 2, 2, 1, 1, 1, 1, 1},
                        {6, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1}, {7, 9, 5, 3, 1, 1, 2, 2, 1, 4, 1},  {4, 10, 3, 3, 2, 3, 1, 4, 2, 0, 3},
                        {5, 7, 4, 2, 1, 1, 1, 0, 0, 3, 1},  {3, 12, 3, 3, 1, 3, 2, 5, 1, 5, 1}};
  const int32_t u8_zero[] = {0, 255}, s8_zero[] = {-128, 127};
  std::mt19937 rng(71);
  int ci = 0;
  for (const Case& c : cases)
    for (int dt = 0; dt < 4; ++dt)
      for (int z = 0; z < 2; ++z, ++ci) {
        const bool xs = dt & 1, ws = (dt & 2) != 0;
        const int64_t C = 3, OH = (c.H + c.pt + c.pb - c.dH * (c.kH - 1) - 1) / c.sH + 1;
        const int64_t OW = (c.W + c.pl + c.pr - (c.kW - 1) - 1) / c.sW + 1;
        const Bytes x = random_bytes(size_t(C * c.H * c.W), xs, rng);
        const Bytes w = random_bytes(size_t(C * c.kH * c.kW), ws, rng);
        Bytes zx{{uint8_t(xs ? s8_zero[z] : u8_zero[z])}, xs};
        Bytes zw{std::vector<uint8_t>(size_t(C)), ws};
        for (int64_t m = 0; m < C; ++m) zw.v[size_t(m)] = uint8_t(ws ? s8_zero[(z + m) % 2] : u8_zero[(z + m) % 2]);
        std::vector<int32_t> want(size_t(C * OH * OW));
        for (int64_t m = 0; m < C; ++m)
          for (int64_t oh = 0; oh < OH; ++oh)
            for (int64_t ow = 0; ow < OW; ++ow) {
              uint32_t sum = 0;
              for (int64_t kh = 0; kh < c.kH; ++kh)
                for (int64_t kw = 0; kw < c.kW; ++kw) {
                  const int64_t ih = oh * c.sH - c.pt + kh * c.dH, iw = ow * c.sW - c.pl + kw;
                  if (ih < 0 || ih >= c.H || iw < 0 || iw >= c.W) continue;
                  const int32_t xv = x.at(size_t((m * c.H + ih) * c.W + iw)) - zx.at(0);
                  sum += uint32_t(xv * (w.at(size_t((m * c.kH + kh) * c.kW + kw)) - zw.at(size_t(m))));
                }
              want[size_t((m * OH + oh) * OW + ow)] = int32_t(sum);
            }
        const std::vector<int64_t> xdims = {1, C, c.H, c.W}, wdims = {C, 1, c.kH, c.kW};
        const std::vector<Attribute> attrs = {Attribute::of_int("group", C), Attribute::of_ints("strides", {c.sH, c.sW}),
                                              Attribute::of_ints("dilations", {c.dH, 1}),
                                              Attribute::of_ints("pads", {c.pt, c.pl, c.pb, c.pr})};
        const std::vector<TensorData> consts = {bytes_tensor("w", wdims, w), bytes_tensor("zx", {}, zx),
                                                bytes_tensor("zw", {C}, zw)};
        g::Graph graph = single_node("ConvInteger", {value("x", xs ? DType::i8 : DType::u8, xdims)}, attrs, consts);
        graph.nodes[0].inputs = {"x", "w", "zx", "zw"};
        const Isa native = om::kernels::active_isa();
        for (Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512, Isa::Neon}) {
          if (!om::kernels::isa_supported(isa)) continue;
          REQUIRE(om::kernels::force_isa(isa));
          INFO("case " << ci << " isa " << om::kernels::isa_name(isa) << " x " << (xs ? "s8" : "u8") << " w "
                       << (ws ? "s8" : "u8") << " zx " << zx.at(0));
          const auto got = run_graph(graph, {bytes_feed("x", xdims, x)})[0];
          CHECK(got.as<int32_t>() == want);
        }
        om::kernels::force_isa(native);
      }
}

TEST_CASE("ConvInteger and QLinearConv equal the element loop: groups, strides, pads, dtypes, packed or not") {
  const ConvCase cases[] = {
      {1, 3, 9, 9, 8, 1, 3, 1, 1, 1},    {2, 4, 7, 11, 6, 2, 3, 2, 1, 1}, {1, 8, 12, 12, 8, 8, 3, 1, 1, 1},  // depthwise
      {1, 16, 8, 8, 50, 1, 1, 1, 0, 1},  {1, 5, 10, 13, 7, 1, 3, 1, 2, 2}, {1, 32, 9, 8, 33, 1, 3, 2, 1, 1},  // 72 pixels
      {1, 2, 1, 70, 3, 1, 5, 1, 2, 1},
      // The depthwise form: strides, dilations, a channel multiplier, 5x5, 1-D, blocks of rows
      // (a plane of more than 2048 outputs), one input channel, padding wider than the kernel's reach.
      {2, 6, 13, 17, 6, 6, 3, 2, 1, 1},  {1, 4, 11, 12, 8, 4, 3, 1, 2, 2}, {1, 3, 9, 21, 6, 3, 5, 1, 2, 1},
      {1, 5, 1, 40, 5, 5, 3, 2, 1, 1},   {1, 2, 41, 90, 2, 2, 3, 1, 1, 1}, {1, 1, 10, 9, 5, 1, 3, 1, 1, 1},
      {1, 3, 7, 7, 3, 3, 3, 3, 4, 1},
      // Stride 2 pairs tap columns: an even kernel, an even pad, an odd width, one output column.
      {1, 4, 9, 10, 4, 4, 4, 2, 2, 1},   {2, 3, 11, 13, 6, 3, 5, 2, 0, 1}, {1, 2, 5, 3, 2, 2, 3, 2, 0, 1},
      // Pointwise (1x1, stride 1, no padding) read in place: a last group of two channels and a
      // partial panel, groups, rows longer than a block.
      {2, 6, 5, 7, 9, 1, 1, 1, 0, 1},    {1, 8, 6, 6, 4, 2, 1, 1, 0, 1},  {1, 5, 3, 300, 4, 1, 1, 1, 0, 1},
      // Strided rows of 16 outputs or more (panels copied at the stride).
      {1, 5, 9, 40, 6, 1, 3, 2, 1, 1},   {1, 3, 7, 60, 4, 1, 3, 3, 1, 1}};
  uint64_t h = 0xcbf29ce484222325ull;
  int ci = 0;
  for (const ConvCase& c : cases)
    for (int dt = 0; dt < 4; ++dt, ++ci) {
      std::mt19937 rng(uint32_t(ci * 13 + 1));
      const bool xs = dt & 1, ws = (dt & 2) != 0;
      const int64_t cg = c.C / c.group, mg = c.M / c.group;
      const int64_t OH = (c.H + 2 * c.pad - c.dil * (c.k - 1) - 1) / c.stride + 1;
      const int64_t OW = (c.W + 2 * c.pad - c.dil * (c.k - 1) - 1) / c.stride + 1;
      const bool one_d = c.H == 1;
      const int64_t kh_n = one_d ? 1 : c.k;
      const int64_t OHe = one_d ? 1 : OH;
      const Bytes x = random_bytes(size_t(c.N * c.C * c.H * c.W), xs, rng);
      const Bytes w = random_bytes(size_t(c.M * cg * kh_n * c.k), ws, rng);
      Bytes zx = random_bytes(1, xs, rng), zw = random_bytes(size_t(c.M), ws, rng);
      std::vector<int32_t> bias(size_t(c.M));
      for (auto& b : bias) b = int32_t(rng() % 20001) - 10000;
      std::vector<float> sw(size_t(c.M));
      for (auto& s : sw) s = 0.001f + float(rng() % 1000) * 1e-5f;
      const float sx = 0.02f, sy = 0.5f;
      const bool ys = (ci % 3) == 0;
      const int32_t zy = ys ? -3 : 120;
      // The element loop.
      std::vector<int32_t> acc(size_t(c.N * c.M * OHe * OW));
      for (int64_t n = 0; n < c.N; ++n)
        for (int64_t m = 0; m < c.M; ++m)
          for (int64_t oh = 0; oh < OHe; ++oh)
            for (int64_t ow = 0; ow < OW; ++ow) {
              uint32_t s = 0;
              const int64_t gi = m / mg;
              for (int64_t cc = 0; cc < cg; ++cc)
                for (int64_t kh = 0; kh < kh_n; ++kh)
                  for (int64_t kw = 0; kw < c.k; ++kw) {
                    const int64_t ih = one_d ? 0 : oh * c.stride - c.pad + kh * c.dil;
                    const int64_t iw = ow * c.stride - c.pad + kw * c.dil;
                    if (ih < 0 || ih >= c.H || iw < 0 || iw >= c.W) continue;
                    const int32_t xv = x.at(size_t(((n * c.C + gi * cg + cc) * c.H + ih) * c.W + iw)) - zx.at(0);
                    const int32_t wv = w.at(size_t(((m * cg + cc) * kh_n + kh) * c.k + kw)) - zw.at(size_t(m));
                    s += uint32_t(xv * wv);
                  }
              acc[size_t(((n * c.M + m) * OHe + oh) * OW + ow)] = int32_t(s);
            }
      std::vector<int64_t> xdims = {c.N, c.C, c.H, c.W}, wdims = {c.M, cg, kh_n, c.k};
      std::vector<int64_t> pads = {c.pad, c.pad, c.pad, c.pad}, strides = {c.stride, c.stride}, dils = {c.dil, c.dil};
      if (one_d) {
        xdims = {c.N, c.C, c.W};
        wdims = {c.M, cg, c.k};
        pads = {c.pad, c.pad};
        strides = {c.stride};
        dils = {c.dil};
      }
      const std::vector<Attribute> attrs = {Attribute::of_int("group", c.group), Attribute::of_ints("strides", strides),
                                            Attribute::of_ints("dilations", dils), Attribute::of_ints("pads", pads)};
      for (int packed = 0; packed < 2; ++packed) {
        INFO("case " << ci << " (C " << c.C << " M " << c.M << " group " << c.group << " k " << c.k << " stride " << c.stride
                     << ") x " << (xs ? "s8" : "u8") << " w " << (ws ? "s8" : "u8") << (packed ? " constant w" : " w fed"));
        std::vector<g::ValueInfo> ins = {value("x", xs ? DType::i8 : DType::u8, xdims)};
        std::vector<Feed> feeds = {bytes_feed("x", xdims, x)};
        std::vector<TensorData> consts;
        if (!packed) {
          ins.push_back(value("w", ws ? DType::i8 : DType::u8, wdims));
          feeds.push_back(bytes_feed("w", wdims, w));
        } else {
          consts.push_back(bytes_tensor("w", wdims, w));
        }
        consts.push_back(bytes_tensor("zx", {}, zx));
        consts.push_back(bytes_tensor("zw", {c.M}, zw));
        // ConvInteger(x, w, zx, zw): the names in order, whichever are inputs or constants.
        g::Graph ci_graph = single_node("ConvInteger", ins, attrs, consts);
        ci_graph.nodes[0].inputs = {"x", "w", "zx", "zw"};
        const auto got = run_graph(ci_graph, feeds)[0];
        CHECK(got.as<int32_t>() == acc);
        h = hash_bytes(h, got.bytes);
        // QLinearConv(x, sx, zx, w, sw, zw, sy, zy, B).
        consts.push_back(TensorData::from_vector<float>("sx", {}, {sx}));
        consts.push_back(TensorData::from_vector("sw", {c.M}, sw));
        consts.push_back(TensorData::from_vector<float>("sy", {}, {sy}));
        consts.push_back(ys ? TensorData::from_vector<int8_t>("zy", {}, {int8_t(zy)})
                            : TensorData::from_vector<uint8_t>("zy", {}, {uint8_t(zy)}));
        consts.push_back(TensorData::from_vector("B", {c.M}, bias));
        g::Graph q_graph = single_node("QLinearConv", ins, attrs, consts);
        q_graph.nodes[0].inputs = {"x", "sx", "zx", "w", "sw", "zw", "sy", "zy", "B"};
        const auto q = run_graph(q_graph, feeds)[0];
        std::vector<int32_t> want(acc.size()), have(acc.size());
        const int64_t plane = OHe * OW;
        for (size_t i = 0; i < acc.size(); ++i) {
          const size_t m = size_t(int64_t(i) / plane % c.M);
          want[i] = requantize(int32_t(uint32_t(acc[i]) + uint32_t(bias[m])), sx, sw[m], sy, zy, ys);
          have[i] = ys ? int32_t(int8_t(q.bytes[i])) : int32_t(q.bytes[i]);
        }
        CHECK(have == want);
        h = hash_bytes(h, q.bytes);
      }
    }
  std::printf("EXACT_HASH quant_conv %s %016" PRIx64 "\n", om::kernels::isa_name(om::kernels::active_isa()), h);
  std::fflush(stdout);
}

TEST_CASE("MatMulInteger and QLinearMatMul equal the element loop: batches, tails, dtypes, packed or not") {
  struct MmCase {
    std::vector<int64_t> a, b;
  };
  const MmCase cases[] = {{{1, 7}, {7, 1}},        {{5, 33}, {33, 17}},      {{2, 3, 64}, {64, 40}},
                          {{49, 300}, {300, 70}}, {{2, 1, 5, 9}, {3, 9, 20}}, {{130, 16}, {16, 257}}};
  uint64_t h = 0xcbf29ce484222325ull;
  int ci = 0;
  for (const MmCase& c : cases)
    for (int dt = 0; dt < 4; ++dt, ++ci) {
      std::mt19937 rng(uint32_t(ci * 17 + 5));
      const bool as = dt & 1, bs = (dt & 2) != 0;
      const int64_t M = c.a[c.a.size() - 2], K = c.a.back(), N = c.b.back();
      size_t an = 1, bn = 1;
      for (int64_t d : c.a) an *= size_t(d);
      for (int64_t d : c.b) bn *= size_t(d);
      const Bytes a = random_bytes(an, as, rng), b = random_bytes(bn, bs, rng);
      const Bytes za = random_bytes(size_t(M), as, rng), zb = random_bytes(size_t(N), bs, rng);
      // Batch broadcasting: the output batch axes and each operand's matrix for a batch index.
      std::vector<int64_t> ab(c.a.begin(), c.a.end() - 2), bb(c.b.begin(), c.b.end() - 2);
      const size_t rank = std::max(ab.size(), bb.size());
      while (ab.size() < rank) ab.insert(ab.begin(), 1);
      while (bb.size() < rank) bb.insert(bb.begin(), 1);
      std::vector<int64_t> yb(rank);
      size_t batches = 1;
      for (size_t d = 0; d < rank; ++d) batches *= size_t(yb[d] = std::max(ab[d], bb[d]));
      std::vector<int32_t> acc(batches * size_t(M * N));
      for (size_t bi = 0; bi < batches; ++bi) {
        size_t rest = bi, ao = 0, bo = 0, astride = 1, bstride = 1;
        for (size_t d = rank; d-- > 0;) {
          const size_t idx = rest % size_t(yb[d]);
          rest /= size_t(yb[d]);
          ao += (ab[d] == 1 ? 0 : idx) * astride;
          bo += (bb[d] == 1 ? 0 : idx) * bstride;
          astride *= size_t(ab[d]);
          bstride *= size_t(bb[d]);
        }
        for (int64_t m = 0; m < M; ++m)
          for (int64_t n = 0; n < N; ++n) {
            uint32_t s = 0;
            for (int64_t k = 0; k < K; ++k)
              s += uint32_t((a.at(ao * size_t(M * K) + size_t(m * K + k)) - za.at(size_t(m))) *
                            (b.at(bo * size_t(K * N) + size_t(k * N + n)) - zb.at(size_t(n))));
            acc[bi * size_t(M * N) + size_t(m * N + n)] = int32_t(s);
          }
      }
      std::vector<float> sa(static_cast<size_t>(M)), sb(static_cast<size_t>(N));
      for (auto& s : sa) s = 0.01f + float(rng() % 100) * 1e-4f;
      for (auto& s : sb) s = 0.002f + float(rng() % 100) * 1e-5f;
      const float sy = 0.03f;
      const bool ys = ci % 2 == 0;
      const int32_t zy = ys ? 5 : 128;
      for (int packed = 0; packed < 2; ++packed) {
        if (packed && c.b.size() != 2) continue;  // only a 2-D B is packed by the plan
        INFO("case " << ci << " a " << (as ? "s8" : "u8") << " b " << (bs ? "s8" : "u8") << (packed ? " constant B" : " B fed"));
        std::vector<g::ValueInfo> ins = {value("a", as ? DType::i8 : DType::u8, c.a)};
        std::vector<Feed> feeds = {bytes_feed("a", c.a, a)};
        std::vector<TensorData> consts;
        if (packed) {
          consts.push_back(bytes_tensor("b", c.b, b));
        } else {
          ins.push_back(value("b", bs ? DType::i8 : DType::u8, c.b));
          feeds.push_back(bytes_feed("b", c.b, b));
        }
        consts.push_back(bytes_tensor("za", {M}, za));
        consts.push_back(bytes_tensor("zb", {N}, zb));
        g::Graph mm = single_node("MatMulInteger", ins, {}, consts);
        mm.nodes[0].inputs = {"a", "b", "za", "zb"};
        const auto got = run_graph(mm, feeds)[0];
        CHECK(got.as<int32_t>() == acc);
        h = hash_bytes(h, got.bytes);
        consts.push_back(TensorData::from_vector("sa", {M}, sa));
        consts.push_back(TensorData::from_vector("sb", {N}, sb));
        consts.push_back(TensorData::from_vector<float>("sy", {}, {sy}));
        consts.push_back(ys ? TensorData::from_vector<int8_t>("zy", {}, {int8_t(zy)})
                            : TensorData::from_vector<uint8_t>("zy", {}, {uint8_t(zy)}));
        g::Graph qm = single_node("QLinearMatMul", ins, {}, consts);
        qm.nodes[0].inputs = {"a", "sa", "za", "b", "sb", "zb", "sy", "zy"};
        const auto q = run_graph(qm, feeds)[0];
        std::vector<int32_t> want(acc.size()), have(acc.size());
        for (size_t i = 0; i < acc.size(); ++i) {
          const size_t m = i / size_t(N) % size_t(M), n = i % size_t(N);
          want[i] = requantize(acc[i], sa[m], sb[n], sy, zy, ys);
          have[i] = ys ? int32_t(int8_t(q.bytes[i])) : int32_t(q.bytes[i]);
        }
        CHECK(have == want);
        h = hash_bytes(h, q.bytes);
      }
    }
  std::printf("EXACT_HASH quant_matmul %s %016" PRIx64 "\n", om::kernels::isa_name(om::kernels::active_isa()), h);
  std::fflush(stdout);
}

TEST_CASE("fuse_qdq_conv: QDQ Conv [-> Relu] in Fast sessions becomes QLinearConv, within one quantization step of the QDQ graph") {
  // x -> QuantizeLinear -> DequantizeLinear -> Conv(DequantizeLinear(w s8 per channel), b) [-> Relu]
  //   -> QuantizeLinear -> DequantizeLinear -> y
  std::mt19937 rng(3);
  const int64_t C = 5, M = 6;
  Bytes w = random_bytes(size_t(M * C * 9), true, rng);
  std::vector<float> ws(static_cast<size_t>(M)), b(static_cast<size_t>(M));
  for (auto& s : ws) s = 0.002f + float(rng() % 100) * 1e-4f;
  for (auto& v : b) v = float(int(rng() % 200) - 100) * 1e-3f;
  const float ys = 0.02f;
  for (int with_relu = 0; with_relu < 2; ++with_relu) {
    CAPTURE(with_relu);
    g::Graph gr;
    gr.inputs.push_back(value("x", DType::f32, {1, C, 8, 7}));
    gr.initializers = {TensorData::from_vector<float>("xs", {}, {0.02f}), TensorData::from_vector<uint8_t>("xz", {}, {128}),
                       bytes_tensor("wq", {M, C, 3, 3}, w), TensorData::from_vector("ws", {M}, ws),
                       TensorData::from_vector("wz", {M}, std::vector<int8_t>(static_cast<size_t>(M), 0)),
                       TensorData::from_vector("b", {M}, b), TensorData::from_vector<float>("ys", {}, {ys}),
                       TensorData::from_vector<uint8_t>("yz", {}, {uint8_t(with_relu ? 0 : 120)})};
    gr.nodes = {node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"}), node("DequantizeLinear", {"xq", "xs", "xz"}, {"xd"}),
                node("DequantizeLinear", {"wq", "ws", "wz"}, {"wd"}, {Attribute::of_int("axis", 0)}),
                node("Conv", {"xd", "wd", "b"}, {"c"}, {Attribute::of_ints("pads", {1, 1, 1, 1})})};
    std::string pre = "c";
    if (with_relu) {
      gr.nodes.push_back(node("Relu", {"c"}, {"r"}));
      pre = "r";
    }
    gr.nodes.push_back(node("QuantizeLinear", {pre, "ys", "yz"}, {"yq"}));
    gr.nodes.push_back(node("DequantizeLinear", {"yq", "ys", "yz"}, {"y"}));
    gr.outputs.push_back(value("y", DType::f32, {}));
    om::Session fast(gr, {om::ArithmeticMode::Fast, true}), exact(gr, {om::ArithmeticMode::Exact, true});
    size_t fused = 0, convs = 0;
    for (const auto& n : fast.graph().nodes) fused += n.op_type == "QLinearConv", convs += n.op_type == "Conv";
    CHECK(fused == 1);
    CHECK(convs == 0);
    for (const auto& n : exact.graph().nodes) CHECK(n.op_type != "QLinearConv");
    const std::vector<Feed> feeds{Feed::of("x", {1, C, 8, 7}, random_floats(size_t(C * 56), 9))};
    check_within_one_step(fast, exact, feeds, ys);
  }
}

TEST_CASE("fuse_qdq_matmul: QDQ MatMul [-> bias Add] [-> Relu] with per-column int8 weights becomes QLinearMatMul(Bias) in Fast sessions") {
  std::mt19937 rng(8);
  const int64_t K = 40, N = 24;
  Bytes w = random_bytes(size_t(K * N), true, rng);
  std::vector<float> ws(static_cast<size_t>(N));
  for (auto& s : ws) s = 0.002f + float(rng() % 100) * 1e-4f;
  std::vector<float> b(static_cast<size_t>(N));
  for (auto& v : b) v = float(int(rng() % 200) - 100) * 1e-3f;
  const float ys = 0.03f;
  for (int form = 0; form < 4; ++form) {
    const int with_bias = form / 2, with_relu = form % 2;
    CAPTURE(with_bias);
    CAPTURE(with_relu);
    // With the bias, weight zero points that vary by column too (the epilogue's per-column path).
    std::vector<int8_t> wz(static_cast<size_t>(N), 0);
    for (int64_t n = 0; n < N && with_bias; ++n) wz[size_t(n)] = int8_t(n % 5 - 2);
    g::Graph gr;
    gr.inputs.push_back(value("x", DType::f32, {7, K}));
    gr.initializers = {TensorData::from_vector<float>("xs", {}, {0.02f}), TensorData::from_vector<uint8_t>("xz", {}, {128}),
                       bytes_tensor("wq", {K, N}, w), TensorData::from_vector("ws", {N}, ws),
                       TensorData::from_vector("wz", {N}, wz), TensorData::from_vector("b", {N}, b),
                       TensorData::from_vector<float>("ys", {}, {ys}),
                       TensorData::from_vector<uint8_t>("yz", {}, {uint8_t(with_relu ? 0 : 128)})};
    gr.nodes = {node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"}), node("DequantizeLinear", {"xq", "xs", "xz"}, {"xd"}),
                node("DequantizeLinear", {"wq", "ws", "wz"}, {"wd"}, {Attribute::of_int("axis", 1)}), node("MatMul", {"xd", "wd"}, {"c"})};
    std::string pre = "c";
    if (with_bias) {
      gr.nodes.push_back(node("Add", {"b", "c"}, {"cb"}));  // the bias first: either operand order fuses
      pre = "cb";
    }
    if (with_relu) {
      gr.nodes.push_back(node("Relu", {pre}, {"r"}));
      pre = "r";
    }
    gr.nodes.push_back(node("QuantizeLinear", {pre, "ys", "yz"}, {"yq"}));
    gr.nodes.push_back(node("DequantizeLinear", {"yq", "ys", "yz"}, {"y"}));
    gr.outputs.push_back(value("y", DType::f32, {}));
    om::Session fast(gr, {om::ArithmeticMode::Fast, true}), exact(gr, {om::ArithmeticMode::Exact, true});
    const char* want = with_bias ? "QLinearMatMulBias" : "QLinearMatMul";
    size_t fused = 0;
    for (const auto& n : fast.graph().nodes) {
      fused += n.op_type == want;
      CHECK(n.op_type != "Add");
      CHECK(n.op_type != "Relu");
    }
    CHECK(fused == 1);
    for (const auto& n : exact.graph().nodes) CHECK(n.op_type != want);
    const std::vector<Feed> feeds{Feed::of("x", {7, K}, random_floats(size_t(7 * K), 4))};
    check_within_one_step(fast, exact, feeds, ys);
  }
}

TEST_CASE("fuse_qdq_matmul: QDQ Gemm (B as is or transposed, C absent, [N], [1, N] or scalar) [-> Relu] becomes QLinearMatMul(Bias) in Fast sessions") {
  std::mt19937 rng(9);
  const int64_t K = 33, N = 20;
  const Bytes w = random_bytes(size_t(K * N), true, rng);
  std::vector<float> ws(static_cast<size_t>(N));
  for (auto& s : ws) s = 0.002f + float(rng() % 100) * 1e-4f;
  std::vector<float> b(static_cast<size_t>(N));
  for (auto& v : b) v = float(int(rng() % 200) - 100) * 1e-3f;
  const float ys = 0.03f;
  for (int form = 0; form < 10; ++form) {
    const bool trans_b = form % 2, relu = form % 3 == 0, alpha2 = form == 9;
    const int c_form = (form / 2) % 4;  // absent, [N], [1, N], scalar
    CAPTURE(form);
    std::vector<int64_t> c_dims = c_form == 1 ? std::vector<int64_t>{N} : c_form == 2 ? std::vector<int64_t>{1, N} : std::vector<int64_t>{};
    std::vector<float> c = c_form == 3 ? std::vector<float>{0.05f} : b;
    g::Graph gr;
    gr.inputs.push_back(value("x", DType::f32, {5, K}));
    gr.initializers = {TensorData::from_vector<float>("xs", {}, {0.02f}), TensorData::from_vector<uint8_t>("xz", {}, {128}),
                       TensorData::from_vector("ws", {N}, ws), TensorData::from_vector("wz", {N}, std::vector<int8_t>(size_t(N), 0)),
                       TensorData::from_vector<float>("ys", {}, {ys}),
                       TensorData::from_vector<uint8_t>("yz", {}, {uint8_t(relu ? 0 : 128)})};
    // B as [K, N], or its transpose [N, K] with the per-column parameters on axis 0.
    Bytes wt = w;
    if (trans_b)
      for (int64_t k = 0; k < K; ++k)
        for (int64_t n = 0; n < N; ++n) wt.v[size_t(n * K + k)] = w.v[size_t(k * N + n)];
    gr.initializers.push_back(bytes_tensor("wq", trans_b ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N}, wt));
    std::vector<std::string> gemm_in = {"xd", "wd"};
    if (c_form) {
      gr.initializers.push_back(TensorData::from_vector("c", c_dims, c));
      gemm_in.push_back("c");
    }
    std::vector<Attribute> attrs = {Attribute::of_int("transB", trans_b ? 1 : 0)};
    if (alpha2) attrs.push_back(Attribute::of_float("alpha", 2.0f));
    gr.nodes = {node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"}), node("DequantizeLinear", {"xq", "xs", "xz"}, {"xd"}),
                node("DequantizeLinear", {"wq", "ws", "wz"}, {"wd"}, {Attribute::of_int("axis", trans_b ? 0 : 1)}),
                node("Gemm", gemm_in, {"g"}, attrs)};
    std::string pre = "g";
    if (relu) {
      gr.nodes.push_back(node("Relu", {pre}, {"r"}));
      pre = "r";
    }
    gr.nodes.push_back(node("QuantizeLinear", {pre, "ys", "yz"}, {"yq"}));
    gr.nodes.push_back(node("DequantizeLinear", {"yq", "ys", "yz"}, {"y"}));
    gr.outputs.push_back(value("y", DType::f32, {}));
    om::Session fast(gr, {om::ArithmeticMode::Fast, true}), exact(gr, {om::ArithmeticMode::Exact, true});
    size_t fused = 0, gemms = 0;
    for (const auto& n : fast.graph().nodes) {
      fused += n.op_type == (c_form ? "QLinearMatMulBias" : "QLinearMatMul");
      gemms += n.op_type == "Gemm" || n.op_type == "FusedMatMul";  // a float product (fuse_matmul_epilogue's)
    }
    CHECK(fused == (alpha2 ? 0u : 1u));  // alpha 2 is left as written
    CHECK(gemms == (alpha2 ? 1u : 0u));
    const std::vector<Feed> feeds{Feed::of("x", {5, K}, random_floats(size_t(5 * K), 6))};
    check_within_one_step(fast, exact, feeds, ys);
  }
}

TEST_CASE("fuse_integer_epilogue: DynamicQuantizeLinear -> ConvInteger / MatMulInteger -> Cast -> Mul(scale) [-> bias Add] [-> Relu] becomes one node with the same bits, in both modes") {
  std::mt19937 rng(10);
  for (int form = 0; form < 12; ++form) {
    const bool conv = form % 2, relu = (form / 2) % 2;
    const int bias_form = form / 4;  // none, or one of the two layouts below
    CAPTURE(form);
    const int64_t M = 6, C = 4, K = 20, N = 7;
    g::Graph gr;
    gr.inputs.push_back(value("x", DType::f32, conv ? std::vector<int64_t>{2, C, 9, 8} : std::vector<int64_t>{5, K}));
    const std::vector<int64_t> wdims = conv ? std::vector<int64_t>{M, C, 3, 3} : std::vector<int64_t>{K, N};
    Bytes w = random_bytes(size_t(conv ? M * C * 9 : K * N), false, rng);
    const int64_t count = conv ? M : N;
    std::vector<float> b(static_cast<size_t>(count));
    for (auto& v : b) v = float(int(rng() % 200) - 100) * 1e-2f;
    // The two layouts each: [1, M, 1, 1] and [M, 1, 1] per output channel, [N] and [1, N] per column.
    const std::vector<int64_t> bdims = conv ? (bias_form == 1 ? std::vector<int64_t>{1, M, 1, 1} : std::vector<int64_t>{M, 1, 1})
                                            : (bias_form == 1 ? std::vector<int64_t>{N} : std::vector<int64_t>{1, N});
    gr.initializers = {bytes_tensor("w", wdims, w), TensorData::from_vector<uint8_t>("wz", {}, {128}),
                       TensorData::from_vector<float>("ws", {}, {0.0125f}), TensorData::from_vector("b", bdims, b)};
    std::vector<Attribute> attrs;
    if (conv) attrs = {Attribute::of_ints("pads", {1, 1, 1, 1})};
    gr.nodes = {node("DynamicQuantizeLinear", {"x"}, {"xq", "xs", "xz"}),
                node(conv ? "ConvInteger" : "MatMulInteger", {"xq", "w", "xz", "wz"}, {"acc"}, attrs),
                node("Mul", {"xs", "ws"}, {"s"}),  // after the product: the fused node takes the last one's place
                node("Cast", {"acc"}, {"f"}, {Attribute::of_int("to", 1)}), node("Mul", {"f", "s"}, {"y0"})};
    std::string pre = "y0";
    if (bias_form) {
      gr.nodes.push_back(node("Add", {"b", pre}, {"y1"}));
      pre = "y1";
    }
    if (relu) {
      gr.nodes.push_back(node("Relu", {pre}, {"y2"}));
      pre = "y2";
    }
    gr.outputs.push_back(value(pre, DType::f32, {}));
    const std::vector<Feed> feeds{Feed::of("x", conv ? std::vector<int64_t>{2, C, 9, 8} : std::vector<int64_t>{5, K},
                                           random_floats(size_t(conv ? 2 * C * 72 : 5 * K), 11))};
    for (om::ArithmeticMode mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
      om::SessionOptions plain{mode, true};
      plain.optimize = false;
      const auto want = run_graph(gr, feeds, plain)[0];
      om::Session fused(gr, {mode, true});
      size_t scaled = 0, others = 0;
      for (const auto& n : fused.graph().nodes) {
        scaled += n.op_type == (conv ? "ConvIntegerScaled" : "MatMulIntegerScaled");
        others += n.op_type == "Cast" || n.op_type == "Add" || n.op_type == "Relu";
      }
      CHECK(scaled == 1);
      CHECK(others == 0);
      const auto got = run(fused, feeds)[0];
      CHECK(got.dims == want.dims);
      CHECK(got.bytes == want.bytes);  // bit for bit
    }
  }
  // A scale that is not one value whatever the inputs (a graph input) is left as written.
  g::Graph gr;
  gr.inputs = {value("a", DType::u8, {3, 4}), value("s", DType::f32, {2})};
  gr.initializers = {TensorData::from_vector<int8_t>("b", {4, 2}, {1, -2, 3, -4, 5, -6, 7, -8})};
  gr.nodes = {node("MatMulInteger", {"a", "b"}, {"acc"}), node("Cast", {"acc"}, {"f"}, {Attribute::of_int("to", 1)}),
              node("Mul", {"f", "s"}, {"y"})};
  gr.outputs.push_back(value("y", DType::f32, {}));
  om::Session s(gr, {om::ArithmeticMode::Fast, true});
  for (const auto& n : s.graph().nodes) CHECK(n.op_type != "MatMulIntegerScaled");
}
