// MappedFile::release: the pages wholly inside a range leave the process's
// resident memory, the partial pages at its ends stay, and the bytes read
// afterwards are the file's. MappedFileInUse: a file truncated or rewritten
// while mapped (issue 33, item 2) is an error naming it, never a SIGBUS.
#include "lathe/core/mapped_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "support/testing.h"

namespace lathe {
namespace {

TEST(MappedFileRelease, DropsTheWholePagesInsideTheRangeAndKeepsTheBytes) {
  const long page = ::sysconf(_SC_PAGESIZE);
  ASSERT_EQ(page, 4096) << "the page counts below assume 4 KiB pages";
  const std::string path = testing::temp_dir() + "/sixteen_pages.bin";
  std::vector<char> bytes(16 * 4096);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7 + 1);
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  auto file = MappedFile::open(path);
  ASSERT_TRUE(file.ok()) << file.error().message();
  const MappedFile& f = **file;
  auto sum = [&] {
    unsigned long s = 0;
    for (size_t i = 0; i < f.size(); ++i) s += static_cast<unsigned char>(f.data()[i]);
    return s;
  };
  const unsigned long expected = sum();
  ASSERT_EQ(testing::resident_kib(f.data()), 64);
  // [100, 40100): pages 1..8 lie wholly inside; pages 0 and 9 only partly.
  f.release(100, 40000);
  EXPECT_EQ(testing::resident_kib(f.data()), 64 - 8 * 4);
  f.release(4096 * 15, 1 << 20);  // past the end: clamped to the last page
  EXPECT_EQ(testing::resident_kib(f.data()), 64 - 9 * 4);
  f.release(5000, 100);  // inside one page: nothing whole to drop
  EXPECT_EQ(testing::resident_kib(f.data()), 64 - 9 * 4);
  EXPECT_EQ(sum(), expected);  // read back from the file
  EXPECT_EQ(testing::resident_kib(f.data()), 64);
}

// A file of `pages` pages of nonzero bytes, dated an hour back (so that a
// write now changes its modification time, however coarse the clock).
// (temp_dir() starts the test's folder afresh: each test takes it once.)
std::string dated_file(const std::string& dir, const std::string& name, size_t pages) {
  const std::string path = dir + "/" + name;
  std::vector<char> bytes(pages * 4096);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i % 251 + 1);
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  struct timespec times[2];
  ::clock_gettime(CLOCK_REALTIME, &times[0]);
  times[0].tv_sec -= 3600;
  times[1] = times[0];
  ::utimensat(AT_FDCWD, path.c_str(), times, 0);
  return path;
}

unsigned long sum(const MappedFile& f) {
  unsigned long s = 0;
  for (size_t i = 0; i < f.size(); ++i) s += static_cast<unsigned char>(f.data()[i]);
  return s;
}

// A FIFO given as an archive blocked open() for ever, waiting for a writer
// (found by tools/hostile_probe.py, issue 33): refused at once instead.
TEST(MappedFileOpen, AFifoIsRefusedWithoutWaitingForAWriter) {
  const std::string fifo = testing::temp_dir() + "/fifo.pt2";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto file = MappedFile::open(fifo);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.error().message(), fifo + ": not a regular file");
}

TEST(MappedFileInUse, UnchangedIsIntact) {
  const std::string dir = testing::temp_dir();
  const std::string path = dated_file(dir, "same.bin", 4);
  auto file = MappedFile::open(path);
  ASSERT_TRUE(file.ok()) << file.error().message();
  EXPECT_TRUE((*file)->check_intact().ok());
  EXPECT_GT(sum(**file), 0u);
  EXPECT_FALSE((*file)->faulted());
}

// Touching a page the file no longer has raised SIGBUS; now the whole map
// reads as zeros, on every thread, and check_intact() says why.
TEST(MappedFileInUse, ATruncatedFileReadsAsZerosAndSaysSo) {
  const std::string dir = testing::temp_dir();
  const std::string path = dated_file(dir, "truncated.bin", 64);
  auto file = MappedFile::open(path);
  ASSERT_TRUE(file.ok()) << file.error().message();
  const MappedFile& f = **file;
  ASSERT_GT(sum(f), 0u);
  ASSERT_EQ(::truncate(path.c_str(), 4096), 0);
  std::vector<std::thread> readers;
  std::vector<unsigned long> sums(4);
  for (size_t t = 0; t < sums.size(); ++t) readers.emplace_back([&, t] { sums[t] = sum(f); });
  for (auto& r : readers) r.join();
  EXPECT_TRUE(f.faulted());
  for (unsigned long s : sums) EXPECT_LE(s, 4096u * 251u);  // at most the page the file kept
  EXPECT_EQ(sum(f), 0u);                                      // after the fault: zeros
  Status intact = f.check_intact();
  ASSERT_FALSE(intact.ok());
  EXPECT_EQ(intact.error().message().rfind(path + ": the archive was truncated or replaced while in use", 0), 0u)
      << intact.error().message();
}

