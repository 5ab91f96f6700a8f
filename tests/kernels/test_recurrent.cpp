// f32_recurrent_step: every form on every ISA gives the scalar reference's bits (hidden sizes
// with vector tails and past a block, awkward values), and the reference does each element's documented operation
// sequence (kernels.h), written here one operation at a time as the separate loops and f32_unary
// passes it replaces.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/kernel_test_util.h"
#include "onemodel/kernels/kernels.h"

using namespace om::kernels;
using namespace om::kernels::test;

namespace {

using Form = RecurrentForm;

// One step's buffers: inputs from fixed seeds, outputs filled with a marker.
struct StepData {
  size_t n;
  std::vector<float> gates, bias, peep, x_h, rec_bias, c, h, y, rh;
  StepData(size_t n_, uint32_t seed)
      : n(n_),
        gates(awkward_values(4 * n_, seed, 6.0f)),
        bias(awkward_values(4 * n_, seed + 1, 2.0f)),
        peep(awkward_values(3 * n_, seed + 2, 1.5f)),
        x_h(awkward_values(n_, seed + 3, 6.0f)),
        rec_bias(awkward_values(n_, seed + 4, 2.0f)),
        c(awkward_values(n_, seed + 5, 3.0f)),
        h(awkward_values(n_, seed + 6, 1.0f)),
        y(n_, 12345.0f),
        rh(n_, 12345.0f) {}
  RecurrentStep step(Form form, bool peephole, bool with_y, bool fast = false) {
    RecurrentStep s;
    s.form = form;
    s.fast = fast;
    s.n = n;
    s.gates = gates.data();
    s.bias = bias.data();
    s.peep = peephole ? peep.data() : nullptr;
    s.x_h = x_h.data();
    s.rec_bias = rec_bias.data();
    s.c = c.data();
    s.h = h.data();
    s.y = with_y ? y.data() : nullptr;
    s.rh = rh.data();
    return s;
  }
  std::vector<const std::vector<float>*> all() const { return {&gates, &c, &h, &y, &rh}; }
};

// The documented sequence, one operation per statement, the activations through f32_unary's
// scalar form.
void reference(StepData& d, Form form, bool peephole, bool with_y) {
  const size_t n = d.n;
  auto sig = [](float x) { return sigmoid_f32(x); };
  auto th = [](float x) { return tanh_f32(x); };
  for (size_t j = 0; j < n; ++j) {
    auto u = [&](size_t k) { return d.gates[k * n + j] + d.bias[k * n + j]; };
    float h = 0.0f;
    switch (form) {
      case Form::Lstm: {
        const float cp = d.c[j];
        float ui = u(0), uf = u(2), uo = u(1);
        if (peephole) {
          const float pi = d.peep[j] * cp, pf = d.peep[2 * n + j] * cp;
          ui = ui + pi;
          uf = uf + pf;
        }
        const float i = sig(ui), f = sig(uf), g = th(u(3));
        const float fc = f * cp, ig = i * g;
        d.c[j] = fc + ig;
        if (peephole) {
          const float po = d.peep[n + j] * d.c[j];
          uo = uo + po;
        }
        h = sig(uo) * th(d.c[j]);
        break;
      }
      case Form::GruGates:
        d.gates[j] = sig(u(0));
        d.rh[j] = sig(u(1)) * d.h[j];
        continue;
      case Form::GruHidden:
      case Form::GruLinearBeforeReset: {
        float z = d.gates[j], hn = 0.0f;
        if (form == Form::GruHidden) {
          hn = th(d.x_h[j] + d.bias[2 * n + j]);
        } else {
          z = sig(u(0));
          const float r = sig(u(1));
          const float xin = d.x_h[j] + d.bias[2 * n + j], rec = d.gates[2 * n + j] + d.rec_bias[j];
          const float rrec = r * rec;
          hn = th(xin + rrec);
        }
        const float a = (1.0f - z) * hn, bz = z * d.h[j];
        h = a + bz;
        break;
      }
      case Form::Rnn: h = th(u(0)); break;
    }
    d.h[j] = h;
    if (with_y) d.y[j] = h;
  }
}

struct Case {
  Form form;
  bool peephole;
  const char* name;
};
const Case kCases[] = {{Form::Lstm, false, "lstm"},
                       {Form::Lstm, true, "lstm peepholes"},
                       {Form::GruGates, false, "gru gates (linear_before_reset 0)"},
                       {Form::GruHidden, false, "gru hidden (linear_before_reset 0)"},
                       {Form::GruLinearBeforeReset, false, "gru linear_before_reset 1"},
                       {Form::Rnn, false, "rnn"}};
const size_t kSizes[] = {0, 1, 3, 7, 8, 15, 16, 17, 33, 47, 128, 131, 256, 263, 530};  // past a block (256) too

}  // namespace

