#include "lathe/ir/named_tensors.h"

#include "lathe/core/entry_index.h"

namespace lathe {

NamedTensors::NamedTensors() = default;
NamedTensors::NamedTensors(const NamedTensors& other)
    : entries_(other.entries_), index_(other.index_ ? std::make_unique<EntryIndex>(*other.index_) : nullptr) {}
NamedTensors& NamedTensors::operator=(const NamedTensors& other) {
  if (this != &other) *this = NamedTensors(other);
  return *this;
}
NamedTensors::NamedTensors(NamedTensors&& other) noexcept = default;
NamedTensors& NamedTensors::operator=(NamedTensors&& other) noexcept = default;
NamedTensors::~NamedTensors() = default;

uint32_t NamedTensors::entry_of(std::string_view name, uint32_t hash) const {
  if (!index_) return EntryIndex::kNone;
  return index_->find(name, hash, [this](uint32_t e) { return std::string_view(entries_[e].first); });
}

void NamedTensors::set(const std::string& name, Tensor tensor) {
  const uint32_t h = EntryIndex::hash(name);
  if (const uint32_t e = entry_of(name, h); e != EntryIndex::kNone) {
    entries_[e].second = std::move(tensor);
    return;
  }
  if (!index_) index_ = std::make_unique<EntryIndex>();
  index_->insert(static_cast<uint32_t>(entries_.size()), h);
  entries_.emplace_back(name, std::move(tensor));
}

const Tensor* NamedTensors::find(std::string_view name) const {
  const uint32_t e = entry_of(name, EntryIndex::hash(name));
  return e == EntryIndex::kNone ? nullptr : &entries_[e].second;
}

// Rare (tests, and passes that drop a state tensor): the order is kept, so
// the entries after it move down and the index is rebuilt.
bool NamedTensors::erase(std::string_view name) {
  const uint32_t e = entry_of(name, EntryIndex::hash(name));
  if (e == EntryIndex::kNone) return false;
  entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(e));
  index_->clear();
  for (uint32_t i = 0; i < entries_.size(); ++i) index_->insert(i, EntryIndex::hash(entries_[i].first));
  return true;
}

}  // namespace lathe
