#include "lathe/ir/named_tensors.h"

#include <functional>

namespace lathe {

namespace {
uint32_t hash_name(std::string_view name) {
  const uint64_t h = std::hash<std::string_view>{}(name);
  return static_cast<uint32_t>(h ^ (h >> 32));
}
}  // namespace

size_t NamedTensors::probe(std::string_view name, uint32_t hash) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.entry == kEmpty || (s.hash == hash && entries_[s.entry].first == name)) return i;
  }
}

void NamedTensors::rebuild(size_t capacity) {
  slots_.assign(capacity, Slot{});
  for (size_t e = 0; e < entries_.size(); ++e) {
    const uint32_t h = hash_name(entries_[e].first);
    slots_[probe(entries_[e].first, h)] = Slot{h, static_cast<uint32_t>(e)};
  }
}

void NamedTensors::set(const std::string& name, Tensor tensor) {
  if (2 * (entries_.size() + 1) > slots_.size()) rebuild(slots_.empty() ? 16 : 2 * slots_.size());
  const uint32_t h = hash_name(name);
  Slot& s = slots_[probe(name, h)];
  if (s.entry != kEmpty) {
    entries_[s.entry].second = std::move(tensor);
    return;
  }
  s = Slot{h, static_cast<uint32_t>(entries_.size())};
  entries_.emplace_back(name, std::move(tensor));
}

const Tensor* NamedTensors::find(std::string_view name) const {
  if (slots_.empty()) return nullptr;
  const Slot& s = slots_[probe(name, hash_name(name))];
  return s.entry == kEmpty ? nullptr : &entries_[s.entry].second;
}

// Rare (tests, and passes that drop a state tensor): the order is kept, so
// the entries after it move down and the index is rebuilt.
bool NamedTensors::erase(std::string_view name) {
  if (slots_.empty()) return false;
  const Slot& s = slots_[probe(name, hash_name(name))];
  if (s.entry == kEmpty) return false;
  entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(s.entry));
  rebuild(slots_.size());
  return true;
}

}  // namespace lathe
