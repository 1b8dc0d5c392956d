// FlatMap: an open-addressing hash map in flat arrays, for the few places
// that look up every value or every spec of a large program once (verify,
// the reader's value tables). std::unordered_map allocates a node per entry;
// on a program of a million values those allocations, and the cache misses
// of chasing them, were most of the cost of the lookups themselves.
//
// Insert and find only (no erase), keys compared with ==. Hashes are mixed
// before use, so an identity hash (std::hash of a pointer) spreads well.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace lathe {

template <typename K, typename V, typename Hash = std::hash<K>>
class FlatMap {
 public:
  explicit FlatMap(size_t expected = 0) { rehash(capacity_for(expected)); }

  size_t size() const { return size_; }

  // The value for `key`, or nullptr.
  V* find(const K& key) { return const_cast<V*>(std::as_const(*this).find(key)); }
  const V* find(const K& key) const {
    for (size_t i = slot(key);; i = (i + 1) & mask_) {
      if (!used_[i]) return nullptr;
      if (keys_[i] == key) return &values_[i];
    }
  }
  bool contains(const K& key) const { return find(key) != nullptr; }

  // Inserts `value` under `key` unless the key is present. Returns the
  // value now stored for the key, and whether it was inserted.
  std::pair<V*, bool> emplace(const K& key, V value) {
    if (2 * (size_ + 1) > used_.size()) rehash(2 * used_.size());
    size_t i = slot(key);
    for (; used_[i]; i = (i + 1) & mask_) {
      if (keys_[i] == key) return {&values_[i], false};
    }
    used_[i] = 1;
    keys_[i] = key;
    values_[i] = std::move(value);
    ++size_;
    return {&values_[i], true};
  }

 private:
  static size_t capacity_for(size_t n) {
    size_t c = 16;
    while (c < 2 * n) c *= 2;
    return c;
  }
  size_t slot(const K& key) const {
    // Fibonacci hashing: the high bits of the product depend on every bit.
    uint64_t h = static_cast<uint64_t>(Hash{}(key)) * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(h >> shift_);
  }
  void rehash(size_t capacity) {
    std::vector<K> keys = std::move(keys_);
    std::vector<V> values = std::move(values_);
    std::vector<uint8_t> used = std::move(used_);
    keys_.assign(capacity, K{});
    values_.assign(capacity, V{});
    used_.assign(capacity, 0);
    mask_ = capacity - 1;
    shift_ = 64;
    for (size_t c = capacity; c > 1; c /= 2) --shift_;
    size_ = 0;
    for (size_t i = 0; i < used.size(); ++i) {
      if (used[i]) emplace(keys[i], std::move(values[i]));
    }
  }

  std::vector<K> keys_;
  std::vector<V> values_;
  std::vector<uint8_t> used_;
  size_t mask_ = 0;
  unsigned shift_ = 64;
  size_t size_ = 0;
};

template <typename K, typename Hash = std::hash<K>>
class FlatSet {
 public:
  explicit FlatSet(size_t expected = 0) : map_(expected) {}
  // True if `key` was not there before.
  bool insert(const K& key) { return map_.emplace(key, 0).second; }
  bool contains(const K& key) const { return map_.contains(key); }
  size_t size() const { return map_.size(); }

 private:
  FlatMap<K, uint8_t, Hash> map_;
};

}  // namespace lathe
