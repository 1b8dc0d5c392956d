// Zip record layouts shared by ZipReader and ZipWriter (internal to the
// archive module). Offsets and sizes follow PKWARE's APPNOTE.TXT; every field
// is little-endian and records are not aligned, so fields are read and
// written byte by byte rather than through casts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace lathe::zip_detail {

inline constexpr uint32_t kLocalHeaderSig = 0x04034b50;
inline constexpr uint32_t kDataDescriptorSig = 0x08074b50;
inline constexpr uint32_t kCentralHeaderSig = 0x02014b50;
inline constexpr uint32_t kZip64EocdSig = 0x06064b50;
inline constexpr uint32_t kZip64LocatorSig = 0x07064b50;
inline constexpr uint32_t kEocdSig = 0x06054b50;

inline constexpr size_t kLocalHeaderSize = 30;
inline constexpr size_t kCentralHeaderSize = 46;
inline constexpr size_t kEocdSize = 22;
inline constexpr size_t kZip64LocatorSize = 20;
inline constexpr size_t kZip64EocdSize = 56;
inline constexpr size_t kMaxCommentSize = 0xFFFF;

inline constexpr uint16_t kZip64ExtraId = 0x0001;
// PyTorch's padding extra field: 'F','B' read as a little-endian u16.
inline constexpr uint16_t kPaddingExtraId = 0x4246;
inline constexpr uint64_t kAlignment = 64;

inline constexpr uint16_t kFlagEncrypted = 0x0001;
inline constexpr uint16_t kFlagDataDescriptor = 0x0008;
inline constexpr uint16_t kFlagUtf8 = 0x0800;

inline constexpr uint16_t kMethodStored = 0;
inline constexpr uint16_t kMethodDeflate = 8;

inline constexpr uint32_t kMax32 = 0xFFFFFFFFu;
inline constexpr uint16_t kMax16 = 0xFFFF;

inline uint16_t load16(const std::byte* p) {
  return static_cast<uint16_t>(std::to_integer<unsigned>(p[0]) |
                               (std::to_integer<unsigned>(p[1]) << 8));
}
inline uint32_t load32(const std::byte* p) {
  return static_cast<uint32_t>(load16(p)) | (static_cast<uint32_t>(load16(p + 2)) << 16);
}
inline uint64_t load64(const std::byte* p) {
  return static_cast<uint64_t>(load32(p)) | (static_cast<uint64_t>(load32(p + 4)) << 32);
}

// Appends little-endian fields to a byte buffer (std::string or
// std::vector<std::byte>).
template <typename Buffer, size_t N>
void put_le(Buffer& out, uint64_t v) {
  using T = typename Buffer::value_type;
  T bytes[N];
  for (size_t i = 0; i < N; ++i) bytes[i] = static_cast<T>((v >> (8 * i)) & 0xFF);
  out.insert(out.end(), bytes, bytes + N);
}
template <typename Buffer>
void put16(Buffer& out, uint16_t v) {
  put_le<Buffer, 2>(out, v);
}
template <typename Buffer>
void put32(Buffer& out, uint32_t v) {
  put_le<Buffer, 4>(out, v);
}
template <typename Buffer>
void put64(Buffer& out, uint64_t v) {
  put_le<Buffer, 8>(out, v);
}

inline std::string hex32(uint32_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s = "0x00000000";
  for (int i = 0; i < 8; ++i) s[9 - i] = digits[(v >> (4 * i)) & 0xF];
  return s;
}

// A name in single quotes for error messages. Names may come from untrusted
// files: control bytes are escaped so that a message never carries a NUL or a
// terminal escape sequence.
inline std::string quoted(std::string_view name) {
  std::string out = "'";
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) {
      static const char* digits = "0123456789abcdef";
      out += "\\x";
      out += digits[u >> 4];
      out += digits[u & 0xF];
    } else {
      out += c;
    }
  }
  return out + "'";
}

// Why a name is unsafe to use as a path inside an extraction directory, or
// nullopt when it is fine. Both the reader (untrusted input) and the writer
// (never produce what the reader would refuse) apply the same rules.
inline std::optional<std::string> name_problem(std::string_view name) {
  if (name.empty()) return "the name is empty";
  if (name.size() > kMax16) return "the name is longer than 65535 bytes";
  if (name.find('\0') != std::string_view::npos) return "the name contains a NUL byte";
  if (name.find('\\') != std::string_view::npos) return "the name contains a backslash";
  if (name.front() == '/') return "the name is an absolute path";
  // "C:foo" is absolute (or drive-relative) on Windows.
  if (name.size() >= 2 && name[1] == ':' &&
      ((name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z'))) {
    return "the name starts with a drive letter";
  }
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string_view::npos) end = name.size();
    if (name.substr(start, end - start) == "..") return "the name has a '..' path component";
    start = end + 1;
  }
  return std::nullopt;
}

}  // namespace lathe::zip_detail
