// The library's own model file, format v1 (docs/format.md): magic and version, a section table,
// a graph section, an initializer table and a data section whose tensors start on 64-byte
// boundaries, so a device can map the file and point the weights at it without copying. Every
// byte of the file is covered by a CRC-32 (header + table, and one per section), so a truncated
// or corrupted file is refused with kind Format naming the section.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "onemodel/core/status.h"
#include "onemodel/graph/ir.h"

namespace om::format_v1 {

constexpr uint32_t kVersion = 1;
// Every tensor's data starts on this boundary in the file, and in memory when read in place.
constexpr size_t kTensorAlignment = 64;

Result<std::vector<uint8_t>> write_bytes(const graph::Graph& g, graph::GraphCheck check = graph::GraphCheck::Verify);
Status write_file(const graph::Graph& g, const std::string& path, graph::GraphCheck check = graph::GraphCheck::Verify);

// Copies the bytes into a 64-byte aligned buffer owned by the returned graph's initializers.
Result<graph::Graph> read_bytes(const uint8_t* data, size_t size);
// Reads the bytes in place: the initializers point into `data`, nothing of the weights is
// copied. The caller keeps the bytes alive and unchanged while the graph (or a Session made from
// it) lives. `data` must be 64-byte aligned (kTensorAlignment): a misplaced tensor is refused
// naming it, its offset and the alignment.
Result<graph::Graph> view_bytes(const uint8_t* data, size_t size);
// Maps the file read-only (POSIX mmap) and points the initializers into the mapping; falls back
// to reading when mapping is unavailable. A mapped file must not be truncated or rewritten while
// the graph (or a Session made from it) is alive (docs/format.md). With map = false the file is
// read into memory once instead. Only regular files are read (no devices, FIFOs, directories).
Result<graph::Graph> read_file(const std::string& path, bool map = true);

// CRC-32 (IEEE 802.3, reflected, as zlib computes it).
uint32_t crc32(const uint8_t* data, size_t size, uint32_t crc = 0);

}  // namespace om::format_v1
