// The quantized forms against ONNX Runtime on the same files, and against their float twins
// (docs/performance.md, "int8"): a ResNet-style convolution stack (3x64x64, the stem and the
// 3x3 convolutions of bench_session's ResNet-style CNN, each followed by Relu), a MobileNet-style
// depthwise-separable stack (dws: f32, qlinear and qdq forms) and the MLP of bench_session
// (256-512-512-10), each written three ways with the same weights:
//   f32       Conv / MatMul + bias + Relu in float;
//   qlinear   QuantizeLinear, then QLinearConv / QLinearMatMul per layer (s8 weights per output
//             channel for the convolutions, u8 activations whose zero point 0 is the Relu),
//             DequantizeLinear at the end: the static form ONNX Runtime's quantizer writes;
//   dynamic   DynamicQuantizeLinear, ConvInteger / MatMulInteger, Cast, Mul by the two scales,
//             bias, Relu per layer: the dynamic form of ONNX Runtime's quantize_dynamic;
//   qdq       the f32 form through om::quant::quantize_static (calibrated on random inputs of
//             the input range): QuantizeLinear / DequantizeLinear pairs around float operators,
//             which Fast sessions run as QLinearConv (fuse_qdq_conv).
// The files are written into MODELS-DIR (int8_models next to this program), then compared as
// bench/ort_compare.h describes; the table after it gives each int8 form's time over its f32
// twin's, both on Session Fast.
//
//   bench_int8 [MODELS-DIR] [repo-dir] [--seconds S] [--rounds N] [--threads N] [--only TEXT] [--check-only]
#include "ort_compare.h"

