#include "lathe/ir/large_block.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace lathe {

namespace {

size_t mapped_size(size_t bytes) { return (bytes + 4095) / 4096 * 4096; }

}  // namespace

#if defined(__linux__)

void* map_large_block(size_t bytes) {
  void* p = mmap(nullptr, mapped_size(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  return p;
}

void unmap_large_block(void* p, size_t bytes) {
  if (p) munmap(p, mapped_size(bytes));
}

#else

void* map_large_block(size_t bytes) {
  const size_t size = mapped_size(bytes);
  void* p = std::aligned_alloc(4096, size);
  if (!p) throw std::bad_alloc();
  std::memset(p, 0, size);
  return p;
}

void unmap_large_block(void* p, size_t) { std::free(p); }

#endif

namespace {

class LargeBlockResource final : public std::pmr::memory_resource {
  void* do_allocate(size_t bytes, size_t alignment) override {
    if (alignment > alignof(std::max_align_t)) return std::pmr::new_delete_resource()->allocate(bytes, alignment);
    return LargeBlockAllocator<std::byte>().allocate(bytes);
  }
  void do_deallocate(void* p, size_t bytes, size_t alignment) override {
    if (alignment > alignof(std::max_align_t)) return std::pmr::new_delete_resource()->deallocate(p, bytes, alignment);
    LargeBlockAllocator<std::byte>().deallocate(static_cast<std::byte*>(p), bytes);
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }
};

}  // namespace

std::pmr::memory_resource* large_block_resource() {
  // Never destroyed: a program held by another static object may give its
  // tables back after this file's statics are gone.
  static LargeBlockResource* const resource = new LargeBlockResource;
  return resource;
}

}  // namespace lathe
