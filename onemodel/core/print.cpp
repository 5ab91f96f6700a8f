// PyTorch-like summarised printing (onemodel/core/print.h).
#include "onemodel/core/print.h"

#include <cmath>
#include <cstdio>
#include <ostream>
#include <vector>

#include "onemodel/core/tensor_internal.h"
#include "onemodel/core/trace_hook.h"

namespace om {
namespace {

struct Printer {
  const PrintOptions& opt;
  const Shape& shape;
  std::vector<double> values;  // all elements, row-major
  bool summarise = false;
  bool is_float = false;
  bool is_bool = false;
  enum class Style { Integral, Fixed, Scientific } style = Style::Fixed;
  int width = 0;

  // Indices printed along axis `d` (-1 marks the "..." gap).
  std::vector<int64_t> shown(size_t d) const {
    std::vector<int64_t> idx;
    const int64_t n = shape[d];
    if (!summarise || n <= 2 * opt.edge_items) {
      for (int64_t i = 0; i < n; ++i) idx.push_back(i);
      return idx;
    }
    for (int64_t i = 0; i < opt.edge_items; ++i) idx.push_back(i);
    idx.push_back(-1);
    for (int64_t i = n - opt.edge_items; i < n; ++i) idx.push_back(i);
    return idx;
  }

  // Visits the printed elements to choose one format and width for all of them.
  void collect(size_t d, int64_t base, std::vector<double>* out) const {
    if (d == shape.size()) {
      out->push_back(values[size_t(base)]);
      return;
    }
    int64_t stride = 1;
    for (size_t k = d + 1; k < shape.size(); ++k) stride *= shape[k];
    for (int64_t i : shown(d))
      if (i >= 0) collect(d + 1, base + i * stride, out);
  }

  std::string format(double v) const {
    char buf[64];
    if (is_bool) return v != 0 ? "true" : "false";
    if (!is_float) {
      std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
      return buf;
    }
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    switch (style) {
      case Style::Integral: std::snprintf(buf, sizeof buf, "%.0f.", v); break;
      case Style::Fixed: std::snprintf(buf, sizeof buf, "%.*f", opt.precision, v); break;
      case Style::Scientific: std::snprintf(buf, sizeof buf, "%.*e", opt.precision, v); break;
    }
    return buf;
  }

  void choose_format() {
    std::vector<double> printed;
    collect(0, 0, &printed);
    if (is_float) {
      bool integral = true;
      double max_abs = 0, min_abs = 0;
      bool any = false;
      for (double v : printed) {
        if (!std::isfinite(v)) continue;
        integral = integral && v == std::floor(v);
        const double a = std::fabs(v);
        if (a == 0) continue;
        max_abs = any ? std::max(max_abs, a) : a;
        min_abs = any ? std::min(min_abs, a) : a;
        any = true;
      }
      if (any && (max_abs >= 1e8 || (!integral && (min_abs < 1e-4 || max_abs / min_abs > 1e3)))) style = Style::Scientific;
      else style = integral ? Style::Integral : Style::Fixed;
    }
    for (double v : printed) width = std::max(width, int(format(v).size()));
  }

  void print(size_t d, int64_t base, int indent, std::string* out) const {
    if (shape.empty()) {
      *out += format(values[0]);
      return;
    }
    int64_t stride = 1;
    for (size_t k = d + 1; k < shape.size(); ++k) stride *= shape[k];
    *out += '[';
    const std::vector<int64_t> idx = shown(d);
    const bool last_axis = d + 1 == shape.size();
    int column = indent + 1;
    for (size_t k = 0; k < idx.size(); ++k) {
      if (k > 0) {
        if (last_axis) {
          *out += ',';
          // Wrap long rows like PyTorch, aligned under the first element.
          if (column + width + 2 > opt.line_width) {
            *out += '\n' + std::string(size_t(indent + 1), ' ');
            column = indent + 1;
          } else {
            *out += ' ';
            ++column;
          }
        } else {
          *out += ',';
          *out += std::string(shape.size() - d - 1, '\n');
          *out += std::string(size_t(indent + 1), ' ');
        }
      }
      if (idx[k] < 0) {
        *out += "...";
        column += 3;
        continue;
      }
      if (last_axis) {
        const std::string s = format(values[size_t(base + idx[k] * stride)]);
        *out += std::string(size_t(width) - s.size(), ' ') + s;
        column += width + 1;
      } else {
        print(d + 1, base + idx[k] * stride, indent + 1, out);
      }
    }
    *out += ']';
  }
};

Result<std::string> format_tensor(const Tensor& t, const PrintOptions& opt) {
  if (!t.defined()) return std::string("tensor(undefined)");
  std::string tail = msg("shape=", shape_str(t.shape()), ", dtype=", dtype_name(t.dtype()));
  if (t.requires_grad()) tail += ", requires_grad=true";
  if (detail::TraceHook* h = detail::trace_hook(); h && h->is_traced(*t.impl()))
    return "tensor(<traced: values exist only when the graph runs>, " + tail + ")";
  OM_TRY(detail::check_live(t, "om::to_string(tensor)"));
  Printer p{opt, t.shape(), {}};
  OM_ASSIGN_OR_RETURN(Tensor dense, detail::dense(t));
  const int64_t n = t.numel();
  p.values.resize(size_t(n));
  for (int64_t i = 0; i < n; ++i) p.values[size_t(i)] = detail::element_as_double(dense, i);
  p.is_float = t.dtype() == DType::f32 || t.dtype() == DType::f16;
  p.is_bool = t.dtype() == DType::boolean;
  p.summarise = n > opt.threshold;
  std::string body;
  if (n == 0) {
    body = "[]";
  } else {
    p.choose_format();
    p.print(0, 0, 7, &body);  // 7 = strlen("tensor(")
  }
  return "tensor(" + body + ", " + tail + ")";
}

}  // namespace

std::string to_string(const Tensor& t, const PrintOptions& options) { return unwrap(format_tensor(t, options)); }

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << to_string(t); }

}  // namespace om
