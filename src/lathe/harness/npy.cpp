#include "lathe/harness/npy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "lathe/core/atomic_file.h"
#include "lathe/harness/npy_header.h"
#include "lathe/runtime/kernels/util.h"

namespace lathe {

namespace {

struct Descr {
  const char* code;  // little-endian NumPy type string ('|' for byte-wide)
  DType dtype;
};
constexpr Descr kDescrs[] = {
    {"<f4", DType::Float32}, {"<f8", DType::Float64}, {"<f2", DType::Float16}, {"<i8", DType::Int64},
    {"<i4", DType::Int32},   {"<i2", DType::Int16},   {"|i1", DType::Int8},    {"|u1", DType::UInt8},
    {"|b1", DType::Bool},    {"<u2", DType::UInt16},  {"<u4", DType::UInt32},  {"<u8", DType::UInt64},
};

// A shape as NumPy spells it in a header: "(2, 3)", "(3,)", "()".
std::string shape_literal(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    text += std::to_string(shape[i]);
    if (shape.size() == 1) text += ",";
    else if (i + 1 < shape.size()) text += ", ";
  }
  return text + ")";
}

}  // namespace

Result<Tensor> parse_npy(std::span<const std::byte> bytes) {
  static const char kMagic[] = "\x93NUMPY";
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0) return make_error("not a .npy file (bad magic)");
  const auto major = static_cast<uint8_t>(bytes[6]);
  size_t header_len, header_start;
  if (major == 1) {
    header_len = static_cast<size_t>(bytes[8]) | (static_cast<size_t>(bytes[9]) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return make_error("truncated .npy header");
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= static_cast<size_t>(bytes[8 + i]) << (8 * i);
    header_start = 12;
  } else {
    return make_error("unsupported .npy version " + std::to_string(major));
  }
  if (header_start + header_len > bytes.size()) return make_error("truncated .npy header");
  const std::string_view header_text(reinterpret_cast<const char*>(bytes.data()) + header_start, header_len);
  LATHE_ASSIGN_OR_RETURN(NpyHeader header, parse_npy_header(header_text));
  std::string descr = header.descr;
  if (descr.size() == 3 && descr[0] == '=') descr[0] = '<';  // native order on a little-endian host
  if (descr == "<b1" || descr == "<i1" || descr == "<u1") descr[0] = '|';
  DType dtype = DType::Unknown;
  for (const Descr& d : kDescrs) {
    if (descr == d.code) dtype = d.dtype;
  }
  if (dtype == DType::Unknown) return make_error("unsupported .npy dtype '" + descr + "' (big-endian or exotic)");
  const std::vector<int64_t>& shape = header.shape;
  const std::string shape_text = shape_literal(shape);
  // The declared shape is checked against the bytes present before
  // anything is allocated: a tiny file cannot ask for terabytes.
  auto need = contiguous_nbytes(dtype, shape);
  if (!need.ok()) return make_error("npy header: shape " + shape_text + ": " + need.error().message());
  const size_t data_start = header_start + header_len;
  if (bytes.size() - data_start < *need) {
    return make_error(".npy data is truncated: " + std::to_string(bytes.size() - data_start) + " bytes for " +
                      std::to_string(*need) + " (" + std::string(dtype_name(dtype)) + " " + shape_string(shape) + ")");
  }
  LATHE_ASSIGN_OR_RETURN(Tensor t, Tensor::try_empty(dtype, shape));
  if (*need) std::memcpy(t.storage->mutable_data(), bytes.data() + data_start, *need);
  if (header.fortran_order && shape.size() > 1) {
    // Column-major bytes: view them with Fortran strides, then reorder.
    std::vector<int64_t> fstrides(shape.size());
    int64_t s = 1;
    for (size_t d = 0; d < shape.size(); ++d) {
      fstrides[d] = s;
      s *= std::max<int64_t>(shape[d], 1);
    }
    Tensor f = t;
    f.strides = fstrides;
    return kernels::contiguous_copy(f);
  }
  return t;
}

namespace {

// The whole file, read with plain POSIX calls: a directory or a device is
// refused by name (std::ifstream threw std::ios_base::failure on them).
Result<std::string> read_regular_file(const std::string& path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return make_error("cannot open " + path + ": " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return make_error("cannot stat " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return make_error(path + ": not a regular file");
  std::string data;
  data.resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::read(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error(path + ": read failed: " + std::strerror(errno));
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  data.resize(done);
  return data;
}

}  // namespace

Result<Tensor> read_npy(const std::string& path) {
  LATHE_ASSIGN_OR_RETURN(std::string data, read_regular_file(path));
  auto t = parse_npy(std::span<const std::byte>(reinterpret_cast<const std::byte*>(data.data()), data.size()));
  if (!t.ok()) return t.error().context(path);
  return t;
}

Result<std::string> encode_npy(const Tensor& t_in) {
  const char* code = nullptr;
  for (const Descr& d : kDescrs) {
    if (d.dtype == t_in.dtype) code = d.code;
  }
  if (!code) return make_error("cannot write dtype " + std::string(dtype_name(t_in.dtype)) + " to .npy");
  LATHE_RETURN_IF_ERROR(t_in.check_fits());
  const Tensor t = kernels::as_contiguous(t_in);
  const std::string pretty = shape_literal(t.sizes);
  std::string header = "{'descr': '" + std::string(code) + "', 'fortran_order': False, 'shape': " + pretty + ", }";
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  out.append(reinterpret_cast<const char*>(t.data()), t.nbytes());
  return out;
}

Status write_npy(const std::string& path, const Tensor& t) {
  LATHE_ASSIGN_OR_RETURN(std::string bytes, encode_npy(t));
  return write_file_atomically(path, [&](FileSink& sink) { return sink.write(bytes); });
}

}  // namespace lathe
