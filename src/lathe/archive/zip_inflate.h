// A raw DEFLATE stream (zlib without its header, as zip stores entries),
// shared by ZipReader::read and ZipReader::stream (internal to the archive
// module). zlib counts in 32-bit uInt, so input is fed in chunks.
#pragma once

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <span>

namespace lathe::zip_detail {

class RawInflater {
 public:
  RawInflater() = default;
  RawInflater(const RawInflater&) = delete;
  RawInflater& operator=(const RawInflater&) = delete;
  ~RawInflater() {
    if (ready_) inflateEnd(&zs);
  }

  // False if zlib cannot set the stream up (then nothing is to be ended).
  bool init() { return ready_ = inflateInit2(&zs, -MAX_WBITS) == Z_OK; }

  // When zlib has consumed its input, hands it the next chunk of `in` from
  // `pos` (advanced past it); nothing when `in` is exhausted.
  void feed(std::span<const std::byte> in, size_t& pos) {
    if (zs.avail_in != 0 || pos >= in.size()) return;
    const size_t n = std::min<size_t>(in.size() - pos, UINT_MAX);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in.data() + pos));
    zs.avail_in = static_cast<uInt>(n);
    pos += n;
  }

  z_stream zs{};

 private:
  bool ready_ = false;
};

}  // namespace lathe::zip_detail
