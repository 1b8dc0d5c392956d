// Large blocks for a large graph's tables, mapped from the system directly
// instead of taken from malloc.
//
// Two reasons, both measured on the million-node rewrite benchmark:
//   - glibc sweeps all of its fast free lists before serving or taking back
//     a large block; after a pass freed half a million small blocks, one
//     such call cost tens of milliseconds;
//   - a block of 2 MiB or more is aligned to 2 MiB and advised as
//     transparent huge pages: lookups land all over a large table, and with
//     4 KiB pages each is also a TLB miss (on a virtual machine, a nested
//     page walk).
// Blocks under kLargeBlockBytes come from malloc as usual.
#pragma once

#include <cstddef>
#include <new>

namespace lathe {

inline constexpr size_t kLargeBlockBytes = size_t{1} << 20;
inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// `bytes` of zero-filled, page-aligned memory (2 MiB-aligned from 2 MiB up);
// throws std::bad_alloc.
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

}  // namespace lathe
