// Writing files so that a reader never sees a half-written one: everything
// goes to a temporary file beside the target, which is flushed and renamed
// into place only when the writer succeeded. On failure the previous file is
// untouched and the temporary file is removed.
//
// Only a regular file (or nothing) is replaced: a symlink, a directory, a
// device such as /dev/null or a FIFO at `path` is refused with an error, never
// turned into a regular file. The result keeps the replaced file's mode (a new
// file gets 0666 minus the umask). The temporary file is removed on SIGINT,
// SIGTERM, SIGHUP and SIGQUIT once install_temp_file_cleanup() ran
// (temp_files.h); SIGKILL leaves it, as <path>.tmp-XXXXXX.
//
// Bytes copied from a mapped input (FileSink::copy) must still be that
// file's when the output takes its place: if the input was truncated or
// changed meanwhile (MappedFile::check_intact), the write fails with that
// error and the temporary file is removed, as on any failure.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>

#include "lathe/core/mapped_file.h"
#include "lathe/core/result.h"

namespace lathe {

// Sequential sink handed to the writer callback.
class FileSink {
 public:
  virtual ~FileSink() = default;
  virtual Status write(std::span<const std::byte> bytes) = 0;
  virtual uint64_t position() const = 0;
  Status write(const std::string& s) {
    return write(std::span<const std::byte>(reinterpret_cast<const std::byte*>(s.data()), s.size()));
  }
  // Appends the bytes of `extent`. Here they are read through the map; the
  // sink of write_file_atomically has the kernel copy them file to file.
  virtual Status copy(const FileExtent& extent) { return write(extent.bytes()); }
};

Status write_file_atomically(const std::string& path,
                             const std::function<Status(FileSink&)>& writer);

}  // namespace lathe
