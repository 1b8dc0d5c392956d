// write_file_atomically: a reader never sees a half-written file. Whatever
// fails — the writer callback, a write to the temporary file, creating it,
// renaming it into place, even an exception — the previous file keeps its
// bytes and no temporary file ("<name>.tmp-XXXXXX") is left behind.
#include "lathe/core/atomic_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "lathe/core/mapped_file.h"
#include "lathe/core/temp_files.h"
#include "support/testing.h"

namespace lathe {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::vector<std::byte> pattern(size_t n) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 131 + 7) & 0xFF);
  return v;
}

class AtomicFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::temp_dir();
    path_ = dir_ + "/model.pt2";
    testing::write_text(path_, old_);
  }
  void ExpectOldFileIntactAndNoTemporaries() {
    EXPECT_EQ(testing::read_text(path_), old_) << "the previous file was changed";
    EXPECT_THAT(testing::atomic_write_temporaries(dir_), ::testing::IsEmpty());
  }
  std::string dir_, path_;
  const std::string old_ = "the previous archive's bytes\n";
};

TEST_F(AtomicFile, WritesAndReplaces) {
  const auto bytes = pattern(3 << 20);  // more than the sink's 1 MiB buffer
  Status s = write_file_atomically(path_, [&](FileSink& sink) -> Status {
    LATHE_RETURN_IF_ERROR(sink.write(std::span<const std::byte>(bytes).first(100)));
    EXPECT_EQ(sink.position(), 100u);
    return sink.write(std::span<const std::byte>(bytes).subspan(100));
  });
  ASSERT_TRUE(s.ok()) << s.error().message();
  std::string got = testing::read_text(path_);
  ASSERT_EQ(got.size(), bytes.size());
  EXPECT_EQ(std::memcmp(got.data(), bytes.data(), bytes.size()), 0);
  EXPECT_THAT(testing::atomic_write_temporaries(dir_), ::testing::IsEmpty());
  EXPECT_EQ(fs::status(path_).permissions() & fs::perms::owner_read, fs::perms::owner_read);
}

TEST_F(AtomicFile, WritesANewFile) {
  const std::string fresh = dir_ + "/fresh.bin";
  ASSERT_TRUE(write_file_atomically(fresh, [](FileSink& sink) { return sink.write(std::string("abc")); }).ok());
  EXPECT_EQ(testing::read_text(fresh), "abc");
  EXPECT_THAT(testing::atomic_write_temporaries(dir_), ::testing::IsEmpty());
}

TEST_F(AtomicFile, WriterFailsAfterSomeBufferedBytes) {
  Status s = write_file_atomically(path_, [](FileSink& sink) -> Status {
    LATHE_RETURN_IF_ERROR(sink.write(std::string("half of a new archive")));
    return make_error("encoding failed halfway");
  });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(), "encoding failed halfway");
  ExpectOldFileIntactAndNoTemporaries();
}

TEST_F(AtomicFile, WriterFailsAfterBytesReachedTheDisk) {
  const auto bytes = pattern(5 << 20);  // several flushes of the 1 MiB buffer
  Status s = write_file_atomically(path_, [&](FileSink& sink) -> Status {
    for (size_t off = 0; off < bytes.size(); off += 64 << 10) {
      LATHE_RETURN_IF_ERROR(sink.write(std::span<const std::byte>(bytes).subspan(off, 64 << 10)));
    }
    // The temporary file really holds megabytes now.
    EXPECT_THAT(testing::atomic_write_temporaries(dir_), ::testing::SizeIs(1));
    return make_error("the last record failed to encode");
  });
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message(), HasSubstr("the last record failed to encode"));
  ExpectOldFileIntactAndNoTemporaries();
}

TEST_F(AtomicFile, WriterThrows) {
  EXPECT_THROW(
      {
        (void)write_file_atomically(path_, [](FileSink& sink) -> Status {
          (void)sink.write(std::string(2 << 20, 'x'));
          throw std::runtime_error("out of memory while encoding");
        });
      },
      std::runtime_error);
  ExpectOldFileIntactAndNoTemporaries();
}

// A write(2) to the temporary file fails mid-way: RLIMIT_FSIZE makes the
// kernel refuse bytes past 256 KiB with EFBIG (SIGXFSZ ignored), for root
// too. Done in a child process so the limit does not outlive the test.
TEST_F(AtomicFile, WriteSyscallFailsMidway) {
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit = {256 << 10, 256 << 10};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(3);
    const auto bytes = pattern(4 << 20);
    Status s = write_file_atomically(path_, [&](FileSink& sink) { return sink.write(bytes); });
    if (s.ok()) ::_exit(1);
    if (s.error().message().find("write failed") == std::string::npos) ::_exit(2);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "child died with signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: the write succeeded; 2: wrong error; 3: setrlimit failed";
  ExpectOldFileIntactAndNoTemporaries();
}

TEST_F(AtomicFile, CannotCreateTheTemporaryFile) {
  const std::string missing = dir_ + "/no/such/folder/model.pt2";
  bool called = false;
  Status s = write_file_atomically(missing, [&](FileSink&) {
    called = true;
    return Status::Ok();
  });
  ASSERT_FALSE(s.ok());
  EXPECT_FALSE(called);
  EXPECT_THAT(s.error().message(), HasSubstr("cannot create a temporary file beside it"));
  EXPECT_FALSE(fs::exists(dir_ + "/no"));
  ExpectOldFileIntactAndNoTemporaries();
}

