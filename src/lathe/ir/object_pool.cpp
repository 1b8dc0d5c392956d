#include "lathe/ir/object_pool.h"

#include <cstdlib>
#include <new>

#include "lathe/ir/large_block.h"

namespace lathe {

namespace {

// The last, largest chunks (most of a large graph) are mapped directly
// (large_block.h says why not from malloc).
bool is_large(size_t bytes) { return bytes > kChunkBytes / 2 && bytes <= kChunkBytes; }

}  // namespace

void* allocate_chunk(size_t bytes) {
  if (is_large(bytes)) return map_large_block(kChunkBytes);
  void* p = std::malloc(bytes);
  if (!p) throw std::bad_alloc();
  return p;
}

void free_chunk(void* p, size_t bytes) {
  if (is_large(bytes)) {
    unmap_large_block(p, kChunkBytes);
    return;
  }
  std::free(p);
}

}  // namespace lathe
