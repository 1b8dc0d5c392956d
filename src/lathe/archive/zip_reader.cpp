#include "lathe/archive/zip_reader.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <optional>

#include "lathe/archive/crc32.h"
#include "lathe/archive/zip_format.h"
#include "lathe/archive/zip_inflate.h"
#include "lathe/core/mapped_file.h"

namespace lathe {

using namespace zip_detail;

namespace {

std::string num(uint64_t v) { return std::to_string(v); }

// "[start, end)" without overflowing when a corrupt size is near 2^64.
std::string range(uint64_t start, uint64_t len) {
  unsigned __int128 end = static_cast<unsigned __int128>(start) + len;
  std::string e;
  do {
    e.insert(e.begin(), static_cast<char>('0' + static_cast<int>(end % 10)));
    end /= 10;
  } while (end != 0);
  return "[" + num(start) + ", " + e + ")";
}

std::string method_name(uint16_t method) {
  if (method == kMethodStored) return "STORED (method 0)";
  if (method == kMethodDeflate) return "DEFLATE (method 8)";
  return "method " + num(method);
}

uint32_t crc_of(std::span<const std::byte> bytes) { return crc32_update(0, bytes); }

// Fields a central entry marked 0xFFFFFFFF (or 0xFFFF for the disk) take from
// the zip64 extended-information extra field, in the order APPNOTE 4.5.3
// fixes: uncompressed size, compressed size, local header offset, disk.
struct Zip64Needs {
  bool size, compressed, offset, disk;
  bool any() const { return size || compressed || offset || disk; }
  size_t bytes() const { return 8 * (size + compressed + offset) + 4 * disk; }
};

}  // namespace

Result<ZipReader> ZipReader::open(const std::string& path, ZipLimits limits) {
  LATHE_ASSIGN_OR_RETURN(std::shared_ptr<const MappedFile> file, MappedFile::open(path));
  ZipReader r;
  r.data_ = file->data();
  r.size_ = r.data_ == nullptr ? 0 : file->size();
  r.file_ = file;
  r.keepalive_ = std::move(file);
  r.display_name_ = path;
  r.limits_ = limits;
  if (Status parsed = r.parse(); !parsed.ok()) {
    LATHE_RETURN_IF_ERROR(r.check_intact());
    return parsed.error();
  }
  return r;
}

Status ZipReader::check_intact() const { return file_ ? file_->check_intact() : Status::Ok(); }

void ZipReader::release(const ZipEntry& e) const { release(e, e.size); }

void ZipReader::release(const ZipEntry& e, uint64_t prefix) const {
  if (file_ && e.method == 0 && e.data_offset <= size_ && e.size <= size_ - e.data_offset) {
    file_->release(e.data_offset, std::min(prefix, e.size));
  }
}

Result<ZipReader> ZipReader::open_memory(std::shared_ptr<const void> keepalive,
                                         const std::byte* data, size_t size,
                                         std::string display_name, ZipLimits limits) {
  ZipReader r;
  r.keepalive_ = std::move(keepalive);
  r.data_ = data;
  r.size_ = data == nullptr ? 0 : size;
  r.display_name_ = std::move(display_name);
  r.limits_ = limits;
  LATHE_RETURN_IF_ERROR(r.parse());
  return r;
}

Error ZipReader::entry_error(const ZipEntry& e, const std::string& what) const {
  return make_error(display_name_ + ": entry " + quoted(e.name) + ": " + what);
}

Error ZipReader::archive_error(const std::string& what) const { return make_error(display_name_ + ": " + what); }

// Copies local headers out of a file with pread, not through the mapping:
// touching one header per entry through the map would fault in (and count in
// RSS) the weight pages around every header. Entries usually come in file
// order and small records sit close together, so one read of a 64 KiB
// window serves the headers of many.
class ZipReader::HeaderWindow {
 public:
  explicit HeaderWindow(const ZipReader& zip) : zip_(zip) {}

