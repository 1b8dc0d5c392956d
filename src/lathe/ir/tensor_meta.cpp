#include "lathe/ir/tensor_meta.h"

#include <deque>
#include <functional>
#include <mutex>
#include <unordered_set>

namespace lathe {

std::optional<std::vector<int64_t>> TensorMeta::concrete_sizes() const {
  std::vector<int64_t> out;
  out.reserve(sizes.size());
  for (const auto& d : sizes) {
    if (!d.is_concrete()) return std::nullopt;
    out.push_back(d.value());
  }
  return out;
}

const TensorMeta& MetaRef::value() const {
  if (!meta_) throw std::bad_optional_access();
  return *meta_;
}

namespace {

uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x9E3779B97F4A7C15ull + (h >> 31); }

uint64_t hash_dim(uint64_t h, const SymDim& d) {
  return mix(h, d.is_concrete() ? static_cast<uint64_t>(d.value()) : std::hash<std::string>{}(d.expr().expr));
}

uint64_t hash_dims(uint64_t h, const std::vector<SymDim>& dims) {
  h = mix(h, dims.size());
  for (const SymDim& d : dims) h = hash_dim(h, d);
  return h;
}

struct MetaHash {
  size_t operator()(const TensorMeta* m) const {
    uint64_t h = mix(static_cast<uint64_t>(m->dtype), static_cast<uint64_t>(m->layout));
    h = mix(h, m->requires_grad);
    h = hash_dims(hash_dims(h, m->sizes), m->strides);
    h = hash_dim(h, m->storage_offset);
    h = mix(h, std::hash<std::string>{}(m->device.type));
    return static_cast<size_t>(mix(h, m->device.index ? static_cast<uint64_t>(*m->device.index) + 1 : 0));
  }
};
struct MetaEqual {
  bool operator()(const TensorMeta* a, const TensorMeta* b) const { return *a == *b; }
};

// Never destroyed: values in other static objects may outlive any
// destruction order, and what it holds stays reachable to leak checkers.
struct Table {
  std::mutex mutex;
  std::deque<TensorMeta> metas;  // stable addresses
  std::unordered_set<const TensorMeta*, MetaHash, MetaEqual> index;
};
Table& table() {
  static Table* t = new Table();
  return *t;
}

}  // namespace

MetaRef intern_tensor_meta(const TensorMeta& meta) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  if (auto it = t.index.find(&meta); it != t.index.end()) return MetaRef(*it);
  const TensorMeta* kept = &t.metas.emplace_back(meta);
  t.index.insert(kept);
  return MetaRef(kept);
}

size_t interned_tensor_meta_count() {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  return t.metas.size();
}

}  // namespace lathe
