// Fuzzes the zip container reader (src/lathe/archive/zip_reader.h) on an
// archive held in memory: parse and validate the central directory, then
// view, inflate and CRC-check every entry it accepted.
//
// Invariants checked beyond "no crash, no sanitizer report":
//   - errors are non-empty and start with the archive's display name;
//   - find() returns each accepted entry, and names are unique;
//   - a view lies inside the input, a read() returns exactly `size` bytes,
//     and for STORED entries read() equals view();
//   - no entry name is unsafe as a path (no "..", absolute, backslash, NUL).
#include <string_view>

#include "fuzz_util.h"
#include "lathe/archive/zip_reader.h"

using namespace lathe;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto buf = fuzz::exact_copy(data, size);
  ZipLimits limits;
  limits.max_inflated_bytes = 64 << 20;  // well under libFuzzer's 2 GB RSS limit
  limits.max_entries = 100000;
  auto zip = ZipReader::open_memory(buf, buf.get(), size, "fuzz.zip", limits);
  fuzz::check_error(zip, "fuzz.zip: ");
  if (!zip.ok()) return 0;

  const std::byte* begin = buf.get();
  for (const ZipEntry& e : zip->entries()) {
    if (zip->find(e.name) != &e) fuzz::fail("find() does not return entry '" + e.name + "'");
    std::string_view n = e.name;
    if (n.empty() || n.front() == '/' || n.find('\\') != n.npos || n.find('\0') != n.npos ||
        n == ".." || n.rfind("../", 0) == 0 || n.find("/../") != n.npos ||
        (n.size() >= 3 && n.substr(n.size() - 3) == "/..")) {
      fuzz::fail("unsafe entry name accepted: '" + e.name + "'");
    }
    auto view = zip->view(e);
    fuzz::check_error(view, "fuzz.zip: ");
    if (view.ok()) {
      if (view->data() < begin || view->data() + view->size() > begin + size) fuzz::fail("view outside the input");
      volatile unsigned sum = 0;  // touch every byte (ASan checks the reads)
      for (std::byte b : *view) sum = sum + std::to_integer<unsigned>(b);
    }
    auto bytes = zip->read(e);
    fuzz::check_error(bytes, "fuzz.zip: ");
    if (bytes.ok()) {
      if (bytes->size() != e.size) fuzz::fail("read() size differs from the declared size");
      if (view.ok() && (view->size() != bytes->size() ||
                        (bytes->size() && std::memcmp(view->data(), bytes->data(), bytes->size()) != 0))) {
        fuzz::fail("read() differs from view() for a STORED entry");
      }
    }
    Status crc = zip->check_crc(e);
    fuzz::check_error(crc, "fuzz.zip: ");
  }
  return 0;
}