// The rename fails (the target became a directory while the file was being
// written): the directory stays as it was and the finished temporary file is
// removed.
TEST_F(AtomicFile, RenameIntoPlaceFails) {
  const std::string target = dir_ + "/occupied";
  Status s = write_file_atomically(target, [&](FileSink& sink) {
    fs::create_directories(target + "/inside");
    return sink.write(std::string("new bytes"));
  });
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message(), HasSubstr("cannot rename the finished file into place"));
  EXPECT_TRUE(fs::is_directory(target + "/inside"));
  ExpectOldFileIntactAndNoTemporaries();
}

// -o /dev/null (as root) or -o link once replaced the device or the link by
// a regular file and succeeded. Anything but a regular file is refused,
// before a temporary file exists, and left as it was.
TEST_F(AtomicFile, RefusesToReplaceWhatIsNotARegularFile) {
  const std::string fifo = dir_ + "/fifo", link = dir_ + "/link", folder = dir_ + "/folder";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  fs::create_symlink(path_, link);
  fs::create_directories(folder);
  auto write = [](const std::string& p) { return write_file_atomically(p, [](FileSink& k) { return k.write(std::string("x")); }); };
  Status f = write(fifo);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().message(), fifo + ": is not a regular file (a directory, device, FIFO or socket); refusing to replace it");
  EXPECT_TRUE(fs::is_fifo(fifo));
  Status l = write(link);
  ASSERT_FALSE(l.ok());
  EXPECT_THAT(l.error().message(), HasSubstr(link + ": is a symbolic link; refusing to replace it"));
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_FALSE(write(folder).ok());
  EXPECT_TRUE(fs::is_directory(folder));
  ExpectOldFileIntactAndNoTemporaries();
}

// SIGINT/SIGTERM during a write once left <name>.tmp-XXXXXX behind. A child
// installs the cleanup, starts a write that pauses once its temporary file
// exists (LATHE_TEST_PAUSE_AFTER_TEMP), and is sent each signal: it dies of
// that signal, and the temporary file is gone.
TEST_F(AtomicFile, SignalsRemoveTheTemporaryFile) {
  for (int sig : {SIGTERM, SIGINT}) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      install_temp_file_cleanup();
      ::setenv("LATHE_TEST_PAUSE_AFTER_TEMP", "1", 1);
      (void)write_file_atomically(path_, [](FileSink& k) { return k.write(std::string("never")); });
      ::_exit(0);
    }
    for (int i = 0; i < 1000 && testing::atomic_write_temporaries(dir_).empty(); ++i) ::usleep(10000);
    EXPECT_EQ(testing::atomic_write_temporaries(dir_).size(), 1u) << "the child never created its temporary file";
    ::kill(pid, sig);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "signal " << sig << ": the child exited instead of dying of it";
    EXPECT_EQ(WTERMSIG(status), sig);
    ExpectOldFileIntactAndNoTemporaries();
  }
}

// Extents under the kernel-copy threshold (the many small weights of a deep
// network) are read with pread: their bytes arrive, in order, and the map's
// pages never become part of this process's resident memory.
TEST_F(AtomicFile, CopiesSmallExtentsWithoutFaultingInTheMap) {
  const std::string source = dir_ + "/weights.bin";
  const auto bytes = pattern(64 * 4100 + 3);
  {
    std::ofstream out(source, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  auto file = MappedFile::open(source);
  ASSERT_TRUE(file.ok()) << file.error().message();
  std::vector<std::byte> expected;
  Status s = write_file_atomically(path_, [&](FileSink& sink) -> Status {
    for (size_t i = 0; i < 64; ++i) {  // 4,097 bytes at odd offsets, a header's bytes between them
      const FileExtent extent{*file, i * 4100 + 3, 4097, std::nullopt};
      LATHE_RETURN_IF_ERROR(sink.write(std::string("hdr")));
      LATHE_RETURN_IF_ERROR(sink.copy(extent));
      expected.insert(expected.end(), {std::byte{'h'}, std::byte{'d'}, std::byte{'r'}});
      expected.insert(expected.end(), bytes.begin() + static_cast<long>(extent.offset),
                      bytes.begin() + static_cast<long>(extent.offset + extent.size));
    }
    EXPECT_EQ(sink.position(), expected.size());
    return Status::Ok();
  });
  ASSERT_TRUE(s.ok()) << s.error().message();
  const std::string got = testing::read_text(path_);
  ASSERT_EQ(got.size(), expected.size());
  EXPECT_EQ(std::memcmp(got.data(), expected.data(), expected.size()), 0);
  EXPECT_EQ(testing::resident_kib((*file)->data()), 0) << "the copy read the weights through the map";
}

// The replaced file's mode is kept (it was forced to 0644).
TEST_F(AtomicFile, KeepsTheReplacedFilesMode) {
  fs::permissions(path_, fs::perms(0640));
  ASSERT_TRUE(write_file_atomically(path_, [](FileSink& k) { return k.write(std::string("new")); }).ok());
  EXPECT_EQ(fs::status(path_).permissions(), fs::perms(0640));
  fs::permissions(path_, fs::perms(0664));
  ASSERT_TRUE(write_file_atomically(path_, [](FileSink& k) { return k.write(std::string("newer")); }).ok());
  EXPECT_EQ(fs::status(path_).permissions(), fs::perms(0664));
}

}  // namespace
}  // namespace lathe
