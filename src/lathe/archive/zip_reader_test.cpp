#include "lathe/archive/zip_reader.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include "lathe/archive/zip_format.h"
#include "lathe/archive/zip_test_util.h"
#include "lathe/archive/zip_writer.h"
#include "support/testing.h"

namespace lathe {
namespace {

using namespace ziptest;
using namespace zip_detail;

std::string n(uint64_t v) { return std::to_string(v); }

// ---------------------------------------------------------------------------
// Archives written by other software.

const char* kPythonWriter =
    "import sys, zipfile\n"
    "stored = bytes((i * 131 + (i >> 8)) & 255 for i in range(3000))\n"
    "text = b'hello lathe\\n' * 1000\n"
    "with zipfile.ZipFile(sys.argv[1], 'w') as z:\n"
    "    z.writestr(zipfile.ZipInfo('stored.bin'), stored)\n"
    "    z.writestr('deflated.txt', text, compress_type=zipfile.ZIP_DEFLATED)\n"
    "    z.writestr('empty', b'')\n"
    "    z.writestr('deflated_empty', b'', compress_type=zipfile.ZIP_DEFLATED)\n"
    "    with z.open('dir/forced64.bin', 'w', force_zip64=True) as f:\n"
    "        f.write(stored[:100])\n";

std::string python_text() {
  std::string t;
  for (int i = 0; i < 1000; ++i) t += "hello lathe\n";
  return t;
}

// Writes the Python-made archive and returns its bytes.
Bytes python_zip() {
  std::string dir = testing::temp_dir();
  std::string out;
  int rc = run_python(dir, kPythonWriter, dir + "/py.zip", &out);
  EXPECT_EQ(rc, 0) << out;
  return read_file(dir + "/py.zip");
}

TEST(ZipReader, ReadsPythonZipfileStoredAndDeflated) {
  Bytes zip = python_zip();
  auto r = open_bytes(zip);
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->entries().size(), 5u);
  struct Want {
    const char* name;
    uint16_t method;
    Bytes data;
  };
  Bytes stored = pattern(3000);
  std::vector<Want> want = {
      {"stored.bin", 0, stored},
      {"deflated.txt", 8, bytes_of(python_text())},
      {"empty", 0, {}},
      {"deflated_empty", 8, {}},
      {"dir/forced64.bin", 0, Bytes(stored.begin(), stored.begin() + 100)},
  };
  for (size_t i = 0; i < want.size(); ++i) {
    const ZipEntry& e = r->entries()[i];
    EXPECT_EQ(e.name, want[i].name);
    EXPECT_EQ(e.method, want[i].method) << e.name;
    EXPECT_EQ(e.size, want[i].data.size()) << e.name;
    auto data = r->read(e);
    ASSERT_TRUE(data.ok()) << data.error().message();
    EXPECT_EQ(*data, want[i].data) << e.name;
    Status crc = r->check_crc(e);
    EXPECT_TRUE(crc.ok()) << crc.error().message();
    if (e.method == 0) {
      auto v = r->view(e);
      ASSERT_TRUE(v.ok());
      EXPECT_EQ(Bytes(v->begin(), v->end()), want[i].data);
    }
  }
  const ZipEntry* d = r->find("deflated.txt");
  ASSERT_NE(d, nullptr);
  EXPECT_LT(d->compressed_size, d->size);
  auto v = r->view(*d);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().message(),
            "test.zip: entry 'deflated.txt': is compressed with DEFLATE (method 8); only STORED "
            "entries can be viewed in place");
  auto st = r->view_storage(*d);
  ASSERT_FALSE(st.ok());
}

TEST(ZipReader, ReadsPyTorchWriterOutputWithAlignedData) {
  const std::string path = write_with_pytorch_writer(testing::temp_dir(),
                                                     "w.write_record('a', b'xyz', 3)\n"
                                                     "d = bytes(range(256)) * 5\n"
                                                     "w.write_record('data/0', d, len(d))\n");
  auto r = ZipReader::open(path);
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->entries().size(), 3u);
  EXPECT_EQ(r->entries()[0].name, "pt/a");
  EXPECT_EQ(r->entries()[1].name, "pt/data/0");
  EXPECT_EQ(r->entries()[2].name, "pt/version");
  for (const ZipEntry& e : r->entries()) {
    EXPECT_EQ(e.data_offset % 64, 0u) << e.name;
    EXPECT_TRUE(r->check_crc(e).ok()) << e.name;
  }
  EXPECT_EQ(str_of(*r->view(*r->find("pt/a"))), "xyz");
  auto d = r->view(*r->find("pt/data/0"));
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->size(), 1280u);
  for (size_t i = 0; i < d->size(); ++i) ASSERT_EQ(std::to_integer<size_t>((*d)[i]), i % 256);
}

