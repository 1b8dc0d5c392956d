// A tensor's metadata as torch.export records it (dtype, sizes, strides,
// device, ...), and the one place every copy of it lives.
//
// Metadata is interned: a value holds a MetaRef, a pointer to the one
// immutable copy of its metadata, shared by every value (in every graph and
// program) that has the same. A deep network has tens of thousands of
// tensors and a handful of distinct shapes, so a value stays small, giving
// it metadata allocates nothing, copying a graph copies pointers, and two
// values have the same metadata exactly when their MetaRefs are equal.
// Interned metadata lives until the process ends (as MLIR's uniqued types
// live as long as their context): it grows with the distinct shapes seen,
// never with the number of values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lathe/core/dtype.h"
#include "lathe/ir/symbolic.h"

namespace lathe {

struct Device {
  std::string type = "cpu";
  std::optional<int64_t> index;
  bool operator==(const Device&) const = default;
};

struct TensorMeta {
  DType dtype = DType::Float32;
  std::vector<SymDim> sizes;
  bool requires_grad = false;
  Device device;
  std::vector<SymDim> strides;
  SymDim storage_offset;
  int64_t layout = 7;  // schema Layout; 7 = Strided
  bool operator==(const TensorMeta&) const = default;

  // Sizes if every dimension is concrete.
  std::optional<std::vector<int64_t>> concrete_sizes() const;
};

// A value's metadata: the interned copy, or none. Reads like the
// std::optional<TensorMeta> it replaced (bool, *, ->, has_value, value) and
// converts to one where a copy is wanted.
class MetaRef {
 public:
  MetaRef() = default;
  MetaRef(std::nullopt_t) {}  // NOLINT(implicit): "no metadata", as for an optional
  explicit operator bool() const { return meta_ != nullptr; }
  bool has_value() const { return meta_ != nullptr; }
  const TensorMeta& operator*() const { return *meta_; }
  const TensorMeta* operator->() const { return meta_; }
  // Throws std::bad_optional_access when there is none, as optional::value.
  const TensorMeta& value() const;
  const TensorMeta* get() const { return meta_; }
  operator std::optional<TensorMeta>() const {  // NOLINT(implicit): a copy, where one is kept
    return meta_ ? std::optional<TensorMeta>(*meta_) : std::nullopt;
  }
  // Interned: equal metadata has the same address.
  bool operator==(const MetaRef& o) const { return meta_ == o.meta_; }

 private:
  friend MetaRef intern_tensor_meta(const TensorMeta& meta);
  explicit MetaRef(const TensorMeta* meta) : meta_(meta) {}
  const TensorMeta* meta_ = nullptr;
};

// The interned copy of `meta` (made on first sight). Thread-safe.
MetaRef intern_tensor_meta(const TensorMeta& meta);
// How many distinct metadata have been interned in this process.
size_t interned_tensor_meta_count();

}  // namespace lathe
