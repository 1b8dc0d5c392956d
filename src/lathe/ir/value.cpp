#include "lathe/ir/value.h"

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

std::string_view value_kind_name(ValueKind kind) {
  switch (kind) {
    case ValueKind::Tensor: return "tensor";
    case ValueKind::SymInt: return "sym_int";
    case ValueKind::SymBool: return "sym_bool";
    case ValueKind::SymFloat: return "sym_float";
    case ValueKind::CustomObj: return "custom_obj";
    case ValueKind::Token: return "token";
  }
  return "?";
}

}  // namespace lathe
