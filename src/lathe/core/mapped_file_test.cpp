// MappedFile::release: the pages wholly inside a range leave the process's
// resident memory, the partial pages at its ends stay, and the bytes read
// afterwards are the file's.
#include "lathe/core/mapped_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>
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

}  // namespace
}  // namespace lathe
