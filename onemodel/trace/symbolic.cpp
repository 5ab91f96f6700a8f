#include "onemodel/trace/symbolic.h"

#include <algorithm>

namespace om::trace {

int64_t extent_value(const Extent& e, const AtomSize& size) {
  int64_t v = e.coef;
  for (uint32_t a : e.atoms) v *= size(a);
  return v;
}

bool any_symbolic(const SymShape& s) {
  for (const Extent& e : s)
    if (!e.is_static()) return true;
  return false;
}

Extent multiply(const Extent& a, const Extent& b) {
  Extent r;
  r.coef = a.coef * b.coef;
  r.atoms = a.atoms;
  r.atoms.insert(r.atoms.end(), b.atoms.begin(), b.atoms.end());
  std::sort(r.atoms.begin(), r.atoms.end());
  return r;
}

namespace {

// The subset of `pool` (by mask) whose product best fits `target`: exact when `exact`, else the
// largest product dividing target. Returns the mask (0 = none).
uint32_t pick_atoms(const std::vector<uint32_t>& pool, const std::vector<bool>& used, int64_t target, bool exact, const AtomSize& size) {
  const size_t n = pool.size();
  if (n > 16) return 0;
  uint32_t best = 0;
  int64_t best_product = 1;
  for (uint32_t mask = 1; mask < (1u << n); ++mask) {
    int64_t p = 1;
    bool ok = true;
    for (size_t k = 0; k < n && ok; ++k) {
      if (!(mask & (1u << k))) continue;
      if (used[k]) ok = false;
      else p *= size(pool[k]);
    }
    if (!ok || p <= 0 || p > target) continue;
    if (exact ? p == target : (target % p == 0 && p > best_product)) {
      if (exact) return mask;
      best = mask;
      best_product = p;
    }
  }
  return best;
}

}  // namespace

Result<SymShape> reshape_extents(const SymShape& in, const Shape& out, const AtomSize& size, const std::string& call) {
  SymShape result(out.size());
  for (size_t j = 0; j < out.size(); ++j) result[j] = Extent::fixed(out[j]);
  if (!any_symbolic(in)) return result;
  for (int64_t d : out)
    if (d == 0) return result;
  size_t i = 0, j = 0;
  while (i < in.size() || j < out.size()) {
    // Size-1 dims join no group.
    if (j < out.size() && out[j] == 1) { ++j; continue; }
    if (i < in.size() && in[i].is_static() && in[i].coef == 1) { ++i; continue; }
    if (i >= in.size() || j >= out.size())
      return Status::error(ErrorKind::Internal, msg(call, ": reshape groups do not line up"));
    std::vector<size_t> gi{i}, gj{j};
    int64_t pin = extent_value(in[i++], size), pout = out[j++];
    while (pin != pout) {
      if (pin < pout) {
        if (i >= in.size()) return Status::error(ErrorKind::Internal, msg(call, ": reshape groups do not line up"));
        pin *= extent_value(in[i], size);
        gi.push_back(i++);
      } else {
        if (j >= out.size()) return Status::error(ErrorKind::Internal, msg(call, ": reshape groups do not line up"));
        pout *= out[j];
        gj.push_back(j++);
      }
    }
    std::vector<uint32_t> pool;
    for (size_t k : gi) pool.insert(pool.end(), in[k].atoms.begin(), in[k].atoms.end());
    if (pool.empty()) continue;
    std::vector<bool> used(pool.size(), false);
    std::vector<bool> done(gj.size(), false);
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t q = 0; q < gj.size(); ++q) {
        if (done[q]) continue;
        const int64_t target = out[gj[q]];
        const uint32_t mask = pick_atoms(pool, used, target, pass == 0, size);
        if (!mask) continue;
        Extent e;
        int64_t p = 1;
        for (size_t k = 0; k < pool.size(); ++k) {
          if (!(mask & (1u << k))) continue;
          used[k] = true;
          e.atoms.push_back(pool[k]);
          p *= size(pool[k]);
        }
        std::sort(e.atoms.begin(), e.atoms.end());
        e.coef = target / p;
        result[gj[q]] = e;
        done[q] = true;
      }
    }
    for (size_t k = 0; k < pool.size(); ++k) {
      if (!used[k]) {
        std::string outs;
        for (size_t q : gj) outs += (outs.empty() ? "" : ",") + std::to_string(out[q]);
        return Status::trace(TraceErrorKind::SymbolicShape,
                             msg(call, ": cannot tell which output dims of the reshape to ", shape_str(out), " carry the symbolic sizes (output dims [",
                                 outs, "] mix them ambiguously); reshape so each symbolic axis maps to whole output dims, "
                                 "or trace with example sizes that do not divide each other"));
      }
    }
  }
  return result;
}

}  // namespace om::trace
