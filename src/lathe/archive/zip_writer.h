// Writing zip archives in the layout PyTorch's own writer (miniz, driven by
// caffe2/serialize/inline_container.cc) produces, so that PyTorch loads what
// Lathe writes and weights stay mmap-able:
//   - every entry STORED, general flags 0x0808 (data descriptor + UTF-8),
//     DOS time/date 0 so identical input gives byte-identical output;
//   - the local header has zero CRC/sizes and an extra field 'F','B' padded
//     with 'Z' bytes so the data starts at a multiple of 64 bytes;
//   - a data descriptor (CRC, sizes) follows the data. Empty entries, as in
//     miniz, have flags 0x0800 and no descriptor (their zeros are exact);
//   - the central directory carries the real CRC and sizes, with a zip64
//     extra field for any size or offset >= 0xFFFFFFFF;
//   - the zip64 end-of-central-directory record and locator are always
//     written, followed by the classic record (saturated where needed).
// Offsets and alignment are relative to the sink position at construction,
// which is the file start for write_file_atomically.
//
// Streaming: each entry is written to the sink as it is added; only the
// central directory is kept in memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <memory>
#include <vector>

#include "lathe/core/atomic_file.h"
#include "lathe/core/byte_source.h"
#include "lathe/core/entry_index.h"
#include "lathe/core/result.h"

namespace lathe {

class ZipWriter {
 public:
  explicit ZipWriter(FileSink& sink);

  // Adds a STORED entry whose data starts at a 64-byte-aligned offset.
  // Names must be relative, '/'-separated, without '..' components,
  // backslashes or NUL bytes, and unique.
  Status add(std::string_view name, std::span<const std::byte> data);
  Status add(std::string_view name, const std::string& text);
  Status add(std::string_view name, const std::vector<std::byte>& data) {
    return add(name, std::span<const std::byte>(data));
  }
  // The same for bytes produced in chunks (a record copied from another
  // archive without holding it whole); `size` must be what they add up to.
  Status add(std::string_view name, const ByteSource& source);
  Status add(std::string_view name, uint64_t size, const ByteSource::Producer& produce);
  // Bytes whose size is known only once they have all been produced (JSON
  // encoded straight into the entry, never held whole). The local header,
  // written before the data, is the one a known size below 4 GiB gets; so
  // an entry reaching 4 GiB (0xFFFFFFFF bytes, which needs zip64 sizes in
  // that header) fails, naming it, and leaves the archive unfinishable. A
  // producer failing before its first byte leaves the archive as it was and
  // its error as it is.
  Status add_streamed(std::string_view name, const ByteSource::Producer& produce);
  // Bytes of a mapped file, copied file to file (FileSink::copy) with the
  // CRC-32 the extent carries; without one they are read and checksummed.
  Status add(std::string_view name, const FileExtent& extent);
  // Writes the central directory and end records. No add() afterwards.
  Status finish();

  uint64_t entry_count() const { return count_; }
  // CRC-32 of the data of the entry added last (0 before any).
  uint32_t last_crc() const { return last_crc_; }
  // Its size.
  uint64_t last_size() const { return last_size_; }

 private:
  // An entry between its local header and its data descriptor.
  struct Entry {
    std::string_view name;  // the caller's, for the length of one add()
    uint64_t size;
    uint64_t offset;  // of the local header, from the start of the archive
  };
  // Checks the name and writes the local header.
  Result<Entry> begin_entry(std::string_view name, uint64_t size);
  // Refuses a name that is unsafe, a duplicate, or comes too late.
  Status check_name(std::string_view name);
  // The local header of an entry of `size` bytes starting here (the sink's
  // error as it is).
  Status write_local_header(Entry& e, uint64_t size);
  // Writes the data descriptor and keeps the central directory entry.
  Status end_entry(const Entry& entry, uint32_t crc);
  Status fail(const std::string& what);
  // The duplicate check: the names written so far are read where the
  // central directory holds them (no heap string per entry), found by entry
  // number (core/entry_index.h).
  bool has_name(std::string_view name) const;
  void index_name(uint64_t offset_in_central, std::string_view name);
  std::string_view name_of(uint32_t entry) const;

  FileSink& sink_;
  std::vector<std::byte> scratch_;  // a header or descriptor being written
  uint64_t start_;
  uint64_t count_ = 0;
  uint32_t last_crc_ = 0;
  uint64_t last_size_ = 0;
  std::vector<std::byte> central_;
  struct NameRef {
    uint64_t offset;  // in central_
    uint16_t size;
  };
  std::vector<NameRef> names_;  // per entry, in order
  EntryIndex name_index_;
  bool finished_ = false;
  bool failed_ = false;
};

// The `.data/serialization_id` record as PyTorch's stream writer
// (caffe2/serialize/inline_container.cc, writeSerializationId) computes it:
// 40 digits, the 20-digit combination of the record names' hashes followed
// by the 20-digit combination of the records' CRC-32s, both combined with
// c10::hash_combine. PyTorch iterates its record names from an
// std::unordered_set<std::string> and hashes them with std::hash; doing the
// same here reproduces its ids exactly when built with the same standard
// library (libstdc++, as PyTorch's Linux wheels are). Names are relative to
// the archive's top folder, in the order they were written; the id record
// itself is not counted. PyTorch picks the CRCs out of the data descriptors
// as they are written, so an empty record (miniz writes it without one)
// adds its name but no CRC.
//
// The set is built in str(), from the names in the order they were added:
// the same insertions give the same table, so the same iteration order.
// Names are kept in blocks, not a heap string each, and hashed as
// std::string_view, which libstdc++ hashes exactly as std::string.
class SerializationId {
 public:
  void add(std::string_view record_name, uint32_t crc, uint64_t size);
  std::string str() const;

 private:
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* next_ = nullptr;  // free room in the last block
  size_t block_left_ = 0;
  std::vector<std::string_view> names_;
  uint64_t combined_crc_ = 0;
};

// A FileSink that collects bytes in memory, e.g. for a zip that becomes a
// record of another archive (torch.save payloads) or for tests.
class MemorySink : public FileSink {
 public:
  using FileSink::write;
  Status write(std::span<const std::byte> bytes) override {
    bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
    return Status::Ok();
  }
  uint64_t position() const override { return bytes_.size(); }
  const std::vector<std::byte>& bytes() const { return bytes_; }
  std::vector<std::byte> take() { return std::move(bytes_); }

 private:
  std::vector<std::byte> bytes_;
};

}  // namespace lathe
