// ZipWriter::add(FileExtent): bytes of a mapped file go to the output file to
// file (write_file_atomically's sink: copy_file_range / sendfile above 64 KiB,
// its buffer below), or through the map into other sinks, and their CRC-32 is
// the one the extent carries: the bytes are never read to sum them.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "lathe/archive/crc32.h"
#include "lathe/archive/zip_reader.h"
#include "lathe/archive/zip_test_util.h"
#include "lathe/archive/zip_writer.h"
#include "lathe/core/atomic_file.h"
#include "lathe/core/mapped_file.h"
#include "support/testing.h"

namespace lathe {
namespace {

using namespace ziptest;

// A file holding `head` bytes of noise, then `payload`, then a tail.
std::string file_with(const Bytes& payload, size_t head) {
  std::string path = testing::temp_dir() + "/source.bin";
  Bytes all = pattern(head, 7);
  all.insert(all.end(), payload.begin(), payload.end());
  Bytes tail = pattern(100, 9);
  all.insert(all.end(), tail.begin(), tail.end());
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(all.data()), static_cast<std::streamsize>(all.size()));
  return path;
}

// Both sides of the 64 KiB line, at an offset that is not page-aligned.
class ZipCopy : public ::testing::TestWithParam<size_t> {};

TEST_P(ZipCopy, CopiesTheExtentFileToFileWithItsCrc) {
  const Bytes payload = pattern(GetParam(), 3);
  auto file = MappedFile::open(file_with(payload, 1234));
  ASSERT_TRUE(file.ok()) << file.error().message();
  const uint32_t crc = crc32_update(0, payload);
  FileExtent extent{*file, 1234, payload.size(), crc};
  const std::string out = testing::temp_dir() + "/copy.zip";
  Status s = write_file_atomically(out, [&](FileSink& sink) -> Status {
    ZipWriter zip(sink);
    LATHE_RETURN_IF_ERROR(zip.add("before", bytes_of("x")));
    LATHE_RETURN_IF_ERROR(zip.add("copied", extent));
    LATHE_RETURN_IF_ERROR(zip.add("after", bytes_of("y")));
    return zip.finish();
  });
  ASSERT_TRUE(s.ok()) << s.error().message();
  auto r = ZipReader::open(out);
  ASSERT_TRUE(r.ok()) << r.error().message();
  const ZipEntry* e = r->find("copied");
  ASSERT_NE(e, nullptr);
  auto bytes = r->view(*e);
  ASSERT_TRUE(bytes.ok());
  EXPECT_TRUE(std::equal(bytes->begin(), bytes->end(), payload.begin(), payload.end()));
  EXPECT_EQ(e->data_offset % 64, 0u);
  EXPECT_TRUE(r->check_crc(*e).ok());
  for (const char* name : {"before", "after"}) EXPECT_TRUE(r->check_crc(*r->find(name)).ok()) << name;
}

INSTANTIATE_TEST_SUITE_P(Sizes, ZipCopy, ::testing::Values(4096u, 200000u));

TEST(ZipCopyCrc, TheExtentsCrcIsWrittenNotRecomputed) {
  const Bytes payload = pattern(100000, 5);
  auto file = MappedFile::open(file_with(payload, 64));
  ASSERT_TRUE(file.ok());
  FileExtent extent{*file, 64, payload.size(), 0xDEADBEEFu};  // deliberately not the bytes' CRC
  MemorySink sink;
  ZipWriter zip(sink);
  ASSERT_TRUE(zip.add("w", extent).ok());
  EXPECT_EQ(zip.last_crc(), 0xDEADBEEFu);
  ASSERT_TRUE(zip.finish().ok());
  auto r = open_bytes(sink.bytes());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->find("w")->crc32, 0xDEADBEEFu);
  EXPECT_FALSE(r->check_crc(*r->find("w")).ok());  // as the claim was false, so is the copy's
  // Without a CRC the bytes are read and summed.
  MemorySink sink2;
  ZipWriter zip2(sink2);
  ASSERT_TRUE(zip2.add("w", FileExtent{*file, 64, payload.size(), std::nullopt}).ok());
  EXPECT_EQ(zip2.last_crc(), crc32_update(0, payload));
}

}  // namespace
}  // namespace lathe
