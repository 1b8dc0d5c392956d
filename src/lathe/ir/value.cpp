#include "lathe/ir/value.h"

namespace lathe {

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