  // Copies [offset, offset + n) of the archive into `out`.
  void read(uint64_t offset, size_t n, std::byte* out) {
    if (!zip_.file_) {
      std::memcpy(out, zip_.data_ + offset, n);  // a zip in memory: nothing to fault in
      return;
    }
    if (offset < start_ || offset + n > start_ + filled_) fill(offset, n);
    if (offset >= start_ && offset + n <= start_ + filled_) {
      std::memcpy(out, window_.data() + (offset - start_), n);
    } else {
      std::memcpy(out, zip_.data_ + offset, n);  // pread failed: the map still has the bytes
    }
  }

 private:
  static constexpr size_t kWindow = 64 << 10;
  void fill(uint64_t offset, size_t n) {
    window_.resize(std::max(kWindow, n));
    const size_t want = static_cast<size_t>(std::min<uint64_t>(window_.size(), zip_.size_ - offset));
    start_ = offset;
    filled_ = 0;
    while (filled_ < want) {
      ssize_t got = ::pread(zip_.file_->fd(), window_.data() + filled_, want - filled_,
                            static_cast<off_t>(offset + filled_));
      if (got <= 0) break;
      filled_ += static_cast<size_t>(got);
    }
  }

  const ZipReader& zip_;
  std::vector<std::byte> window_;
  uint64_t start_ = 0;
  size_t filled_ = 0;
};

Status ZipReader::parse() {
  LATHE_ASSIGN_OR_RETURN(CentralDirectory cd, find_central_directory());
  if (cd.offset > cd.limit || cd.size > cd.limit - cd.offset) {
    return archive_error("central directory " + range(cd.offset, cd.size) + " extends past " + cd.limit_what +
                         " (the file is " + num(size_) + " bytes)");
  }
  // Every central entry takes at least 46 bytes: this bounds the count by the
  // bytes actually present before anything is allocated from it.
  if (cd.count > cd.size / kCentralHeaderSize) {
    return archive_error("the archive claims " + num(cd.count) + " entries, but its central directory " +
                         range(cd.offset, cd.size) + " can hold at most " + num(cd.size / kCentralHeaderSize));
  }
  if (cd.count > limits_.max_entries) {
    return archive_error("the archive has " + num(cd.count) + " entries, more than the limit of " +
                         num(limits_.max_entries));
  }
  entries_.reserve(cd.count);
  HeaderWindow headers(*this);
  const uint64_t cd_end = cd.offset + cd.size;
  uint64_t p = cd.offset;
  for (uint64_t i = 0; i < cd.count; ++i) {
    LATHE_ASSIGN_OR_RETURN(ZipEntry e, parse_central_entry(i, p, cd_end));
    LATHE_RETURN_IF_ERROR(locate_data(e, cd.offset, headers));
    entries_.push_back(std::move(e));
  }
  if (p != cd_end) {
    return archive_error("the central directory " + range(cd.offset, cd.size) + " has " + num(cd_end - p) +
                         " bytes left over after its " + num(cd.count) + " entries");
  }
  LATHE_RETURN_IF_ERROR(check_no_overlap());
  return index_names();
}

Result<ZipReader::CentralDirectory> ZipReader::find_central_directory() const {
  if (size_ < kEocdSize) {
    return archive_error("not a zip archive: the file is " + num(size_) +
                         " bytes, too small for an end-of-central-directory record (22 bytes)");
  }
  // The end-of-central-directory record is followed only by its comment
  // (at most 65535 bytes), so it starts within the last 64 KiB + 22 bytes.
  // Searching backwards finds the real record even when an earlier entry's
  // data happens to contain the signature.
  size_t lowest = size_ - kEocdSize > kMaxCommentSize ? size_ - kEocdSize - kMaxCommentSize : 0;
  std::optional<size_t> found;
  for (size_t pos = size_ - kEocdSize + 1; pos-- > lowest;) {
    if (load32(data_ + pos) == kEocdSig && pos + kEocdSize + load16(data_ + pos + 20) <= size_) {
      found = pos;
      break;
    }
  }
  if (!found) {
    return archive_error("no end-of-central-directory record in the last " + num(size_ - lowest) +
                         " bytes: the file is truncated or not a zip archive");
  }
  const size_t eocd = *found;
  const std::byte* rec = data_ + eocd;
  uint16_t disk = load16(rec + 4), cd_disk = load16(rec + 6);
  uint16_t on_disk = load16(rec + 8), total = load16(rec + 10);
  uint32_t cd_size32 = load32(rec + 12), cd_offset32 = load32(rec + 16);
  CentralDirectory cd{total, cd_size32, cd_offset32, eocd,
                      "the end-of-central-directory record at offset " + num(eocd)};
  if (eocd >= kZip64LocatorSize && load32(data_ + eocd - kZip64LocatorSize) == kZip64LocatorSig) {
    LATHE_RETURN_IF_ERROR(read_zip64_end(eocd - kZip64LocatorSize, cd));
    return cd;
  }
  // 32-bit fields at their maximum mean "see the zip64 record"; a literal
  // 0xFFFF entry count is legal in a classic archive (Python writes one).
  if (cd_size32 == kMax32 || cd_offset32 == kMax32) {
    return archive_error("the end-of-central-directory record has 0xFFFFFFFF fields but no zip64 "
                         "locator precedes it");
  }
  if (disk != 0 || cd_disk != 0 || on_disk != total) return archive_error("multi-disk zip archives are not supported");
  return cd;
}

Status ZipReader::read_zip64_end(uint64_t locator, CentralDirectory& cd) const {
  const std::byte* loc = data_ + locator;
  uint32_t record_disk = load32(loc + 4), disks = load32(loc + 16);
  uint64_t record = load64(loc + 8);
  if (record_disk != 0 || disks > 1) {
    return archive_error("multi-disk zip archives are not supported (zip64 locator names " + num(disks) + " disks)");
  }
  if (record > locator || locator - record < kZip64EocdSize) {
    return archive_error("the zip64 end-of-central-directory locator points at offset " + num(record) +
                         ", which leaves no room for the 56-byte zip64 record before the locator at offset " +
                         num(locator));
  }
  const std::byte* z = data_ + record;
  if (load32(z) != kZip64EocdSig) {
    return archive_error("the zip64 end-of-central-directory record at offset " + num(record) + " has signature " +
                         hex32(load32(z)) + " (expected " + hex32(kZip64EocdSig) + ")");
  }
  uint32_t zdisk = load32(z + 16), zcd_disk = load32(z + 20);
  uint64_t zon_disk = load64(z + 24);
  cd.count = load64(z + 32);
  cd.size = load64(z + 40);
  cd.offset = load64(z + 48);
  if (zdisk != 0 || zcd_disk != 0 || zon_disk != cd.count) {
    return archive_error("multi-disk zip archives are not supported");
  }
  cd.limit = record;
  cd.limit_what = "the zip64 end-of-central-directory record at offset " + num(record);
  return Status::Ok();
}

Result<ZipEntry> ZipReader::parse_central_entry(uint64_t index, uint64_t& p, uint64_t cd_end) const {
  auto where = [&] { return "central directory entry " + num(index) + " at offset " + num(p); };
  if (cd_end - p < kCentralHeaderSize) return archive_error(where() + " is truncated");
  const std::byte* h = data_ + p;
  if (load32(h) != kCentralHeaderSig) {
    return archive_error(where() + " has signature " + hex32(load32(h)) + " (expected " +
                         hex32(kCentralHeaderSig) + ")");
  }
  uint16_t flags = load16(h + 8);
  uint16_t name_len = load16(h + 28), extra_len = load16(h + 30), comment_len = load16(h + 32);
  uint16_t disk_start = load16(h + 34);
  uint64_t record_len = kCentralHeaderSize + uint64_t{name_len} + extra_len + comment_len;
  if (cd_end - p < record_len) {
    return archive_error(where() + ": its name, extra field or comment run past the central directory");
  }
  ZipEntry e;
  e.name.assign(reinterpret_cast<const char*>(h + kCentralHeaderSize), name_len);
  e.method = load16(h + 10);
  e.crc32 = load32(h + 16);
  e.compressed_size = load32(h + 20);
  e.size = load32(h + 24);
  e.local_header_offset = load32(h + 42);
  LATHE_RETURN_IF_ERROR(read_zip64_fields(e, h + kCentralHeaderSize + name_len, extra_len, disk_start));
  if (auto problem = name_problem(e.name)) return entry_error(e, *problem);
  if (disk_start != 0) return entry_error(e, "multi-disk zip archives are not supported");
  if (flags & kFlagEncrypted) return entry_error(e, "the entry is encrypted, which is not supported");
  if (e.method != kMethodStored && e.method != kMethodDeflate) {
    return entry_error(e, "compression " + method_name(e.method) + " is not supported (only STORED and DEFLATE are)");
  }
  if (e.method == kMethodStored && e.compressed_size != e.size) {
    return entry_error(e, "STORED, yet its compressed size " + num(e.compressed_size) + " differs from its size " +
                              num(e.size));
  }
  p += record_len;
  return e;
}

Status ZipReader::read_zip64_fields(ZipEntry& e, const std::byte* extra, uint16_t extra_len,
                                    uint16_t& disk_start) const {
  Zip64Needs needs{e.size == kMax32, e.compressed_size == kMax32, e.local_header_offset == kMax32,
                   disk_start == kMax16};
  if (!needs.any()) return Status::Ok();
  for (size_t q = 0; q + 4 <= extra_len;) {
    uint16_t id = load16(extra + q), len = load16(extra + q + 2);
    if (q + 4 + len > extra_len) break;
    if (id == kZip64ExtraId) {
      if (len < needs.bytes()) {
        return entry_error(e, "the zip64 extra field is " + num(len) + " bytes, too short for the " +
                                  num(needs.bytes()) + " bytes its 0xFFFFFFFF fields call for");
      }
      const std::byte* f = extra + q + 4;
      if (needs.size) e.size = load64(f), f += 8;
      if (needs.compressed) e.compressed_size = load64(f), f += 8;
      if (needs.offset) e.local_header_offset = load64(f), f += 8;
      if (needs.disk) disk_start = static_cast<uint16_t>(load32(f) == 0 ? 0 : 1);
      return Status::Ok();
    }
    q += 4 + len;
  }
  return entry_error(e, "the central directory has 0xFFFFFFFF sizes or offset but no zip64 "
                        "extended-information extra field");
}

// The local header: only its signature, name and the lengths that place the
// data are used. Its sizes may be zero (data descriptor, flag 0x0008).
Status ZipReader::locate_data(ZipEntry& e, uint64_t cd_offset, HeaderWindow& headers) const {
  uint64_t lho = e.local_header_offset;
  if (lho > size_ || size_ - lho < kLocalHeaderSize) {
    return entry_error(e, "local header at offset " + num(lho) + " extends past the end of the file (" +
                              num(size_) + " bytes)");
  }
  std::byte lh[kLocalHeaderSize];
  headers.read(lho, kLocalHeaderSize, lh);
  if (load32(lh) != kLocalHeaderSig) {
    return entry_error(e, "local header at offset " + num(lho) + " has signature " + hex32(load32(lh)) +
                              " (expected " + hex32(kLocalHeaderSig) + ")");
  }
  uint16_t local_name_len = load16(lh + 26), local_extra_len = load16(lh + 28);
  e.data_offset = lho + kLocalHeaderSize + local_name_len + local_extra_len;
  if (e.data_offset > size_) {
    return entry_error(e, "local header at offset " + num(lho) +
                              " has a name and extra field that run past the end of the file (" + num(size_) +
                              " bytes)");
  }
  std::string local_name(local_name_len, '\0');
  headers.read(lho + kLocalHeaderSize, local_name_len, reinterpret_cast<std::byte*>(local_name.data()));
  if (local_name != e.name) {
    return entry_error(e, "local header at offset " + num(lho) + " names " + quoted(local_name) + " instead");
  }
  if (e.compressed_size > size_ - e.data_offset) {
    return entry_error(e, "data " + range(e.data_offset, e.compressed_size) + " extends past the end of the file (" +
                              num(size_) + " bytes)");
  }
  if (e.data_offset + e.compressed_size > cd_offset) {
    return entry_error(e, "data " + range(e.data_offset, e.compressed_size) +
                              " overlaps the central directory at offset " + num(cd_offset));
  }
  return Status::Ok();
}

// Two entries sharing bytes (a classic zip-bomb and confusion trick) show
// up as one entry's data running into the next local header by offset.
Status ZipReader::check_no_overlap() const {
  std::vector<size_t> by_offset(entries_.size());
  for (size_t i = 0; i < by_offset.size(); ++i) by_offset[i] = i;
  std::sort(by_offset.begin(), by_offset.end(), [&](size_t a, size_t b) {
    return entries_[a].local_header_offset < entries_[b].local_header_offset;
  });
  for (size_t k = 1; k < by_offset.size(); ++k) {
    const ZipEntry& a = entries_[by_offset[k - 1]];
    const ZipEntry& b = entries_[by_offset[k]];
    if (a.data_offset + a.compressed_size > b.local_header_offset) {
      return entry_error(a, "data " + range(a.data_offset, a.compressed_size) + " overlaps entry " + quoted(b.name) +
                                ", whose local header is at offset " + num(b.local_header_offset));
    }
  }
  return Status::Ok();
}

Status ZipReader::index_names() {
  by_name_.resize(entries_.size());
  for (size_t i = 0; i < by_name_.size(); ++i) by_name_[i] = i;
  std::sort(by_name_.begin(), by_name_.end(), [&](size_t a, size_t b) {
    return entries_[a].name != entries_[b].name ? entries_[a].name < entries_[b].name : a < b;
  });
  for (size_t k = 1; k < by_name_.size(); ++k) {
    const ZipEntry& a = entries_[by_name_[k - 1]];
    if (a.name == entries_[by_name_[k]].name) {
      return archive_error("duplicate entry name " + quoted(a.name) + " (central directory entries " +
                           num(by_name_[k - 1]) + " and " + num(by_name_[k]) + ")");
    }
  }
  return Status::Ok();
}

const ZipEntry* ZipReader::find(std::string_view name) const {
  auto it = std::lower_bound(by_name_.begin(), by_name_.end(), name,
                             [&](size_t i, std::string_view n) { return entries_[i].name < n; });
  if (it == by_name_.end() || entries_[*it].name != name) return nullptr;
  return &entries_[*it];
}

Result<std::span<const std::byte>> ZipReader::raw(const ZipEntry& e) const {
  if (e.data_offset > size_ || e.compressed_size > size_ - e.data_offset) {
    return entry_error(e, "data " + range(e.data_offset, e.compressed_size) +
                              " lies outside this archive (" + num(size_) + " bytes)");
  }
  return std::span<const std::byte>(data_ + e.data_offset, static_cast<size_t>(e.compressed_size));
}

Result<std::span<const std::byte>> ZipReader::view(const ZipEntry& e) const {
  if (e.method != kMethodStored) {
    return entry_error(e, "is compressed with " + method_name(e.method) +
                              "; only STORED entries can be viewed in place");
  }
  return raw(e);
}

Result<std::shared_ptr<Storage>> ZipReader::view_storage(const ZipEntry& e) const {
  LATHE_ASSIGN_OR_RETURN(std::span<const std::byte> bytes, view(e));
  // From a file: a writer may copy the record file to file, with its CRC.
  if (file_) return Storage::file_view(FileExtent{file_, e.data_offset, e.size, e.crc32});
  return Storage::view(keepalive_, bytes.data(), bytes.size());
}

Status ZipReader::claim_inflation(const ZipEntry& e) const {
  if (e.size > limits_.max_inflated_bytes) {
    return entry_error(e, "declares " + num(e.size) +
                              " bytes uncompressed, more than the limit of " +
                              num(limits_.max_inflated_bytes));
  }
  // DEFLATE expands at most 1032:1 (258 bytes per 2-bit length/distance
  // pair); a larger claim is a lie, refused before allocating for it.
  if (e.size / 1032 > e.compressed_size + 1) {
    return entry_error(e, "declares " + num(e.size) + " bytes uncompressed from only " +
                              num(e.compressed_size) +
                              " compressed bytes, more than DEFLATE can produce");
  }
  const uint64_t total = limits_.max_total_inflated_bytes;
  if (e.size > total - std::min(inflated_, total)) {
    return entry_error(e, "declares " + num(e.size) + " bytes uncompressed; with the " + num(inflated_) +
                              " bytes already inflated from this archive, more than the limit of " + num(total) +
                              " in all");
  }
  inflated_ += e.size;
  return Status::Ok();
}

Result<std::vector<std::byte>> ZipReader::read(const ZipEntry& e) const {
  LATHE_ASSIGN_OR_RETURN(std::span<const std::byte> in, raw(e));
  if (e.method == kMethodStored) return std::vector<std::byte>(in.begin(), in.end());
  if (e.method != kMethodDeflate) {
    return entry_error(e, "compression " + method_name(e.method) + " is not supported");
  }
  LATHE_RETURN_IF_ERROR(claim_inflation(e));
  std::vector<std::byte> out(static_cast<size_t>(e.size));

  RawInflater inflater;
  if (!inflater.init()) return entry_error(e, "cannot initialise zlib");
  z_stream& zs = inflater.zs;

  // zlib counts in 32-bit uInt: feed both buffers in chunks.
  size_t in_pos = 0, out_pos = 0;
  std::byte scratch[1];
  bool overflow = false;
  for (;;) {
    inflater.feed(in, in_pos);
    if (zs.avail_out == 0) {
      if (out_pos < out.size()) {
        size_t n = std::min<size_t>(out.size() - out_pos, UINT_MAX);
        zs.next_out = reinterpret_cast<Bytef*>(out.data() + out_pos);
        zs.avail_out = static_cast<uInt>(n);
        out_pos += n;
      } else {
        // The declared size is filled: any further output means the entry
        // inflates to more than it declares. One scratch byte detects that.
        if (overflow) {
          return entry_error(
              e, "inflates to more than its declared size of " + num(e.size) + " bytes");
        }
        overflow = true;
        zs.next_out = reinterpret_cast<Bytef*>(scratch);
        zs.avail_out = 1;
      }
    }
    int rc = inflate(&zs, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) break;
    if (overflow && zs.avail_out == 0) {
      return entry_error(e, "inflates to more than its declared size of " + num(e.size) + " bytes");
    }
    if (rc == Z_BUF_ERROR && zs.avail_in == 0 && in_pos == in.size()) {
      return entry_error(e, "compressed data is truncated (DEFLATE stream ends early)");
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      return entry_error(
          e, "corrupt DEFLATE data: " + (zs.msg ? std::string(zs.msg) : "zlib error " + num(rc)));
    }
  }
  if (zs.total_out != e.size) {
    return entry_error(e, "inflates to " + num(zs.total_out) +
                              " bytes, but the central directory declares " + num(e.size));
  }
  return out;
}

Status ZipReader::check_crc(const ZipEntry& e) const {
  uint32_t actual;
  if (e.method == kMethodStored) {
    LATHE_ASSIGN_OR_RETURN(std::span<const std::byte> bytes, raw(e));
    actual = crc_of(bytes);
  } else {
    LATHE_ASSIGN_OR_RETURN(std::vector<std::byte> bytes, read(e));
    actual = crc_of(bytes);
  }
  if (actual != e.crc32) {
    return entry_error(e, "CRC-32 mismatch: the central directory says " + hex32(e.crc32) +
                              ", the data has " + hex32(actual));
  }
  return Status::Ok();
}

}  // namespace lathe
