// Gradients of the convolutional family: conv2d / conv_transpose2d (each one's input gradient is
// the other's forward on the same kernels), pools, global average pool, resize2d and
// batch_norm2d. Computed on dense copies; not themselves differentiable (no double backward).
#include <cmath>
#include <vector>

#include "onemodel/autograd/grad.h"
#include "onemodel/core/mode.h"
#include "onemodel/core/tensor_internal.h"
#include "onemodel/ops/conv_internal.h"
#include "onemodel/ops/ops.h"

namespace om::autograd {
namespace {

using ops::conv_detail::conv_geom;
using ops::conv_detail::swapped;

// Sum of g [N, M, P] over N and P, per channel.
Result<Tensor> channel_sum(const Tensor& g, int64_t N, int64_t M, int64_t P) {
  OM_ASSIGN_OR_RETURN(Tensor out, detail::make_tensor({M}, DType::f32));
  const float* pg = detail::raw_as<float>(g);
  float* po = detail::raw_as<float>(out);
  for (int64_t m = 0; m < M; ++m) {
    double s = 0;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t p = 0; p < P; ++p) s += pg[(n * M + m) * P + p];
    po[m] = float(s);
  }
  return out;
}

// The backward both convolutions share, `f` being the forward geometry (x -> y). dx is the other
// convolution's forward on g with the swapped geometry; dw is the weight gradient of whichever
// of the two runs from the image side to the kernel side (x -> y for Conv2d, y -> x for
// ConvTranspose2d); db is the sum of g.
Status conv_backward(const BackwardRecord& r, const Tensor& g, const kernels::ConvGeom& f, bool transposed, std::vector<Tensor>* gin) {
  const Tensor& x = r.inputs[0];
  const Tensor& w = r.inputs[1];
  const kernels::ConvGeom c = swapped(f);
  const ArithmeticMode mode = current_arithmetic_mode();
  OM_ASSIGN_OR_RETURN(Tensor gd, detail::dense(g));
  if (x.requires_grad()) {
    OM_ASSIGN_OR_RETURN(Tensor wd, detail::dense(w));
    OM_ASSIGN_OR_RETURN(Tensor dx, detail::make_tensor(x.shape(), DType::f32));
    if (transposed) {
      std::vector<float> scratch(kernels::conv_scratch_floats(c));
      kernels::f32_conv2d(c, detail::raw_as<float>(gd), detail::raw_as<float>(wd), nullptr, kernels::UnaryOp::Identity,
                          detail::raw_as<float>(dx), scratch.data(), nullptr, mode);
    } else {
      std::vector<float> scratch(kernels::conv_transpose_scratch_floats(c));
      kernels::f32_conv_transpose2d(c, detail::raw_as<float>(gd), detail::raw_as<float>(wd), nullptr, detail::raw_as<float>(dx),
                                    scratch.data(), nullptr, mode);
    }
    (*gin)[0] = dx;
  }
  if (w.requires_grad()) {
    OM_ASSIGN_OR_RETURN(Tensor xd, detail::dense(x));
    OM_ASSIGN_OR_RETURN(Tensor dw, detail::make_tensor(w.shape(), DType::f32));
    const kernels::ConvGeom& wg = transposed ? c : f;
    const Tensor& image = transposed ? gd : xd;
    const Tensor& response = transposed ? xd : gd;
    std::vector<float> scratch(kernels::conv_weight_grad_scratch_floats(wg));
    kernels::f32_conv2d_weight_grad(wg, detail::raw_as<float>(image), detail::raw_as<float>(response), detail::raw_as<float>(dw),
                                    scratch.data(), mode);
    (*gin)[1] = dw;
  }
  if (r.inputs.size() > 2 && r.inputs[2].requires_grad()) {
    OM_ASSIGN_OR_RETURN((*gin)[2], channel_sum(gd, f.N, f.M, f.OH * f.OW));
  }
  return Status::ok();
}

}  // namespace

// y = conv(x, w) + b: dx = conv_transpose(g, w), dw = g x im2col(x), db = sum of g.
Status grad_Conv2d(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  const Shape& x = r.inputs[0].shape();
  const Shape& w = r.inputs[1].shape();
  return conv_backward(r, g, conv_geom(x, w, r.attrs_of<OpId::Conv2d>(), r.output_shape), false, gin);
}

// y = conv_transpose(x, w) + b: dx = conv(g, w), dw = x x im2col(g) (the convolution g -> x's
// weight gradient), db = sum of g.
Status grad_ConvTranspose2d(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  const Shape& x = r.inputs[0].shape();
  const Shape& w = r.inputs[1].shape();
  return conv_backward(r, g, conv_geom(x, w, r.attrs_of<OpId::ConvTranspose2d>(), r.output_shape), true, gin);
}

