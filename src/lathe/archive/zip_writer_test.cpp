#include "lathe/archive/zip_writer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <unordered_set>

#include "lathe/archive/crc32.h"
#include "lathe/archive/zip_format.h"
#include "lathe/archive/zip_reader.h"
#include "lathe/archive/zip_test_util.h"
#include "lathe/core/atomic_file.h"
#include "support/testing.h"

namespace lathe {
namespace {

using namespace ziptest;
using namespace zip_detail;

std::vector<NamedData> sample_entries() {
  return {
      {"archive/a.txt", bytes_of("hello, lathe\n")},
      {"archive/empty", {}},
      {"archive/data/weights/weight_0", pattern(1000, 1)},
      {"archive/x", pattern(4097, 2)},
      {"archive/models/model.json", bytes_of("{\"k\": [1, 2, 3]}")},
  };
}

TEST(ZipWriter, RoundTripsSeveralEntries) {
  auto entries = sample_entries();
  Bytes zip = build_zip(entries);
  auto r = open_bytes(zip);
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->entries().size(), entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const ZipEntry& e = r->entries()[i];
    EXPECT_EQ(e.name, entries[i].name);  // central-directory order = add order
    EXPECT_EQ(e.method, kMethodStored);
    EXPECT_EQ(e.size, entries[i].data.size());
    EXPECT_EQ(e.compressed_size, entries[i].data.size());
    auto view = r->view(e);
    ASSERT_TRUE(view.ok()) << view.error().message();
    EXPECT_EQ(Bytes(view->begin(), view->end()), entries[i].data) << e.name;
    auto copy = r->read(e);
    ASSERT_TRUE(copy.ok());
    EXPECT_EQ(*copy, entries[i].data);
    EXPECT_EQ(r->find(e.name), &e);
  }
  EXPECT_EQ(r->find("archive/missing"), nullptr);
}

TEST(ZipWriter, AlignsEveryDataOffsetTo64BytesWithPaddingField) {
  // Name lengths 1..130 move the unpadded data start through every residue.
  std::vector<NamedData> entries;
  for (size_t n = 1; n <= 130; ++n) {
    entries.push_back({std::string(n, 'n') + std::to_string(n), pattern(n * 3 % 97, n)});
  }
  Bytes zip = build_zip(entries);
  auto r = open_bytes(zip);
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->entries().size(), entries.size());
  for (const ZipEntry& e : r->entries()) {
    EXPECT_EQ(e.data_offset % 64, 0u) << e.name;
    // The local extra field is exactly 'F','B', u16 length, 'Z' * length.
    const std::byte* lh = zip.data() + e.local_header_offset;
    uint16_t name_len = load16(lh + 26), extra_len = load16(lh + 28);
    const std::byte* x = lh + kLocalHeaderSize + name_len;
    ASSERT_GE(extra_len, 4);
    EXPECT_EQ(load16(x), kPaddingExtraId);
    EXPECT_EQ(load16(x + 2), extra_len - 4);
    EXPECT_LT(extra_len - 4, 64);
    for (uint16_t i = 4; i < extra_len; ++i) EXPECT_EQ(x[i], std::byte{'Z'});
  }
}

TEST(ZipWriter, WritesCorrectCrcs) {
  auto entries = sample_entries();
  Bytes zip = build_zip(entries);
  auto r = open_bytes(zip);
  ASSERT_TRUE(r.ok());
  for (size_t i = 0; i < entries.size(); ++i) {
    const auto& d = entries[i].data;
    uLong expected =
        crc32(0L, reinterpret_cast<const Bytef*>(d.data()), static_cast<uInt>(d.size()));
    EXPECT_EQ(r->entries()[i].crc32, expected) << entries[i].name;
    EXPECT_TRUE(r->check_crc(r->entries()[i]).ok());
  }
  // A flipped data byte is caught.
  Bytes bad = zip;
  const ZipEntry& w = r->entries()[2];
  bad[w.data_offset + 10] ^= std::byte{0x01};
  auto rb = open_bytes(bad);
  ASSERT_TRUE(rb.ok());
  Status s = rb->check_crc(rb->entries()[2]);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(
      s.error().message().find("test.zip: entry 'archive/data/weights/weight_0': CRC-32 mismatch"),
      std::string::npos)
      << s.error().message();
}

