// A read-only memory map of a whole file. Weights are viewed in place inside
// the map (zero copy); every tensor view holds a shared_ptr to keep it alive.
// The file stays open beside its map, so bytes of it can also be copied file
// to file by the kernel (FileSink::copy) without passing through memory.
//
// Files changed while mapped (docs/hostile-input.md, "Archives modified while
// in use"). A private read-only map does not protect its reader: pages of a
// file truncated under it vanish (touching one raises SIGBUS), and bytes
// written into the file in place show through it. So:
//  * every map is registered with a process-wide SIGBUS handler, installed
//    at the first open(). A fault inside a registered map replaces the whole
//    map with zero pages (mmap MAP_FIXED, which is what a truncated file
//    reads as from then on) and marks it faulted; the faulting instruction
//    then reads zeros and the code that touched it carries on, on any
//    thread, with no jump across C++ frames (so nothing is leaked or left
//    locked, and the sanitizers have nothing to object to). A SIGBUS
//    anywhere else goes to the handler that was installed before (or kills
//    the process, as it would have).
//  * check_intact() then says the file is no longer what was loaded: the
//    map faulted, or fstat shows another size or modification time than at
//    open(). The loader asks it once a program is read,
//    Runner::run after every run, the writers before an output takes its
//    path's place: whatever ran on bytes of a changed file ends in an error
//    naming the file instead of a crash or silently different numbers.
// What it cannot see: a change that leaves size and modification time as
// they were (a write within the file system's timestamp granularity of the
// snapshot, typically a few ms, on kernels without fine-grained timestamps;
// a writer that puts the old time back on purpose).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "lathe/core/file_extent.h"
#include "lathe/core/result.h"

namespace lathe {

class MappedFile : public std::enable_shared_from_this<MappedFile> {
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

  // Ok while the file is as it was when opened; otherwise an error naming
  // it: "<path>: the archive was truncated or replaced while in use ..."
  // (a page of the map vanished, or the file is shorter) or "... was
  // modified ... while in use ..." (another size or modification time).
  // One fstat.
  Status check_intact() const;
  // Whether a page of this map vanished (its bytes now read as zeros).
  bool faulted() const;

  // The open mapped file whose map holds the byte at `p`, or null.
  static std::shared_ptr<const MappedFile> containing(const void* p);

 private:
  struct Snapshot {
    int64_t size = 0;
    // Not the status change time: renaming a new file over the path (the
    // right way to replace an archive in use) changes the old file's.
    int64_t mtime_ns = 0;
    friend bool operator==(const Snapshot&, const Snapshot&) = default;
  };
  MappedFile(std::string path, int fd, const std::byte* data, size_t size, Snapshot snapshot)
      : path_(std::move(path)), fd_(fd), data_(data), size_(size), snapshot_(snapshot) {}
  std::string path_;
  int fd_;
  const std::byte* data_;
  size_t size_;
  Snapshot snapshot_;
  int guard_slot_ = -1;  // in the SIGBUS handler's table; -1: not guarded (empty file, or table full)
};

// The mapped files that some bytes lie in (a program's weights, say), to
// ask whether any changed while in use. add() costs one compare when the
// bytes lie in the same file as the last ones added.
class MappedSources {
 public:
  void add(const void* p);
  // The first file's check_intact() error, if any.
  Status check() const;
  bool empty() const { return files_.empty(); }
  const std::vector<std::shared_ptr<const MappedFile>>& files() const { return files_; }

 private:
  std::vector<std::shared_ptr<const MappedFile>> files_;
  const std::byte* last_begin_ = nullptr;
  const std::byte* last_end_ = nullptr;
};

}  // namespace lathe
