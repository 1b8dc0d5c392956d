#include "lathe/ir/large_block.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace lathe {

namespace {

size_t mapped_size(size_t bytes) {
  const size_t unit = bytes >= kHugePageBytes ? kHugePageBytes : 4096;
  return (bytes + unit - 1) / unit * unit;
}

}  // namespace

#if defined(__linux__)

void* map_large_block(size_t bytes) {
  const size_t size = mapped_size(bytes);
  if (size < kHugePageBytes) {
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    return p;
  }
  // Map one huge page more than needed and keep the aligned part.
  const size_t span = size + kHugePageBytes;
  void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto base = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (base + kHugePageBytes - 1) & ~(uintptr_t{kHugePageBytes} - 1);
  if (aligned > base) munmap(raw, aligned - base);
  const uintptr_t end = base + span, block_end = aligned + size;
  if (end > block_end) munmap(reinterpret_cast<void*>(block_end), end - block_end);
  void* p = reinterpret_cast<void*>(aligned);
#if defined(MADV_HUGEPAGE)
  madvise(p, size, MADV_HUGEPAGE);  // advice only: ignored without transparent huge pages
#endif
  return p;
}

void unmap_large_block(void* p, size_t bytes) {
  if (p) munmap(p, mapped_size(bytes));
}

#else

void* map_large_block(size_t bytes) {
  const size_t size = mapped_size(bytes);
  void* p = std::aligned_alloc(size >= kHugePageBytes ? kHugePageBytes : 4096, size);
  if (!p) throw std::bad_alloc();
  std::memset(p, 0, size);
  return p;
}

void unmap_large_block(void* p, size_t) { std::free(p); }

#endif

}  // namespace lathe
