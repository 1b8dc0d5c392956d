// Bytes a Program carries but rarely looks at (extra/ records, sample
// inputs): held in memory when built in memory, or produced on demand from
// the archive they were read from. A 4 MB archive may hold a record that
// inflates to 4 GiB; as a ByteSource it costs nothing until used, is copied
// to an output in bounded chunks, and is only held whole by a caller that
// asks for it with a size limit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "lathe/core/result.h"

namespace lathe {

class ByteSource {
 public:
  using Sink = std::function<Status(std::span<const std::byte>)>;
  // Calls the sink with consecutive chunks making up exactly size() bytes,
  // or returns an error (a damaged record).
  using Producer = std::function<Status(const Sink&)>;

  ByteSource() = default;
  ByteSource(std::vector<std::byte> bytes);  // NOLINT(google-explicit-constructor): in-memory bytes are a source
  ByteSource(uint64_t size, Producer producer);

  uint64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Status stream(const Sink& sink) const;
  // All bytes in one buffer; refused (before allocating) above max_bytes.
  Result<std::vector<std::byte>> read(uint64_t max_bytes) const;

  // Same bytes (reads both; for tests and small records).
  friend bool operator==(const ByteSource& a, const ByteSource& b);

 private:
  uint64_t size_ = 0;
  std::shared_ptr<const std::vector<std::byte>> bytes_;  // in memory, or null
  Producer producer_;
};

}  // namespace lathe
