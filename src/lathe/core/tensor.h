// Tensor storage and strided views.
//
// A Storage is a run of bytes that is either owned (a vector) or a window into
// a mapped file kept alive by a shared_ptr. Tensors that shared one storage in
// PyTorch share one Storage object here, so writers can emit it once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "lathe/core/dtype.h"
#include "lathe/core/file_extent.h"
#include "lathe/core/result.h"

namespace lathe {

class Storage {
 public:
  // Owned bytes (zero-initialised).
  static std::shared_ptr<Storage> allocate(size_t nbytes);
  static std::shared_ptr<Storage> copy_of(std::span<const std::byte> bytes);
  // A window into memory owned by `keepalive` (e.g. a MappedFile).
  static std::shared_ptr<Storage> view(std::shared_ptr<const void> keepalive,
                                       const std::byte* data, size_t nbytes);
  // A window onto a part of a mapped file that a writer may copy file to file.
  static std::shared_ptr<Storage> file_view(FileExtent extent);

  const std::byte* data() const { return data_; }
  // Writable only for owned storages; nullptr for views of mapped files.
  std::byte* mutable_data() { return owned_.empty() ? nullptr : owned_.data(); }
  size_t nbytes() const { return nbytes_; }
  bool is_view() const { return keepalive_ != nullptr; }
  std::span<const std::byte> bytes() const { return {data_, nbytes_}; }
  // Where the bytes lie in a file, for file_view() storages only.
  const std::optional<FileExtent>& file_extent() const { return extent_; }

 private:
  Storage() = default;
  std::vector<std::byte> owned_;
  std::shared_ptr<const void> keepalive_;
  std::optional<FileExtent> extent_;
  const std::byte* data_ = nullptr;
  size_t nbytes_ = 0;
};

struct Tensor {
  std::shared_ptr<Storage> storage;
  DType dtype = DType::Float32;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;  // in elements
  int64_t storage_offset = 0;    // in elements
  bool requires_grad = false;

  // The logical element count (a broadcast view counts every element it
  // shows); INT64_MAX when it does not fit, which no limit lets through.
  int64_t numel() const;
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype); }
  bool is_contiguous() const;
  // Pointer to element [0,...,0]; valid only after check_fits() succeeded.
  const std::byte* data() const;
  // Verifies that every element the sizes/strides/offset address lies inside
  // the storage. Error text names the dimensions and byte counts.
  Status check_fits() const;

  static std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes);
  // A fresh, owned, contiguous, zero-filled tensor.
  static Tensor empty(DType dtype, std::vector<int64_t> sizes);
  // The same, for sizes that come from a file or a computation on one: an
  // error (naming the shape and byte count) instead of an overflow or a
  // std::bad_alloc when they are negative, overflow, or exceed max_bytes.
  static Result<Tensor> try_empty(DType dtype, std::vector<int64_t> sizes, uint64_t max_bytes);
  static Result<Tensor> try_empty(DType dtype, std::vector<int64_t> sizes);
  // The largest tensor try_empty() allocates by default: the machine's
  // physical memory (anything larger can only fail, later and less clearly),
  // or the process-wide limit set_max_tensor_bytes() set.
  static uint64_t max_tensor_bytes();
  // Lowers the default limit for the whole process (0: back to physical
  // memory). For hosts that run untrusted programs under a memory budget,
  // and the fuzzers, which run them under libFuzzer's -rss_limit_mb: a
  // program may legitimately ask for more than either allows, and that must
  // be an error naming the tensor, not an out-of-memory kill.
  static void set_max_tensor_bytes(uint64_t limit);
};

// Bytes a contiguous tensor of `sizes` needs, computed with overflow checks:
// an error for a negative size or a product past 2^64.
Result<uint64_t> contiguous_nbytes(DType dtype, const std::vector<int64_t>& sizes);

// Human-readable shape: "[3, 4]".
std::string shape_string(const std::vector<int64_t>& sizes);

}  // namespace lathe
