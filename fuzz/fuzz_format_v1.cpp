// libFuzzer target for the library format v1 reader. Any input must give a Status (never a
// crash, an abort, a sanitizer report or an out-of-bounds read). An accepted input must also
// survive a round trip (written back, read again and written again, the bytes are the same),
// and creating a Session from it must return (accept or refuse) without crashing.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "onemodel/io/format_v1.h"
#include "onemodel/runtime/session.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  om::Result<om::graph::Graph> g = om::format_v1::read_bytes(data, size);
  if (!g.is_ok()) return 0;
  om::Result<std::vector<uint8_t>> a = om::format_v1::write_bytes(g.value());
  if (!a.is_ok()) std::abort();  // the reader accepted a graph the writer refuses
  om::Result<om::graph::Graph> g2 = om::format_v1::read_bytes(a.value().data(), a.value().size());
  if (!g2.is_ok()) std::abort();  // the writer wrote a file the reader refuses
  om::Result<std::vector<uint8_t>> b = om::format_v1::write_bytes(g2.value());
  if (!b.is_ok() || b.value() != a.value()) std::abort();
  om::Session s;
  (void)om::Session::create(g.value(), {}, &s);
  return 0;
}
