// ONNX files <-> graph IR, through nanopb and the project's ONNX subset (onnx.proto).
//
// Writer: opset 20, IR version 9, every message's fields in field-number order, initializer
// bytes streamed straight from their storage (no second copy of the weights). Equal graphs give
// equal bytes. A tensor (or a whole file) over 2 GiB is refused: protobuf cannot hold it.
//
// Reader: decodes with nanopb and checks every length, count, index, dtype and shape; accepts
// raw_data and the typed data fields; default-domain opsets 1..20 (each operator says how old a
// node it reads: docs/onnx.md, "Opsets"), normalised to the opset-20
// form (e.g. ReduceMean's `axes` attribute becomes an input). A malformed file fails with kind
// Format naming what is wrong; unsupported operators fail with kind Unsupported listing every
// unsupported op type of the file; external-data tensors are refused (kind Unsupported).
//
// The Status/Result functions never throw; the others are the throwing public edge.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "onemodel/core/status.h"
#include "onemodel/graph/ir.h"
#include "onemodel/graph/op_registry.h"

namespace om::onnx {

constexpr int64_t kMinOpset = graph::kOldestOpset;  // the oldest default-domain opset the reader accepts
constexpr int64_t kMaxOpset = graph::kNewestOpset;  // the opset the writer emits and the IR is normalised to
constexpr int64_t kIrVersion = 9;                   // the ONNX IR version the writer emits

Result<std::vector<uint8_t>> write_bytes(const graph::Graph& g, graph::GraphCheck check = graph::GraphCheck::Verify);
Status write_file(const graph::Graph& g, const std::string& path, graph::GraphCheck check = graph::GraphCheck::Verify);
Result<graph::Graph> read_bytes(const uint8_t* data, size_t size);
Result<graph::Graph> read_file(const std::string& path);
// One serialized TensorProto (the ONNX test data's input_K.pb / output_K.pb), checked as an
// initializer is; the tensor's name is its `name` field.
Result<graph::TensorData> read_tensor_bytes(const uint8_t* data, size_t size);

std::vector<uint8_t> write(const graph::Graph& g);
void write(const graph::Graph& g, const std::string& path);
graph::Graph read(const std::vector<uint8_t>& bytes);
graph::Graph read(const std::string& path);

}  // namespace om::onnx
