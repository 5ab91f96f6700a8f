// Lowerings of the recurrent layers (docs/tracing.md, "Recurrent layers"); included by
// lowering.cpp inside namespace lowering_impl, before its table.
//
// LstmLayer / GruLayer -> one LSTM / GRU node (one direction, linear_before_reset = 1 for the
// GRU, layout 0): PyTorch's gate rows are put in ONNX's order by Gather on the weight and bias
// rows (constants, so a Session folds them into reordered initializers); W, R, B and the
// initial states get their leading num_directions axis by Unsqueeze; Y [T, 1, B, H] becomes
// [T, B, H] by Squeeze (then a Transpose for batch_first). RnnState -> Squeeze of that node's
// Y_h / Y_c.
#pragma once

namespace {

SymShape static_sym(const Shape& s) {
  SymShape out;
  for (int64_t d : s) out.push_back(Extent::fixed(d));
  return out;
}

// ValueId of `v` with a new leading (axis 0) size-1 axis.
Result<ValueId> unsqueeze0(Ctx& c, ValueId v) {
  Shape shape = c.s.shape_of(v);
  SymShape sym = c.s.sym_of(v);
  shape.insert(shape.begin(), 1);
  sym.insert(sym.begin(), Extent::fixed(1));
  OM_ASSIGN_OR_RETURN(ValueId axes, c.s.const_i64({0}));
  return c.s.emit("Unsqueeze", {v, axes}, {}, c.s.value(v).dtype, shape, sym);
}

Result<ValueId> swap01(Ctx& c, ValueId v) {
  Shape shape = c.s.shape_of(v);
  SymShape sym = c.s.sym_of(v);
  std::swap(shape[0], shape[1]);
  std::swap(sym[0], sym[1]);
  return c.s.emit("Transpose", {v}, {AttrSpec::of_ints("perm", {1, 0, 2})}, c.s.value(v).dtype, shape, sym);
}

Result<ValueId> lower_rnn_layer(Ctx& c) {
  const RnnLayerAttrs& a = c.rec.attrs_as<RnnLayerAttrs>();
  const int64_t H = a.hidden, G = a.gru ? 3 : 4;
  size_t next = 3;
  const size_t i_bias = a.has_bias ? next : 0;
  if (a.has_bias) next += 2;
  const size_t i_h0 = a.has_h0 ? next++ : 0;
  const size_t i_c0 = a.has_c0 ? next++ : 0;

  // PyTorch i, f, g, o -> ONNX i, o, f, c; PyTorch r, z, n -> ONNX z, r, h.
  const std::vector<int64_t> blocks = a.gru ? std::vector<int64_t>{1, 0, 2} : std::vector<int64_t>{0, 3, 1, 2};
  std::vector<int64_t> rows;
  for (int64_t blk : blocks)
    for (int64_t j = 0; j < H; ++j) rows.push_back(blk * H + j);
  OM_ASSIGN_OR_RETURN(ValueId idx, c.s.const_i64(rows));
  auto reorder = [&](ValueId w) -> Result<ValueId> {
    const Shape shape = c.s.shape_of(w);
    SymShape sym = c.s.sym_of(w);
    sym[0] = Extent::fixed(shape[0]);
    return c.s.emit("Gather", {w, idx}, {AttrSpec::of_int("axis", 0)}, DType::f32, shape, sym);
  };
  OM_ASSIGN_OR_RETURN(ValueId w0, reorder(c.in[1]));
  OM_ASSIGN_OR_RETURN(ValueId W, unsqueeze0(c, w0));
  OM_ASSIGN_OR_RETURN(ValueId r0, reorder(c.in[2]));
  OM_ASSIGN_OR_RETURN(ValueId R, unsqueeze0(c, r0));
  ValueId Bv = kNoValue, h0 = kNoValue, c0 = kNoValue;
  if (a.has_bias) {
    OM_ASSIGN_OR_RETURN(ValueId bi, reorder(c.in[i_bias]));
    OM_ASSIGN_OR_RETURN(ValueId bh, reorder(c.in[i_bias + 1]));
    OM_ASSIGN_OR_RETURN(ValueId b2, c.s.emit("Concat", {bi, bh}, {AttrSpec::of_int("axis", 0)}, DType::f32, {2 * G * H},
                                               static_sym({2 * G * H})));
    OM_ASSIGN_OR_RETURN(Bv, unsqueeze0(c, b2));
  }
  if (a.has_h0) {
    OM_ASSIGN_OR_RETURN(h0, unsqueeze0(c, c.in[i_h0]));
  }
  if (a.has_c0) {
    OM_ASSIGN_OR_RETURN(c0, unsqueeze0(c, c.in[i_c0]));
  }
  ValueId x = c.in[0];
  if (a.batch_first) {
    OM_ASSIGN_OR_RETURN(x, swap01(c, x));
  }
  const Shape xs = c.s.shape_of(x);
  const SymShape xsym = c.s.sym_of(x);
  std::vector<ValueId> ins = {x, W, R, Bv, kNoValue, h0, c0};
  if (a.gru) ins.pop_back();
  while (ins.back() == kNoValue) ins.pop_back();
  std::vector<TraceState::OutSpec> outs;
  outs.push_back({DType::f32, {xs[0], 1, xs[1], H}, {xsym[0], Extent::fixed(1), xsym[1], Extent::fixed(H)}});
  const TraceState::OutSpec state{DType::f32, {1, xs[1], H}, {Extent::fixed(1), xsym[1], Extent::fixed(H)}};
  outs.push_back(state);
  if (!a.gru) outs.push_back(state);
  std::vector<AttrSpec> attrs = {AttrSpec::of_int("hidden_size", H)};
  if (a.gru) attrs.push_back(AttrSpec::of_int("linear_before_reset", 1));
  OM_ASSIGN_OR_RETURN(std::vector<ValueId> ids, c.s.emit_multi(a.gru ? "GRU" : "LSTM", ins, attrs, outs));
  OM_ASSIGN_OR_RETURN(ValueId axes, c.s.const_i64({1}));
  OM_ASSIGN_OR_RETURN(ValueId y, c.s.emit("Squeeze", {ids[0], axes}, {}, DType::f32, {xs[0], xs[1], H}, {xsym[0], xsym[1], Extent::fixed(H)}));
  if (a.batch_first) {
    OM_ASSIGN_OR_RETURN(y, swap01(c, y));
  }
  c.s.rnn_states[y] = std::vector<ValueId>(ids.begin() + 1, ids.end());
  return y;
}

}  // namespace

OM_LOWER(LstmLayer) { return lower_rnn_layer(c); }
OM_LOWER(GruLayer) { return lower_rnn_layer(c); }
OM_LOWER(RnnState) {
  const RnnLayerAttrs& a = c.rec.attrs_as<RnnLayerAttrs>();
  auto it = c.s.rnn_states.find(c.in.back());
  if (it == c.s.rnn_states.end() || a.state < 1 || size_t(a.state) > it->second.size())
    return Status::error(ErrorKind::Internal, msg(c.s.where(c.call()), ": the recurrent layer's node was not lowered"));
  const ValueId v = it->second[size_t(a.state - 1)];
  SymShape sym = c.s.sym_of(v);
  sym.erase(sym.begin());
  OM_ASSIGN_OR_RETURN(ValueId axes, c.s.const_i64({0}));
  return c.emit("Squeeze", {v, axes}, {}, sym);
}
