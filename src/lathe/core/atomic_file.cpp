#include "lathe/core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace lathe {
namespace {

class FdSink : public FileSink {
 public:
  FdSink(int fd, std::string path) : fd_(fd), path_(std::move(path)) { buffer_.reserve(kBuffer); }
  using FileSink::write;
  Status write(std::span<const std::byte> bytes) override {
    position_ += bytes.size();
    if (buffer_.size() + bytes.size() <= kBuffer) {
      buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
      return Status::Ok();
    }
    LATHE_RETURN_IF_ERROR(flush());
    if (bytes.size() >= kBuffer) return write_all(bytes.data(), bytes.size());
    buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
    return Status::Ok();
  }
  uint64_t position() const override { return position_; }
  Status flush() {
    if (buffer_.empty()) return Status::Ok();
    Status s = write_all(buffer_.data(), buffer_.size());
    buffer_.clear();
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
  std::vector<std::byte> buffer_;
  uint64_t position_ = 0;
};

}  // namespace

Status write_file_atomically(const std::string& path,
                             const std::function<Status(FileSink&)>& writer) {
  std::string tmpl = path + ".tmp-XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  int fd = ::mkstemp(name.data());
  if (fd < 0) return make_error(path + ": cannot create a temporary file beside it: " + std::strerror(errno));
  // Until the rename succeeds, every way out (errors and exceptions thrown
  // by the writer alike) closes and removes the temporary file.
  struct Temporary {
    int fd;
    std::string name;
    bool done = false;
    ~Temporary() {
      if (fd >= 0) ::close(fd);
      if (!done) ::unlink(name.c_str());
    }
  } tmp{fd, std::string(name.data())};
  FdSink sink(fd, path);
  Status s = writer(sink);
  if (!s.ok()) return s;
  LATHE_RETURN_IF_ERROR(sink.flush());
  if (::fchmod(fd, 0644) != 0 || ::fsync(fd) != 0) {
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
