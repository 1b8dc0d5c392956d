#include "lathe/archive/zip_writer.h"

#include <algorithm>
#include <cstring>
#include <memory_resource>
#include <unordered_set>

#include "lathe/archive/crc32.h"
#include "lathe/archive/zip_format.h"

namespace lathe {

using namespace zip_detail;

namespace {

// Version needed to extract: 2.0 for plain STORED entries, 4.5 once zip64
// fields are involved. (PyTorch's miniz writes 0 for STORED entries, which
// readers ignore; 2.0 is the value APPNOTE asks for.)
constexpr uint16_t kVersionDefault = 20;
constexpr uint16_t kVersionZip64 = 45;

// What an entry's size and offset decide about its headers.
struct Layout {
  bool big_size, big_offset;
  explicit Layout(uint64_t size, uint64_t offset) : big_size(size >= kMax32), big_offset(offset >= kMax32) {}
  bool zip64() const { return big_size || big_offset; }
  // The zip64 extra field's length (header included), 0 when there is none.
  uint16_t zip64_extra_len() const {
    return zip64() ? static_cast<uint16_t>(4 + (big_size ? 16 : 0) + (big_offset ? 8 : 0)) : 0;
  }
  uint16_t version() const { return zip64() ? kVersionZip64 : kVersionDefault; }
};

void append_name(std::vector<std::byte>& out, std::string_view name) {
  const auto* p = reinterpret_cast<const std::byte*>(name.data());
  out.insert(out.end(), p, p + name.size());
}

// Like miniz (mz_zip_writer_add_mem_ex_v2), an empty entry gets no data
// descriptor and so no 0x0008 flag: its zero CRC and sizes in the local
// header are already the real ones.
uint16_t entry_flags(uint64_t size) { return size > 0 ? (kFlagDataDescriptor | kFlagUtf8) : kFlagUtf8; }
// The zip64 end record says "made by Unix, spec 3.0", exactly as miniz does;
// central entries leave "made by" 0, as miniz does.
constexpr uint16_t kZip64MadeBy = 0x031E;
constexpr uint16_t kCentralMadeBy = 0;

std::span<const std::byte> as_bytes(const std::vector<std::byte>& v) {
  return {v.data(), v.size()};
}

// Header fields gathered on the stack (put16/put32/put64 append to it as to
// a vector) and appended in one go: an insert into a vector per field was
// most of what the headers of 20,000 small entries cost.
struct Fields {
  using value_type = std::byte;
  std::byte bytes[64];
  size_t size = 0;
  std::byte* end() { return bytes + size; }
  void insert(std::byte* at, const std::byte* first, const std::byte* last) {
    std::memcpy(at, first, static_cast<size_t>(last - first));
    size += static_cast<size_t>(last - first);
  }
  void append_to(std::vector<std::byte>& out) const { out.insert(out.end(), bytes, bytes + size); }
};

}  // namespace

ZipWriter::ZipWriter(FileSink& sink) : sink_(sink), start_(sink.position()) {}

Status ZipWriter::fail(const std::string& what) {
  failed_ = true;
  return make_error("zip writer: " + what);
}

Status ZipWriter::add(std::string_view name, const std::string& text) {
  return add(name, std::span<const std::byte>(reinterpret_cast<const std::byte*>(text.data()),
                                              text.size()));
}

Status ZipWriter::add(std::string_view name, std::span<const std::byte> data) {
  return add(name, data.size(), [&](const ByteSource::Sink& sink) { return data.empty() ? Status::Ok() : sink(data); });
}

Status ZipWriter::add(std::string_view name, const ByteSource& source) {
  return add(name, source.size(), [&](const ByteSource::Sink& sink) { return source.stream(sink); });
}

Status ZipWriter::add(std::string_view name, uint64_t size, const ByteSource::Producer& produce) {
  LATHE_ASSIGN_OR_RETURN(Entry entry, begin_entry(name, size));
  // The data goes out as it is produced (a copied record may be larger than
  // memory); its CRC is known once it has all passed.
  uint32_t crc = 0;
  uint64_t written = 0;
  Status data_written = produce([&](std::span<const std::byte> chunk) -> Status {
    crc = crc32_update(crc, chunk);
    written += chunk.size();
    return sink_.write(chunk);
  });
  if (data_written.ok() && written != size) {
    data_written = make_error("produced " + std::to_string(written) + " bytes, not the " + std::to_string(size) + " declared");
  }
  if (!data_written.ok()) return fail("entry " + zip_detail::quoted(name) + ": " + data_written.error().message());
  return end_entry(entry, crc);
}

Status ZipWriter::add(std::string_view name, const FileExtent& extent) {
  if (!extent.crc32) return add(name, extent.bytes());
  LATHE_ASSIGN_OR_RETURN(Entry entry, begin_entry(name, extent.size));
  Status copied = extent.size == 0 ? Status::Ok() : sink_.copy(extent);
  if (!copied.ok()) return fail("entry " + zip_detail::quoted(name) + ": " + copied.error().message());
  return end_entry(entry, *extent.crc32);
}

Status ZipWriter::add_streamed(std::string_view name, const ByteSource::Producer& produce) {
  LATHE_RETURN_IF_ERROR(check_name(name));
  Entry entry{name, 0, sink_.position() - start_};
  bool started = false;  // the header goes out with the first byte
  uint32_t crc = 0;
  Status data_written = produce([&](std::span<const std::byte> chunk) -> Status {
    if (chunk.empty()) return Status::Ok();
    if (chunk.size() >= kMax32 - entry.size) {
      return make_error("reached 4 GiB, more than an entry written as it is produced can hold (its local header "
                        "went out before its size was known, without the zip64 field such a size needs)");
    }
    if (!started) LATHE_RETURN_IF_ERROR(write_local_header(entry, 1));  // any size in [1, 4 GiB) has this header
    started = true;
    crc = crc32_update(crc, chunk);
    entry.size += chunk.size();
    return sink_.write(chunk);
  });
  // Nothing went out: the producer's own refusal (a program the schema asked
  // for cannot express), and the archive is as it was.
  if (!data_written.ok() && !started) return data_written;
  if (data_written.ok() && !started) data_written = write_local_header(entry, 0);
  if (!data_written.ok()) return fail("entry " + zip_detail::quoted(name) + ": " + data_written.error().message());
  return end_entry(entry, crc);
}

Status ZipWriter::check_name(std::string_view name) {
  auto quoted = [&] { return zip_detail::quoted(name); };  // for messages only
  if (finished_) return make_error("zip writer: cannot add entry " + quoted() + " after finish()");
  if (failed_)
    return make_error("zip writer: cannot add entry " + quoted() + " after an earlier write failed");
  // Refused names are caught before anything is written, so the archive is
  // still usable afterwards.
  if (auto problem = name_problem(name))
    return make_error("zip writer: entry " + quoted() + ": " + *problem);
  if (has_name(name)) {
    return make_error("zip writer: duplicate entry name " + quoted());
  }
  return Status::Ok();
}

std::string_view ZipWriter::name_of(uint32_t entry) const {
  const NameRef& r = names_[entry];
  return {reinterpret_cast<const char*>(central_.data() + r.offset), r.size};
}

bool ZipWriter::has_name(std::string_view name) const {
  return name_index_.find(name, [this](uint32_t e) { return name_of(e); }) != EntryIndex::kNone;
}

void ZipWriter::index_name(uint64_t offset_in_central, std::string_view name) {
  name_index_.insert(static_cast<uint32_t>(names_.size()), EntryIndex::hash(name));
  names_.push_back(NameRef{offset_in_central, static_cast<uint16_t>(name.size())});
}

Result<ZipWriter::Entry> ZipWriter::begin_entry(std::string_view name, uint64_t size) {
  LATHE_RETURN_IF_ERROR(check_name(name));
  Entry e{name, size, sink_.position() - start_};
  Status head_written = write_local_header(e, size);
  if (!head_written.ok()) {
    return fail("entry " + zip_detail::quoted(name) + ": " + head_written.error().message()).error();
  }
  return e;
}

Status ZipWriter::write_local_header(Entry& e, uint64_t size) {
  const std::string_view name = e.name;
  const auto name_len = static_cast<uint16_t>(name.size());
  const Layout layout(size, e.offset);
  // Local zip64 extra field: present exactly when miniz writes one (and
  // PyTorch's padding computation accounts for it), with miniz's contents:
  // the uncompressed size, a compressed size of 0 (not known yet when miniz
  // writes the header) and the header offset.
  const uint16_t zip64_local_len = layout.zip64_extra_len();
  // Padding so the data begins at a multiple of 64: the 'F','B' field
  // (4-byte header + payload) is always present, payload 0..63 bytes, as in
  // PyTorch's getPadding().
  const uint64_t unpadded = e.offset + kLocalHeaderSize + name_len + zip64_local_len + 4;
  const uint16_t pad = static_cast<uint16_t>((kAlignment - unpadded % kAlignment) % kAlignment);
  const uint16_t extra_len = static_cast<uint16_t>(zip64_local_len + 4 + pad);

  std::vector<std::byte>& head = scratch_;
  head.clear();
  Fields f;
  put32(f, kLocalHeaderSig);
  put16(f, layout.version());
  put16(f, entry_flags(size));
  put16(f, kMethodStored);
  put16(f, 0);  // time
  put16(f, 0);  // date
  put32(f, 0);  // crc (in the data descriptor)
  put32(f, 0);  // compressed size
  put32(f, 0);  // uncompressed size
  put16(f, name_len);
  put16(f, extra_len);
  f.append_to(head);
  append_name(head, name);
  Fields x;
  if (layout.zip64()) {
    put16(x, kZip64ExtraId);
    put16(x, static_cast<uint16_t>(zip64_local_len - 4));
    if (layout.big_size) {
      put64(x, size);
      put64(x, 0);
    }
    if (layout.big_offset) put64(x, e.offset);
  }
  put16(x, kPaddingExtraId);
  put16(x, pad);
  x.append_to(head);
  head.insert(head.end(), pad, std::byte{'Z'});
  return sink_.write(as_bytes(head));
}

Status ZipWriter::end_entry(const Entry& e, uint32_t crc) {
  last_crc_ = crc;
  last_size_ = e.size;
  const Layout layout(e.size, e.offset);
  // Data descriptor: 8-byte sizes exactly when the local header has a zip64
  // extra field (APPNOTE 4.3.9.1).
  Fields descriptor;
  if (e.size > 0) {
    put32(descriptor, kDataDescriptorSig);
    put32(descriptor, crc);
    if (layout.zip64()) {
      put64(descriptor, e.size);
      put64(descriptor, e.size);
    } else {
      put32(descriptor, static_cast<uint32_t>(e.size));
      put32(descriptor, static_cast<uint32_t>(e.size));
    }
  }
  Status s = sink_.write(std::span<const std::byte>(descriptor.bytes, descriptor.size));
  if (!s.ok()) return fail("entry " + zip_detail::quoted(e.name) + ": " + s.error().message());

  // Central directory entry, kept until finish().
  const uint16_t zip64_central_len = layout.zip64_extra_len();
  Fields c;
  put32(c, kCentralHeaderSig);
  put16(c, kCentralMadeBy);
  put16(c, layout.version());  // needed
  put16(c, entry_flags(e.size));
  put16(c, kMethodStored);
  put16(c, 0);
  put16(c, 0);
  put32(c, crc);
  put32(c, static_cast<uint32_t>(std::min<uint64_t>(e.size, kMax32)));
  put32(c, static_cast<uint32_t>(std::min<uint64_t>(e.size, kMax32)));
  put16(c, static_cast<uint16_t>(e.name.size()));
  put16(c, zip64_central_len);
  put16(c, 0);  // comment
  put16(c, 0);  // disk
  put16(c, 0);  // internal attributes
  put32(c, 0);  // external attributes
  put32(c, static_cast<uint32_t>(std::min<uint64_t>(e.offset, kMax32)));
  c.append_to(central_);
  index_name(central_.size(), e.name);
  append_name(central_, e.name);
  if (layout.zip64()) {
    Fields x;
    put16(x, kZip64ExtraId);
    put16(x, static_cast<uint16_t>(zip64_central_len - 4));
    if (layout.big_size) {
      put64(x, e.size);
      put64(x, e.size);
    }
    if (layout.big_offset) put64(x, e.offset);
    x.append_to(central_);
  }
  ++count_;
  return Status::Ok();
}

Status ZipWriter::finish() {
  if (finished_) return make_error("zip writer: finish() called twice");
  if (failed_) return make_error("zip writer: cannot finish after an earlier write failed");
  const uint64_t cd_offset = sink_.position() - start_;
  const uint64_t cd_size = central_.size();
  Status s = sink_.write(as_bytes(central_));
  if (!s.ok()) return fail("central directory: " + s.error().message());
  const uint64_t zip64_record = sink_.position() - start_;

  std::vector<std::byte> tail;
  put32(tail, kZip64EocdSig);
  put64(tail, kZip64EocdSize - 12);  // record size, excluding signature and this field
  put16(tail, kZip64MadeBy);
  put16(tail, kVersionZip64);
  put32(tail, 0);  // this disk
  put32(tail, 0);  // disk with the central directory
  put64(tail, count_);
  put64(tail, count_);
  put64(tail, cd_size);
  put64(tail, cd_offset);

  put32(tail, kZip64LocatorSig);
  put32(tail, 0);  // disk with the zip64 record
  put64(tail, zip64_record);
  put32(tail, 1);  // total disks

  put32(tail, kEocdSig);
  put16(tail, 0);
  put16(tail, 0);
  put16(tail, static_cast<uint16_t>(std::min<uint64_t>(count_, kMax16)));
  put16(tail, static_cast<uint16_t>(std::min<uint64_t>(count_, kMax16)));
  put32(tail, static_cast<uint32_t>(std::min<uint64_t>(cd_size, kMax32)));
  put32(tail, static_cast<uint32_t>(std::min<uint64_t>(cd_offset, kMax32)));
  put16(tail, 0);  // comment length
  s = sink_.write(as_bytes(tail));
  if (!s.ok()) return fail("end of central directory: " + s.error().message());

  finished_ = true;
  central_.clear();
  central_.shrink_to_fit();
  names_ = {};
  name_index_.clear();
  return Status::Ok();
}

namespace {
// c10::hash_combine: boost's combiner on 64-bit values.
uint64_t hash_combine(uint64_t seed, uint64_t value) {
  return seed ^ (value + 0x9e3779b9 + (seed << 6) + (seed >> 2));
}
std::string twenty_digits(uint64_t v) {
  std::string d = std::to_string(v);
  return std::string(20 - d.size(), '0') + d;  // a uint64 has at most 20 digits
}
}  // namespace

void SerializationId::add(std::string_view record_name, uint32_t crc, uint64_t size) {
  constexpr size_t kBlock = 64 << 10;
  const size_t n = record_name.size();
  if (n > block_left_) {
    block_left_ = std::max(kBlock, n);
    blocks_.push_back(std::make_unique<char[]>(block_left_));
    next_ = blocks_.back().get();
  }
  if (n > 0) std::memcpy(next_, record_name.data(), n);
  names_.emplace_back(next_, n);
  next_ += n;
  block_left_ -= n;
  if (size > 0) combined_crc_ = hash_combine(combined_crc_, crc);
}

std::string SerializationId::str() const {
  // PyTorch's std::unordered_set<std::string>, filled in the same order:
  // its iteration order decides the combination. Its nodes come from a pool
  // (the same table, only not a malloc and free per record).
  std::pmr::monotonic_buffer_resource pool;
  std::pmr::unordered_set<std::string_view> set(&pool);
  for (std::string_view n : names_) set.insert(n);
  uint64_t combined_names = 0;
  for (std::string_view n : set) combined_names = hash_combine(combined_names, std::hash<std::string_view>{}(n));
  return twenty_digits(combined_names) + twenty_digits(combined_crc_);
}

}  // namespace lathe