TEST(ZipWriter, UsesPyTorchHeaderLayout) {
  Bytes zip = build_zip(
      {{"pt/a", bytes_of("xyz")}, {"pt/b", pattern(70)}, {"pt/e", {}}, {"pt/f", bytes_of("f")}});
  Layout l = layout_of(zip);
  ASSERT_EQ(l.local.size(), 4u);
  for (size_t i : {0, 1, 3}) {
    const std::byte* lh = zip.data() + l.local[i];
    EXPECT_EQ(load32(lh), kLocalHeaderSig);
    EXPECT_EQ(load16(lh + 4), 20);      // version needed
    EXPECT_EQ(load16(lh + 6), 0x0808);  // data descriptor + UTF-8
    EXPECT_EQ(load16(lh + 8), 0);       // STORED
    EXPECT_EQ(load32(lh + 10), 0u);     // DOS time and date
    EXPECT_EQ(load32(lh + 14), 0u);     // CRC in the descriptor
    EXPECT_EQ(load64(lh + 18), 0u);     // sizes in the descriptor
    const std::byte* c = zip.data() + l.central[i];
    EXPECT_EQ(load16(c + 4), 0);   // made by, as miniz
    EXPECT_EQ(load16(c + 6), 20);  // version needed
    EXPECT_EQ(load16(c + 8), 0x0808);
    EXPECT_EQ(load32(c + 12), 0u);
  }
  // The empty entry, as in miniz: UTF-8 flag only and no data descriptor, so
  // the next local header starts right at its (aligned) data offset.
  const std::byte* e = zip.data() + l.local[2];
  EXPECT_EQ(load16(e + 6), 0x0800);
  EXPECT_EQ(load16(zip.data() + l.central[2] + 8), 0x0800);
  EXPECT_EQ(l.local[3], l.local[2] + kLocalHeaderSize + 4 + load16(e + 28));
  EXPECT_EQ(l.local[3] % 64, 0u);
  // Data descriptor right after "xyz": signature, CRC, 4-byte sizes.
  uint64_t data0 = l.local[0] + kLocalHeaderSize + 4 + load16(zip.data() + l.local[0] + 28);
  const std::byte* dd = zip.data() + data0 + 3;
  EXPECT_EQ(load32(dd), kDataDescriptorSig);
  EXPECT_EQ(load32(dd + 4), crc32(0L, reinterpret_cast<const Bytef*>("xyz"), 3));
  EXPECT_EQ(load32(dd + 8), 3u);
  EXPECT_EQ(load32(dd + 12), 3u);
  EXPECT_EQ(l.local[1], data0 + 3 + 16);
  // zip64 record + locator + classic EOCD end the file.
  EXPECT_EQ(load32(zip.data() + l.zip64_record), kZip64EocdSig);
  EXPECT_EQ(load64(zip.data() + l.zip64_record + 32), 4u);
  EXPECT_EQ(load32(zip.data() + l.locator), kZip64LocatorSig);
  EXPECT_EQ(load64(zip.data() + l.locator + 8), l.zip64_record);
  EXPECT_EQ(load32(zip.data() + l.eocd), kEocdSig);
  EXPECT_EQ(load16(zip.data() + l.eocd + 10), 4);
  EXPECT_EQ(load32(zip.data() + l.eocd + 16), l.cd_offset);
}

TEST(ZipWriter, OutputIsByteIdenticalForIdenticalInput) {
  std::string dir = testing::temp_dir();
  auto write = [&](const std::string& path) {
    Status s = write_file_atomically(path, [](FileSink& sink) -> Status {
      ZipWriter w(sink);
      for (const auto& e : sample_entries()) LATHE_RETURN_IF_ERROR(w.add(e.name, e.data));
      return w.finish();
    });
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message());
    return read_file(path);
  };
  Bytes a = write(dir + "/a.zip"), b = write(dir + "/b.zip");
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, build_zip(sample_entries()));
}

