// ZipReader::stream: an entry's bytes in bounded chunks (see zip_reader.h).
#include <algorithm>
#include <vector>

#include "lathe/archive/crc32.h"
#include "lathe/archive/zip_format.h"
#include "lathe/archive/zip_inflate.h"
#include "lathe/archive/zip_reader.h"

namespace lathe {

using namespace zip_detail;

namespace {

constexpr size_t kChunk = 1 << 20;

}  // namespace

Status ZipReader::stream(const ZipEntry& e, const std::function<Status(std::span<const std::byte>)>& sink) const {
  Status s = stream_bytes(e, sink);
  if (!s.ok()) LATHE_RETURN_IF_ERROR(check_intact());  // a CRC mismatch because the file changed says so
  return s;
}

Status ZipReader::stream_bytes(const ZipEntry& e,
                               const std::function<Status(std::span<const std::byte>)>& sink) const {
  LATHE_ASSIGN_OR_RETURN(std::span<const std::byte> in, raw(e));
  uint32_t crc = 0;
  uint64_t produced = 0;
  auto emit = [&](std::span<const std::byte> chunk) -> Status {
    crc = crc32_update(crc, chunk);
    produced += chunk.size();
    if (produced > e.size) {
      return entry_error(e, "inflates to more than its declared size of " + std::to_string(e.size) + " bytes");
    }
    return sink(chunk);
  };
  if (e.method == kMethodStored) {
    for (size_t at = 0; at < in.size(); at += kChunk) {
      LATHE_RETURN_IF_ERROR(emit(in.subspan(at, std::min(kChunk, in.size() - at))));
    }
  } else if (e.method == kMethodDeflate) {
    LATHE_RETURN_IF_ERROR(claim_inflation(e));
    RawInflater inflater;
    if (!inflater.init()) return entry_error(e, "cannot initialise zlib");
    z_stream& zs = inflater.zs;
    std::vector<std::byte> out(kChunk);
    size_t in_pos = 0;
    for (int rc = Z_OK; rc != Z_STREAM_END;) {
      inflater.feed(in, in_pos);
      zs.next_out = reinterpret_cast<Bytef*>(out.data());
      zs.avail_out = static_cast<uInt>(out.size());
      rc = inflate(&zs, Z_NO_FLUSH);
      if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
        return entry_error(e, "corrupt DEFLATE data: " + (zs.msg ? std::string(zs.msg) : "zlib error " + std::to_string(rc)));
      }
      const size_t got = out.size() - zs.avail_out;
      if (got > 0) LATHE_RETURN_IF_ERROR(emit(std::span<const std::byte>(out).first(got)));
      if (rc == Z_BUF_ERROR && got == 0 && zs.avail_in == 0 && in_pos == in.size()) {
        return entry_error(e, "compressed data is truncated (DEFLATE stream ends early)");
      }
    }
  } else {
    return entry_error(e, "compression method " + std::to_string(e.method) + " is not supported");
  }
  if (produced != e.size) {
    return entry_error(e, "inflates to " + std::to_string(produced) + " bytes, but the central directory declares " +
                              std::to_string(e.size));
  }
  if (crc != e.crc32) return entry_error(e, "CRC-32 mismatch with the central directory");
  return Status::Ok();
}

}  // namespace lathe
