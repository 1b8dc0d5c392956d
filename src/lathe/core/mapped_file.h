// A read-only memory map of a whole file. Weights are viewed in place inside
// the map (zero copy); every tensor view holds a shared_ptr to keep it alive.
// The file stays open beside its map, so bytes of it can also be copied file
// to file by the kernel (FileSink::copy) without passing through memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "lathe/core/result.h"

namespace lathe {

class MappedFile {
 public:
  static Result<std::shared_ptr<const MappedFile>> open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // The open file (read-only), for copies that skip the map.
  int fd() const { return fd_; }
  // Takes the whole pages inside [offset, offset + size) out of this
  // process's resident memory (a record read once, such as the graph JSON,
  // need not stay counted for the rest of the process). The bytes do not
  // change: touched again, the pages are read back from the file.
  void release(uint64_t offset, uint64_t size) const;

 private:
  MappedFile(std::string path, int fd, const std::byte* data, size_t size)
      : path_(std::move(path)), fd_(fd), data_(data), size_(size) {}
  std::string path_;
  int fd_;
  const std::byte* data_;
  size_t size_;
};

// Bytes that lie, unchanged, at a known place in a mapped file, with the
// CRC-32 the archive they came from records for them (when they are a whole
// record). A writer copies such bytes file to file and reuses the CRC, so a
// weight that was not changed is never read, checksummed or re-encoded.
struct FileExtent {
  std::shared_ptr<const MappedFile> file;
  uint64_t offset = 0;
  uint64_t size = 0;
  std::optional<uint32_t> crc32;

  std::span<const std::byte> bytes() const { return {file->data() + offset, static_cast<size_t>(size)}; }
};

}  // namespace lathe
