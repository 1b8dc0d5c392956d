// NumPy .npy files (format versions 1-3): the inputs `lathe run --inputs`
// takes, the outputs it writes, and the fixtures' reference numbers.
//
// Reading returns an owned, contiguous, writable tensor (Fortran-ordered
// arrays are reordered); little-endian and byte-wide types only. Writing
// produces version 1.0 with the header padded to 64 bytes, as NumPy does.
#pragma once

#include <span>
#include <string>

#include "lathe/core/result.h"
#include "lathe/core/tensor.h"

namespace lathe {

Result<Tensor> parse_npy(std::span<const std::byte> bytes);
Result<Tensor> read_npy(const std::string& path);
// The .npy encoding of `t` (any layout; written in C order).
Result<std::string> encode_npy(const Tensor& t);
// Written atomically.
Status write_npy(const std::string& path, const Tensor& t);

}  // namespace lathe
