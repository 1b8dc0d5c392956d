// Element types. The enumerators follow PyTorch's export-schema numbering
// (torch/_export/serde/schema.py ScalarType), which is what .pt2 files carry,
// so no translation table can drift out of sync.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace lathe {

enum class DType : int32_t {
  Unknown = 0,
  UInt8 = 1,     // BYTE
  Int8 = 2,      // CHAR
  Int16 = 3,     // SHORT
  Int32 = 4,     // INT
  Int64 = 5,     // LONG
  Float16 = 6,   // HALF
  Float32 = 7,   // FLOAT
  Float64 = 8,   // DOUBLE
  Complex32 = 9,
  Complex64 = 10,
  Complex128 = 11,
  Bool = 12,
  BFloat16 = 13,
  UInt16 = 28,
  Float8E4M3FN = 29,
  Float8E5M2 = 30,
  Float8E4M3FNUZ = 31,
  Float8E5M2FNUZ = 32,
  UInt32 = 34,
  UInt64 = 35,
};

// Bytes per element; 0 for Unknown.
size_t dtype_size(DType dtype);
// Short PyTorch-style name: "float32", "int64", ...
std::string_view dtype_name(DType dtype);
// The schema number, if it names a dtype Lathe knows.
std::optional<DType> dtype_from_schema(int64_t code);
// Name used by torch.save storages: "FloatStorage", ...
std::string_view dtype_storage_name(DType dtype);
std::optional<DType> dtype_from_storage_name(std::string_view name);
bool dtype_is_floating(DType dtype);

}  // namespace lathe
