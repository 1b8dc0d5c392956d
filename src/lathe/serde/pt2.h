// Reading and writing .pt2 archives.
//
//   read_pt2   any supported generation -> Program (weights viewed in place
//              inside the memory-mapped file, never copied)
//   write_pt2  Program -> PT2 archive as PyTorch 2.9+ writes it (raw weights,
//              64-byte aligned stored entries), atomically.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "lathe/archive/zip_reader.h"
#include "lathe/core/result.h"
#include "lathe/ir/program.h"

namespace lathe {

// The archive generations Lathe knows about.
inline constexpr const char* kFormatPt2Raw = "pt2-2.9";        // PT2 archive, raw weights (PyTorch 2.9+)
inline constexpr const char* kFormatPt2Pickle = "pt2-2.8";     // PT2 archive, torch.save weights (2.8)
inline constexpr const char* kFormatLegacyZip = "legacy-2.4";  // flat zip, schema 8 (PyTorch 2.4-2.7)
inline constexpr const char* kFormatLegacyPre8 = "legacy-2.2";  // flat zip, integer schema (PyTorch 2.2/2.3)

struct Pt2ReadOptions {
  ZipLimits zip;
  // The one JSON nesting limit (json::kMaxDocumentNesting): documents, and
  // arguments and subgraphs within them, nest at most this deep.
  size_t max_json_depth = 1024;
  // Upper bound on one JSON record's (uncompressed) size: a program's graph,
  // a weights or constants config. Parsing needs about twice a record's size
  // in memory, and the largest real graphs are tens of MB; this stops a
  // small archive of deflated padding from asking for gigabytes. Checked
  // against the size the zip declares, before anything is inflated.
  uint64_t max_json_record_bytes = uint64_t{512} << 20;
  // Fake tensors (0-byte weight records) are read as zeros; this bounds the
  // zeros allocated for them in one archive.
  uint64_t max_zero_filled_bytes = 1ull << 30;
};

Result<Program> read_pt2(const std::string& path, const Pt2ReadOptions& options = {});
// An archive held in memory that `keepalive` owns: weights are viewed in
// place, so `keepalive` lives as long as any tensor read from it.
// `display_name` stands for the path in messages.
Result<Program> read_pt2_memory(std::shared_ptr<const void> keepalive, std::span<const std::byte> bytes,
                                const std::string& display_name, const Pt2ReadOptions& options = {});

// The generations Lathe writes. Pt2Raw is what PyTorch 2.9+ writes and reads;
// the others are for users on older PyTorch: their weights are torch.save
// pickles and their JSON carries the schema 8.1 field set, because loaders
// up to 2.8 reject keys they do not know.
enum class Pt2Format {
  Pt2Raw,     // "2.9": PT2 archive, raw weights (default)
  Pt2Pickle,  // "2.8": PT2 archive, one torch.save dict per method
  Legacy,     // "legacy": flat zip as torch.export.save wrote it in 2.4-2.7 (one method)
};

// The top-level folder PyTorch's writer would give an archive written to
// `path`: the file name up to its last '.' ("out/model.v2.pt2" -> "model.v2").
std::string pt2_archive_folder_name(const std::string& path);

struct Pt2WriteOptions {
  // The archive's top-level folder; default: pt2_archive_folder_name(path).
  std::string archive_name;
  Pt2Format format = Pt2Format::Pt2Raw;
  // Asked once the whole archive is written, before it takes the path's
  // place (write_pt2) or is returned (write_pt2_bytes): an error from it
  // leaves nothing written. The API's save() waits here for a verify run
  // on a second thread.
  std::function<Status()> before_commit = nullptr;
};

// "2.9" | "2.8" | "legacy" -> format.
Result<Pt2Format> parse_pt2_format(const std::string& name);

Status write_pt2(const Program& program, const std::string& path, const Pt2WriteOptions& options = {});
// The same archive in memory (top folder: options.archive_name, else
// "archive", as PyTorch names archives saved to a buffer).
Result<std::vector<std::byte>> write_pt2_bytes(const Program& program, const Pt2WriteOptions& options = {});

}  // namespace lathe
