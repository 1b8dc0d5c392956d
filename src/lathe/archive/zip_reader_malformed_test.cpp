// Malformed archives: each test corrupts a good archive in one place and
// expects the specific error; one more throws truncations and random damage
// at the reader to check that it never crashes.
#include <gtest/gtest.h>

#include "lathe/archive/zip_format.h"
#include "lathe/archive/zip_reader.h"
#include "lathe/archive/zip_test_util.h"
#include "support/testing.h"

namespace lathe {
namespace {

using namespace ziptest;
using namespace zip_detail;

std::string n(uint64_t v) { return std::to_string(v); }

// Three entries: 'a' data [64, 164), 'b' local header at 180, 'c' last.
Bytes good() {
  return build_zip({{"a", pattern(100, 1)}, {"b", pattern(50, 2)}, {"c", bytes_of("ccc")}});
}

TEST(ZipReaderMalformed, TooSmall) {
  EXPECT_EQ(open_error(Bytes(10)),
            "test.zip: not a zip archive: the file is 10 bytes, too small for an "
            "end-of-central-directory record (22 bytes)");
}

TEST(ZipReaderMalformed, EmptyAndMissingFiles) {
  std::string dir = testing::temp_dir();
  write_file(dir + "/empty.pt2", {});
  auto r = ZipReader::open(dir + "/empty.pt2");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(),
            dir +
                "/empty.pt2: not a zip archive: the file is 0 bytes, too small "
                "for an end-of-central-directory record (22 bytes)");
  auto m = ZipReader::open(dir + "/missing.pt2");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message().rfind(dir + "/missing.pt2: cannot open", 0), 0u)
      << m.error().message();
}

TEST(ZipReaderMalformed, Truncated) {
  Bytes z = good();
  z.resize(z.size() / 2);
  EXPECT_EQ(open_error(z), "test.zip: no end-of-central-directory record in the last " +
                               n(z.size()) + " bytes: the file is truncated or not a zip archive");
  Bytes one_short = good();
  one_short.pop_back();
  EXPECT_NE(open_error(one_short).find("no end-of-central-directory record"), std::string::npos);
}

TEST(ZipReaderMalformed, EocdSignatureFlipped) {
  Bytes z = good();
  z[layout_of(z).eocd] ^= std::byte{0xFF};
  EXPECT_EQ(open_error(z), "test.zip: no end-of-central-directory record in the last " +
                               n(z.size()) + " bytes: the file is truncated or not a zip archive");
}

TEST(ZipReaderMalformed, Zip64RecordSignatureWrong) {
  Bytes z = good();
  Layout l = layout_of(z);
  poke32(z, l.zip64_record, 0x12345678);
  EXPECT_EQ(open_error(z), "test.zip: the zip64 end-of-central-directory record at offset " +
                               n(l.zip64_record) +
                               " has signature 0x12345678 (expected 0x06064b50)");
}

TEST(ZipReaderMalformed, CentralDirectoryOutOfBounds) {
  Bytes z = good();
  Layout l = layout_of(z);
  poke64(z, l.zip64_record + 48, l.cd_offset + 1000);
  EXPECT_EQ(open_error(z),
            "test.zip: central directory [" + n(l.cd_offset + 1000) + ", " +
                n(l.cd_offset + 1000 + l.cd_size) +
                ") extends past the zip64 end-of-central-directory record at offset " +
                n(l.zip64_record) + " (the file is " + n(z.size()) + " bytes)");
}

TEST(ZipReaderMalformed, AbsurdEntryCount) {
  Bytes z = good();
  Layout l = layout_of(z);
  poke64(z, l.zip64_record + 24, 1'000'000'000'000);
  poke64(z, l.zip64_record + 32, 1'000'000'000'000);
  EXPECT_EQ(open_error(z),
            "test.zip: the archive claims 1000000000000 entries, but its central directory [" +
                n(l.cd_offset) + ", " + n(l.cd_offset + l.cd_size) + ") can hold at most " +
                n(l.cd_size / 46));
}

TEST(ZipReaderMalformed, EntryCountOverLimit) {
  EXPECT_EQ(open_error(good(), ZipLimits{.max_entries = 2}),
            "test.zip: the archive has 3 entries, more than the limit of 2");
}

