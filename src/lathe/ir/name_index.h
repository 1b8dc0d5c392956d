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
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace lathe {

class Value;

class NameIndex {
 public:
  // nullptr if no value has that name.
  Value* find(std::string_view name) const;
  bool contains(std::string_view name) const { return find(name) != nullptr; }
  // Adds `value` under its current name, replacing a value of the same name.
  void insert(Value* value);
  // Removes `value`'s entry (under its current name), if it is the one
  // indexed. Compares pointers while probing, so erasing does not touch the
  // other values the probe passes (a cache miss each in a large graph).
  void erase(const Value* value);
  size_t size() const { return size_; }

 private:
  struct Slot {
    uint64_t hash = 0;
    Value* value = nullptr;  // nullptr: empty
  };
  static uint64_t hash_of(std::string_view name);
  // The slot holding `name`, or the empty slot where it would go.
  size_t probe(std::string_view name, uint64_t hash) const;
  // Shifts the entries after `hole` back over it and empties the last one.
  void remove_at(size_t hole);
  void grow();

  std::vector<Slot> slots_;  // size 0 or a power of two, at most half full
  size_t size_ = 0;
};

}  // namespace lathe