namespace {

using namespace bench;
namespace g = om::graph;

struct Builder {
  g::Graph graph;
  int count = 0;
  std::string name(const std::string& base) { return base + "_" + std::to_string(count++); }
  template <typename T>
  std::string constant(const std::string& base, std::vector<int64_t> dims, const std::vector<T>& v) {
    const std::string n = name(base);
    graph.initializers.push_back(g::TensorData::from_vector(n, std::move(dims), v));
    return n;
  }
  std::string op(const std::string& type, std::vector<std::string> ins, std::vector<g::Attribute> attrs = {},
                 size_t outs = 1, std::vector<std::string>* extra = nullptr) {
    g::Node n;
    n.op_type = type;
    n.name = name(type);
    n.inputs = std::move(ins);
    for (size_t i = 0; i < outs; ++i) n.outputs.push_back(n.name + "_y" + std::to_string(i));
    n.attributes = std::move(attrs);
    if (extra) extra->assign(n.outputs.begin() + 1, n.outputs.end());
    graph.nodes.push_back(n);
    return graph.nodes.back().outputs[0];
  }
  void input(const std::string& n, std::vector<g::Dim> shape) { graph.inputs.push_back({n, om::DType::f32, true, std::move(shape)}); }
  void output(const std::string& n) { graph.outputs.push_back({n, om::DType::f32, false, {}}); }
};

struct Layer {
  int64_t out, in, k, stride;  // k = 0: a fully connected layer [in -> out]
  std::vector<float> w, b;     // float weights (the dequantized int8 ones) and bias
  std::vector<int8_t> wq;      // s8 per output channel, zero point 0
  std::vector<float> ws;       // per output channel
  std::vector<uint8_t> wu;     // u8 per tensor, zero point 128 (the dynamic form's weights)
  float wus = 1;
  int64_t group = 1;  // out for a depthwise layer (in = 1: one input channel per output channel)
};

// He-initialised weights quantized per output channel (s8, symmetric) and per tensor (u8), the
// float twin using the per-channel values so the forms compute the same function.
Layer make_layer(int64_t out, int64_t in, int64_t k, int64_t stride, std::mt19937& rng) {
  Layer l{out, in, k, stride, {}, {}, {}, {}, {}, 1};
  const int64_t fan = in * (k ? k * k : 1), per = fan;
  std::normal_distribution<float> nd(0.0f, std::sqrt(2.0f / float(fan)));
  std::vector<float> w(size_t(out * per));
  for (float& v : w) v = nd(rng);
  l.wq.resize(w.size());
  l.w.resize(w.size());
  l.ws.resize(size_t(out));
  float all = 0;
  for (int64_t m = 0; m < out; ++m) {
    float mx = 0;
    for (int64_t i = 0; i < per; ++i) mx = std::max(mx, std::fabs(w[size_t(m * per + i)]));
    l.ws[size_t(m)] = mx > 0 ? mx / 127.0f : 1.0f;
    for (int64_t i = 0; i < per; ++i) {
      const size_t at = size_t(m * per + i);
      l.wq[at] = int8_t(std::lrint(w[at] / l.ws[size_t(m)]));
      l.w[at] = float(l.wq[at]) * l.ws[size_t(m)];
      all = std::max(all, std::fabs(l.w[at]));
    }
  }
  l.wus = all / 127.0f;
  l.wu.resize(w.size());
  for (size_t i = 0; i < w.size(); ++i) l.wu[i] = uint8_t(std::lrint(l.w[i] / l.wus) + 128);
  std::uniform_real_distribution<float> ub(-0.1f, 0.1f);
  l.b.resize(size_t(out));
  for (float& v : l.b) v = ub(rng);
  return l;
}

// The ResNet-style stack: stem 3->32 stride 2, four 32->32, 32->64 stride 2, four 64->64.
std::vector<Layer> cnn_layers() {
  std::mt19937 rng(11);
  std::vector<Layer> ls;
  ls.push_back(make_layer(32, 3, 3, 2, rng));
  for (int i = 0; i < 4; ++i) ls.push_back(make_layer(32, 32, 3, 1, rng));
  ls.push_back(make_layer(64, 32, 3, 2, rng));
  for (int i = 0; i < 4; ++i) ls.push_back(make_layer(64, 64, 3, 1, rng));
  return ls;
}
// A MobileNet-style depthwise-separable stack: stem 3->32 stride 2, then depthwise 3x3 (strides
// 1, 2, 1, 2) each followed by a pointwise 1x1 (32->64, 64->128, 128->128, 128->256).
std::vector<Layer> dws_layers() {
  std::mt19937 rng(13);
  std::vector<Layer> ls;
  ls.push_back(make_layer(32, 3, 3, 2, rng));
  const int64_t chans[] = {32, 64, 128, 128, 256}, strides[] = {1, 2, 1, 2};
  for (int i = 0; i < 4; ++i) {
    ls.push_back(make_layer(chans[i], 1, 3, strides[i], rng));
    ls.back().group = chans[i];
    ls.push_back(make_layer(chans[i + 1], chans[i], 1, 1, rng));
  }
  return ls;
}
std::vector<Layer> mlp_layers() {
  std::mt19937 rng(12);
  return {make_layer(512, 256, 0, 1, rng), make_layer(512, 512, 0, 1, rng), make_layer(10, 512, 0, 1, rng)};
}

std::vector<int64_t> wdims(const Layer& l) {
  return l.k ? std::vector<int64_t>{l.out, l.in, l.k, l.k} : std::vector<int64_t>{l.in, l.out};
}
// A fully connected layer's weights are stored [in, out] for MatMul: transposed from [out, in].
template <typename T>
std::vector<T> as_stored(const Layer& l, const std::vector<T>& w) {
  if (l.k) return w;
  std::vector<T> t(w.size());
  for (int64_t o = 0; o < l.out; ++o)
    for (int64_t i = 0; i < l.in; ++i) t[size_t(i * l.out + o)] = w[size_t(o * l.in + i)];
  return t;
}
std::vector<g::Attribute> conv_attrs(const Layer& l) {
  return {g::Attribute::of_ints("kernel_shape", {l.k, l.k}), g::Attribute::of_ints("strides", {l.stride, l.stride}),
          g::Attribute::of_ints("pads", {l.k / 2, l.k / 2, l.k / 2, l.k / 2}), g::Attribute::of_int("group", l.group)};
}

constexpr float kActScale = 6.0f / 255.0f;  // u8 activations after Relu: [0, 6]
constexpr float kInScale = 2.0f / 255.0f;   // the input in [-1, 1), zero point 128

std::vector<g::Dim> input_shape(bool cnn) {
  if (cnn) return {g::Dim::symbol("batch"), g::Dim::fixed(3), g::Dim::fixed(64), g::Dim::fixed(64)};
  return {g::Dim::symbol("batch"), g::Dim::fixed(256)};
}

g::Graph f32_form(const std::vector<Layer>& ls, bool cnn) {
  Builder b;
  b.input("x", input_shape(cnn));
  std::string x = "x";
  for (size_t i = 0; i < ls.size(); ++i) {
    const Layer& l = ls[i];
    const std::string w = b.constant("w", wdims(l), as_stored(l, l.w));
    if (l.k) {
      x = b.op("Conv", {x, w, b.constant("b", {l.out}, l.b)}, conv_attrs(l));
    } else {
      x = b.op("Add", {b.op("MatMul", {x, w}), b.constant("b", {l.out}, l.b)});
    }
    if (l.k || i + 1 < ls.size()) x = b.op("Relu", {x});
  }
  b.output(x);
  return b.graph;
}

g::Graph qlinear_form(const std::vector<Layer>& ls, bool cnn) {
  Builder b;
  b.input("x", input_shape(cnn));
  std::string sx = b.constant<float>("sx", {}, {kInScale}), zx = b.constant<uint8_t>("zx", {}, {128});
  std::string x = b.op("QuantizeLinear", {"x", sx, zx});
  for (size_t i = 0; i < ls.size(); ++i) {
    const Layer& l = ls[i];
    const float in_scale = i == 0 ? kInScale : kActScale;
    const bool last = i + 1 == ls.size();
    // The last layer has no Relu: its output gets a zero point in the middle.
    const std::string sy = b.constant<float>("sy", {}, {kActScale}), zy = b.constant<uint8_t>("zy", {}, {uint8_t(last ? 128 : 0)});
    if (l.k) {
      std::vector<int32_t> bias(size_t(l.out));
      for (int64_t m = 0; m < l.out; ++m) bias[size_t(m)] = int32_t(std::lrint(l.b[size_t(m)] / (in_scale * l.ws[size_t(m)])));
      x = b.op("QLinearConv",
               {x, sx, zx, b.constant("w", wdims(l), l.wq), b.constant("ws", {l.out}, l.ws),
                b.constant("wz", {l.out}, std::vector<int8_t>(size_t(l.out), 0)), sy, zy, b.constant("bias", {l.out}, bias)},
               conv_attrs(l));
    } else {
      // QLinearMatMul has no bias: per-tensor weight scale (the largest channel's).
      float s = 0;
      for (float v : l.ws) s = std::max(s, v);
      std::vector<int8_t> wq(l.w.size());
      for (size_t j = 0; j < wq.size(); ++j) wq[j] = int8_t(std::lrint(l.w[j] / s));
      x = b.op("QLinearMatMul", {x, sx, zx, b.constant("w", wdims(l), as_stored(l, wq)), b.constant<float>("ws", {}, {s}),
                                 b.constant<int8_t>("wz", {}, {0}), sy, zy});
    }
    sx = sy;
    zx = zy;
  }
  b.output(b.op("DequantizeLinear", {x, sx, zx}));
  return b.graph;
}

g::Graph dynamic_form(const std::vector<Layer>& ls, bool cnn) {
  Builder b;
  b.input("x", input_shape(cnn));
  std::string x = "x";
  for (size_t i = 0; i < ls.size(); ++i) {
    const Layer& l = ls[i];
    std::vector<std::string> qp;
    const std::string xq = b.op("DynamicQuantizeLinear", {x}, {}, 3, &qp);
    const std::string w = b.constant("w", wdims(l), as_stored(l, l.wu)), wz = b.constant<uint8_t>("wz", {}, {128});
    const std::string acc = l.k ? b.op("ConvInteger", {xq, w, qp[1], wz}, conv_attrs(l)) : b.op("MatMulInteger", {xq, w, qp[1], wz});
    const std::string scale = b.op("Mul", {qp[0], b.constant<float>("ws", {}, {l.wus})});
    x = b.op("Mul", {b.op("Cast", {acc}, {g::Attribute::of_int("to", 1)}), scale});
    x = b.op("Add", {x, l.k ? b.constant("b", {l.out, 1, 1}, l.b) : b.constant("b", {l.out}, l.b)});
    if (l.k || i + 1 < ls.size()) x = b.op("Relu", {x});
  }
  b.output(x);
  return b.graph;
}

// The f32 form through quantize_static, calibrated on inputs uniform in [-1, 1) like the cases'.
g::Graph qdq_form(const std::vector<Layer>& ls, bool cnn) {
  om::Generator gen(5);
  std::vector<std::vector<std::pair<std::string, om::Tensor>>> calibration;
  for (int i = 0; i < 4; ++i) {
    const om::Tensor u = cnn ? om::rand({2, 3, 64, 64}, gen) : om::rand({8, 256}, gen);
    calibration.push_back({{"x", om::sub(om::mul(u, 2.0), 1.0)}});
  }
  return om::quant::quantize_static(f32_form(ls, cnn), calibration);
}

// ONNX Runtime's x86 u8 x s8 product is exact where the CPU has a VNNI dot product (AVX-512
// VNNI, AVX-VNNI); without one it multiplies with vpmaddubsw, whose 16-bit pair sums saturate
// (2 * 255 * 127 > 32767), so its QLinear and QDQ results move by up to a few steps on such
// CPUs (its quantization guide's reason for reduce_range). onemodel's integers are exact
// everywhere (kernel tests). There the u8 x s8 forms are compared at a tolerance that admits the
// saturation and still fails a wrong layout or zero point (scaled differences of order 1).
bool ort_u8s8_exact() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512vnni") || __builtin_cpu_supports("avxvnni");
#else
  return true;
#endif
}