TEST(ZipReader, OpensRealPt2ArchiveAndItsNestedZip) {
  std::string path = testing::shared_path("external/pt2/hades_pid_exported_program.pt2");
  auto r = ZipReader::open(path);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->display_name(), path);
  std::vector<std::pair<std::string, uint64_t>> want = {
      {"serialized_exported_program.json", 117651},
      {"serialized_state_dict.json", 1475516},
      {"serialized_constants.json", 864},
      {"version", 1},
  };
  ASSERT_EQ(r->entries().size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(r->entries()[i].name, want[i].first);
    EXPECT_EQ(r->entries()[i].size, want[i].second);
    EXPECT_EQ(r->entries()[i].method, 0);
    EXPECT_TRUE(r->check_crc(r->entries()[i]).ok());
  }
  EXPECT_EQ(str_of(*r->view(*r->find("version"))), "2");

  // The state dict is a torch.save zip: open it in place, and keep using it
  // after the outer reader is gone.
  auto storage = r->view_storage(*r->find("serialized_state_dict.json"));
  ASSERT_TRUE(storage.ok());
  EXPECT_TRUE((*storage)->is_view());
  r = make_error("dropped");  // release the outer reader
  auto nested = ZipReader::open_memory(*storage, (*storage)->data(), (*storage)->nbytes(),
                                       path + ":serialized_state_dict.json");
  ASSERT_TRUE(nested.ok()) << nested.error().message();
  EXPECT_EQ(nested->display_name(), path + ":serialized_state_dict.json");
  EXPECT_EQ(nested->entries().size(), 34u);
  EXPECT_EQ(nested->entries()[0].name, "archive/data.pkl");
  EXPECT_EQ(str_of(*nested->view(*nested->find("archive/byteorder"))), "little");
  for (const ZipEntry& e : nested->entries()) {
    EXPECT_EQ(e.data_offset % 64, 0u) << e.name;
    EXPECT_TRUE(nested->check_crc(e).ok()) << e.name;
  }
}

TEST(ZipReader, ViewStorageOutlivesReader) {
  std::string dir = testing::temp_dir();
  write_file(dir + "/w.zip", build_zip({{"w", pattern(5000, 3)}}));
  std::shared_ptr<Storage> s;
  {
    auto r = ZipReader::open(dir + "/w.zip");
    ASSERT_TRUE(r.ok());
    auto v = r->view_storage(r->entries()[0]);
    ASSERT_TRUE(v.ok());
    s = *v;
  }
  EXPECT_TRUE(s->is_view());
  EXPECT_EQ(Bytes(s->bytes().begin(), s->bytes().end()), pattern(5000, 3));
}

TEST(ZipReader, RefusesEntriesFromElsewhere) {
  Bytes z = build_zip({{"a", bytes_of("abc")}});
  auto r = open_bytes(z);
  ASSERT_TRUE(r.ok());
  ZipEntry forged = r->entries()[0];
  forged.data_offset = 1ull << 40;
  auto v = r->view(forged);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().message(),
            "test.zip: entry 'a': data [1099511627776, 1099511627779) lies outside this archive (" +
                n(z.size()) + " bytes)");
  EXPECT_FALSE(r->read(forged).ok());
  EXPECT_FALSE(r->check_crc(forged).ok());
}

// ---------------------------------------------------------------------------
// zip64 extended-information extra field in a classic archive: one STORED
// entry "z" = "hello" whose central entry says 0xFFFFFFFF for both sizes and
// the offset. `zip64_payload` bytes of the 24-byte field are kept (24: all,
// 0: no field at all); an unrelated extra field comes first.
Bytes zip64_extra_archive(size_t zip64_payload) {
  Bytes b;
  const uint32_t crc = crc32(0L, reinterpret_cast<const Bytef*>("hello"), 5);
  put32(b, kLocalHeaderSig);
  put16(b, 45);
  put16(b, 0);
  put16(b, 0);
  put32(b, 0);
  put32(b, crc);
  put32(b, 5);
  put32(b, 5);
  put16(b, 1);
  put16(b, 0);
  for (char c : std::string("zhello")) b.push_back(std::byte(c));
  const uint64_t cd_offset = b.size();
  Bytes extra;
  put16(extra, 0x5455);  // extended timestamp, to be skipped
  put16(extra, 5);
  for (int i = 0; i < 5; ++i) extra.push_back(std::byte{0});
  if (zip64_payload > 0) {
    Bytes full;
    put64(full, 5);
    put64(full, 5);
    put64(full, 0);
    put16(extra, kZip64ExtraId);
    put16(extra, static_cast<uint16_t>(zip64_payload));
    extra.insert(extra.end(), full.begin(), full.begin() + zip64_payload);
  }
  put32(b, kCentralHeaderSig);
  put16(b, 45);
  put16(b, 45);
  put16(b, 0);
  put16(b, 0);
  put32(b, 0);
  put32(b, crc);
  put32(b, kMax32);
  put32(b, kMax32);
  put16(b, 1);
  put16(b, static_cast<uint16_t>(extra.size()));
  put16(b, 0);
  put16(b, 0);
  put16(b, 0);
  put32(b, 0);
  put32(b, kMax32);
  b.push_back(std::byte{'z'});
  b.insert(b.end(), extra.begin(), extra.end());
  const uint64_t cd_size = b.size() - cd_offset;
  put32(b, kEocdSig);
  put16(b, 0);
  put16(b, 0);
  put16(b, 1);
  put16(b, 1);
  put32(b, static_cast<uint32_t>(cd_size));
  put32(b, static_cast<uint32_t>(cd_offset));
  put16(b, 0);
  return b;
}

