// An insertion-ordered map from fully qualified name to tensor (a state dict).
//
// A deep network has tens of thousands of state tensors, read once each.
// The names live only in the entry list, indexed by entry number
// (core/entry_index.h), which this header keeps to itself: a NamedTensors is
// part of the public API (a program's parameters), its index is not.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lathe/core/tensor.h"

namespace lathe {

class EntryIndex;  // core/entry_index.h

class NamedTensors {
 public:
  NamedTensors();
  NamedTensors(const NamedTensors& other);
  NamedTensors& operator=(const NamedTensors& other);
  NamedTensors(NamedTensors&& other) noexcept;
  NamedTensors& operator=(NamedTensors&& other) noexcept;
  ~NamedTensors();

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
  // Null while nothing was inserted (and in a moved-from map).
  std::unique_ptr<EntryIndex> index_;
};

}  // namespace lathe
