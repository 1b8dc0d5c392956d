#include "lathe/core/atomic_file.h"

#include <fcntl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <memory>
#include <vector>

#include "lathe/core/mapped_file.h"
#include "lathe/core/temp_files.h"

namespace lathe {
namespace {

class FdSink : public FileSink {
 public:
  FdSink(int fd, std::string path) : fd_(fd), path_(std::move(path)), buffer_(new std::byte[kBuffer]) {}
  using FileSink::write;
  Status write(std::span<const std::byte> bytes) override {
    position_ += bytes.size();
    if (fill_ + bytes.size() > kBuffer) {
      LATHE_RETURN_IF_ERROR(flush());
      if (bytes.size() >= kBuffer) return write_all(bytes.data(), bytes.size());
    }
    if (!bytes.empty()) std::memcpy(buffer_.get() + fill_, bytes.data(), bytes.size());
    fill_ += bytes.size();
    return Status::Ok();
  }
  uint64_t position() const override { return position_; }
  Status copy(const FileExtent& extent) override;
  // The files copy() copied from are still as they were (the bytes copied
  // are theirs, and the CRC-32s written with them right).
  Status sources_intact() const {
    for (const auto& file : sources_) LATHE_RETURN_IF_ERROR(file->check_intact());
    return Status::Ok();
  }
  Status read_into_buffer(const FileExtent& extent);
  Status flush() {
    if (fill_ == 0) return Status::Ok();
    Status s = write_all(buffer_.get(), fill_);
    fill_ = 0;
    return s;
  }

 private:
  static constexpr size_t kBuffer = 1 << 20;
  Status write_all(const std::byte* p, size_t n) {
    while (n > 0) {
      ssize_t w = ::write(fd_, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        return make_error(path_ + ": write failed: " + std::strerror(errno));
      }
      p += w;
      n -= static_cast<size_t>(w);
    }
    return Status::Ok();
  }
  int fd_;
  std::string path_;
  // Bytes are gathered here into writes of up to 1 MiB; fill_ of them are
  // waiting. (Not a vector: growing one zero-filled each small weight's
  // room before pread overwrote it.)
  std::unique_ptr<std::byte[]> buffer_;
  size_t fill_ = 0;
  uint64_t position_ = 0;
  std::vector<std::shared_ptr<const MappedFile>> sources_;
  void note_source(const std::shared_ptr<const MappedFile>& file) {
    if (std::find(sources_.begin(), sources_.end(), file) == sources_.end()) sources_.push_back(file);
  }
};

// Small extents go through the buffer: a kernel copy each would split the
// output into one write per record (a 10,000-layer MLP has 20,000 records of
// a few KiB). They are read into it with pread, not through the map: the map
// would fault every weight page into this process, which then counts them
// all in its resident memory for the rest of its life. Larger extents are
// copied by the kernel, page cache to page cache, never entering this
// process's memory.
constexpr uint64_t kKernelCopyMin = 64 << 10;

Status FdSink::read_into_buffer(const FileExtent& extent) {
  const size_t n = static_cast<size_t>(extent.size);
  if (fill_ + n > kBuffer) LATHE_RETURN_IF_ERROR(flush());
  size_t done = 0;
  while (done < n) {
    ssize_t got = ::pread(extent.file->fd(), buffer_.get() + fill_ + done, n - done,
                          static_cast<off_t>(extent.offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    done += static_cast<size_t>(got);
  }
  fill_ += done;
  position_ += done;
  if (done == n) return Status::Ok();
  // pread should not fall short on a file we have open and mapped, unless
  // it was truncated since (then say so); otherwise what it could not give
  // is read through the map.
  LATHE_RETURN_IF_ERROR(extent.file->check_intact());
  return write(extent.bytes().subspan(done));
}

Status FdSink::copy(const FileExtent& extent) {
  if (sources_.empty() || sources_.back() != extent.file) note_source(extent.file);
  if (extent.size < kKernelCopyMin) return read_into_buffer(extent);
  LATHE_RETURN_IF_ERROR(flush());
  uint64_t done = 0;
  // copy_file_range where the kernel and file systems allow it, else
  // sendfile (file to file since Linux 2.6.33); whatever is left (both
  // refused, e.g. across some file systems) is written from the map.
  for (bool use_sendfile : {false, true}) {
    while (done < extent.size) {
      off_t in = static_cast<off_t>(extent.offset + done);
      size_t n = static_cast<size_t>(std::min<uint64_t>(extent.size - done, 1u << 30));
      ssize_t got = use_sendfile ? ::sendfile(fd_, extent.file->fd(), &in, n)
                                 : ::copy_file_range(extent.file->fd(), &in, fd_, nullptr, n, 0);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;
      done += static_cast<uint64_t>(got);
    }
  }
  position_ += done;
  if (done == extent.size) return Status::Ok();
  LATHE_RETURN_IF_ERROR(extent.file->check_intact());  // short because the file was truncated?
  return write(extent.bytes().subspan(static_cast<size_t>(done)));
}

// What the finished file's mode will be: the replaced file's (a user who
// made it group-writable keeps that), else what creat() would give.
// Refuses to replace anything but a regular file: renaming over /dev/null
// or a symlink would silently turn it into a regular file.
Result<mode_t> target_mode(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode)) {
      return make_error(path + ": is a symbolic link; refusing to replace it with a regular file (write to the "
                               "link's target path instead)");
    }
    if (!S_ISREG(st.st_mode)) {
      return make_error(path + ": is not a regular file (a directory, device, FIFO or socket); refusing to "
                               "replace it");
    }
    return st.st_mode & 07777;
  }
  if (errno != ENOENT) return make_error(path + ": cannot stat: " + std::strerror(errno));
  // umask can only be read by setting it; it is put back at once.
  const mode_t mask = ::umask(022);
  ::umask(mask);
  return 0666 & ~mask;
}

// The test-only pause (LATHE_TEST_PAUSE_AFTER_TEMP) lets the signal tests
// interrupt a write at a known point, with the temporary file on disk; set
// to "until:FILE" it waits (at most a minute) for FILE to exist, so the
// tests of archives changed while in use can change the input there.
void pause_if_testing() {
  const char* pause = std::getenv("LATHE_TEST_PAUSE_AFTER_TEMP");
  if (pause == nullptr) return;
  if (std::strncmp(pause, "until:", 6) == 0) {
    for (int i = 0; i < 6000 && ::access(pause + 6, F_OK) != 0; ++i) ::usleep(10000);
    return;
  }
  for (;;) ::pause();
}

}  // namespace