// Each output's gradient goes to the element its forward picked (the first maximum).
Status grad_MaxPool2d(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  const Tensor& x = r.inputs[0];
  OM_ASSIGN_OR_RETURN(Tensor gd, detail::dense(g));
  OM_ASSIGN_OR_RETURN(Tensor dx, detail::make_tensor(x.shape(), DType::f32, true));
  const int64_t planes = x.shape()[0] * x.shape()[1], HW = x.shape()[2] * x.shape()[3];
  const int64_t P = r.output_shape[2] * r.output_shape[3];
  const int64_t* arg = detail::raw_as<int64_t>(r.saved);
  const float* pg = detail::raw_as<float>(gd);
  float* pd = detail::raw_as<float>(dx);
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t i = 0; i < P; ++i)
      if (arg[p * P + i] >= 0) pd[p * HW + arg[p * P + i]] += pg[p * P + i];
  (*gin)[0] = dx;
  return Status::ok();
}

// Each output's gradient divided by its window's count, spread over the window's in-input elements.
Status grad_AvgPool2d(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  const Tensor& x = r.inputs[0];
  const Pool2dAttrs& a = r.attrs_of<OpId::AvgPool2d>();
  const kernels::ConvGeom pg = ops::conv_detail::pool_geom(x.shape(), a, r.output_shape);
  OM_ASSIGN_OR_RETURN(Tensor gd, detail::dense(g));
  OM_ASSIGN_OR_RETURN(Tensor dx, detail::make_tensor(x.shape(), DType::f32, true));
  const float* pgr = detail::raw_as<float>(gd);
  float* pd = detail::raw_as<float>(dx);
  for (int64_t p = 0; p < pg.N * pg.C; ++p)
    for (int64_t oh = 0; oh < pg.OH; ++oh)
      for (int64_t ow = 0; ow < pg.OW; ++ow) {
        const int64_t cnt = kernels::avg_pool_count(pg, a.pads[2], a.pads[3], a.count_include_pad, oh, ow);
        if (cnt == 0) continue;
        const float v = pgr[(p * pg.OH + oh) * pg.OW + ow] / float(cnt);
        for (int64_t kh = 0; kh < pg.kH; ++kh) {
          const int64_t ih = oh * pg.sH - pg.pad_t + kh * pg.dH;
          if (ih < 0 || ih >= pg.H) continue;
          for (int64_t kw = 0; kw < pg.kW; ++kw) {
            const int64_t iw = ow * pg.sW - pg.pad_l + kw * pg.dW;
            if (iw >= 0 && iw < pg.W) pd[(p * pg.H + ih) * pg.W + iw] += v;
          }
        }
      }
  (*gin)[0] = dx;
  return Status::ok();
}

Status grad_GlobalAvgPool2d(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  const Tensor& x = r.inputs[0];
  OM_ASSIGN_OR_RETURN(Tensor gd, detail::dense(g));
  OM_ASSIGN_OR_RETURN(Tensor dx, detail::make_tensor(x.shape(), DType::f32));
  const int64_t planes = x.shape()[0] * x.shape()[1], n = x.shape()[2] * x.shape()[3];
  const float* pg = detail::raw_as<float>(gd);
  float* pd = detail::raw_as<float>(dx);
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t i = 0; i < n; ++i) pd[p * n + i] = pg[p] / float(n);
  (*gin)[0] = dx;
  return Status::ok();
}

