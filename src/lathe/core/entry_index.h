// Name -> entry number, for entries whose names are kept elsewhere (a state
// dict's entry list, a zip writer's central directory).
//
// A flat open-addressing table of {hash, entry number} slots, at most half
// full: it holds no copy of any name and is one allocation, where
// std::unordered_map<std::string, size_t> kept a second copy of every name
// and a heap node per entry (tens of thousands in a deep network's state
// dict or archive). The caller says how to read entry e's name.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace lathe {

class EntryIndex {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  static uint32_t hash(std::string_view name);

  // The entry named `name` (hash(name) == h), or kNone; name_of(e) gives
  // entry e's name.
  template <typename NameOf>
  uint32_t find(std::string_view name, uint32_t h, NameOf&& name_of) const {
    if (slots_.empty()) return kNone;
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.entry == kNone) return kNone;
      if (s.hash == h && name_of(s.entry) == name) return s.entry;
    }
  }
  template <typename NameOf>
  uint32_t find(std::string_view name, NameOf&& name_of) const {
    return find(name, hash(name), name_of);
  }
  // Indexes entry `entry`, whose name hashes to `h` and is not indexed yet.
  void insert(uint32_t entry, uint32_t h);
  // Forgets every entry (and frees the table).
  void clear();
  size_t size() const { return size_; }

 private:
  struct Slot {
    uint32_t hash = 0;
    uint32_t entry = kNone;
  };
  void place(Slot s);
  std::vector<Slot> slots_;  // size 0 or a power of two
  size_t size_ = 0;
};

}  // namespace lathe