TEST(ZipReaderZip64, ReadsSizesAndOffsetFromExtraField) {
  Bytes z = zip64_extra_archive(24);
  auto r = open_bytes(z);
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->entries().size(), 1u);
  const ZipEntry& e = r->entries()[0];
  EXPECT_EQ(e.size, 5u);
  EXPECT_EQ(e.compressed_size, 5u);
  EXPECT_EQ(e.local_header_offset, 0u);
  EXPECT_EQ(e.data_offset, 31u);
  EXPECT_EQ(str_of(*r->view(e)), "hello");
  EXPECT_TRUE(r->check_crc(e).ok());
}

TEST(ZipReaderZip64, MissingOrShortExtraField) {
  EXPECT_EQ(
      open_error(zip64_extra_archive(0)),
      "test.zip: entry 'z': the central directory has 0xFFFFFFFF sizes or offset but no zip64 "
      "extended-information extra field");
  EXPECT_EQ(
      open_error(zip64_extra_archive(16)),
      "test.zip: entry 'z': the zip64 extra field is 16 bytes, too short for the 24 bytes its "
      "0xFFFFFFFF fields call for");
}

TEST(ZipReaderZip64, SaturatedEocdWithoutLocator) {
  Bytes z = zip64_extra_archive(24);
  poke32(z, z.size() - 22 + 16, kMax32);
  EXPECT_EQ(
      open_error(z),
      "test.zip: the end-of-central-directory record has 0xFFFFFFFF fields but no zip64 locator "
      "precedes it");
}

TEST(ZipReaderZip64, ClassicCentralDirectoryOutOfBounds) {
  Bytes z = zip64_extra_archive(24);
  uint64_t eocd = z.size() - 22;
  uint32_t cd_size = load32(z.data() + eocd + 12);
  poke32(z, eocd + 16, 100);
  EXPECT_EQ(open_error(z), "test.zip: central directory [100, " + n(100 + cd_size) +
                               ") extends past the end-of-central-directory record at offset " +
                               n(eocd) + " (the file is " + n(z.size()) + " bytes)");
}

// ---------------------------------------------------------------------------
// DEFLATE entries are bounded by their declared size and the limits.

class ZipReaderDeflate : public ::testing::Test {
 protected:
  void SetUp() override {
    zip_ = python_zip();
    Layout l = layout_of(zip_);
    ASSERT_EQ(l.central.size(), 5u);
    central_ = l.central[1];  // deflated.txt
    ASSERT_EQ(load16(zip_.data() + central_ + 10), 8);
  }
  std::string read_error(const Bytes& z, ZipLimits limits = {}) {
    auto r = open_bytes(z, "test.zip", limits);
    if (!r.ok()) return "open: " + r.error().message();
    auto d = r->read(*r->find("deflated.txt"));
    return d.ok() ? "<read fine>" : d.error().message();
  }
  // stream() must refuse exactly what read() refuses, with the same words.
  std::string stream_error(const Bytes& z, ZipLimits limits = {}) {
    auto r = open_bytes(z, "test.zip", limits);
    if (!r.ok()) return "open: " + r.error().message();
    Status s = r->stream(*r->find("deflated.txt"), [](std::span<const std::byte>) { return Status::Ok(); });
    return s.ok() ? "<read fine>" : s.error().message();
  }
  Bytes zip_;
  uint64_t central_ = 0;
};

