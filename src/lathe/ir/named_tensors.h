// An insertion-ordered map from fully qualified name to tensor (a state dict).
#pragma once

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lathe/core/tensor.h"

namespace lathe {

class NamedTensors {
 public:
  // Inserts or replaces.
  void set(const std::string& name, Tensor tensor) {
    auto it = index_.find(name);
    if (it != index_.end()) {
      entries_[it->second].second = std::move(tensor);
      return;
    }
    index_.emplace(name, entries_.size());
    entries_.emplace_back(name, std::move(tensor));
  }
  const Tensor* find(const std::string& name) const {
    auto it = index_.find(name);
    return it == index_.end() ? nullptr : &entries_[it->second].second;
  }
  bool contains(const std::string& name) const { return index_.count(name) != 0; }
  bool erase(const std::string& name) {
    auto it = index_.find(name);
    if (it == index_.end()) return false;
    entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(it->second));
    index_.clear();
    for (size_t i = 0; i < entries_.size(); ++i) index_.emplace(entries_[i].first, i);
    return true;
  }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  const std::vector<std::pair<std::string, Tensor>>& entries() const { return entries_; }
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }

 private:
  std::vector<std::pair<std::string, Tensor>> entries_;
  std::unordered_map<std::string, size_t> index_;
};

}  // namespace lathe
