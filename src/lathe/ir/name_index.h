// Name -> Value* for one graph, as a flat open-addressing table.
//
// A graph of a million nodes has a million names, and every value created or
// erased updates this index. std::unordered_map allocates one heap node per
// entry, so erasing half a million nodes meant half a million frees on top
// of the nodes' own (the rewrite benchmark spent a fifth of its time there).
// Here an entry is 16 bytes in one array: the name's hash and the value,
// whose own name is the key (values never move, so nothing is copied).
// Linear probing; erase shifts the following entries back instead of
// leaving tombstones, so lookups never slow down after many erases.
//
// Erasing from a large table is pipelined. Each erase lands on a random
// slot of a table too big for the cache, so removing half a million dead
// nodes one after the other was a cache miss each, waited for in turn (two
// fifths of remove_dead_code's time). Instead an erase computes the value's
// hash while its name is at hand, asks the CPU to fetch the slot, and joins
// a short queue; the erasure it displaces from the queue, issued a dozen
// erasures earlier, finds its slot already fetched. Queued erasures are
// carried out before any lookup or insertion, and by settle(). Until then
// the queued addresses are only compared, never read, and a value made in
// reused storage enters the index only through insert() or
// insert_if_absent(), which settle first (a queued erasure still finds the
// old entry by its address).
#pragma once

#include <cstddef>
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "lathe/ir/large_block.h"

namespace lathe {

class Value;

class NameIndex {
 public:
  // nullptr if no value has that name.
  Value* find(std::string_view name) const;
  bool contains(std::string_view name) const { return find(name) != nullptr; }
  // Adds `value` under its current name, replacing a value of the same name.
  void insert(Value* value);
  // Adds `value` unless its name is taken (then returns false): one probe
  // where contains() + insert() take two.
  bool insert_if_absent(Value* value);
  // Removes `value`'s entry (under its current name), if it is the one
  // indexed: at once in a small table, at the next settle() in a large one.
  // The value may be destroyed right after.
  void erase(const Value* value);
  // Carries out queued erasures.
  void settle() const;
  size_t size() const {
    settle();
    return size_;
  }
  // This index for a copy of its graph: the same table with every value
  // replaced by `copy_of(value)`, which must have the same name. Hashes and
  // slots carry over, so a graph copy hashes no name (Graph::clone).
  template <typename CopyOf>
  NameIndex remapped(CopyOf&& copy_of) const {
    settle();
    NameIndex copy;
    copy.slots_ = slots_;
    copy.size_ = size_;
    for (Slot& s : copy.slots_) {
      if (s.value) s.value = copy_of(s.value);
    }
    return copy;
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    Value* value = nullptr;  // nullptr: empty
  };
  // Tables smaller than this erase at once (they fit in the cache).
  static constexpr size_t kDeferFrom = size_t{1} << 15;
  // Erasures in flight: enough to overlap the memory latency of that many.
  static constexpr size_t kInFlight = 16;
  static uint64_t hash_of(std::string_view name);
  // The slot holding `name`, or the empty slot where it would go.
  size_t probe(std::string_view name, uint64_t hash) const;
  // Removes the entry holding `value`, probing from its hash's home slot;
  // compares addresses only.
  void erase_entry(uint64_t hash, const Value* value);
  // Shifts the entries after `hole` back over it and empties the last one.
  void remove_at(size_t hole);
  void grow();
  void settle_pending();
  // Carries out the queued erasure that has waited longest.
  void erase_oldest_pending();

  using Slots = std::vector<Slot, LargeBlockAllocator<Slot>>;
  Slots slots_;  // size 0 or a power of two, at most half full
  size_t size_ = 0;
  // Queued erasures (a ring): the hash and address of each erased value.
  // Mutable: a lookup settles them first.
  mutable std::array<Slot, kInFlight> pending_{};
  mutable size_t pending_head_ = 0, pending_count_ = 0;
};

}  // namespace lathe
