// libFuzzer target for the library format v1 reader. Any input must give a Status (never a
// crash, an abort, a sanitizer report or an out-of-bounds read). An accepted input must also
// survive a round trip (written back, read again and written again, the bytes are the same),
// and creating a Session from it must return (accept or refuse) without crashing.
//
// Random bytes almost never pass the checksums, so each input is also tried with its size field
// and CRCs repaired: that drives the fuzzer into the section parsers behind them.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "onemodel/io/format_v1.h"
#include "onemodel/runtime/session.h"

static void put_u32(uint8_t* p, uint32_t v) { for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i)); }
static uint64_t get_u64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(p[i]) << (8 * i);
  return v;
}

static void check_one(const uint8_t* data, size_t size);

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  check_one(data, size);
  const size_t table_end = 64 + 3 * 32;
  if (size >= table_end) {
    std::vector<uint8_t> fixed(data, data + size);
    for (int i = 0; i < 8; ++i) fixed[16 + i] = uint8_t(uint64_t(size) >> (8 * i));
    for (size_t e = 64; e < table_end; e += 32) {
      const uint64_t off = get_u64(&fixed[e + 8]), len = get_u64(&fixed[e + 16]);
      if (off <= size && len <= size - off) put_u32(&fixed[e + 24], om::format_v1::crc32(fixed.data() + off, size_t(len)));
    }
    put_u32(&fixed[28], 0);
    put_u32(&fixed[28], om::format_v1::crc32(fixed.data(), table_end));
    check_one(fixed.data(), fixed.size());
  }
  return 0;
}

static void check_one(const uint8_t* data, size_t size) {
  om::Result<om::graph::Graph> g = om::format_v1::read_bytes(data, size);
  if (!g.is_ok()) return;
  om::Result<std::vector<uint8_t>> a = om::format_v1::write_bytes(g.value());
  if (!a.is_ok()) std::abort();  // the reader accepted a graph the writer refuses
  om::Result<om::graph::Graph> g2 = om::format_v1::read_bytes(a.value().data(), a.value().size());
  if (!g2.is_ok()) std::abort();  // the writer wrote a file the reader refuses
  om::Result<std::vector<uint8_t>> b = om::format_v1::write_bytes(g2.value());
  if (!b.is_ok() || b.value() != a.value()) std::abort();
  om::Session s;
  (void)om::Session::create(g.value(), {}, &s);
}
