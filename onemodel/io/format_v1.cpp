#include "onemodel/io/format_v1.h"

#include <cstdio>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <array>
#include <memory>

#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define OM_HAVE_MMAP 1
#endif

namespace om::format_v1 {
namespace {

constexpr char kMagic[8] = {'O', 'N', 'E', 'M', 'O', 'D', 'E', 'L'};
constexpr size_t kHeaderBytes = 64;
constexpr size_t kEntryBytes = 32;
constexpr uint32_t kNumSections = 3;
enum SectionKind : uint32_t { kGraph = 1, kTensorTable = 2, kData = 3 };
const char* section_name(uint32_t kind) {
  switch (kind) {
    case kGraph: return "graph";
    case kTensorTable: return "tensor table";
    case kData: return "tensor data";
  }
  return "?";
}

size_t align64(size_t n) { return (n + 63) / 64 * 64; }

// ---- writing ----

struct Writer {
  std::vector<uint8_t> b;
  void u8(uint8_t v) { b.push_back(v); }
  void u32(uint32_t v) { for (int i = 0; i < 4; ++i) b.push_back(uint8_t(v >> (8 * i))); }
  void u64(uint64_t v) { for (int i = 0; i < 8; ++i) b.push_back(uint8_t(v >> (8 * i))); }
  void i64(int64_t v) { u64(uint64_t(v)); }
  void f32(float v) { uint32_t x; std::memcpy(&x, &v, 4); u32(x); }
  void str(const std::string& s) { u32(uint32_t(s.size())); b.insert(b.end(), s.begin(), s.end()); }
  void raw(const void* p, size_t n) { if (n) b.insert(b.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n); }
  void pad_to(size_t multiple) { while (b.size() % multiple) b.push_back(0); }
  void put_u32(size_t at, uint32_t v) { for (int i = 0; i < 4; ++i) b[at + i] = uint8_t(v >> (8 * i)); }
  void put_u64(size_t at, uint64_t v) { for (int i = 0; i < 8; ++i) b[at + i] = uint8_t(v >> (8 * i)); }
};

// The dtype word's low 16 bits hold the dtype, bits 16 on the ValueKind (0, a tensor, in every
// file written before sequences: those read as before).
void write_value_info(Writer& w, const graph::ValueInfo& v) {
  w.str(v.name);
  w.u32(uint32_t(v.dtype) | uint32_t(v.kind) << 16);
  w.u8(v.has_shape ? 1 : 0);
  w.u32(uint32_t(v.shape.size()));
  for (const auto& d : v.shape) {
    w.i64(d.size);
    w.str(d.param);
  }
}

void write_dims(Writer& w, const std::vector<int64_t>& dims) {
  w.u32(uint32_t(dims.size()));
  for (int64_t d : dims) w.i64(d);
}

void write_graph_section(Writer& w, const graph::Graph& g) {
  w.str(g.name);
  w.str(g.producer_name);
  w.str(g.producer_version);
  w.i64(g.ir_version);
  w.u32(uint32_t(g.opsets.size()));
  for (const auto& o : g.opsets) { w.str(o.domain); w.i64(o.version); }
  for (const auto* list : {&g.inputs, &g.outputs, &g.value_info}) {
    w.u32(uint32_t(list->size()));
    for (const auto& v : *list) write_value_info(w, v);
  }
  w.u32(uint32_t(g.nodes.size()));
  for (const auto& n : g.nodes) {
    w.str(n.op_type);
    w.str(n.domain);
    w.str(n.name);
    w.u32(uint32_t(n.inputs.size()));
    for (const auto& s : n.inputs) w.str(s);
    w.u32(uint32_t(n.outputs.size()));
    for (const auto& s : n.outputs) w.str(s);
    w.u32(uint32_t(n.attributes.size()));
    for (const auto& a : n.attributes) {
      w.str(a.name);
      w.u32(uint32_t(a.type));
      switch (a.type) {
        case graph::AttrType::Float: w.f32(a.f); break;
        case graph::AttrType::Int: w.i64(a.i); break;
        case graph::AttrType::String: w.str(a.s); break;
        case graph::AttrType::Floats: w.u32(uint32_t(a.floats.size())); for (float f : a.floats) w.f32(f); break;
        case graph::AttrType::Ints: w.u32(uint32_t(a.ints.size())); for (int64_t i : a.ints) w.i64(i); break;
        case graph::AttrType::Strings: w.u32(uint32_t(a.strings.size())); for (const auto& s : a.strings) w.str(s); break;
        case graph::AttrType::Tensor:
          w.str(a.t->name);
          w.u32(uint32_t(a.t->dtype));
          write_dims(w, a.t->dims);
          w.u64(a.t->nbytes);
          w.raw(a.t->bytes, a.t->nbytes);
          break;
        case graph::AttrType::Graph: case graph::AttrType::Graphs: case graph::AttrType::TypeProto: break;  // refused by write_bytes
      }
    }
  }
}

// ---- reading ----

struct Reader {
  const uint8_t* p;
  size_t n, pos = 0;
  const char* section;
  Status fail(const std::string& what) const {
    return Status::error(ErrorKind::Format, msg("library format v1: section '", section, "' at byte ", pos, ": ", what));
  }
  Status need(size_t k) const {
    if (k > n - pos) return fail(msg("needs ", k, " more bytes, only ", n - pos, " left"));
    return Status::ok();
  }
  Status u8(uint8_t* v) { OM_TRY(need(1)); *v = p[pos++]; return Status::ok(); }
  Status u32(uint32_t* v) {
    OM_TRY(need(4));
    *v = 0;
    for (int i = 0; i < 4; ++i) *v |= uint32_t(p[pos + i]) << (8 * i);
    pos += 4;
    return Status::ok();
  }
  Status u64(uint64_t* v) {
    OM_TRY(need(8));
    *v = 0;
    for (int i = 0; i < 8; ++i) *v |= uint64_t(p[pos + i]) << (8 * i);
    pos += 8;
    return Status::ok();
  }
  Status i64(int64_t* v) { uint64_t u; OM_TRY(u64(&u)); *v = int64_t(u); return Status::ok(); }
  Status f32(float* v) { uint32_t u; OM_TRY(u32(&u)); std::memcpy(v, &u, 4); return Status::ok(); }
  Status str(std::string* s) {
    uint32_t len;
    OM_TRY(u32(&len));
    OM_TRY(need(len));
    s->assign(reinterpret_cast<const char*>(p + pos), len);
    pos += len;
    return Status::ok();
  }
  // A count of items each at least min_bytes long: refuses counts the remaining bytes cannot hold.
  Status count(uint32_t* c, size_t min_bytes) {
    OM_TRY(u32(c));
    if (uint64_t(*c) * min_bytes > n - pos) return fail(msg("count ", *c, " cannot fit in the ", n - pos, " bytes left"));
    return Status::ok();
  }
  Status dtype(DType* d) {
    uint32_t code;
    OM_TRY(u32(&code));
    if (!dtype_from_onnx(int32_t(code), d)) return fail(msg("unknown dtype code ", code));
    return Status::ok();
  }
  Status dims(std::vector<int64_t>* dims, uint64_t* numel) {
    uint32_t rank;
    OM_TRY(count(&rank, 8));
    if (rank > 64) return fail(msg("rank ", rank, " is too large"));
    dims->resize(rank);
    *numel = 1;
    for (auto& d : *dims) {
      OM_TRY(i64(&d));
      if (d < 0 || d > (int64_t(1) << 40)) return fail(msg("dimension ", d, " is out of range"));
      if (d != 0 && *numel > (uint64_t(1) << 50) / uint64_t(d)) return fail("element count overflows");
      *numel *= uint64_t(d);
    }
    return Status::ok();
  }
};

Status read_value_info(Reader& r, graph::ValueInfo* v) {
  OM_TRY(r.str(&v->name));
  uint32_t word;
  OM_TRY(r.u32(&word));
  if (!dtype_from_onnx(int32_t(word & 0xffffu), &v->dtype)) return r.fail(msg("unknown dtype code ", word & 0xffffu));
  if ((word >> 16) > uint32_t(graph::ValueKind::OptionalSequence)) return r.fail(msg("unknown value kind ", word >> 16));
  v->kind = graph::ValueKind(word >> 16);
  uint8_t has = 0;
  OM_TRY(r.u8(&has));
  if (has > 1) return r.fail("has_shape must be 0 or 1");
  v->has_shape = has == 1;
  uint32_t rank;
  OM_TRY(r.count(&rank, 12));
  v->shape.resize(rank);
  for (auto& d : v->shape) {
    OM_TRY(r.i64(&d.size));
    OM_TRY(r.str(&d.param));
    if (d.size < -1) return r.fail(msg("dimension ", d.size, " of '", v->name, "' is invalid"));
  }
  return Status::ok();
}

Status read_graph_section(Reader& r, graph::Graph* g) {
  OM_TRY(r.str(&g->name));
  OM_TRY(r.str(&g->producer_name));
  OM_TRY(r.str(&g->producer_version));
  OM_TRY(r.i64(&g->ir_version));
  uint32_t c;
  OM_TRY(r.count(&c, 12));
  g->opsets.resize(c);
  for (auto& o : g->opsets) { OM_TRY(r.str(&o.domain)); OM_TRY(r.i64(&o.version)); }
  for (auto* list : {&g->inputs, &g->outputs, &g->value_info}) {
    OM_TRY(r.count(&c, 13));
    list->resize(c);
    for (auto& v : *list) OM_TRY(read_value_info(r, &v));
  }
  OM_TRY(r.count(&c, 24));
  g->nodes.resize(c);
  for (auto& n : g->nodes) {
    OM_TRY(r.str(&n.op_type));
    OM_TRY(r.str(&n.domain));
    OM_TRY(r.str(&n.name));
    OM_TRY(r.count(&c, 4));
    n.inputs.resize(c);
    for (auto& s : n.inputs) OM_TRY(r.str(&s));
    OM_TRY(r.count(&c, 4));
    n.outputs.resize(c);
    for (auto& s : n.outputs) OM_TRY(r.str(&s));
    OM_TRY(r.count(&c, 8));
    n.attributes.resize(c);
    for (auto& a : n.attributes) {
      OM_TRY(r.str(&a.name));
      uint32_t type;
      OM_TRY(r.u32(&type));
      a.type = graph::AttrType(type);
      uint32_t k;
      switch (a.type) {
        case graph::AttrType::Float: OM_TRY(r.f32(&a.f)); break;
        case graph::AttrType::Int: OM_TRY(r.i64(&a.i)); break;
        case graph::AttrType::String: OM_TRY(r.str(&a.s)); break;
        case graph::AttrType::Floats:
          OM_TRY(r.count(&k, 4));
          a.floats.resize(k);
          for (auto& f : a.floats) OM_TRY(r.f32(&f));
          break;
        case graph::AttrType::Ints:
          OM_TRY(r.count(&k, 8));
          a.ints.resize(k);
          for (auto& i : a.ints) OM_TRY(r.i64(&i));
          break;
        case graph::AttrType::Strings:
          OM_TRY(r.count(&k, 4));
          a.strings.resize(k);
          for (auto& s : a.strings) OM_TRY(r.str(&s));
          break;
        case graph::AttrType::Tensor: {
          std::string name;
          DType dt;
          std::vector<int64_t> dims;
          uint64_t numel, nbytes;
          OM_TRY(r.str(&name));
          OM_TRY(r.dtype(&dt));
          OM_TRY(r.dims(&dims, &numel));
          OM_TRY(r.u64(&nbytes));
          if (nbytes != numel * dtype_size(dt))
            return r.fail(msg("tensor attribute '", a.name, "' holds ", nbytes, " bytes, its shape needs ", numel * dtype_size(dt)));
          OM_TRY(r.need(size_t(nbytes)));
          a.t = std::make_shared<graph::TensorData>(graph::TensorData::copy_of(name, dt, dims, r.p + r.pos, size_t(nbytes)));
          r.pos += size_t(nbytes);
          break;
        }
        default: return r.fail(msg("attribute '", a.name, "' has unknown type ", type));
      }
    }
  }
  if (r.pos != r.n) return r.fail(msg(r.n - r.pos, " unexpected trailing bytes"));
  return Status::ok();
}

uint32_t get_u32(const uint8_t* p) { uint32_t v = 0; for (int i = 0; i < 4; ++i) v |= uint32_t(p[i]) << (8 * i); return v; }
uint64_t get_u64(const uint8_t* p) { uint64_t v = 0; for (int i = 0; i < 8; ++i) v |= uint64_t(p[i]) << (8 * i); return v; }

Status header_error(const std::string& what) {
  return Status::error(ErrorKind::Format, msg("library format v1: section 'header': ", what));
}

// Parses a whole file held at `base`; initializers point into it and share `owner` (null when
// the caller keeps the bytes alive: view_bytes). Every tensor's address must be 64-byte aligned,
// which the copying and mapping readers guarantee and a caller's buffer may not.
Result<graph::Graph> parse(const uint8_t* base, size_t size, std::shared_ptr<const void> owner) {
  const size_t table_end = kHeaderBytes + kNumSections * kEntryBytes;
  if (size < 8 || std::memcmp(base, kMagic, 8) != 0)
    // An ONNX ModelProto starts with field 1 (ir_version, varint): tag byte 0x08.
    return header_error(size > 0 && base[0] == 0x08
                            ? "the file does not start with the magic \"ONEMODEL\"; it looks like an ONNX model: open it with "
                              "om::Session::from_onnx_file (or convert it with `onemodel convert in.onnx out.om`)"
                            : "the file does not start with the magic \"ONEMODEL\"; it is not a onemodel library file");
  if (size < table_end) return header_error(msg("the file is ", size, " bytes, shorter than the ", table_end, "-byte header (truncated)"));
  const uint32_t stored_crc = get_u32(base + 28);
  uint8_t head[kHeaderBytes + kNumSections * kEntryBytes];
  std::memcpy(head, base, table_end);
  std::memset(head + 28, 0, 4);
  const uint32_t crc = crc32(head, table_end);
  const uint64_t file_size = get_u64(base + 16);
  if (crc != stored_crc) {
    if (file_size != size && get_u32(base + 8) == kVersion)
      return header_error(msg("the file is ", size, " bytes, the header says ", file_size, " (truncated or extended)"));
    return header_error(msg("checksum mismatch (stored ", stored_crc, ", computed ", crc, "): the file is corrupted"));
  }
  const uint32_t version = get_u32(base + 8);
  if (version != kVersion) return header_error(msg("version ", version, " is not supported (this library reads version ", kVersion, ")"));
  if (get_u32(base + 12) != kNumSections) return header_error(msg("section count ", get_u32(base + 12), ", expected ", kNumSections));
  if (file_size != size)
    return header_error(msg("the file is ", size, " bytes, the header says ", file_size, " (truncated or extended)"));
  // No flag is defined and reserved bytes are zero (docs/format.md): a file using them is from
  // a newer writer whose meaning this reader cannot know.
  if (get_u32(base + 24) != 0)
    return header_error(msg("unknown flags ", get_u32(base + 24), " (this library defines none)"));
  for (size_t i = 32; i < kHeaderBytes; ++i)
    if (base[i] != 0) return header_error(msg("reserved byte ", i, " is ", int(base[i]), ", not zero"));

  struct Sec { uint32_t kind; uint64_t off, size; } secs[kNumSections];
  uint64_t expect = table_end;
  for (uint32_t i = 0; i < kNumSections; ++i) {
    const uint8_t* e = base + kHeaderBytes + i * kEntryBytes;
    secs[i] = {get_u32(e), get_u64(e + 8), get_u64(e + 16)};
    if (secs[i].kind != i + 1) return header_error(msg("section ", i, " has kind ", secs[i].kind, ", expected ", i + 1));
    if (get_u32(e + 4) != 0 || get_u32(e + 28) != 0) return header_error(msg("section ", i, " has nonzero reserved fields"));
    if (secs[i].off != expect || secs[i].size > size - expect)
      return header_error(msg("section '", section_name(secs[i].kind), "' spans bytes ", secs[i].off, "+", secs[i].size,
                              ", outside the file or not contiguous"));
    const uint32_t c = crc32(base + secs[i].off, size_t(secs[i].size));
    if (c != get_u32(e + 24))
      return Status::error(ErrorKind::Format, msg("library format v1: section '", section_name(secs[i].kind), "': checksum mismatch (stored ",
                                                  get_u32(e + 24), ", computed ", c, "): the file is corrupted"));
    expect = secs[i].off + secs[i].size;
  }
  if (expect != size) return header_error("the sections do not end at the end of the file");
  if (secs[2].off % 64 != 0) return header_error("the tensor data section is not 64-byte aligned");

  graph::Graph g;
  Reader gr{base + secs[0].off, size_t(secs[0].size), 0, "graph"};
  OM_TRY(read_graph_section(gr, &g));

  Reader tr{base + secs[1].off, size_t(secs[1].size), 0, "tensor table"};
  uint32_t count;
  OM_TRY(tr.count(&count, 24));
  const uint8_t* data = base + secs[2].off;
  const uint64_t data_size = secs[2].size;
  for (uint32_t i = 0; i < count; ++i) {
    graph::TensorData t;
    uint64_t numel, off, nbytes;
    OM_TRY(tr.str(&t.name));
    OM_TRY(tr.dtype(&t.dtype));
    OM_TRY(tr.dims(&t.dims, &numel));
    OM_TRY(tr.u64(&off));
    OM_TRY(tr.u64(&nbytes));
    if (nbytes != numel * dtype_size(t.dtype))
      return tr.fail(msg("tensor '", t.name, "' holds ", nbytes, " bytes, its shape needs ", numel * dtype_size(t.dtype)));
    if (off % 64 != 0) return tr.fail(msg("tensor '", t.name, "' starts at ", off, ", not 64-byte aligned"));
    if (off > data_size || nbytes > data_size - off)
      return tr.fail(msg("tensor '", t.name, "' spans ", off, "+", nbytes, ", outside the ", data_size, "-byte data section"));
    if (reinterpret_cast<uintptr_t>(data + off) % kTensorAlignment != 0)
      return Status::error(ErrorKind::InvalidArgument,
                           msg("library format v1: tensor '", t.name, "' at file offset ", secs[2].off + off, " lies at address ",
                               static_cast<const void*>(data + off), ", not ", kTensorAlignment,
                               "-byte aligned: place the model bytes on a ", kTensorAlignment, "-byte boundary (alignas(",
                               kTensorAlignment, ") on the array, or aligned_alloc), or use format_v1::read_bytes, which copies"));
    t.bytes = data + off;
    t.nbytes = size_t(nbytes);
    t.owner = owner;
    g.initializers.push_back(std::move(t));
  }
  // Zero padding is part of the layout: anything else means the tables and data disagree.
  while (tr.pos < tr.n) {
    if (tr.p[tr.pos] != 0) return tr.fail("non-zero padding after the table");
    ++tr.pos;
  }
  OM_TRY(graph::verify(g).with_context("library format v1: section 'graph'"));
  return g;
}

}  // namespace

uint32_t crc32(const uint8_t* data, size_t size, uint32_t crc) {
  static const auto table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (size_t i = 0; i < size; ++i) crc = table[(crc ^ data[i]) & 0xffu] ^ (crc >> 8);
  return ~crc;
}

Result<std::vector<uint8_t>> write_bytes(const graph::Graph& g, graph::GraphCheck check) {
  if (check == graph::GraphCheck::Verify) OM_TRY(graph::verify(g).with_context("format_v1::write"));
  if (graph::has_subgraphs(g))
    return Status::error(ErrorKind::Unsupported, "format_v1::write: the graph has subgraphs (If, Loop or Scan), which library "
                                                 "format v1 cannot hold; save it as ONNX (om::onnx::write_file) instead");
  for (const auto& n : g.nodes)
    for (const auto& a : n.attributes)
      if (a.type == graph::AttrType::TypeProto)
        return Status::error(ErrorKind::Unsupported, msg("format_v1::write: node '", n.name, "' (", n.op_type, ") has a type attribute ('",
                                                         a.name, "'), which library format v1 cannot hold; save it as ONNX "
                                                         "(om::onnx::write_file) instead"));
  Writer w;
  w.raw(kMagic, 8);
  w.u32(kVersion);
  w.u32(kNumSections);
  w.u64(0);  // file size, patched
  w.u32(0);  // flags
  w.u32(0);  // header crc, patched
  w.pad_to(kHeaderBytes);
  const size_t table_at = w.b.size();
  for (uint32_t i = 0; i < kNumSections; ++i) {
    w.u32(i + 1);
    w.u32(0);
    w.u64(0);
    w.u64(0);
    w.u32(0);
    w.u32(0);
  }
  size_t starts[kNumSections + 1];
  starts[0] = w.b.size();
  write_graph_section(w, g);
  starts[1] = w.b.size();
  // Tensor table: data offsets are relative to the (64-aligned) data section.
  w.u32(uint32_t(g.initializers.size()));
  size_t off = 0;
  for (const auto& t : g.initializers) {
    w.str(t.name);
    w.u32(uint32_t(t.dtype));
    write_dims(w, t.dims);
    w.u64(off);
    w.u64(t.nbytes);
    off = align64(off + t.nbytes);
  }
  w.pad_to(64);
  starts[2] = w.b.size();
  for (const auto& t : g.initializers) {
    w.raw(t.bytes, t.nbytes);
    w.pad_to(64);
  }
  starts[3] = w.b.size();
  for (uint32_t i = 0; i < kNumSections; ++i) {
    const size_t e = table_at + i * kEntryBytes;
    w.put_u64(e + 8, starts[i]);
    w.put_u64(e + 16, starts[i + 1] - starts[i]);
    w.put_u32(e + 24, crc32(w.b.data() + starts[i], starts[i + 1] - starts[i]));
  }
  w.put_u64(16, w.b.size());
  w.put_u32(28, crc32(w.b.data(), table_at + kNumSections * kEntryBytes));
  return std::move(w.b);
}

#if defined(ONEMODEL_BARE_METAL)
// No file system on bare metal: models come from memory (read_bytes, a .om array in flash).
static Status no_files(const char* call, const std::string& path) {
  return Status::error(ErrorKind::Unsupported, msg("format_v1::", call, ": '", path, "': the bare-metal build has no files; ",
                                                   "give the model's bytes to format_v1::read_bytes instead"));
}
#endif

Status write_file(const graph::Graph& g, const std::string& path, graph::GraphCheck check) {
#if defined(ONEMODEL_BARE_METAL)
  (void)g, (void)check;
  return no_files("write_file", path);
#else
  OM_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, write_bytes(g, check));
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return Status::error(ErrorKind::Io, msg("format_v1::write_file: cannot open '", path, "' for writing"));
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  const bool closed = std::fclose(f) == 0;
  if (!ok || !closed) return Status::error(ErrorKind::Io, msg("format_v1::write_file: writing '", path, "' failed (disk full?)"));
  return Status::ok();
#endif
}

