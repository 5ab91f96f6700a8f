// NumPy .npy files <-> graph::TensorData, so users and tools (the ONNX Runtime oracle) exchange
// tensors. Versions 1.0, 2.0 and 3.0 headers are read; 1.0 is written (2.0 when the header
// needs it). Little-endian, C order; dtypes f32 (<f4), f16 (<f2), i64 (<i8), i32 (<i4),
// i8 (|i1), u8 (|u1), bool (|b1). A malformed file is a Format error naming what is wrong; a
// valid file onemodel cannot take (big-endian, Fortran order, another dtype) is Unsupported.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "onemodel/core/status.h"
#include "onemodel/graph/ir.h"

namespace om::npy {

// `name` becomes the TensorData's name.
Result<graph::TensorData> read_bytes(const uint8_t* data, size_t size, const std::string& name = "");
Result<graph::TensorData> read_file(const std::string& path, const std::string& name = "");
Result<std::vector<uint8_t>> write_bytes(const graph::TensorData& t);
Status write_file(const graph::TensorData& t, const std::string& path);

graph::TensorData read(const std::string& path);
void write(const graph::TensorData& t, const std::string& path);

// A value name as a file name: every byte outside [A-Za-z0-9._-] becomes %XX (upper-case hex),
// so names with '/' or ':' are safe and distinct names stay distinct. `onemodel run` names its
// output files so; the ONNX Runtime oracle's cases too.
std::string file_name_of(const std::string& value_name);

}  // namespace om::npy
