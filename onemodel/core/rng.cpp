#include <cmath>
#include <cstring>

#include "onemodel/kernels/sync.h"
#include "onemodel/core/status.h"

#include "onemodel/core/tensor.h"
#include "onemodel/core/tensor_internal.h"
#include "onemodel/kernels/kernels.h"

namespace om {

// PCG32 (XSH RR): integer-only, so the stream is the same on every platform.
Generator::Generator(uint64_t s) { seed(s); }

void Generator::seed(uint64_t s) {
  state_ = 0;
  has_spare_ = false;
  next_u32();
  state_ += s;
  next_u32();
}

Tensor Generator::get_state() const {
  // state_ (8 bytes), spare_'s bits (4), has_spare_ (1), 3 zero bytes.
  Tensor t = zeros({kStateBytes}, DType::u8);
  uint8_t* p = t.mutable_data<uint8_t>();
  std::memcpy(p, &state_, 8);
  std::memcpy(p + 8, &spare_, 4);
  p[12] = has_spare_ ? 1 : 0;
  return t;
}

void Generator::set_state(const Tensor& state) {
  const char* call = "om::Generator::set_state";
  if (!state.defined() || state.dtype() != DType::u8 || state.numel() != kStateBytes)
    raise(Status::error(ErrorKind::InvalidArgument, msg(call, ": the state must be a u8 tensor of ", kStateBytes, " bytes from get_state(), got ",
                                                        state.to_string())));
  const std::vector<uint8_t> b = state.to_vector<uint8_t>();
  if (b[12] > 1 || b[13] || b[14] || b[15])
    raise(Status::error(ErrorKind::InvalidArgument, msg(call, ": bytes 12..15 of the state must be 0 or 1 then zeros (got ", int(b[12]), ", ", int(b[13]),
                                                        ", ", int(b[14]), ", ", int(b[15]), "): not a state get_state() wrote")));
  std::memcpy(&state_, b.data(), 8);
  std::memcpy(&spare_, b.data() + 8, 4);
  has_spare_ = b[12] == 1;
}

uint32_t Generator::next_u32() {
  const uint64_t old = state_;
  state_ = old * 6364136223846793005ULL + 1442695040888963407ULL;
  const uint32_t xorshifted = uint32_t(((old >> 18u) ^ old) >> 27u);
  const uint32_t rot = uint32_t(old >> 59u);
  return (xorshifted >> rot) | (xorshifted << ((32 - rot) & 31));
}

float Generator::uniform() { return float(next_u32() >> 8) * (1.0f / 16777216.0f); }

float Generator::normal() {
  // Marsaglia's polar method: only +, *, sqrt (correctly rounded everywhere) and the library's
  // own log, so normals are bit-identical across machines.
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  float u, v, s;
  do {
    u = 2.0f * uniform() - 1.0f;
    v = 2.0f * uniform() - 1.0f;
    s = u * u + v * v;
  } while (s >= 1.0f || s == 0.0f);
  const float f = std::sqrt(-2.0f * kernels::log_f32(s) / s);
  spare_ = v * f;
  has_spare_ = true;
  return u * f;
}

Generator& default_generator() {
  static OM_THREAD_LOCAL Generator gen;
  return gen;
}

Tensor rand(const Shape& shape, Generator& gen) {
  Tensor t = empty(shape, DType::f32);
  float* p = detail::raw_as<float>(t);
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = gen.uniform();
  return t;
}

Tensor randn(const Shape& shape, Generator& gen) {
  Tensor t = empty(shape, DType::f32);
  float* p = detail::raw_as<float>(t);
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = gen.normal();
  return t;
}

}  // namespace om
