// Symbolic extents (docs/tracing.md, "Symbolic axes"): every axis of a traced value is coefficient × product of atoms,
// where an atom is a declared symbol (a named input axis) or an extent derived by an operation.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "onemodel/core/shape.h"
#include "onemodel/core/status.h"

namespace om::trace {

struct Extent {
  int64_t coef = 1;
  std::vector<uint32_t> atoms;  // sorted atom ids; empty = static extent `coef`
  bool is_static() const { return atoms.empty(); }
  bool operator==(const Extent& o) const { return coef == o.coef && atoms == o.atoms; }
  static Extent fixed(int64_t n) { return Extent{n, {}}; }
  static Extent atom(uint32_t id) { return Extent{1, {id}}; }
};
using SymShape = std::vector<Extent>;

using AtomSize = std::function<int64_t(uint32_t)>;  // an atom's example size

int64_t extent_value(const Extent& e, const AtomSize& size);
bool any_symbolic(const SymShape& s);
Extent multiply(const Extent& a, const Extent& b);

// Output extents of a reshape from `in` to the concrete `out` shape: both sides split into
// groups of equal element count; each output dim takes the group's atoms whose example sizes
// multiply to it exactly, then those that divide it. Leftover atoms make the reshape ambiguous
// (SymbolicShape naming `call`).
Result<SymShape> reshape_extents(const SymShape& in, const Shape& out, const AtomSize& size, const std::string& call);

}  // namespace om::trace
