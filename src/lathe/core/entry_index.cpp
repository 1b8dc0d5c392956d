#include "lathe/core/entry_index.h"

#include <functional>

namespace lathe {

uint32_t EntryIndex::hash(std::string_view name) {
  const uint64_t h = std::hash<std::string_view>{}(name);
  return static_cast<uint32_t>(h ^ (h >> 32));
}

void EntryIndex::place(Slot s) {
  const size_t mask = slots_.size() - 1;
  size_t i = s.hash & mask;
  while (slots_[i].entry != kNone) i = (i + 1) & mask;
  slots_[i] = s;
}

void EntryIndex::insert(uint32_t entry, uint32_t h) {
  if (2 * (size_ + 1) > slots_.size()) {  // at most half full: short probes
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 16 : 2 * old.size(), Slot{});
    for (const Slot& s : old) {
      if (s.entry != kNone) place(s);
    }
  }
  place(Slot{h, entry});
  ++size_;
}

void EntryIndex::clear() {
  slots_ = {};
  size_ = 0;
}

}  // namespace lathe
