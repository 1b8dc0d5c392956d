// CRC-32 (the zip/gzip polynomial) of bytes, continuing a running value
// (start from 0). libdeflate computes it with carry-less multiplication
// where the CPU has it, about ten times zlib's table-driven crc32: every
// record Lathe reads is checked and every record it writes is summed, so on
// a large program this is part of the cost of loading and saving.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace lathe {

uint32_t crc32_update(uint32_t crc, std::span<const std::byte> bytes);

}  // namespace lathe
