// An insertion-ordered map from fully qualified name to tensor (a state dict).
//
// A deep network has tens of thousands of state tensors, read once each.
// The names live only in the entry list; the index is a flat table of entry
// numbers with the name's hash beside each (std::unordered_map kept a
// second copy of every name and a heap node per entry).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lathe/core/tensor.h"

namespace lathe {

class NamedTensors {
 public:
  // Inserts or replaces.
  void set(const std::string& name, Tensor tensor);
  const Tensor* find(std::string_view name) const;
  bool contains(std::string_view name) const { return find(name) != nullptr; }
  bool erase(std::string_view name);
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  const std::vector<std::pair<std::string, Tensor>>& entries() const { return entries_; }
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }

 private:
  struct Slot {
    uint32_t hash = 0;
    uint32_t entry = kEmpty;  // index into entries_
  };
  static constexpr uint32_t kEmpty = UINT32_MAX;
  // The slot holding `name`, or the empty slot where it would go.
  size_t probe(std::string_view name, uint32_t hash) const;
  void rebuild(size_t capacity);

  std::vector<std::pair<std::string, Tensor>> entries_;
  std::vector<Slot> slots_;  // size 0 or a power of two, at most half full
};

}  // namespace lathe