// Rewriting the records of a zip made by PyTorch 1.13's own writer (incl. an
// empty record) gives PyTorch's bytes exactly, apart from the version-needed
// fields (miniz writes 0 for STORED entries; Lathe writes 20 as APPNOTE asks).
TEST(ZipWriter, ReproducesPyTorchWriterBytes) {
  const std::string path = write_with_pytorch_writer(testing::temp_dir(),
                                                     "w.write_record('a', b'xyz', 3)\n"
                                                     "w.write_record('empty', b'', 0)\n"
                                                     "d = bytes((i * 7) & 255 for i in range(1000))\n"
                                                     "w.write_record('data/0', d, len(d))\n");
  Bytes theirs = read_file(path);
  auto r = open_bytes(theirs, "pt.zip");
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->entries().size(), 4u);  // + pt/version

  MemorySink sink;
  ZipWriter w(sink);
  for (const ZipEntry& e : r->entries()) {
    auto v = r->view(e);
    ASSERT_TRUE(v.ok());
    ASSERT_TRUE(w.add(e.name, *v).ok());
  }
  ASSERT_TRUE(w.finish().ok());
  Bytes ours = sink.take();
  ASSERT_EQ(ours.size(), theirs.size());
  // The one deliberate difference, masked before comparing: version needed
  // (miniz writes 0 for STORED entries, Lathe 20).
  Layout l = layout_of(ours);
  for (size_t i = 0; i < l.local.size(); ++i) {
    EXPECT_EQ(load16(ours.data() + l.local[i] + 4), 20);
    EXPECT_EQ(load16(theirs.data() + l.local[i] + 4), 0);
    poke16(ours, l.local[i] + 4, 0);
    poke16(ours, l.central[i] + 6, 0);
  }
  // Report the first difference rather than two long byte dumps.
  size_t first = 0;
  while (first < ours.size() && ours[first] == theirs[first]) ++first;
  EXPECT_EQ(first, ours.size()) << "first differing byte at offset " << first;
}

TEST(ZipWriter, PythonZipfileReadsOutput) {
  std::string dir = testing::temp_dir();
  auto entries = sample_entries();
  Status s = write_file_atomically(dir + "/out.zip", [&](FileSink& sink) -> Status {
    ZipWriter w(sink);
    for (const auto& e : entries) LATHE_RETURN_IF_ERROR(w.add(e.name, e.data));
    return w.finish();
  });
  ASSERT_TRUE(s.ok()) << s.error().message();
  std::string out;
  int rc = run_python(dir,
                      "import sys, zipfile\n"
                      "z = zipfile.ZipFile(sys.argv[1])\n"
                      "assert z.testzip() is None\n"
                      "for i in z.infolist():\n"
                      "    print(i.filename, i.compress_type, i.file_size, z.read(i).hex())\n",
                      dir + "/out.zip", &out);
  ASSERT_EQ(rc, 0) << out;
  std::ostringstream expected;
  for (const auto& e : entries) {
    expected << e.name << " 0 " << e.data.size() << " ";
    for (std::byte b : e.data) {
      char hex[3];
      std::snprintf(hex, sizeof hex, "%02x", std::to_integer<unsigned>(b));
      expected << hex;
    }
    expected << "\n";
  }
  EXPECT_EQ(out, expected.str());
}

TEST(ZipWriter, RefusesUnsafeAndDuplicateNamesButStaysUsable) {
  MemorySink sink;
  ZipWriter w(sink);
  ASSERT_TRUE(w.add("ok", std::string("1")).ok());
  struct Case {
    std::string name, message;
  };
  std::vector<Case> cases = {
      {"../evil", "zip writer: entry '../evil': the name has a '..' path component"},
      {"a/../../b", "zip writer: entry 'a/../../b': the name has a '..' path component"},
      {"/abs", "zip writer: entry '/abs': the name is an absolute path"},
      {"a\\b", "zip writer: entry 'a\\b': the name contains a backslash"},
      {std::string("a\0b", 3), "zip writer: entry 'a\\x00b': the name contains a NUL byte"},
      {"", "zip writer: entry '': the name is empty"},
      {"ok", "zip writer: duplicate entry name 'ok'"},
  };
  for (const auto& c : cases) {
    Status s = w.add(c.name, std::string("x"));
    ASSERT_FALSE(s.ok()) << c.name;
    EXPECT_EQ(s.error().message(), c.message);
  }
  ASSERT_TRUE(w.add("ok2", std::string("2")).ok());
  ASSERT_TRUE(w.finish().ok());
  Status late = w.add("late", std::string("3"));
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().message(), "zip writer: cannot add entry 'late' after finish()");
  auto r = open_bytes(sink.bytes());
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->entries().size(), 2u);
  EXPECT_EQ(r->entries()[1].name, "ok2");
}

