// libFuzzer target for the .npy reader. Any input must give a Status (never a crash or an
// out-of-bounds read); an accepted input must survive write -> read with the same dtype, dims
// and bytes.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "onemodel/io/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  om::Result<om::graph::TensorData> t = om::npy::read_bytes(data, size);
  if (!t.is_ok()) return 0;
  om::Result<std::vector<uint8_t>> bytes = om::npy::write_bytes(t.value());
  if (!bytes.is_ok()) std::abort();  // the reader accepted a tensor the writer refuses
  om::Result<om::graph::TensorData> back = om::npy::read_bytes(bytes.value().data(), bytes.value().size());
  if (!back.is_ok()) std::abort();
  const om::graph::TensorData& a = t.value();
  const om::graph::TensorData& b = back.value();
  if (a.dtype != b.dtype || a.dims != b.dims || a.nbytes != b.nbytes) std::abort();
  if (a.nbytes && std::memcmp(a.bytes, b.bytes, a.nbytes) != 0) std::abort();
  return 0;
}
