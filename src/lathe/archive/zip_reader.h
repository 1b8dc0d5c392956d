// Reading zip archives (.pt2 files, torch.save zips nested inside them).
//
// A small STORED-first reader: the whole archive is a memory region (usually a
// memory-mapped file), the central directory is parsed and validated once in
// open(), and STORED entries are then handed out as zero-copy views into that
// region. That is what lets weights of any size be used in place. DEFLATE
// entries (written by Python's zipfile, not by PyTorch) are inflated into a
// copy with zlib. General-purpose zip libraries expose neither data offsets
// nor alignment, hence this implementation.
//
// Everything in the file is untrusted: open() checks every offset and size
// against the bytes actually present before using it, and every error names
// the archive, the entry and what is wrong.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lathe/core/mapped_file.h"
#include "lathe/core/result.h"
#include "lathe/core/tensor.h"

namespace lathe {

struct ZipLimits {
  // Upper bound on central-directory entries, whatever the file claims.
  uint64_t max_entries = 1'000'000;
  // Upper bound on one entry's inflated size in read() (DEFLATE only; STORED
  // entries are bounded by the file itself).
  uint64_t max_inflated_bytes = 4ull << 30;
  // Upper bound on all bytes read() inflates over one reader's lifetime, so
  // that entries which each pass the bounds above cannot together ask for
  // more (a zip bomb spread over many entries).
  uint64_t max_total_inflated_bytes = 8ull << 30;
};

struct ZipEntry {
  std::string name;
  uint64_t local_header_offset = 0;
  // Where the entry's (possibly compressed) bytes start, computed from the
  // local header's own name and extra-field lengths.
  uint64_t data_offset = 0;
  uint64_t compressed_size = 0;
  uint64_t size = 0;    // uncompressed
  uint16_t method = 0;  // 0 STORED, 8 DEFLATE
  uint32_t crc32 = 0;
};

class ZipReader {
 public:
  // Memory-maps the file at `path`; errors and display_name() use the path.
  static Result<ZipReader> open(const std::string& path, ZipLimits limits = {});
  // A zip held in memory someone else owns (e.g. a torch.save zip nested in a
  // record). `keepalive` keeps [data, data + size) valid for as long as this
  // reader or any storage it hands out lives. `display_name` prefixes errors,
  // e.g. "model.pt2:data/weights/model.pt".
  static Result<ZipReader> open_memory(std::shared_ptr<const void> keepalive, const std::byte* data,
                                       size_t size, std::string display_name,
                                       ZipLimits limits = {});

  const std::string& display_name() const { return display_name_; }
  // Bytes of the whole archive region; with an entry's data_offset and size it
  // tells how many readable bytes follow that entry (parsers that read ahead
  // can then use the bytes in place).
  size_t total_size() const { return size_; }
  // Entries in central-directory order.
  const std::vector<ZipEntry>& entries() const { return entries_; }
  // The entry named exactly `name`, or nullptr.
  const ZipEntry* find(std::string_view name) const;

  // Zero-copy view of a STORED entry's bytes; valid while this reader lives.
  Result<std::span<const std::byte>> view(const ZipEntry& e) const;
  // The same bytes as a Storage that keeps the underlying memory alive on its
  // own (outliving this reader).
  Result<std::shared_ptr<Storage>> view_storage(const ZipEntry& e) const;
  // Done with a STORED entry's bytes for now (read once, e.g. a JSON record
  // decoded into the program): its whole pages leave this process's resident
  // memory (MappedFile::release); views of it stay valid. Nothing for
  // archives in memory.
  void release(const ZipEntry& e) const;
  // The same for the entry's first `prefix` bytes.
  void release(const ZipEntry& e, uint64_t prefix) const;
  // A copy of the entry's uncompressed bytes; DEFLATE entries are inflated,
  // bounded by both the declared size and limits.max_inflated_bytes.
  Result<std::vector<std::byte>> read(const ZipEntry& e) const;
  // Ok unless the file behind this reader changed since it was opened
  // (MappedFile::check_intact: truncated, replaced in place or modified);
  // always Ok for archives in memory. Every error of open() and stream() is
  // this one when it applies: it explains what the bytes read showed.
  Status check_intact() const;
  // Recomputes the CRC-32 of the uncompressed bytes and compares it with the
  // central directory's.
  Status check_crc(const ZipEntry& e) const;
  // The entry's uncompressed bytes handed to `sink` in chunks of at most
  // 1 MiB (DEFLATE entries inflated as they go), so copying a record that
  // inflates to gigabytes needs no more memory than one chunk. DEFLATE
  // entries count against the same limits as read() (so a small archive
  // cannot make a copy of it gigabytes larger). Ends with an error, after
  // the chunks, if the data does not inflate to exactly the declared size or
  // fails its CRC-32 (callers write to a temporary file, so what the sink saw
  // is thrown away). (zip_stream.cpp)
  Status stream(const ZipEntry& e, const std::function<Status(std::span<const std::byte>)>& sink) const;

 private:
  Status stream_bytes(const ZipEntry& e, const std::function<Status(std::span<const std::byte>)>& sink) const;
  ZipReader() = default;
  // Where the central directory is, from the end records.
  struct CentralDirectory {
    uint64_t count, size, offset;
    uint64_t limit;  // the directory must end before this offset
    std::string limit_what;
  };
  class HeaderWindow;
  Status parse();
  Result<CentralDirectory> find_central_directory() const;
  Status read_zip64_end(uint64_t locator, CentralDirectory& cd) const;
  // The entry whose central header starts at `p`; moves `p` past it.
  Result<ZipEntry> parse_central_entry(uint64_t index, uint64_t& p, uint64_t cd_end) const;
  // Sizes and offset a 0xFFFFFFFF field defers to the zip64 extra field.
  Status read_zip64_fields(ZipEntry& e, const std::byte* extra, uint16_t extra_len, uint16_t& disk_start) const;
  // Finds the entry's data from its local header and checks its bounds.
  Status locate_data(ZipEntry& e, uint64_t cd_offset, HeaderWindow& headers) const;
  Status check_no_overlap() const;
  Status index_names();
  Error entry_error(const ZipEntry& e, const std::string& what) const;
  Error archive_error(const std::string& what) const;
  // Checks a DEFLATE entry's declared size against the limits and what its
  // compressed bytes can produce, and counts it in inflated_.
  Status claim_inflation(const ZipEntry& e) const;
  // The entry's raw bytes, re-checked against the region so that a ZipEntry
  // not obtained from this reader cannot read out of bounds.
  Result<std::span<const std::byte>> raw(const ZipEntry& e) const;

  std::shared_ptr<const void> keepalive_;
  std::shared_ptr<const MappedFile> file_;  // open() only: the file behind the region
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
  std::string display_name_;
  ZipLimits limits_;
  std::vector<ZipEntry> entries_;
  // Bytes read() has inflated so far (limits_.max_total_inflated_bytes).
  mutable uint64_t inflated_ = 0;
  // Indices into entries_, sorted by name, for find() and duplicate checks.
  std::vector<size_t> by_name_;
};

}  // namespace lathe
