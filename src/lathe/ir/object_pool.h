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
    return chunks_.back()[used_++].storage;
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
  // Chunks double from 64 slots up to 4096: small graphs stay small.
  void grow() {
    capacity_ = std::min<size_t>(capacity_ ? capacity_ * 2 : 64, 4096);
    chunks_.push_back(std::unique_ptr<Slot[]>(new Slot[capacity_]));  // not zeroed
    used_ = 0;
  }

  std::vector<std::unique_ptr<Slot[]>> chunks_;
  size_t used_ = 0, capacity_ = 0;  // of the last chunk
  Slot* free_ = nullptr;
};

}  // namespace lathe