Status write_file_atomically(const std::string& path,
                             const std::function<Status(FileSink&)>& writer) {
  LATHE_ASSIGN_OR_RETURN(const mode_t mode, target_mode(path));
  std::string tmpl = path + ".tmp-XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  int fd = ::mkstemp(name.data());
  if (fd < 0) return make_error(path + ": cannot create a temporary file beside it: " + std::strerror(errno));
  // Until the rename succeeds, every way out (errors and exceptions thrown
  // by the writer alike) closes and removes the temporary file; a signal
  // removes it through the registry (temp_files.h).
  struct Temporary {
    int fd;
    std::string name;
    int slot = register_temp_file(name);
    bool done = false;
    ~Temporary() {
      if (fd >= 0) ::close(fd);
      if (!done) ::unlink(name.c_str());
      unregister_temp_file(slot);
    }
  } tmp{fd, std::string(name.data())};
  pause_if_testing();
  FdSink sink(fd, path);
  Status s = writer(sink);
  // An input file changed under the writer explains whatever went wrong.
  LATHE_RETURN_IF_ERROR(sink.sources_intact());
  if (!s.ok()) return s;
  LATHE_RETURN_IF_ERROR(sink.flush());
  if (::fchmod(fd, mode) != 0 || ::fsync(fd) != 0) {
    return make_error(path + ": cannot finish the temporary file: " + std::strerror(errno));
  }
  tmp.fd = -1;
  if (::close(fd) != 0) return make_error(path + ": close failed: " + std::strerror(errno));
  if (::rename(tmp.name.c_str(), path.c_str()) != 0) {
    return make_error(path + ": cannot rename the finished file into place: " + std::strerror(errno));
  }
  tmp.done = true;
  return Status::Ok();
}

}  // namespace lathe