TEST(ZipWriter, EmptyArchive) {
  Bytes zip = build_zip({});
  EXPECT_EQ(zip.size(), 56u + 20u + 22u);  // the three end records only
  auto r = open_bytes(zip);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(r->entries().empty());
  std::string dir = testing::temp_dir(), out;
  write_file(dir + "/empty.zip", zip);
  int rc =
      run_python(dir, "import sys, zipfile\nprint(len(zipfile.ZipFile(sys.argv[1]).namelist()))\n",
                 dir + "/empty.zip", &out);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(out, "0\n");
}

// A sink that fails after a number of bytes, as a full disk would.
class FailingSink : public FileSink {
 public:
  explicit FailingSink(uint64_t budget) : budget_(budget) {}
  using FileSink::write;
  Status write(std::span<const std::byte> bytes) override {
    if (pos_ + bytes.size() > budget_) return make_error("disk full");
    pos_ += bytes.size();
    return Status::Ok();
  }
  uint64_t position() const override { return pos_; }

 private:
  uint64_t budget_, pos_ = 0;
};

TEST(ZipWriter, ReportsSinkErrorsAndStops) {
  FailingSink sink(100);
  ZipWriter w(sink);
  ASSERT_TRUE(w.add("a", std::string("x")).ok());
  Status s = w.add("b", pattern(200));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(), "zip writer: entry 'b': disk full");
  Status f = w.finish();
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().message(), "zip writer: cannot finish after an earlier write failed");
}

// An entry streamed in pieces of uneven sizes (some empty) is the entry
// added whole: the same archive bytes, CRC and size. Empty, it is an empty
// entry (no data descriptor, as miniz writes it).
TEST(ZipWriter, StreamedEntryIsTheEntryAddedWhole) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{70000}}) {
    SCOPED_TRACE(n);
    const Bytes data = pattern(n, 3);
    MemorySink whole_sink, streamed_sink;
    ZipWriter whole(whole_sink), streamed(streamed_sink);
    ASSERT_TRUE(whole.add("a", std::string("x")).ok());
    ASSERT_TRUE(streamed.add("a", std::string("x")).ok());
    ASSERT_TRUE(whole.add("models/m.json", data).ok());
    Status s = streamed.add_streamed("models/m.json", [&](const ByteSource::Sink& sink) -> Status {
      std::span<const std::byte> rest(data);
      for (size_t piece = 1; !rest.empty(); piece = piece * 3 + 7) {
        LATHE_RETURN_IF_ERROR(sink(rest.first(0)));
        const size_t k = std::min(piece, rest.size());
        LATHE_RETURN_IF_ERROR(sink(rest.first(k)));
        rest = rest.subspan(k);
      }
      return Status::Ok();
    });
    ASSERT_TRUE(s.ok()) << s.error().message();
    EXPECT_EQ(streamed.last_crc(), whole.last_crc());
    EXPECT_EQ(streamed.last_crc(), crc32_update(0, data));
    EXPECT_EQ(streamed.last_size(), n);
    ASSERT_TRUE(whole.finish().ok());
    ASSERT_TRUE(streamed.finish().ok());
    EXPECT_EQ(streamed_sink.bytes(), whole_sink.bytes());
  }
}