TEST(ZipReaderMalformed, EntryCountBelowCentralDirectory) {
  Bytes z = good();
  Layout l = layout_of(z);
  poke64(z, l.zip64_record + 24, 2);
  poke64(z, l.zip64_record + 32, 2);
  EXPECT_EQ(open_error(z), "test.zip: the central directory [" + n(l.cd_offset) + ", " +
                               n(l.cd_offset + l.cd_size) + ") has " +
                               n(l.cd_offset + l.cd_size - l.central[2]) +
                               " bytes left over after its 2 entries");
}

TEST(ZipReaderMalformed, CentralHeaderSignatureWrong) {
  Bytes z = good();
  Layout l = layout_of(z);
  poke32(z, l.central[1], 0);
  EXPECT_EQ(open_error(z), "test.zip: central directory entry 1 at offset " + n(l.central[1]) +
                               " has signature 0x00000000 (expected 0x02014b50)");
}

TEST(ZipReaderMalformed, LocalHeaderSignatureWrong) {
  Bytes z = good();
  Layout l = layout_of(z);
  poke32(z, l.local[1], 0x04034b51);
  EXPECT_EQ(open_error(z), "test.zip: entry 'b': local header at offset " + n(l.local[1]) +
                               " has signature 0x04034b51 (expected 0x04034b50)");
}

TEST(ZipReaderMalformed, LocalHeaderNameDiffers) {
  Bytes z = good();
  Layout l = layout_of(z);
  poke_str(z, l.local[1] + 30, "x");
  EXPECT_EQ(open_error(z),
            "test.zip: entry 'b': local header at offset " + n(l.local[1]) + " names 'x' instead");
}

TEST(ZipReaderMalformed, DataPastEndOfFile) {
  Bytes z = good();
  Layout l = layout_of(z);
  uint64_t data =
      load32(z.data() + l.central[2] + 42) + 30 + 1 + load16(z.data() + l.local[2] + 28);
  poke32(z, l.central[2] + 20, 99999);
  poke32(z, l.central[2] + 24, 99999);
  EXPECT_EQ(open_error(z), "test.zip: entry 'c': data [" + n(data) + ", " + n(data + 99999) +
                               ") extends past the end of the file (" + n(z.size()) + " bytes)");
}

TEST(ZipReaderMalformed, DataOverlapsCentralDirectory) {
  Bytes z = good();
  Layout l = layout_of(z);
  uint64_t data = l.local[2] + 30 + 1 + load16(z.data() + l.local[2] + 28);
  poke32(z, l.central[2] + 20, 40);
  poke32(z, l.central[2] + 24, 40);
  EXPECT_EQ(open_error(z), "test.zip: entry 'c': data [" + n(data) + ", " + n(data + 40) +
                               ") overlaps the central directory at offset " + n(l.cd_offset));
}

TEST(ZipReaderMalformed, OverlappingEntries) {
  Bytes z = good();
  Layout l = layout_of(z);
  poke32(z, l.central[0] + 20, 150);
  poke32(z, l.central[0] + 24, 150);
  EXPECT_EQ(
      open_error(z),
      "test.zip: entry 'a': data [64, 214) overlaps entry 'b', whose local header is at offset " +
          n(l.local[1]));
  // Two central entries sharing one local header: same verdict.
  Bytes twice = good();
  poke_str(twice, l.central[1] + 46, "a");
  poke32(twice, l.central[1] + 42, 0);
  EXPECT_NE(open_error(twice).find("overlaps entry 'a', whose local header is at offset 0"),
            std::string::npos)
      << open_error(twice);
}

TEST(ZipReaderMalformed, DuplicateNames) {
  Bytes z = good();
  Layout l = layout_of(z);
  poke_str(z, l.central[1] + 46, "a");
  poke_str(z, l.local[1] + 30, "a");
  EXPECT_EQ(open_error(z),
            "test.zip: duplicate entry name 'a' (central directory entries 0 and 1)");
}

