#include "lathe/archive/crc32.h"

#include <libdeflate.h>

namespace lathe {

uint32_t crc32_update(uint32_t crc, std::span<const std::byte> bytes) {
  return libdeflate_crc32(crc, bytes.data(), bytes.size());
}

}  // namespace lathe
