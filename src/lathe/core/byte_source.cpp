#include "lathe/core/byte_source.h"

#include <cstring>
#include <string>

namespace lathe {

ByteSource::ByteSource(std::vector<std::byte> bytes)
    : size_(bytes.size()), bytes_(std::make_shared<const std::vector<std::byte>>(std::move(bytes))) {}

ByteSource::ByteSource(uint64_t size, Producer producer) : size_(size), producer_(std::move(producer)) {}

Status ByteSource::stream(const Sink& sink) const {
  if (bytes_) return bytes_->empty() ? Status::Ok() : sink(*bytes_);
  if (!producer_ || size_ == 0) return Status::Ok();
  uint64_t produced = 0;
  LATHE_RETURN_IF_ERROR(producer_([&](std::span<const std::byte> chunk) -> Status {
    produced += chunk.size();
    if (produced > size_) return make_error("produced more than its " + std::to_string(size_) + " bytes");
    return sink(chunk);
  }));
  if (produced != size_) {
    return make_error("produced " + std::to_string(produced) + " of its " + std::to_string(size_) + " bytes");
  }
  return Status::Ok();
}

Result<std::vector<std::byte>> ByteSource::read(uint64_t max_bytes) const {
  if (size_ > max_bytes) {
    return make_error("is " + std::to_string(size_) + " bytes, more than the limit of " + std::to_string(max_bytes));
  }
  if (bytes_) return *bytes_;
  std::vector<std::byte> out;
  out.reserve(static_cast<size_t>(size_));
  LATHE_RETURN_IF_ERROR(stream([&](std::span<const std::byte> chunk) {
    out.insert(out.end(), chunk.begin(), chunk.end());
    return Status::Ok();
  }));
  return out;
}

bool operator==(const ByteSource& a, const ByteSource& b) {
  if (a.size() != b.size()) return false;
  auto x = a.read(a.size()), y = b.read(b.size());
  return x.ok() && y.ok() && *x == *y;
}

}  // namespace lathe