TEST_CASE("f32_recurrent_step: native == scalar bitwise on every ISA, every form and hidden size, exact and fast maps") {
  uint32_t seed = 900;
  for (const Case& c : kCases)
    for (size_t n : kSizes)
      for (bool with_y : {false, true})
        for (bool fast : {false, true}) {
        seed += 10;
        StepData want(n, seed);
        {
          IsaScope scalar(Isa::Scalar);
          f32_recurrent_step(want.step(c.form, c.peephole, with_y, fast));
        }
        for (Isa isa : available_isas()) {
          IsaScope scope(isa);
          StepData got(n, seed);
          f32_recurrent_step(got.step(c.form, c.peephole, with_y, fast));
          INFO(c.name << " isa " << isa_name(isa) << " n " << n << " y " << with_y << " fast " << fast);
          const auto w = want.all(), g = got.all();
          for (size_t b = 0; b < w.size(); ++b) {
            INFO("buffer " << b);
            CHECK(first_mismatch(g[b]->data(), w[b]->data(), g[b]->size()) == g[b]->size());
          }
        }
      }
}

TEST_CASE("f32_recurrent_step: the reference does each element's documented operations") {
  uint32_t seed = 1700;
  for (const Case& c : kCases)
    for (size_t n : kSizes) {
      seed += 10;
      StepData want(n, seed), got(n, seed);
      reference(want, c.form, c.peephole, true);
      IsaScope scalar(Isa::Scalar);
      f32_recurrent_step(got.step(c.form, c.peephole, true));
      INFO(c.name << " n " << n);
      const auto w = want.all(), g = got.all();
      for (size_t b = 0; b < w.size(); ++b) {
        INFO("buffer " << b);
        CHECK(first_mismatch(g[b]->data(), w[b]->data(), g[b]->size()) == g[b]->size());
      }
    }
}

TEST_CASE("f32_recurrent_step: the fast gate maps stay within about 1e-7 of the exact ones, NaN and infinities included") {
  // Every form on values from -20 to 20 (through the series split at 1/8 and past exp's cutoff),
  // and the special values: each output of the fast step against the exact step's.
  for (const Case& c : kCases) {
    const size_t n = 263;
    StepData exact(n, 3100), fast(n, 3100);
    for (StepData* d : {&exact, &fast}) {
      for (size_t i = 0; i < d->gates.size(); ++i) d->gates[i] = -20.0f + 40.0f * float(i) / float(d->gates.size());
      for (size_t i = 0; i < d->x_h.size(); ++i) d->x_h[i] = 0.3f - 0.6f * float(i) / float(n);  // around the split
      d->gates[5] = NAN;
      d->gates[6] = INFINITY;
      d->gates[7] = -INFINITY;
      d->gates[8] = 1e-30f;
      d->gates[9] = -0.0f;
      std::fill(d->bias.begin(), d->bias.end(), 0.0f);
    }
    f32_recurrent_step(exact.step(c.form, c.peephole, true));
    f32_recurrent_step(fast.step(c.form, c.peephole, true, true));
    INFO(c.name);
    const auto e = exact.all(), f = fast.all();
    for (size_t b = 0; b < e.size(); ++b)
      for (size_t i = 0; i < e[b]->size(); ++i) {
        const float x = (*e[b])[i], y = (*f[b])[i];
        INFO("buffer " << b << " element " << i << " exact " << x << " fast " << y);
        if (std::isnan(x)) {
          CHECK(std::isnan(y));
          continue;
        }
        // The maps are within about 1.2e-7 of the exact ones here; GRU's blend (1 - z) * hn, with z
        // the raw gate values up to 20, scales hn's difference by up to 21.
        CHECK((x == y || std::fabs(x - y) <= 1e-6f * std::max(1.0f, std::fabs(x))));
      }
  }
}
