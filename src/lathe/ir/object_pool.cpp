#include "lathe/ir/object_pool.h"

#include <cstdint>
#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace lathe {

namespace {

// Large chunks are mapped directly: a fresh mapping has no 4 KiB pages
// faulted in yet, so the huge-page advice takes effect at the first touch
// (memory recycled by malloc may already be mapped in small pages).
void* map_huge_chunk() {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // Map twice the size and keep the aligned middle.
  const size_t span = 2 * kChunkBytes;
  void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto base = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (base + kChunkBytes - 1) & ~(uintptr_t{kChunkBytes} - 1);
  if (aligned > base) munmap(raw, aligned - base);
  const uintptr_t end = base + span, chunk_end = aligned + kChunkBytes;
  if (end > chunk_end) munmap(reinterpret_cast<void*>(chunk_end), end - chunk_end);
  void* p = reinterpret_cast<void*>(aligned);
  madvise(p, kChunkBytes, MADV_HUGEPAGE);  // advice only: ignored without transparent huge pages
  return p;
#else
  return std::aligned_alloc(kChunkBytes, kChunkBytes);
#endif
}

// The last, largest chunks (most of a large graph) get a whole huge page.
bool is_huge(size_t bytes) { return bytes > kChunkBytes / 2 && bytes <= kChunkBytes; }

}  // namespace

void* allocate_chunk(size_t bytes) {
  void* p = is_huge(bytes) ? map_huge_chunk() : std::malloc(bytes);
  if (!p) throw std::bad_alloc();
  return p;
}

void free_chunk(void* p, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (is_huge(bytes)) {
    munmap(p, kChunkBytes);
    return;
  }
#endif
  std::free(p);
}

}  // namespace lathe
