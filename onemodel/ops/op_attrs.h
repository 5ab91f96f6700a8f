// The typed attributes of eager records, one struct per kind of operator (named in ops.def's last
// column). The operator fills it, its gradient and its tracer lowering read the same named
// fields, so the record's layout is written down once (docs/adding-an-operator.md).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <variant>
#include <vector>

#include "onemodel/core/dtype.h"
#include "onemodel/ops/op_id.h"
#include "onemodel/ops/ops.h"

namespace om {

struct NoAttrs {};
struct GeluAttrs {
  bool tanh = false;  // approximate = tanh, else the erf form
};
struct ReduceAttrs {
  bool all = true;  // over every element (axis and keepdim unused)
  int64_t axis = 0;  // normalised, in [0, rank)
  bool keepdim = false;
};
struct SoftmaxAttrs {
  int64_t axis = 0;  // normalised
};
struct ConcatAttrs {
  int64_t axis = 0;  // normalised
};
struct PermuteAttrs {
  std::vector<int64_t> perm;  // output axis k is input axis perm[k]
};
struct SqueezeAttrs {
  int64_t dim = -1;  // the squeezed axis (normalised), or -1: every size-1 axis
};
struct UnsqueezeAttrs {
  int64_t dim = 0;  // the new axis' position in the output (normalised)
};
struct SliceAttrs {
  int64_t dim = 0, start = 0, end = 0, step = 1;  // normalised and clamped to the input
  // As the user wrote them: on a symbolic axis a negative bound (or an end at or past the size,
  // INT64_MAX = "to the end") keeps counting from the end at every size.
  int64_t start_as_given = 0, end_as_given = 0;
};
struct SelectAttrs {
  int64_t dim = 0;
  int64_t index = 0;           // normalised, in [0, size)
  int64_t index_as_given = 0;  // as the user wrote it: a symbolic axis keeps a negative one
};
struct FlipAttrs {
  int64_t dim = 0;
};
struct IndexSelectAttrs {
  int64_t dim = 0;  // normalised
};
struct CastAttrs {
  DType to = DType::f32;
};
struct NllLossAttrs {
  Reduction reduction = Reduction::Mean;
  int64_t ignore_index = -100;
  int64_t counted = 0;  // targets not ignored (the mean's divisor)
  std::vector<float> weight;  // per-class weights (empty: all 1)
  double weight_sum = 0;      // the weighted mean's divisor: sum of weight[target] not ignored
};

// ---- training: math, selection, losses ----
struct ClampAttrs {
  bool has_min = false, has_max = false;
  double min = 0, max = 0;
};
struct TopKAttrs {
  int64_t axis = 0;  // normalised
  int64_t k = 1;
  bool largest = true;
};
struct LossAttrs {
  Reduction reduction = Reduction::Mean;
};
struct CrossEntropyAttrs {
  Reduction reduction = Reduction::Mean;
  int64_t ignore_index = -100;
  double label_smoothing = 0;
  std::vector<float> weight;  // per-class weights (empty: all 1)
  double divisor = 1;         // the mean's divisor of the NLL part (sum of weight[target] over counted rows)
  double smooth_divisor = 1;  // the mean's divisor of the smoothing part (PyTorch: rows, or the weight sum)
};
struct SmoothL1Attrs {
  Reduction reduction = Reduction::Mean;
  double beta = 1;   // smooth_l1: beta; huber: delta
};
struct BceAttrs {
  Reduction reduction = Reduction::Mean;  // inputs: logits, target, pos_weight (may be undefined)
};
struct CtcAttrs {
  Reduction reduction = Reduction::Mean;
  int64_t blank = 0;
  bool zero_infinity = false;
  std::vector<int64_t> input_lengths, target_lengths;
};
// lstm_layer / gru_layer records (ops/rnn.cpp): which optional inputs follow x, w_ih, w_hh (b_ih
// and b_hh, then h0, then c0), and for RnnState which final state the record produces.
struct RnnLayerAttrs {
  bool gru = false;
  int64_t hidden = 0;
  bool batch_first = false;
  bool has_bias = false, has_h0 = false, has_c0 = false;
  int64_t state = 0;  // RnnState: 1 = h_n, 2 = c_n (the last input is the layer's output sequence)
};
struct LayerNormAttrs {
  int64_t normalized_dims = 1;  // trailing axes normalised together
  double eps = 1e-5;
};
struct EmbeddingAttrs {
  int64_t padding_idx = -1;  // normalised row that gets no gradient, or -1
};
struct DropoutAttrs {
  double p = 0.5;
};
struct Conv2dAttrs {  // conv2d and conv_transpose2d
  std::array<int64_t, 2> stride{{1, 1}}, dilation{{1, 1}}, output_padding{{0, 0}};
  std::array<int64_t, 4> pads{{0, 0, 0, 0}};  // top, left, bottom, right
  int64_t groups = 1;
};
struct Pool2dAttrs {  // max_pool2d and avg_pool2d
  std::array<int64_t, 2> kernel{{1, 1}}, stride{{1, 1}}, dilation{{1, 1}};
  std::array<int64_t, 4> pads{{0, 0, 0, 0}};  // top, left, bottom, right
  bool ceil_mode = false, count_include_pad = false;
};
struct BatchNormAttrs {
  double eps = 1e-5, momentum = 0.1;
  bool training = false;
};
struct Resize2dAttrs {
  int64_t out_h = 1, out_w = 1;
  bool bilinear = false, align_corners = false;
  // Scale factors (om::interpolate, Upsample::with_scale; 0 = an explicit size): the output is
  // floor(in * scale) and the coordinate transform uses the scale, as ONNX Resize with `scales`.
  float scale_h = 0, scale_w = 0;
};

// Every attribute struct once (a variant needs distinct types).
using OpAttrs = std::variant<NoAttrs, GeluAttrs, ReduceAttrs, SoftmaxAttrs, ConcatAttrs, PermuteAttrs, SqueezeAttrs,
                             UnsqueezeAttrs, SliceAttrs, SelectAttrs, FlipAttrs, IndexSelectAttrs, CastAttrs, NllLossAttrs,
                             RnnLayerAttrs,
                             // training (ops/math.cpp, ops/select.cpp, ops/losses.cpp)
                             ClampAttrs, TopKAttrs, CrossEntropyAttrs, LossAttrs, SmoothL1Attrs, BceAttrs, CtcAttrs,
                             // transformer
                             LayerNormAttrs, EmbeddingAttrs, DropoutAttrs,
                             // convolutional
                             Conv2dAttrs, Pool2dAttrs, BatchNormAttrs, Resize2dAttrs>;

// AttrsOf<OpId::Slice> is SliceAttrs: the struct ops.def names for the operator.
template <OpId op> struct AttrsOfOp;
#define OM_OP(id, name, arity, traceable, attrs) \
  template <> struct AttrsOfOp<OpId::id> { using type = attrs; };
#include "onemodel/ops/ops.def"
#undef OM_OP
template <OpId op> using AttrsOf = typename AttrsOfOp<op>::type;

namespace detail {
template <typename T, typename V> struct VariantIndex;
template <typename T, typename... Ts> struct VariantIndex<T, std::variant<Ts...>> {
  static constexpr size_t value = [] {
    constexpr bool same[] = {std::is_same<T, Ts>::value...};
    for (size_t i = 0; i < sizeof...(Ts); ++i)
      if (same[i]) return i;
    return sizeof...(Ts);
  }();
};
}  // namespace detail

// The OpAttrs alternative an operator's records hold.
constexpr size_t attrs_index(OpId op) {
  constexpr size_t table[] = {
#define OM_OP(id, name, arity, traceable, attrs) detail::VariantIndex<attrs, OpAttrs>::value,
#include "onemodel/ops/ops.def"
#undef OM_OP
  };
  return table[size_t(op)];
}

}  // namespace om
