// An insertion-ordered map from fully qualified name to tensor (a state dict).
//
// A deep network has tens of thousands of state tensors, read once each.
// The names live only in the entry list, indexed by entry number
// (core/entry_index.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lathe/core/entry_index.h"
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
  uint32_t entry_of(std::string_view name, uint32_t hash) const;

  std::vector<std::pair<std::string, Tensor>> entries_;
  EntryIndex index_;
};

}  // namespace lathe
