#include "lathe/ir/argument.h"

#include "lathe/ir/value.h"

namespace lathe {

namespace {
template <typename T>
void visit_sym(const T& s, const std::function<void(Value*)>& fn) {
  if (s.is_value() && s.value()) fn(s.value());
}
using ValueMap = std::function<Value*(Value*)>;
size_t map_one(Value*& v, const ValueMap& fn) {
  if (!v) return 0;  // an absent optional tensor stays absent
  Value* mapped = fn(v);
  if (mapped == v) return 0;
  v = mapped;
  return 1;
}
template <typename T>
size_t map_sym(T& s, const ValueMap& fn) {
  if (!s.is_value()) return 0;
  Value* v = s.value();
  const size_t n = map_one(v, fn);
  s.v = v;
  return n;
}
size_t map_in(std::vector<Value*>& items, const ValueMap& fn) {
  size_t n = 0;
  for (Value*& v : items) n += map_one(v, fn);
  return n;
}
}  // namespace

void Argument::for_each_value(const std::function<void(Value*)>& fn) const {
  std::visit(
      [&](const auto& a) {
        using T = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<T, TensorRef> || std::is_same_v<T, OptionalTensor> ||
                      std::is_same_v<T, CustomObjRef>) {
          if (a.value) fn(a.value);
        } else if constexpr (std::is_same_v<T, TensorList> || std::is_same_v<T, OptionalTensorList>) {
          for (Value* v : a.items)
            if (v) fn(v);
        } else if constexpr (std::is_same_v<T, SymIntArg> || std::is_same_v<T, SymFloatArg> ||
                             std::is_same_v<T, SymBoolArg>) {
          visit_sym(a, fn);
        } else if constexpr (std::is_same_v<T, SymIntList> || std::is_same_v<T, SymFloatList> ||
                             std::is_same_v<T, SymBoolList>) {
          for (const auto& s : a.items) visit_sym(s, fn);
        } else if constexpr (std::is_same_v<T, NestedTensorList>) {
          for (const auto& list : a.items)
            for (Value* v : list)
              if (v) fn(v);
        } else if constexpr (std::is_same_v<T, StringToArgument>) {
          for (const auto& [k, sub] : a.items) sub.for_each_value(fn);
        }
      },
      v);
}

size_t Argument::map_values(const std::function<Value*(Value*)>& fn) {
  return std::visit(
      [&](auto& a) -> size_t {
        using T = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<T, TensorRef> || std::is_same_v<T, OptionalTensor> ||
                      std::is_same_v<T, CustomObjRef>) {
          return map_one(a.value, fn);
        } else if constexpr (std::is_same_v<T, TensorList> || std::is_same_v<T, OptionalTensorList>) {
          return map_in(a.items, fn);
        } else if constexpr (std::is_same_v<T, SymIntArg> || std::is_same_v<T, SymFloatArg> ||
                             std::is_same_v<T, SymBoolArg>) {
          return map_sym(a, fn);
        } else if constexpr (std::is_same_v<T, SymIntList> || std::is_same_v<T, SymFloatList> ||
                             std::is_same_v<T, SymBoolList>) {
          size_t n = 0;
          for (auto& s : a.items) n += map_sym(s, fn);
          return n;
        } else if constexpr (std::is_same_v<T, NestedTensorList>) {
          size_t n = 0;
          for (auto& list : a.items) n += map_in(list, fn);
          return n;
        } else if constexpr (std::is_same_v<T, StringToArgument>) {
          size_t n = 0;
          for (auto& [k, sub] : a.items) n += sub.map_values(fn);
          return n;
        } else {
          return 0;
        }
      },
      v);
}

size_t Argument::replace_value(Value* from, Value* to) {
  return map_values([from, to](Value* v) { return v == from ? to : v; });
}

Argument value_argument(Value* v) {
  switch (v->kind()) {
    case ValueKind::SymInt: return SymIntArg{v};
    case ValueKind::SymFloat: return SymFloatArg{v};
    case ValueKind::SymBool: return SymBoolArg{v};
    case ValueKind::CustomObj: return CustomObjRef{v};
    case ValueKind::Tensor:
    case ValueKind::Token: return TensorRef{v};
  }
  return TensorRef{v};
}

}  // namespace lathe