// Copying a record (an extra/ record on convert) streams it: every chunk is
// at most 1 MiB, whatever the entry inflates to, and the bytes are exact.
TEST(ZipReaderStream, LargeEntriesComeInBoundedChunks) {
  const std::string dir = testing::temp_dir();
  std::string out;
  ASSERT_EQ(run_python(dir,
                       "import sys, zipfile\n"
                       "with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:\n"
                       "    z.writestr('zeros', bytes(9 << 20))\n"
                       "    z.writestr('stored', b'x' * 3000000, compress_type=zipfile.ZIP_STORED)\n",
                       dir + "/big.zip", &out),
            0)
      << out;
  const Bytes zip = read_file(dir + "/big.zip");
  ASSERT_LT(zip.size(), 3'100'000u);  // the 9 MiB of zeros take ~9 KB
  auto r = open_bytes(zip);
  ASSERT_TRUE(r.ok()) << r.error().message();
  for (const char* name : {"zeros", "stored"}) {
    size_t total = 0, largest = 0;
    bool exact = true;
    Status s = r->stream(*r->find(name), [&](std::span<const std::byte> chunk) {
      total += chunk.size();
      largest = std::max(largest, chunk.size());
      for (std::byte b : chunk) exact = exact && b == (std::string(name) == "zeros" ? std::byte{0} : std::byte{'x'});
      return Status::Ok();
    });
    ASSERT_TRUE(s.ok()) << s.error().message();
    EXPECT_EQ(total, r->find(name)->size) << name;
    EXPECT_LE(largest, 1u << 20) << name;
    EXPECT_TRUE(exact) << name;
  }
}

TEST_F(ZipReaderDeflate, InflatesBeyondDeclaredSize) {
  poke32(zip_, central_ + 24, 100);
  EXPECT_EQ(read_error(zip_),
            "test.zip: entry 'deflated.txt': inflates to more than its declared size of 100 bytes");
  EXPECT_EQ(stream_error(zip_), read_error(zip_));
}

TEST_F(ZipReaderDeflate, InflatesShortOfDeclaredSize) {
  poke32(zip_, central_ + 24, 12001);
  EXPECT_EQ(read_error(zip_),
            "test.zip: entry 'deflated.txt': inflates to 12000 bytes, but the central directory "
            "declares 12001");
  EXPECT_EQ(stream_error(zip_), read_error(zip_));
}

TEST_F(ZipReaderDeflate, OverTheInflateLimit) {
  EXPECT_EQ(read_error(zip_, ZipLimits{.max_inflated_bytes = 1000}),
            "test.zip: entry 'deflated.txt': declares 12000 bytes uncompressed, more than the "
            "limit of 1000");
  EXPECT_EQ(stream_error(zip_, ZipLimits{.max_inflated_bytes = 1000}), read_error(zip_, ZipLimits{.max_inflated_bytes = 1000}));
}

TEST_F(ZipReaderDeflate, ImpossibleExpansionRatio) {
  poke32(zip_, central_ + 24, 1'000'000'000);
  uint32_t csize = load32(zip_.data() + central_ + 20);
  EXPECT_EQ(read_error(zip_),
            "test.zip: entry 'deflated.txt': declares 1000000000 bytes uncompressed from only " +
                n(csize) + " compressed bytes, more than DEFLATE can produce");
  EXPECT_EQ(stream_error(zip_), read_error(zip_));
}

TEST_F(ZipReaderDeflate, TruncatedStream) {
  uint32_t csize = load32(zip_.data() + central_ + 20);
  ASSERT_GE(csize / 2, 12u);  // still a plausible DEFLATE ratio for 12000 bytes
  poke32(zip_, central_ + 20, csize / 2);
  EXPECT_EQ(
      read_error(zip_),
      "test.zip: entry 'deflated.txt': compressed data is truncated (DEFLATE stream ends early)");
  EXPECT_EQ(stream_error(zip_), read_error(zip_));
}

TEST_F(ZipReaderDeflate, CorruptStream) {
  auto r = open_bytes(zip_);
  ASSERT_TRUE(r.ok());
  // First byte 0xFF: final block of reserved type 3.
  zip_[r->find("deflated.txt")->data_offset] = std::byte{0xFF};
  EXPECT_EQ(read_error(zip_),
            "test.zip: entry 'deflated.txt': corrupt DEFLATE data: invalid block type");
  EXPECT_EQ(stream_error(zip_), read_error(zip_));
  auto r2 = open_bytes(zip_);
  ASSERT_TRUE(r2.ok());
  Status s = r2->check_crc(*r2->find("deflated.txt"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(),
            "test.zip: entry 'deflated.txt': corrupt DEFLATE data: invalid block type");
}

}  // namespace
}  // namespace lathe