// Truncated but not touched since: fstat tells.
TEST(MappedFileInUse, ATruncatedFileIsReportedBeforeItIsTouched) {
  const std::string dir = testing::temp_dir();
  const std::string path = dated_file(dir, "shorter.bin", 4);
  auto file = MappedFile::open(path);
  ASSERT_TRUE(file.ok()) << file.error().message();
  ASSERT_EQ(::truncate(path.c_str(), 100), 0);
  Status intact = (*file)->check_intact();
  ASSERT_FALSE(intact.ok());
  EXPECT_NE(intact.error().message().find("truncated or replaced while in use"), std::string::npos);
  EXPECT_FALSE((*file)->faulted());
}

// Bytes written in place show through a private map; the modification time
// gives them away.
TEST(MappedFileInUse, BytesRewrittenInPlaceAreReported) {
  const std::string dir = testing::temp_dir();
  const std::string path = dated_file(dir, "rewritten.bin", 4);
  auto file = MappedFile::open(path);
  ASSERT_TRUE(file.ok()) << file.error().message();
  const int fd = ::open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, "x", 1, 5000), 1);
  ::close(fd);
  Status intact = (*file)->check_intact();
  ASSERT_FALSE(intact.ok());
  EXPECT_EQ(intact.error().message().rfind(path + ": the archive was modified", 0), 0u) << intact.error().message();
  EXPECT_NE(intact.error().message().find("while in use"), std::string::npos);
}

// The way to replace a file in use: the map keeps the old one, intact.
TEST(MappedFileInUse, AFileRenamedOverThePathLeavesTheMapIntact) {
  const std::string dir = testing::temp_dir();
  const std::string path = dated_file(dir, "renamed.bin", 4);
  auto file = MappedFile::open(path);
  ASSERT_TRUE(file.ok()) << file.error().message();
  const unsigned long before = sum(**file);
  const std::string other = dated_file(dir, "other.bin", 1);
  ASSERT_EQ(std::rename(other.c_str(), path.c_str()), 0);
  EXPECT_TRUE((*file)->check_intact().ok()) << (*file)->check_intact().error().message();
  EXPECT_EQ(sum(**file), before);
}

TEST(MappedFileInUse, MappedSourcesFindTheFileOfABytePointer) {
  const std::string dir = testing::temp_dir();
  const std::string path = dated_file(dir, "sources.bin", 4);
  auto file = MappedFile::open(path);
  ASSERT_TRUE(file.ok()) << file.error().message();
  MappedSources sources;
  int elsewhere = 0;
  sources.add(&elsewhere);
  EXPECT_TRUE(sources.empty());
  sources.add((*file)->data() + 10);
  sources.add((*file)->data() + 9000);
  ASSERT_EQ(sources.files().size(), 1u);
  EXPECT_EQ(sources.files()[0], *file);
  EXPECT_EQ(MappedFile::containing((*file)->data() + 4095), *file);
  EXPECT_TRUE(sources.check().ok());
  ASSERT_EQ(::truncate(path.c_str(), 0), 0);
  EXPECT_FALSE(sources.check().ok());
}

// A SIGBUS that is not a Lathe map's still kills the process (or reaches
// the handler installed before Lathe's), as it would have without Lathe.
TEST(MappedFileInUseDeathTest, OtherFaultsAreNotSwallowed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process: Lathe's handler installed in it
  const std::string dir = testing::temp_dir();
  const std::string lathe_path = dated_file(dir, "guarded.bin", 1), other = dated_file(dir, "unguarded.bin", 4);
  auto touch_a_vanished_page = [&] {
    auto guarded = MappedFile::open(lathe_path);  // installs the handler
    if (!guarded.ok()) ::_exit(3);
    const int fd = ::open(other.c_str(), O_RDONLY);
    auto* p = static_cast<volatile const char*>(::mmap(nullptr, 4 * 4096, PROT_READ, MAP_PRIVATE, fd, 0));
    if (::ftruncate(::open(other.c_str(), O_WRONLY), 0) != 0) ::_exit(4);
    std::printf("%d\n", p[3 * 4096]);
    ::_exit(0);
  };
#if defined(__SANITIZE_ADDRESS__)
  EXPECT_DEATH(touch_a_vanished_page(), "");  // ASan's own SIGBUS handler reports it and exits
#else
  EXPECT_EXIT(touch_a_vanished_page(), ::testing::KilledBySignal(SIGBUS), "");
#endif
  EXPECT_EXIT(
      {
        struct sigaction before {};
        before.sa_sigaction = [](int, siginfo_t*, void*) { ::_exit(42); };
        before.sa_flags = SA_SIGINFO;
        sigemptyset(&before.sa_mask);
        ::sigaction(SIGBUS, &before, nullptr);
        touch_a_vanished_page();
      },
      ::testing::ExitedWithCode(42), "");
}

}  // namespace
}  // namespace lathe
