// Bytes that lie, unchanged, at a known place in a mapped file, with the
// CRC-32 the archive they came from records for them (when they are a whole
// record). A writer copies such bytes file to file and reuses the CRC, so a
// weight that was not changed is never read, checksummed or re-encoded.
//
// Its own header so that a Tensor (core/tensor.h, part of the public API)
// can say where its bytes lie without bringing the memory map's machinery
// (core/mapped_file.h) to everyone who includes lathe.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

namespace lathe {

class MappedFile;  // core/mapped_file.h

struct FileExtent {
  std::shared_ptr<const MappedFile> file;
  uint64_t offset = 0;
  uint64_t size = 0;
  std::optional<uint32_t> crc32;

  std::span<const std::byte> bytes() const;  // mapped_file.cpp
};

}  // namespace lathe
