#include "onemodel/io/npy.h"

#include <cctype>
#include <cstdio>
#include <cstring>

#include "onemodel/kernels/checked.h"

namespace om::npy {
namespace {

const char kMagic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

Status format(const std::string& what) { return Status::error(ErrorKind::Format, "om::npy::read: malformed .npy file: " + what); }

struct Descr {
  const char* text;
  DType dtype;
};
// numpy writes '|' for one-byte types and '<' for little-endian multi-byte ones.
const Descr kDescrs[] = {{"<f4", DType::f32}, {"<f2", DType::f16}, {"<i8", DType::i64}, {"<i4", DType::i32},
                         {"|i1", DType::i8},  {"|u1", DType::u8},  {"|b1", DType::boolean},
                         {"<f8", DType::f64}, {"<i2", DType::i16}, {"<u2", DType::u16}, {"<u4", DType::u32},
                         {"<u8", DType::u64}};

// A small parser for the header: a Python dict literal of str keys and str / bool / int-tuple
// values, as numpy writes it.
class HeaderParser {
 public:
  explicit HeaderParser(const std::string& s) : s_(s) {}

  Status parse(std::string* descr, bool* fortran, std::vector<int64_t>* shape) {
    bool has_descr = false, has_fortran = false, has_shape = false;
    skip();
    if (!eat('{')) return format("header does not start with '{'");
    for (;;) {
      skip();
      if (eat('}')) break;
      std::string key;
      OM_TRY(string(&key));
      skip();
      if (!eat(':')) return format("expected ':' after key '" + key + "' in the header");
      skip();
      if (key == "descr") {
        OM_TRY(string(descr));
        has_descr = true;
      } else if (key == "fortran_order") {
        OM_TRY(boolean(fortran));
        has_fortran = true;
      } else if (key == "shape") {
        OM_TRY(tuple(shape));
        has_shape = true;
      } else {
        return format("unexpected key '" + key + "' in the header");
      }
      skip();
      if (eat(',')) continue;
      skip();
      if (eat('}')) break;
      return format("expected ',' or '}' in the header");
    }
    skip();
    if (pos_ != s_.size()) return format("trailing characters after the header dict");
    if (!has_descr || !has_fortran || !has_shape) return format("the header lacks one of 'descr', 'fortran_order', 'shape'");
    return Status::ok();
  }

 private:
  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) { ++pos_; return true; }
    return false;
  }
  Status string(std::string* out) {
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) return format("expected a quoted string in the header");
    const char q = s_[pos_++];
    const size_t end = s_.find(q, pos_);
    if (end == std::string::npos) return format("unterminated string in the header");
    *out = s_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return Status::ok();
  }
  Status boolean(bool* out) {
    if (s_.compare(pos_, 4, "True") == 0) { *out = true; pos_ += 4; return Status::ok(); }
    if (s_.compare(pos_, 5, "False") == 0) { *out = false; pos_ += 5; return Status::ok(); }
    return format("fortran_order must be True or False");
  }
  Status tuple(std::vector<int64_t>* out) {
    out->clear();
    if (!eat('(')) return format("shape must be a tuple");
    for (;;) {
      skip();
      if (eat(')')) return Status::ok();
      if (pos_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[pos_])))
        return format("shape entries must be non-negative integers");
      int64_t v = 0;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        if (v > (INT64_MAX - 9) / 10) return format("shape entry overflows");
        v = v * 10 + (s_[pos_++] - '0');
      }
      eat('L');  // Python 2 longs
      if (out->size() >= kMaxFileRank) return format(msg("shape has more than ", kMaxFileRank, " entries"));
      out->push_back(v);
      skip();
      if (eat(',')) continue;
      skip();
      if (eat(')')) return Status::ok();
      return format("expected ',' or ')' in the shape");
    }
  }

  const std::string& s_;
  size_t pos_ = 0;
};