// The forward's taps in reverse: each output's gradient goes to its source element(s) with the
// interpolation weights.
Status grad_Resize2d(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  const Tensor& x = r.inputs[0];
  const kernels::ResizeGeom rg = ops::conv_detail::resize_geom(x.shape(), r.attrs_of<OpId::Resize2d>());
  OM_ASSIGN_OR_RETURN(Tensor gd, detail::dense(g));
  OM_ASSIGN_OR_RETURN(Tensor dx, detail::make_tensor(x.shape(), DType::f32, true));
  const float* pg = detail::raw_as<float>(gd);
  float* pd = detail::raw_as<float>(dx);
  const int64_t HW = rg.H * rg.W, OP = rg.OH * rg.OW;
  for (int64_t oh = 0; oh < rg.OH; ++oh) {
    const double sy = kernels::resize_source_coord(rg.coord, oh, rg.scale_h, rg.H, kernels::resized_length(rg, true));
    for (int64_t ow = 0; ow < rg.OW; ++ow) {
      const double sx = kernels::resize_source_coord(rg.coord, ow, rg.scale_w, rg.W, kernels::resized_length(rg, false));
      if (rg.mode == kernels::ResizeMode::Nearest) {
        const int64_t src = kernels::resize_nearest_index(rg.nearest, sy, rg.H) * rg.W + kernels::resize_nearest_index(rg.nearest, sx, rg.W);
        for (int64_t p = 0; p < rg.NC; ++p) pd[p * HW + src] += pg[p * OP + oh * rg.OW + ow];
        continue;
      }
      int64_t y0, y1, x0, x1;
      float hy0, hy1, wx0, wx1;
      kernels::resize_linear_taps(sy, rg.H, &y0, &y1, &hy0, &hy1);
      kernels::resize_linear_taps(sx, rg.W, &x0, &x1, &wx0, &wx1);
      for (int64_t p = 0; p < rg.NC; ++p) {
        const float v = pg[p * OP + oh * rg.OW + ow];
        float* q = pd + p * HW;
        q[y0 * rg.W + x0] += v * hy0 * wx0;
        q[y0 * rg.W + x1] += v * hy0 * wx1;
        q[y1 * rg.W + x0] += v * hy1 * wx0;
        q[y1 * rg.W + x1] += v * hy1 * wx1;
      }
    }
  }
  (*gin)[0] = dx;
  return Status::ok();
}

// Training: with xh = (x - mean) * inv, dx = inv / n * (n * dxh - sum(dxh) - xh * sum(dxh * xh)),
// dxh = g * weight. Evaluation: dx = g * weight / sqrt(var + eps). Both: dweight = sum(g * xh),
// dbias = sum(g). The running statistics get no gradient.
Status grad_BatchNorm2d(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  const BatchNormAttrs& a = r.attrs_of<OpId::BatchNorm2d>();
  const Tensor& x = r.inputs[0];
  const int64_t N = x.shape()[0], C = x.shape()[1], HW = x.shape()[2] * x.shape()[3];
  const double n = double(N * HW);
  OM_ASSIGN_OR_RETURN(Tensor xd, detail::dense(x));
  OM_ASSIGN_OR_RETURN(Tensor gd, detail::dense(g));
  OM_ASSIGN_OR_RETURN(Tensor wd, detail::dense(r.inputs[1]));
  Tensor md, vd;
  if (!a.training) {
    OM_ASSIGN_OR_RETURN(md, detail::dense(r.inputs[3]));
    OM_ASSIGN_OR_RETURN(vd, detail::dense(r.inputs[4]));
  }
  OM_ASSIGN_OR_RETURN(Tensor dx, detail::make_tensor(x.shape(), DType::f32));
  OM_ASSIGN_OR_RETURN(Tensor dw, detail::make_tensor({C}, DType::f32));
  OM_ASSIGN_OR_RETURN(Tensor db, detail::make_tensor({C}, DType::f32));
  const float* px = detail::raw_as<float>(xd);
  const float* pg = detail::raw_as<float>(gd);
  const float* pw = detail::raw_as<float>(wd);
  float* pdx = detail::raw_as<float>(dx);
  for (int64_t c = 0; c < C; ++c) {
    double mu, inv;
    if (a.training) {
      mu = detail::raw_as<float>(r.saved)[c];
      inv = detail::raw_as<float>(r.saved)[C + c];
    } else {
      mu = detail::raw_as<float>(md)[c];
      inv = 1.0 / std::sqrt(double(detail::raw_as<float>(vd)[c]) + a.eps);
    }
    double sg = 0, sgx = 0;
    for (int64_t b = 0; b < N; ++b)
      for (int64_t i = 0; i < HW; ++i) {
        const int64_t k = (b * C + c) * HW + i;
        sg += pg[k];
        sgx += pg[k] * (px[k] - mu) * inv;
      }
    detail::raw_as<float>(dw)[c] = float(sgx);
    detail::raw_as<float>(db)[c] = float(sg);
    for (int64_t b = 0; b < N; ++b)
      for (int64_t i = 0; i < HW; ++i) {
        const int64_t k = (b * C + c) * HW + i;
        if (a.training) {
          const double xh = (px[k] - mu) * inv;
          pdx[k] = float(inv / n * pw[c] * (n * pg[k] - sg - xh * sgx));
        } else {
          pdx[k] = float(pg[k] * pw[c] * inv);
        }
      }
  }
  if (x.requires_grad()) (*gin)[0] = dx;
  if (r.inputs[1].requires_grad()) (*gin)[1] = dw;
  if (r.inputs[2].requires_grad()) (*gin)[2] = db;
  return Status::ok();
}

}  // namespace om::autograd