// A producer refusing before its first byte leaves the archive as it was:
// its own message, the name free again, nothing written.
TEST(ZipWriter, StreamedEntryRefusedBeforeItsFirstByteWritesNothing) {
  MemorySink sink;
  ZipWriter w(sink);
  ASSERT_TRUE(w.add("a", std::string("x")).ok());
  const uint64_t before = sink.position();
  Status s = w.add_streamed("m.json", [](const ByteSource::Sink&) { return Status(make_error("cannot express it")); });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(), "cannot express it");
  EXPECT_EQ(sink.position(), before);
  ASSERT_TRUE(w.add("m.json", std::string("{}")).ok());
  ASSERT_TRUE(w.finish().ok());
  // Failing later, the entry is half written: the archive cannot be finished.
  MemorySink sink2;
  ZipWriter w2(sink2);
  s = w2.add_streamed("m.json", [](const ByteSource::Sink& out) -> Status {
    LATHE_RETURN_IF_ERROR(out(bytes_of("{")));
    return make_error("the program broke");
  });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(), "zip writer: entry 'm.json': the program broke");
  EXPECT_FALSE(w2.finish().ok());
}

// A streamed entry reaching 4 GiB fails naming it: its local header went out
// without the zip64 sizes. (Streams 4 GiB of zeros into a sink that counts
// them: a CRC of 4 GiB, under a second.)
TEST(ZipWriter, StreamedEntryOf4GiBFailsNamingIt) {
  class CountingSink : public FileSink {
   public:
    using FileSink::write;
    Status write(std::span<const std::byte> bytes) override {
      pos_ += bytes.size();
      return Status::Ok();
    }
    uint64_t position() const override { return pos_; }

   private:
    uint64_t pos_ = 0;
  } sink;
  ZipWriter w(sink);
  const Bytes zeros(64u << 20);
  uint64_t passed = 0;
  Status s = w.add_streamed("archive/models/model.json", [&](const ByteSource::Sink& out) -> Status {
    for (int i = 0; i < 64; ++i) {  // 64 x 64 MiB: the last piece reaches 2^32 - 1
      LATHE_RETURN_IF_ERROR(out(zeros));
      passed += zeros.size();
    }
    return Status::Ok();
  });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(passed, 63ull << 26);  // the 64th piece was refused
  EXPECT_NE(s.error().message().find("entry 'archive/models/model.json': reached 4 GiB"), std::string::npos)
      << s.error().message();
  EXPECT_FALSE(w.finish().ok());
}

// The duplicate check across many entries (its table grows several times):
// every name written is refused again, a new one is not.
TEST(ZipWriter, RefusesDuplicatesAmongManyEntries) {
  MemorySink sink;
  ZipWriter w(sink);
  for (int i = 0; i < 3000; ++i) ASSERT_TRUE(w.add("archive/data/weights/weight_" + std::to_string(i), std::string("x")).ok());
  for (int i = 0; i < 3000; i += 7) {
    Status s = w.add("archive/data/weights/weight_" + std::to_string(i), std::string("y"));
    ASSERT_FALSE(s.ok()) << i;
    EXPECT_EQ(s.error().message(), "zip writer: duplicate entry name 'archive/data/weights/weight_" + std::to_string(i) + "'");
  }
  EXPECT_TRUE(w.add("archive/data/weights/weight_3000", std::string("x")).ok());
  EXPECT_TRUE(w.finish().ok());
}

// SerializationId over PyTorch's own container, std::unordered_set<std::string>
// filled in the same order (what it held before its names moved into
// blocks; MatchesPyTorchOnRealArchives checks that against PyTorch): the
// same id for 20,000 records, a repeated name, and an empty one.
TEST(SerializationId, SameIdAsAStringSetOverManyRecords) {
  std::vector<std::string> names = {"byteorder", "", "data/weights/model_weights_config.json"};
  for (int i = 0; i < 20000; ++i) names.push_back("data/weights/weight_" + std::to_string(i));
  names.push_back("byteorder");
  names.push_back(std::string(70000, 'n'));  // longer than a block
  SerializationId id;
  std::unordered_set<std::string> reference;
  uint64_t crcs = 0;
  auto combine = [](uint64_t seed, uint64_t v) { return seed ^ (v + 0x9e3779b9 + (seed << 6) + (seed >> 2)); };
  for (size_t i = 0; i < names.size(); ++i) {
    const uint32_t crc = static_cast<uint32_t>(i * 2654435761u);
    id.add(names[i], crc, i % 5);
    reference.insert(names[i]);
    if (i % 5 > 0) crcs = combine(crcs, crc);
  }
  uint64_t hashes = 0;
  for (const std::string& n : reference) hashes = combine(hashes, std::hash<std::string>{}(n));
  char expected[41];
  std::snprintf(expected, sizeof expected, "%020llu%020llu", static_cast<unsigned long long>(hashes),
                static_cast<unsigned long long>(crcs));
  EXPECT_EQ(id.str(), expected);
}

