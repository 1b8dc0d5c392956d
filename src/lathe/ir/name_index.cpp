#include "lathe/ir/name_index.h"

#include <functional>

#include "lathe/ir/value.h"

namespace lathe {

uint64_t NameIndex::hash_of(std::string_view name) { return std::hash<std::string_view>{}(name); }

size_t NameIndex::probe(std::string_view name, uint64_t hash) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (!s.value || (s.hash == hash && s.value->name() == name)) return i;
  }
}

bool NameIndex::insert_if_absent(Value* value) {
  settle();
  if (2 * (size_ + 1) > slots_.size()) grow();
  const uint64_t h = hash_of(value->name());
  Slot& s = slots_[probe(value->name(), h)];
  if (s.value) return false;
  ++size_;
  s = Slot{h, value};
  return true;
}

Value* NameIndex::find(std::string_view name) const {
  settle();
  if (size_ == 0) return nullptr;
  return slots_[probe(name, hash_of(name))].value;
}

void NameIndex::grow() {
  Slots old = std::move(slots_);
  slots_.assign(old.empty() ? 16 : old.size() * 2, Slot{});
  const size_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (!s.value) continue;
    size_t i = s.hash & mask;
    while (slots_[i].value) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

void NameIndex::insert(Value* value) {
  settle();
  if (2 * (size_ + 1) > slots_.size()) grow();
  const uint64_t h = hash_of(value->name());
  Slot& s = slots_[probe(value->name(), h)];
  if (!s.value) ++size_;
  s = Slot{h, value};
}

void NameIndex::erase(const Value* value) {
  if (size_ == 0 || !value) return;
  const uint64_t h = hash_of(value->name());
  if (slots_.size() < kDeferFrom) {
    settle();
    erase_entry(h, value);
    return;
  }
  __builtin_prefetch(&slots_[h & (slots_.size() - 1)], 1);
  if (pending_count_ == kInFlight) erase_oldest_pending();  // its slot has had time to arrive
  pending_[(pending_head_ + pending_count_) % kInFlight] = Slot{h, const_cast<Value*>(value)};
  ++pending_count_;
}

void NameIndex::erase_entry(uint64_t hash, const Value* value) {
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask; slots_[i].value; i = (i + 1) & mask) {
    if (slots_[i].value == value) {
      remove_at(i);
      return;
    }
  }
}

void NameIndex::settle() const {
  // Logically const: the queued entries are already gone from the index's
  // point of view.
  if (pending_count_ != 0) const_cast<NameIndex*>(this)->settle_pending();
}

void NameIndex::settle_pending() {
  while (pending_count_ != 0) erase_oldest_pending();
}

void NameIndex::erase_oldest_pending() {
  const Slot oldest = pending_[pending_head_];
  pending_head_ = (pending_head_ + 1) % kInFlight;
  --pending_count_;
  erase_entry(oldest.hash, oldest.value);
}

void NameIndex::remove_at(size_t hole) {
  const size_t mask = slots_.size() - 1;
  // Backward-shift deletion: move later entries of the run into the hole
  // when their home slot does not lie strictly between the hole and them.
  for (size_t j = (hole + 1) & mask; slots_[j].value; j = (j + 1) & mask) {
    const size_t home = slots_[j].hash & mask;
    const bool home_in_gap = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (home_in_gap) continue;
    slots_[hole] = slots_[j];
    hole = j;
  }
  slots_[hole] = Slot{};
  --size_;
}

}  // namespace lathe
