// Large blocks for a large graph's tables, mapped from the system directly
// instead of taken from malloc: glibc sweeps all of its fast free lists
// before serving or taking back a large block, and after a pass freed half
// a million small blocks one such call cost tens of milliseconds (measured
// on the million-node rewrite benchmark).
//
// They are not advised as transparent huge pages. They once were, for the
// TLB; but on this project's machines (virtual, memory backed lazily by the
// host) a fresh huge page costs 0.4-9 ms to fault in, against 2.3 us per
// 4 KiB page, and the million-node rewrite ran no faster with them
// (1.50-1.62M nodes/s either way), while a whole `lathe transform` of a
// 30,000-node program spent a sixth of its time zeroing them.
// Blocks under kLargeBlockBytes come from malloc as usual.
#pragma once

#include <cstddef>
#include <memory_resource>
#include <new>

namespace lathe {

inline constexpr size_t kLargeBlockBytes = size_t{1} << 20;

// `bytes` of zero-filled, page-aligned memory; throws std::bad_alloc.
void* map_large_block(size_t bytes);
void unmap_large_block(void* p, size_t bytes);

// A std allocator for containers that may grow large.
template <class T>
struct LargeBlockAllocator {
  using value_type = T;
  LargeBlockAllocator() = default;
  template <class U>
  LargeBlockAllocator(const LargeBlockAllocator<U>&) {}  // NOLINT(implicit)
  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kLargeBlockBytes) {
      if (void* p = ::operator new(bytes, std::nothrow)) return static_cast<T*>(p);
      throw std::bad_alloc();
    }
    return static_cast<T*>(map_large_block(bytes));
  }
  void deallocate(T* p, size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kLargeBlockBytes) {
      ::operator delete(p);
      return;
    }
    unmap_large_block(p, bytes);
  }
  template <class U>
  bool operator==(const LargeBlockAllocator<U>&) const {
    return true;
  }
};

// The same policy as a memory resource, for std::pmr containers in public
// headers (ExportedProgram::input_specs), which then need not include this
// file: one process-wide instance.
std::pmr::memory_resource* large_block_resource();

}  // namespace lathe