// More than 65535 entries: the classic EOCD saturates its counts and readers
// must take them from the zip64 record.
TEST(ZipWriter, Zip64ManyEntriesRoundTrip) {
  constexpr size_t kCount = 70000;
  MemorySink sink;
  ZipWriter w(sink);
  char name[32];
  for (size_t i = 0; i < kCount; ++i) {
    std::snprintf(name, sizeof name, "e/%05zu", i);
    ASSERT_TRUE(w.add(name, std::to_string(i)).ok());
  }
  ASSERT_TRUE(w.finish().ok());
  const Bytes& zip = sink.bytes();
  Layout l = layout_of(zip);
  EXPECT_EQ(load16(zip.data() + l.eocd + 8), 0xFFFF);
  EXPECT_EQ(load16(zip.data() + l.eocd + 10), 0xFFFF);
  EXPECT_EQ(load64(zip.data() + l.zip64_record + 32), kCount);

  auto r = open_bytes(zip);
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->entries().size(), kCount);
  for (size_t i : {size_t{0}, size_t{65535}, size_t{65536}, kCount - 1}) {
    std::snprintf(name, sizeof name, "e/%05zu", i);
    const ZipEntry* e = r->find(name);
    ASSERT_NE(e, nullptr) << name;
    EXPECT_EQ(e, &r->entries()[i]);
    EXPECT_EQ(str_of(*r->view(*e)), std::to_string(i));
    EXPECT_EQ(e->data_offset % 64, 0u);
  }

  std::string dir = testing::temp_dir();
  write_file(dir + "/many.zip", zip);
  std::string out;
  int rc = run_python(dir,
                      "import sys, zipfile\n"
                      "z = zipfile.ZipFile(sys.argv[1])\n"
                      "print(len(z.namelist()), z.read('e/69999').decode())\n",
                      dir + "/many.zip", &out);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(out, "70000 69999\n");
}

// Writes to a file, turning every large write into a hole: the 4 GiB entry
// below is all zeros, so the file reads back right while using no disk.
class SparseFileSink : public FileSink {
 public:
  explicit SparseFileSink(int fd) : fd_(fd) {}
  using FileSink::write;
  Status write(std::span<const std::byte> bytes) override {
    if (bytes.size() < (1u << 20) &&
        ::pwrite(fd_, bytes.data(), bytes.size(), static_cast<off_t>(pos_)) !=
            static_cast<ssize_t>(bytes.size())) {
      return make_error("pwrite failed");
    }
    pos_ += bytes.size();
    return Status::Ok();
  }
  uint64_t position() const override { return pos_; }

 private:
  int fd_;
  uint64_t pos_ = 0;
};

// `len` (a multiple of `chunk`) bytes of zeros at *base without touching
// that much memory: one `chunk`-byte memfd mapped again and again into one
// contiguous address range. *base stays null if mapping fails.
void map_zeros(uint64_t len, uint64_t chunk, std::byte** base) {
  int mfd = ::memfd_create("zeros", 0);
  ASSERT_GE(mfd, 0);
  ASSERT_EQ(::ftruncate(mfd, static_cast<off_t>(chunk)), 0);
  auto* range = static_cast<std::byte*>(::mmap(nullptr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0));
  ASSERT_NE(range, MAP_FAILED);
  for (uint64_t off = 0; off < len; off += chunk) {
    ASSERT_NE(::mmap(range + off, chunk, PROT_READ, MAP_SHARED | MAP_FIXED | MAP_POPULATE, mfd, 0), MAP_FAILED);
  }
  ::close(mfd);
  *base = range;
}