// Whatever the bytes, open() and the accessors return errors, never crash
// (this is most useful under -DLATHE_SANITIZE=ON). Every truncation of a
// small archive, then random byte overwrites concentrated on the headers.
TEST(ZipReaderMalformed, SurvivesEveryTruncationAndRandomCorruption) {
  Bytes base = build_zip({{"a", pattern(100, 1)}, {"dir/b", {}}, {"c", bytes_of("ccc")}});
  auto exercise = [](const Bytes& z) {
    auto r = open_bytes(z);
    if (!r.ok()) {
      EXPECT_EQ(r.error().message().rfind("test.zip: ", 0), 0u) << r.error().message();
      return false;
    }
    for (const ZipEntry& e : r->entries()) {
      (void)r->view(e);
      (void)r->read(e);
      (void)r->check_crc(e);
    }
    return true;
  };
  for (size_t len = 0; len < base.size(); ++len) {
    EXPECT_FALSE(exercise(Bytes(base.begin(), base.begin() + len))) << "truncated to " << len;
  }
  Layout l = layout_of(base);
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  };
  size_t opened = 0;
  for (int round = 0; round < 3000; ++round) {
    Bytes z = base;
    int flips = 1 + static_cast<int>(next() % 4);
    for (int k = 0; k < flips; ++k) {
      // Three in four writes hit the central directory and end records.
      uint64_t at =
          next() % 4 ? l.cd_offset + next() % (z.size() - l.cd_offset) : next() % z.size();
      static const uint8_t values[] = {0x00, 0xFF, 0x01, 0x7F, 0x80, 0xFE};
      z[at] = std::byte{values[next() % 6]};
    }
    opened += exercise(z);
  }
  EXPECT_GT(opened, 0u);  // some mutations are harmless (e.g. in padding)
}

// An archive holding one entry named `bad`, made by renaming a good one.
Bytes with_name(const std::string& bad) {
  Bytes z = build_zip({{std::string(bad.size(), 'q'), bytes_of("data")}});
  Layout l = layout_of(z);
  poke_str(z, l.central[0] + 46, bad);
  poke_str(z, l.local[0] + 30, bad);
  return z;
}

TEST(ZipReaderMalformed, UnsafeNames) {
  EXPECT_EQ(open_error(with_name("../evil")),
            "test.zip: entry '../evil': the name has a '..' path component");
  EXPECT_EQ(open_error(with_name("a/../../b")),
            "test.zip: entry 'a/../../b': the name has a '..' path component");
  EXPECT_EQ(open_error(with_name("a/..")),
            "test.zip: entry 'a/..': the name has a '..' path component");
  EXPECT_EQ(open_error(with_name("/etc/passwd")),
            "test.zip: entry '/etc/passwd': the name is an absolute path");
  EXPECT_EQ(open_error(with_name("C:/x")),
            "test.zip: entry 'C:/x': the name starts with a drive letter");
  EXPECT_EQ(open_error(with_name("a\\b")), "test.zip: entry 'a\\b': the name contains a backslash");
  EXPECT_EQ(open_error(with_name(std::string("a\0b", 3))),
            "test.zip: entry 'a\\x00b': the name contains a NUL byte");
  // Dots that are not a whole component are fine.
  EXPECT_EQ(open_error(with_name("a/..b/.c")), "<opened fine>");
}

TEST(ZipReaderMalformed, EncryptedEntry) {
  Bytes z = good();
  poke16(z, layout_of(z).central[0] + 8, 0x0809);
  EXPECT_EQ(open_error(z), "test.zip: entry 'a': the entry is encrypted, which is not supported");
}

TEST(ZipReaderMalformed, UnsupportedMethod) {
  Bytes z = good();
  poke16(z, layout_of(z).central[0] + 10, 12);
  EXPECT_EQ(
      open_error(z),
      "test.zip: entry 'a': compression method 12 is not supported (only STORED and DEFLATE are)");
}

TEST(ZipReaderMalformed, StoredSizesDisagree) {
  Bytes z = good();
  poke32(z, layout_of(z).central[0] + 20, 99);
  EXPECT_EQ(open_error(z),
            "test.zip: entry 'a': STORED, yet its compressed size 99 differs from its size 100");
}

}  // namespace
}  // namespace lathe
