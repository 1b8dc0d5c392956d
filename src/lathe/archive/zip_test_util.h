// Helpers shared by the archive module's tests (header-only, test use only).
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "lathe/archive/zip_format.h"
#include "lathe/archive/zip_reader.h"
#include "lathe/archive/zip_writer.h"
#include "support/testing.h"

namespace lathe::ziptest {

using Bytes = std::vector<std::byte>;

inline Bytes bytes_of(std::string_view s) {
  Bytes b(s.size());
  if (!s.empty()) std::memcpy(b.data(), s.data(), s.size());
  return b;
}
inline std::string str_of(std::span<const std::byte> b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}
// Deterministic binary content, including zero bytes and every byte value.
inline Bytes pattern(size_t n, unsigned seed = 0) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i)
    b[i] = static_cast<std::byte>((i * 131 + seed * 7 + (i >> 8)) & 0xFF);
  return b;
}

struct NamedData {
  std::string name;
  Bytes data;
};

// A finished archive written by ZipWriter into memory.
inline Bytes build_zip(const std::vector<NamedData>& entries) {
  MemorySink sink;
  ZipWriter w(sink);
  for (const auto& e : entries) EXPECT_TRUE(w.add(e.name, e.data).ok()) << e.name;
  Status s = w.finish();
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message());
  return sink.take();
}

// Opens bytes held in memory (the reader keeps its own copy alive).
inline Result<ZipReader> open_bytes(const Bytes& bytes, const std::string& name = "test.zip",
                                    ZipLimits limits = {}) {
  auto copy = std::make_shared<Bytes>(bytes);
  const std::byte* data = copy->data();
  return ZipReader::open_memory(copy, data, copy->size(), name, limits);
}

// The error message of a failed open, or a marker when it unexpectedly worked.
inline std::string open_error(const Bytes& bytes, ZipLimits limits = {}) {
  auto r = open_bytes(bytes, "test.zip", limits);
  return r.ok() ? "<opened fine>" : r.error().message();
}

inline Bytes read_file(const std::string& path) {
  return bytes_of(lathe::testing::read_text(path));
}
inline void write_file(const std::string& path, const Bytes& b) {
  lathe::testing::write_text(path, str_of(b));
}

// Offsets of an archive's records, for corrupting it in precise places.
// Parsed independently of ZipReader; assumes a well-formed archive without a
// comment (what ZipWriter and Python's zipfile produce). zip64_record and
// locator are 0 for a classic archive.
struct Layout {
  uint64_t zip64_record = 0, locator = 0, eocd = 0, cd_offset = 0, cd_size = 0;
  std::vector<uint64_t> central;  // offset of each central entry
  std::vector<uint64_t> local;    // offset of each local header
};
inline Layout layout_of(const Bytes& z) {
  using namespace zip_detail;
  Layout l;
  l.eocd = z.size() - kEocdSize;
  uint64_t count = load16(z.data() + l.eocd + 10);
  l.cd_size = load32(z.data() + l.eocd + 12);
  l.cd_offset = load32(z.data() + l.eocd + 16);
  if (load32(z.data() + l.eocd - kZip64LocatorSize) == kZip64LocatorSig) {
    l.locator = l.eocd - kZip64LocatorSize;
    l.zip64_record = load64(z.data() + l.locator + 8);
    count = load64(z.data() + l.zip64_record + 32);
    l.cd_size = load64(z.data() + l.zip64_record + 40);
    l.cd_offset = load64(z.data() + l.zip64_record + 48);
  }
  uint64_t p = l.cd_offset;
  for (uint64_t i = 0; i < count; ++i) {
    l.central.push_back(p);
    l.local.push_back(load32(z.data() + p + 42));
    p += kCentralHeaderSize + load16(z.data() + p + 28) + load16(z.data() + p + 30) +
         load16(z.data() + p + 32);
  }
  return l;
}

inline void poke16(Bytes& b, uint64_t at, uint16_t v) {
  b[at] = static_cast<std::byte>(v & 0xFF);
  b[at + 1] = static_cast<std::byte>(v >> 8);
}
inline void poke32(Bytes& b, uint64_t at, uint32_t v) {
  poke16(b, at, static_cast<uint16_t>(v & 0xFFFF));
  poke16(b, at + 2, static_cast<uint16_t>(v >> 16));
}
inline void poke64(Bytes& b, uint64_t at, uint64_t v) {
  poke32(b, at, static_cast<uint32_t>(v & 0xFFFFFFFFu));
  poke32(b, at + 4, static_cast<uint32_t>(v >> 32));
}
inline void poke_str(Bytes& b, uint64_t at, std::string_view s) {
  std::memcpy(b.data() + at, s.data(), s.size());
}

inline const char* kPython = "/usr/bin/python3";

// Runs a Python script (written to a file in `dir`) with arguments; returns
// the exit status and stores stdout+stderr in `output`. Python is a hard
// requirement of these tests: a missing interpreter is a failure, not a skip.
inline int run_python(const std::string& dir, const std::string& script, const std::string& args,
                      std::string* output) {
  EXPECT_TRUE(std::filesystem::exists(kPython)) << kPython << " is required by this test";
  std::string script_path = dir + "/script.py", out_path = dir + "/script.out";
  lathe::testing::write_text(script_path, script);
  std::string cmd =
      std::string(kPython) + " " + script_path + " " + args + " > " + out_path + " 2>&1";
  int rc = std::system(cmd.c_str());
  *output = lathe::testing::read_text(out_path);
  return rc;
}

// Writes `dir`/pt.zip with PyTorch's own writer (torch._C.PyTorchFileWriter,
// bound to `w` in `records`, the Python that writes the records); its path.
inline std::string write_with_pytorch_writer(const std::string& dir, const std::string& records) {
  const std::string path = dir + "/pt.zip";
  std::string out;
  int rc = run_python(dir, "import sys, torch\nw = torch._C.PyTorchFileWriter(sys.argv[1])\n" + records + "w.write_end_of_file()\n",
                      path, &out);
  EXPECT_EQ(rc, 0) << out;
  return path;
}

}  // namespace lathe::ziptest