// CRC-32 of `n` zero bytes, assembled from the CRC of one `chunk`.
uLong crc_of_zeros(uint64_t n, uint64_t chunk) {
  Bytes zeros(chunk);
  const uLong block = crc32_z(0, reinterpret_cast<const Bytef*>(zeros.data()), zeros.size());
  uLong crc = 0;
  for (uint64_t done = 0; done + chunk <= n; done += chunk) crc = crc32_combine(crc, block, chunk);
  return crc32_combine(crc, crc32_z(0, reinterpret_cast<const Bytef*>(zeros.data()), n % chunk), n % chunk);
}

// An entry of 4 GiB + 100 bytes (zip64 sizes) followed by one whose local
// header lies past 4 GiB (zip64 offset). Takes a few seconds (CRC of 4 GiB);
// the file is sparse, so it needs little disk.
TEST(ZipWriter, Zip64LargeEntryAndOffset) {
  const uint64_t chunk = 64ull << 20, big = (4ull << 30) + 100;
  const uint64_t span_len = big + chunk - big % chunk;
  std::byte* base = nullptr;
  map_zeros(span_len, chunk, &base);
  ASSERT_NE(base, nullptr);

  std::string dir = testing::temp_dir(), path = dir + "/big.zip";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  SparseFileSink sink(fd);
  ZipWriter w(sink);
  ASSERT_TRUE(w.add("big", std::span<const std::byte>(base, big)).ok());
  ASSERT_TRUE(w.add("after", std::string("tail")).ok());
  ASSERT_TRUE(w.finish().ok());
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(sink.position())), 0);
  ::close(fd);
  ::munmap(base, span_len);

  const uLong expected_crc = crc_of_zeros(big, chunk);

  auto r = ZipReader::open(path);
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->entries().size(), 2u);
  const ZipEntry& b = r->entries()[0];
  const ZipEntry& a = r->entries()[1];
  EXPECT_EQ(b.size, big);
  EXPECT_EQ(b.compressed_size, big);
  EXPECT_EQ(b.crc32, expected_crc);
  EXPECT_EQ(b.data_offset % 64, 0u);
  EXPECT_GT(a.local_header_offset, 0xFFFFFFFFull);
  EXPECT_EQ(a.data_offset % 64, 0u);
  EXPECT_EQ(str_of(*r->view(a)), "tail");
  EXPECT_TRUE(r->check_crc(a).ok());

  // Byte layout around the records (read without mapping the 4 GiB hole).
  auto at = [&](uint64_t off, size_t n) {
    Bytes out(n);
    int rfd = ::open(path.c_str(), O_RDONLY);
    EXPECT_EQ(::pread(rfd, out.data(), n, static_cast<off_t>(off)), static_cast<ssize_t>(n));
    ::close(rfd);
    return out;
  };
  Bytes lb = at(0, 64);
  EXPECT_EQ(load16(lb.data() + 4), 45);                  // version needed: zip64
  EXPECT_EQ(load16(lb.data() + 30 + 3), kZip64ExtraId);  // local zip64 extra first...
  EXPECT_EQ(load16(lb.data() + 30 + 3 + 2), 16);
  EXPECT_EQ(load64(lb.data() + 30 + 3 + 4), big);               // ...with miniz's contents
  EXPECT_EQ(load16(lb.data() + 30 + 3 + 20), kPaddingExtraId);  // ...then the padding
  Bytes dd = at(b.data_offset + big, 24);
  EXPECT_EQ(load32(dd.data()), kDataDescriptorSig);
  EXPECT_EQ(load64(dd.data() + 8), big);  // 8-byte sizes
  EXPECT_EQ(load64(dd.data() + 16), big);
  Bytes la = at(a.local_header_offset, 64);
  EXPECT_EQ(load16(la.data() + 30 + 5), kZip64ExtraId);
  EXPECT_EQ(load16(la.data() + 30 + 5 + 2), 8);
  EXPECT_EQ(load64(la.data() + 30 + 5 + 4), a.local_header_offset);

  std::string out;
  int rc = run_python(dir,
                      "import sys, zipfile\n"
                      "z = zipfile.ZipFile(sys.argv[1])\n"
                      "i = z.getinfo('big')\n"
                      "print(i.file_size, i.header_offset, z.read('after').decode())\n",
                      path, &out);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(out, std::to_string(big) + " 0 tail\n");
}

}  // namespace
}  // namespace lathe
