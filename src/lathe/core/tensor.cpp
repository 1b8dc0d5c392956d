#include "lathe/core/tensor.h"

#include <algorithm>
#include <atomic>

#include <unistd.h>

#include <cstring>
#include <limits>
#include <new>

#include "lathe/core/int_arith.h"

namespace lathe {

std::shared_ptr<Storage> Storage::allocate(size_t nbytes) {
  auto s = std::shared_ptr<Storage>(new Storage());
  s->owned_.assign(nbytes, std::byte{0});
  s->data_ = s->owned_.data();
  s->nbytes_ = nbytes;
  return s;
}

std::shared_ptr<Storage> Storage::copy_of(std::span<const std::byte> bytes) {
  auto s = allocate(bytes.size());
  if (!bytes.empty()) std::memcpy(s->owned_.data(), bytes.data(), bytes.size());
  return s;
}

std::shared_ptr<Storage> Storage::view(std::shared_ptr<const void> keepalive,
                                       const std::byte* data, size_t nbytes) {
  auto s = std::shared_ptr<Storage>(new Storage());
  s->keepalive_ = std::move(keepalive);
  s->data_ = data;
  s->nbytes_ = nbytes;
  return s;
}

std::shared_ptr<Storage> Storage::file_view(FileExtent extent) {
  auto s = view(extent.file, extent.bytes().data(), static_cast<size_t>(extent.size));
  s->extent_ = std::move(extent);
  return s;
}

int64_t Tensor::numel() const { return checked_numel(sizes).value_or(std::numeric_limits<int64_t>::max()); }

bool Tensor::is_contiguous() const {
  if (sizes.size() != strides.size()) return false;
  // No elements, no layout (as torch says): contiguous_strides() gives a
  // zero-size dim the strides of a size-1 one, which the loop would refuse.
  if (std::find(sizes.begin(), sizes.end(), 0) != sizes.end()) return true;
  int64_t expected = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] != 1 && strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

const std::byte* Tensor::data() const {
  // An empty storage has no bytes (null) and a view into it no elements:
  // offsetting null is undefined even when nothing is read.
  const std::byte* base = storage->data();
  return base ? base + storage_offset * static_cast<int64_t>(dtype_size(dtype)) : nullptr;
}

Status Tensor::check_fits() const {
  if (!storage) return make_error("tensor has no storage");
  size_t elem = dtype_size(dtype);
  if (elem == 0) return make_error("tensor has an unknown dtype");
  if (sizes.size() != strides.size()) {
    return make_error("sizes " + shape_string(sizes) + " and strides " + shape_string(strides) +
                      " differ in rank");
  }
  if (storage_offset < 0) return make_error("negative storage offset " + std::to_string(storage_offset));
  // Largest element index reached, computed with overflow checks so absurd
  // sizes are an error rather than a wrap-around.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max() / 16;
  int64_t last = storage_offset;
  bool empty = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0) return make_error("negative size in " + shape_string(sizes));
    if (strides[i] < 0) return make_error("negative stride in " + shape_string(strides));
    if (sizes[i] == 0) empty = true;
  }
  if (empty) return Status::Ok();
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (strides[i] != 0 && (sizes[i] - 1) > (kMax - last) / strides[i]) {
      return make_error("sizes " + shape_string(sizes) + " with strides " + shape_string(strides) +
                        " overflow");
    }
    last += (sizes[i] - 1) * strides[i];
  }
  uint64_t need = static_cast<uint64_t>(last + 1) * elem;
  if (need > storage->nbytes()) {
    return make_error("tensor of shape " + shape_string(sizes) + " " + std::string(dtype_name(dtype)) +
                      " at offset " + std::to_string(storage_offset) + " needs " + std::to_string(need) +
                      " bytes but its storage has " + std::to_string(storage->nbytes()));
  }
  return Status::Ok();
}

std::vector<int64_t> Tensor::contiguous_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size());
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    // Saturates: only an empty tensor's sizes can overflow (the others were
    // checked when allocated), and its strides address nothing.
    if (__builtin_mul_overflow(s, std::max<int64_t>(sizes[i], 1), &s)) s = std::numeric_limits<int64_t>::max();
  }
  return strides;
}

Tensor Tensor::empty(DType dtype, std::vector<int64_t> sizes) {
  Tensor t;
  t.dtype = dtype;
  t.strides = contiguous_strides(sizes);
  t.sizes = std::move(sizes);
  t.storage = Storage::allocate(static_cast<size_t>(t.numel()) * dtype_size(dtype));
  return t;
}

Result<uint64_t> contiguous_nbytes(DType dtype, const std::vector<int64_t>& sizes) {
  uint64_t n = dtype_size(dtype);
  if (n == 0) return make_error("unknown dtype");
  for (int64_t d : sizes) {
    if (d < 0) return make_error("negative size in " + shape_string(sizes));
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &n)) {
      return make_error(shape_string(sizes) + " " + std::string(dtype_name(dtype)) + " has more than 2^64 bytes");
    }
  }
  return n;
}

namespace {
std::atomic<uint64_t> max_tensor_bytes_override{0};
}  // namespace

void Tensor::set_max_tensor_bytes(uint64_t limit) { max_tensor_bytes_override.store(limit, std::memory_order_relaxed); }

uint64_t Tensor::max_tensor_bytes() {
  if (const uint64_t limit = max_tensor_bytes_override.load(std::memory_order_relaxed)) return limit;
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return uint64_t{1} << 40;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
}

Result<Tensor> Tensor::try_empty(DType dtype, std::vector<int64_t> sizes) {
  return try_empty(dtype, std::move(sizes), max_tensor_bytes());
}

Result<Tensor> Tensor::try_empty(DType dtype, std::vector<int64_t> sizes, uint64_t max_bytes) {
  LATHE_ASSIGN_OR_RETURN(uint64_t nbytes, contiguous_nbytes(dtype, sizes));
  const std::string what = shape_string(sizes) + " " + std::string(dtype_name(dtype));
  if (nbytes > max_bytes) {
    return make_error(what + " needs " + std::to_string(nbytes) + " bytes, more than the limit of " +
                      std::to_string(max_bytes));
  }
  // Under a memory limit even a size below physical memory may not be had;
  // that is an error about this tensor, not a crash.
  try {
    return empty(dtype, std::move(sizes));
  } catch (const std::bad_alloc&) {
    return make_error("cannot allocate " + std::to_string(nbytes) + " bytes for " + what);
  }
}

std::string shape_string(const std::vector<int64_t>& sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(sizes[i]);
  }
  return s + "]";
}

}  // namespace lathe