Result<graph::Graph> read_bytes(const uint8_t* data, size_t size) {
  std::shared_ptr<void> buf(::aligned_alloc(64, align64(size) + 64), [](void* p) { std::free(p); });
  if (!buf) return Status::error(ErrorKind::OutOfMemory, msg("format_v1::read_bytes: cannot allocate ", size, " bytes"));
  if (size) std::memcpy(buf.get(), data, size);
  return parse(static_cast<const uint8_t*>(buf.get()), size, buf);
}

Result<graph::Graph> view_bytes(const uint8_t* data, size_t size) {
  if (!data && size) return Status::error(ErrorKind::InvalidArgument, msg("format_v1::view_bytes: data is null, size ", size));
  return parse(data, size, nullptr);
}

Result<graph::Graph> read_file(const std::string& path, bool map) {
#if defined(ONEMODEL_BARE_METAL)
  (void)map;
  return no_files("read_file", path);
#else
#if defined(OM_HAVE_MMAP)
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused just below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);
  if (fd < 0) return Status::error(ErrorKind::Io, msg("format_v1::read_file: cannot open '", path, "': ", std::strerror(errno)));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return Status::error(ErrorKind::Io, msg("format_v1::read_file: cannot stat '", path, "'"));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::error(ErrorKind::Io, msg("format_v1::read_file: '", path, "' is not a regular file (a device, FIFO or directory); "
                                            "model files must be regular files"));
  }
  const size_t size = size_t(st.st_size);
  if (size == 0) {  // nothing to map; and a file that reports 0 bytes is not read without bound
    ::close(fd);
    const uint8_t none = 0;
    auto r = read_bytes(&none, 0);
    if (!r.is_ok()) return r.status().with_context(path);
    return r;
  }
  if (!map) {
    // The copying load: one read into aligned memory; later changes to the file cannot reach
    // the weights. The size is the one just measured, so the read is bounded.
    std::shared_ptr<void> buf(::aligned_alloc(64, (size + 63) / 64 * 64), [](void* q) { std::free(q); });
    if (!buf) {
      ::close(fd);
      return Status::error(ErrorKind::OutOfMemory, msg("format_v1::read_file: cannot allocate ", size, " bytes for '", path, "'"));
    }
    size_t got = 0;
    while (got < size) {
      const ssize_t n = ::read(fd, static_cast<uint8_t*>(buf.get()) + got, size - got);
      if (n <= 0) break;
      got += size_t(n);
    }
    ::close(fd);
    if (got != size)
      return Status::error(ErrorKind::Io, msg("format_v1::read_file: '", path, "' gave ", got, " of its ", size, " bytes (changed while read?)"));
    auto r = parse(static_cast<const uint8_t*>(buf.get()), size, buf);
    if (!r.is_ok()) return r.status().with_context(path);
    return r;
  }
  if (size > 0) {
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (p != MAP_FAILED) {
      std::shared_ptr<const void> owner(p, [size](const void* q) { ::munmap(const_cast<void*>(q), size); });
      auto r = parse(static_cast<const uint8_t*>(p), size, owner);
      if (!r.is_ok()) return r.status().with_context(path);
      return r;
    }
  } else {
    ::close(fd);
  }
#endif
  (void)map;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Status::error(ErrorKind::Io, msg("format_v1::read_file: cannot open '", path, "': ", std::strerror(errno)));
  std::vector<uint8_t> bytes;
  uint8_t chunk[65536];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) bytes.insert(bytes.end(), chunk, chunk + n);
  std::fclose(f);
  auto r = read_bytes(bytes.data(), bytes.size());
  if (!r.is_ok()) return r.status().with_context(path);
  return r;
#endif
}

}  // namespace om::format_v1
