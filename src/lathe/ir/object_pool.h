// ObjectPool<T>: storage for a graph's nodes and values.
//
// A graph of a million nodes holds a million nodes and as many values. With
// one heap block each, erasing half of them (remove_dead_code after a
// rewrite) spent most of its time inside free(): blocks of this size are not
// kept on malloc's fast lists, so every free merged neighbours and, past a
// threshold, swept all the fast lists. A pool hands out fixed-size slots
// from chunks it owns and takes them back onto its own free list, so
// releasing is a pointer push, and a node and the values created with it
// sit next to each other in memory.
//
// The pool only provides storage: callers construct with placement new and
// destroy (run the destructor) before release(). Chunks are returned to the
// system when the pool is destroyed, so every object must be released or
// destroyed by then (the Graph destroys its nodes and values first).
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <new>
#include <vector>

namespace lathe {

// Storage for pool chunks (at most kChunkBytes). A chunk of more than half
// that is mapped directly (large_block.h).
inline constexpr size_t kChunkBytes = size_t{2} << 20;
void* allocate_chunk(size_t bytes);
void free_chunk(void* p, size_t bytes);

template <class T>
class ObjectPool {
 public:
  ObjectPool() = default;
  ObjectPool(const ObjectPool&) = delete;
  ObjectPool& operator=(const ObjectPool&) = delete;

  // Uninitialised storage for one T.
  void* allocate() {
    if (free_) {
      Slot* s = free_;
      free_ = s->next;
      return s->storage;
    }
    if (used_ == capacity_) grow();
    return chunks_.back().get()[used_++].storage;
  }
  // Takes back storage from allocate() whose object was destroyed.
  void release(void* p) {
    Slot* s = reinterpret_cast<Slot*>(p);
    s->next = free_;
    free_ = s;
  }

 private:
  union Slot {
    Slot* next;
    alignas(T) unsigned char storage[sizeof(T)];
  };
  // Chunks double from 64 slots up to 2 MiB: small graphs stay small, and
  // a large graph's chunks bypass malloc.
  void grow() {
    capacity_ = std::min<size_t>(capacity_ ? capacity_ * 2 : 64, kChunkBytes / sizeof(Slot));
    const size_t bytes = capacity_ * sizeof(Slot);
    chunks_.push_back(ChunkPtr(static_cast<Slot*>(allocate_chunk(bytes)), FreeChunk{bytes}));
    used_ = 0;
  }

  struct FreeChunk {
    size_t bytes = 0;
    void operator()(Slot* p) const { free_chunk(p, bytes); }
  };
  using ChunkPtr = std::unique_ptr<Slot, FreeChunk>;
  std::vector<ChunkPtr> chunks_;
  size_t used_ = 0, capacity_ = 0;  // of the last chunk
  Slot* free_ = nullptr;
};

}  // namespace lathe