const std::vector<Case>& cases() {
  // Quantized outputs agree with ONNX Runtime within a few quantization steps of a [0, 6]
  // activation (rounding ties can differ by one step per layer); the f32 twins as bench_real's.
  static const double q = 0.1, u8s8 = ort_u8s8_exact() ? q : 0.3;
  static const std::vector<Case> c = {
      {"cnn-f32-b1", "cnn_f32.onnx", {{"x", {1, 3, 64, 64}, -1.0f, 1.0f}}, 1e-4, false},
      {"cnn-qlinear-b1", "cnn_qlinear.onnx", {{"x", {1, 3, 64, 64}, -1.0f, 1.0f}}, u8s8, true},
      {"cnn-dynamic-b1", "cnn_dynamic.onnx", {{"x", {1, 3, 64, 64}, -1.0f, 1.0f}}, q, true},
      {"cnn-f32-b8", "cnn_f32.onnx", {{"x", {8, 3, 64, 64}, -1.0f, 1.0f}}, 1e-4, false},
      {"cnn-qlinear-b8", "cnn_qlinear.onnx", {{"x", {8, 3, 64, 64}, -1.0f, 1.0f}}, u8s8, false},
      {"cnn-dynamic-b8", "cnn_dynamic.onnx", {{"x", {8, 3, 64, 64}, -1.0f, 1.0f}}, q, false},
      {"mlp-f32-b32", "mlp_f32.onnx", {{"x", {32, 256}, -1.0f, 1.0f}}, 1e-4, false},
      {"mlp-qlinear-b32", "mlp_qlinear.onnx", {{"x", {32, 256}, -1.0f, 1.0f}}, u8s8, true},
      {"mlp-dynamic-b32", "mlp_dynamic.onnx", {{"x", {32, 256}, -1.0f, 1.0f}}, q, true},
      {"cnn-qdq-b1", "cnn_qdq.onnx", {{"x", {1, 3, 64, 64}, -1.0f, 1.0f}}, u8s8, true},
      {"cnn-qdq-b8", "cnn_qdq.onnx", {{"x", {8, 3, 64, 64}, -1.0f, 1.0f}}, u8s8, false},
      {"mlp-qdq-b32", "mlp_qdq.onnx", {{"x", {32, 256}, -1.0f, 1.0f}}, u8s8, false},
      {"dws-f32-b1", "dws_f32.onnx", {{"x", {1, 3, 64, 64}, -1.0f, 1.0f}}, 1e-4, false},
      {"dws-qlinear-b1", "dws_qlinear.onnx", {{"x", {1, 3, 64, 64}, -1.0f, 1.0f}}, u8s8, true},
      {"dws-qdq-b1", "dws_qdq.onnx", {{"x", {1, 3, 64, 64}, -1.0f, 1.0f}}, u8s8, true},
  };
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv, "bench_int8", "int8_models", __FILE__);
  fs::create_directories(o.models);
  const std::vector<Layer> cnn = cnn_layers(), mlp = mlp_layers();
  om::onnx::write(f32_form(cnn, true), (fs::path(o.models) / "cnn_f32.onnx").string());
  om::onnx::write(qlinear_form(cnn, true), (fs::path(o.models) / "cnn_qlinear.onnx").string());
  om::onnx::write(dynamic_form(cnn, true), (fs::path(o.models) / "cnn_dynamic.onnx").string());
  om::onnx::write(f32_form(mlp, false), (fs::path(o.models) / "mlp_f32.onnx").string());
  om::onnx::write(qlinear_form(mlp, false), (fs::path(o.models) / "mlp_qlinear.onnx").string());
  om::onnx::write(dynamic_form(mlp, false), (fs::path(o.models) / "mlp_dynamic.onnx").string());
  om::onnx::write(qdq_form(cnn, true), (fs::path(o.models) / "cnn_qdq.onnx").string());
  om::onnx::write(qdq_form(mlp, false), (fs::path(o.models) / "mlp_qdq.onnx").string());
  const std::vector<Layer> dws = dws_layers();
  om::onnx::write(f32_form(dws, true), (fs::path(o.models) / "dws_f32.onnx").string());
  om::onnx::write(qlinear_form(dws, true), (fs::path(o.models) / "dws_qlinear.onnx").string());
  om::onnx::write(qdq_form(dws, true), (fs::path(o.models) / "dws_qdq.onnx").string());
  std::vector<Row> rows;
  if (!ort_u8s8_exact())
    std::printf("note: this CPU has no VNNI dot product, so ONNX Runtime's u8 x s8 product saturates its 16-bit pair "
                "sums: the QLinear and QDQ forms are compared at tolerance 0.3 (0.1 elsewhere)\n");
  const int status = compare_main(o, "bench_int8", "int8 models and their f32 twins", cases(), &rows);
  if (!o.check_only) {
    std::printf("\n| int8 form | Session Fast us | its f32 twin us | f32 / int8 (speed-up) |\n|---|---|---|---|\n");
    for (const Row& r : rows) {
      std::string label = r.label;
      size_t at = std::string::npos;
      for (const char* form : {"-qlinear", "-dynamic", "-qdq"}) at = std::min(at, label.find(form));
      if (at == std::string::npos) continue;
      const std::string twin = label.substr(0, at) + "-f32" + label.substr(label.find('-', at + 1));
      for (const Row& t : rows)
        if (twin == t.label && r.fast > 0 && t.fast > 0)
          std::printf("| %s | %.1f | %.1f | %.2f |\n", r.label, r.fast, t.fast, t.fast / r.fast);
    }
  }
  return status;
}
