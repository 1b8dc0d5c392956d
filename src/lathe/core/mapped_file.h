// A read-only memory map of a whole file. Weights are viewed in place inside
// the map (zero copy); every tensor view holds a shared_ptr to keep it alive.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "lathe/core/result.h"

namespace lathe {

class MappedFile {
 public:
  static Result<std::shared_ptr<const MappedFile>> open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  MappedFile(std::string path, const std::byte* data, size_t size)
      : path_(std::move(path)), data_(data), size_(size) {}
  std::string path_;
  const std::byte* data_;
  size_t size_;
};

}  // namespace lathe