uint32_t le(const uint8_t* p, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

Result<graph::TensorData> read_bytes(const uint8_t* data, size_t size, const std::string& name) {
  if (size < 10 || std::memcmp(data, kMagic, 6) != 0) return format("no .npy magic (\\x93NUMPY) at the start");
  const int major = data[6];
  size_t header_len, start;
  if (major == 1) {
    header_len = le(data + 8, 2);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) return format("file ends inside the header length");
    header_len = le(data + 8, 4);
    start = 12;
  } else {
    return format(msg("unknown format version ", major, ".", int(data[7])));
  }
  if (header_len > size - start) return format(msg("header length ", header_len, " runs past the end of the file (", size, " bytes)"));
  const std::string header(reinterpret_cast<const char*>(data + start), header_len);
  std::string descr;
  bool fortran = false;
  std::vector<int64_t> shape;
  OM_TRY(HeaderParser(header).parse(&descr, &fortran, &shape));
  DType dt = DType::f32;
  bool known = false;
  for (const Descr& d : kDescrs) {
    // '=' (native) and '<' are the same on the little-endian machines onemodel runs on.
    std::string alt = d.text;
    if (descr == d.text || (descr.size() == 3 && (descr[0] == '<' || descr[0] == '=' || descr[0] == '|') && descr.substr(1) == alt.substr(1))) {
      dt = d.dtype;
      known = true;
      break;
    }
  }
  if (!known)
    return Status::error(ErrorKind::Unsupported, "om::npy::read: dtype '" + descr +
                                                     "' is not supported (little-endian f4, f2, i8, i4, i1, u1, b1 are)");
  if (fortran) return Status::error(ErrorKind::Unsupported, "om::npy::read: Fortran-order arrays are not supported; save with C order (np.ascontiguousarray)");
  uint64_t numel = 1;
  const size_t esize = dtype_size(dt);
  for (int64_t d : shape) {
    if (d != 0 && numel > (uint64_t(1) << 62) / esize / uint64_t(d)) return format("shape overflows");
    numel *= uint64_t(d);
  }
  const size_t nbytes = size_t(numel) * esize;
  const size_t available = size - start - header_len;
  if (available != nbytes)
    return format(msg("shape needs ", nbytes, " bytes of data but the file holds ", available));
  graph::TensorData t = graph::TensorData::copy_of(name, dt, shape, data + start + header_len, nbytes);
  if (dt == DType::boolean)
    for (size_t i = 0; i < nbytes; ++i)
      if (t.bytes[i] > 1) return format(msg("bool element ", i, " is ", int(t.bytes[i]), ", not 0 or 1"));
  return t;
}

Result<graph::TensorData> read_file(const std::string& path, const std::string& name) {
  FILE* fp = std::fopen(path.c_str(), "rb");
  if (!fp) return Status::error(ErrorKind::Io, "om::npy::read: cannot open '" + path + "'");
  std::vector<uint8_t> buf;
  uint8_t chunk[65536];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, fp)) > 0) buf.insert(buf.end(), chunk, chunk + n);
  const bool err = std::ferror(fp) != 0;
  std::fclose(fp);
  if (err) return Status::error(ErrorKind::Io, "om::npy::read: I/O error reading '" + path + "'");
  Result<graph::TensorData> r = read_bytes(buf.data(), buf.size(), name);
  if (!r.is_ok()) return r.status().with_context(path);
  return r;
}

Result<std::vector<uint8_t>> write_bytes(const graph::TensorData& t) {
  const char* descr = nullptr;
  for (const Descr& d : kDescrs)
    if (d.dtype == t.dtype) descr = d.text;
  if (!descr) return Status::error(ErrorKind::InvalidArgument, msg("om::npy::write: invalid dtype code ", int(t.dtype)));
  uint64_t numel = 1;
  for (int64_t d : t.dims) {
    if (d < 0) return Status::error(ErrorKind::InvalidArgument, msg("om::npy::write: tensor '", t.name, "' has a negative dim ", d));
    numel *= uint64_t(d);
  }
  if (numel * dtype_size(t.dtype) != t.nbytes)
    return Status::error(ErrorKind::InvalidArgument, msg("om::npy::write: tensor '", t.name, "' holds ", t.nbytes,
                                                         " bytes but its dims need ", numel * dtype_size(t.dtype)));
  std::string shape = "(";
  for (size_t i = 0; i < t.dims.size(); ++i) shape += msg(i ? ", " : "", t.dims[i]);
  shape += t.dims.size() == 1 ? ",)" : ")";
  std::string header = msg("{'descr': '", descr, "', 'fortran_order': False, 'shape': ", shape, ", }");
  // Pad with spaces and a final newline so the data starts on a 64-byte boundary.
  const bool v2 = header.size() + 11 > 65535;
  const size_t prefix = v2 ? 12 : 10;
  const size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header.push_back('\n');
  std::vector<uint8_t> out(kMagic, kMagic + 6);
  out.push_back(v2 ? 2 : 1);
  out.push_back(0);
  const size_t hl = header.size();
  for (size_t i = 0; i < (v2 ? 4u : 2u); ++i) out.push_back(uint8_t(hl >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), t.bytes, t.bytes + t.nbytes);
  return out;
}

Status write_file(const graph::TensorData& t, const std::string& path) {
  OM_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, write_bytes(t));
  FILE* fp = std::fopen(path.c_str(), "wb");
  if (!fp) return Status::error(ErrorKind::Io, "om::npy::write: cannot open '" + path + "' for writing");
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), fp) == bytes.size();
  if (std::fclose(fp) != 0 || !ok) return Status::error(ErrorKind::Io, "om::npy::write: writing '" + path + "' failed");
  return Status::ok();
}

graph::TensorData read(const std::string& path) { return unwrap(read_file(path)); }
void write(const graph::TensorData& t, const std::string& path) { check(write_file(t, path)); }

std::string file_name_of(const std::string& value_name) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : value_name) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-') {
      out.push_back(char(c));
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

}  // namespace om::npy
