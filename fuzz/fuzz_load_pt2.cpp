// Fuzzes the whole load path: a .pt2 file on disk -> read_pt2 (zip, JSON,
// weights configs, torch.save state, every generation) -> verify, sample
// inputs, and for programs that verify, write_pt2 -> read_pt2 again.
//
// Two input forms:
//   - a raw archive (anything not starting with "LREC\n"): the bytes are the
//     file, so the fuzzer mutates the zip structure itself;
//   - "LREC\n" then records "<name>\n<u32 little-endian length><bytes>": the
//     harness zips the records with Lathe's ZipWriter (valid CRCs, PyTorch
//     layout), so mutations of JSON and pickles reach the decoders instead of
//     failing the CRC check of the record that holds them.
//
// Invariants: errors are non-empty and start with the path; a program that
// loads and verifies can be written, and what is written loads and verifies.
#include <unistd.h>

#include <filesystem>
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "lathe/archive/zip_writer.h"
#include "lathe/ir/verify.h"
#include "lathe/serde/pickled_state.h"
#include "lathe/serde/pt2.h"

using namespace lathe;

namespace {

// A folder of this process's own on tmpfs when there is one. Never freed:
// the exit handler that removes it runs after static destructors would.
const std::string& work_dir() {
  static const std::string* dir = [] {
    std::string base = std::filesystem::exists("/dev/shm") ? "/dev/shm" : std::filesystem::temp_directory_path().string();
    auto* d = new std::string(base + "/lathe-fuzz-load-" + std::to_string(::getpid()));
    std::filesystem::create_directories(*d);
    std::atexit([] { std::error_code ec; std::filesystem::remove_all(work_dir(), ec); });
    return d;
  }();
  return *dir;
}

// The LREC form as a zip; nullopt if no record could be added.
std::optional<std::vector<std::byte>> zip_records(const uint8_t* data, size_t size) {
  MemorySink sink;
  ZipWriter zip(sink);
  size_t p = 5, added = 0;
  while (p < size && added < 64) {
    const void* nl = std::memchr(data + p, '\n', std::min<size_t>(size - p, 512));
    if (!nl) break;
    std::string_view name(reinterpret_cast<const char*>(data + p), static_cast<const uint8_t*>(nl) - (data + p));
    p += name.size() + 1;
    uint32_t len = 0;
    for (int k = 0; k < 4 && p < size; ++k) len |= static_cast<uint32_t>(data[p++]) << (8 * k);
    len = static_cast<uint32_t>(std::min<size_t>(len, size - p));
    // ZipWriter refuses unsafe or duplicate names; such records are dropped.
    if (zip.add(name, std::span<const std::byte>(reinterpret_cast<const std::byte*>(data + p), len)).ok()) ++added;
    p += len;
  }
  if (!added || !zip.finish().ok()) return std::nullopt;
  return sink.take();
}

bool write_file(const std::string& path, const void* data, size_t size) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  bool ok = std::fwrite(data, 1, size, f) == size;
  return std::fclose(f) == 0 && ok;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = work_dir() + "/in.pt2";
  if (size >= 5 && std::memcmp(data, "LREC\n", 5) == 0) {
    auto zip = zip_records(data, size);
    if (!zip) return 0;
    if (!write_file(path, zip->data(), zip->size())) fuzz::fail("cannot write " + path);
  } else if (!write_file(path, data, size)) {
    fuzz::fail("cannot write " + path);
  }

  Pt2ReadOptions options;
  options.zip.max_inflated_bytes = 64 << 20;
  options.max_json_depth = 64;
  auto program = read_pt2(path, options);
  fuzz::check_error(program, path.c_str());
  if (!program.ok()) return 0;

  for (const Method& m : program->methods) {
    auto inputs = sample_inputs(m);
    fuzz::check_error(inputs, nullptr);
  }
  if (!verify(*program).ok()) return 0;

  const std::string out = work_dir() + "/out.pt2";
  Status written = write_pt2(*program, out);
  fuzz::check_error(written, out.c_str());
  if (!written.ok()) return 0;
  auto back = read_pt2(out);
  if (!back.ok()) fuzz::fail("write_pt2 output does not load: " + back.error().message());
  Status verified = verify(*back);
  if (!verified.ok()) fuzz::fail("write_pt2 output does not verify: " + verified.error().message());
  return 0;
}
