#include "lathe/core/dtype.h"

#include <array>

namespace lathe {
namespace {

struct DTypeInfo {
  DType dtype;
  size_t size;
  std::string_view name;
  std::string_view storage_name;
  bool floating;
};

constexpr std::array<DTypeInfo, 20> kInfos = {{
    {DType::UInt8, 1, "uint8", "ByteStorage", false},
    {DType::Int8, 1, "int8", "CharStorage", false},
    {DType::Int16, 2, "int16", "ShortStorage", false},
    {DType::Int32, 4, "int32", "IntStorage", false},
    {DType::Int64, 8, "int64", "LongStorage", false},
    {DType::Float16, 2, "float16", "HalfStorage", true},
    {DType::Float32, 4, "float32", "FloatStorage", true},
    {DType::Float64, 8, "float64", "DoubleStorage", true},
    {DType::Complex32, 4, "complex32", "ComplexHalfStorage", false},
    {DType::Complex64, 8, "complex64", "ComplexFloatStorage", false},
    {DType::Complex128, 16, "complex128", "ComplexDoubleStorage", false},
    {DType::Bool, 1, "bool", "BoolStorage", false},
    {DType::BFloat16, 2, "bfloat16", "BFloat16Storage", true},
    {DType::UInt16, 2, "uint16", "UInt16Storage", false},
    {DType::Float8E4M3FN, 1, "float8_e4m3fn", "Float8_e4m3fnStorage", true},
    {DType::Float8E5M2, 1, "float8_e5m2", "Float8_e5m2Storage", true},
    {DType::Float8E4M3FNUZ, 1, "float8_e4m3fnuz", "Float8_e4m3fnuzStorage", true},
    {DType::Float8E5M2FNUZ, 1, "float8_e5m2fnuz", "Float8_e5m2fnuzStorage", true},
    {DType::UInt32, 4, "uint32", "UInt32Storage", false},
    {DType::UInt64, 8, "uint64", "UInt64Storage", false},
}};

const DTypeInfo* find(DType dtype) {
  for (const auto& info : kInfos) {
    if (info.dtype == dtype) return &info;
  }
  return nullptr;
}

}  // namespace

size_t dtype_size(DType dtype) {
  const auto* info = find(dtype);
  return info ? info->size : 0;
}

std::string_view dtype_name(DType dtype) {
  const auto* info = find(dtype);
  return info ? info->name : "unknown";
}

std::optional<DType> dtype_from_schema(int64_t code) {
  for (const auto& info : kInfos) {
    if (static_cast<int64_t>(info.dtype) == code) return info.dtype;
  }
  return std::nullopt;
}

std::string_view dtype_storage_name(DType dtype) {
  const auto* info = find(dtype);
  return info ? info->storage_name : "";
}

std::optional<DType> dtype_from_storage_name(std::string_view name) {
  for (const auto& info : kInfos) {
    if (info.storage_name == name) return info.dtype;
  }
  return std::nullopt;
}

bool dtype_is_floating(DType dtype) {
  const auto* info = find(dtype);
  return info && info->floating;
}

}  // namespace lathe
