#include "lathe/ir/argument.h"

#include "lathe/ir/value.h"

namespace lathe {

namespace {
template <typename T>
void visit_sym(const T& s, const std::function<void(Value*)>& fn) {
  if (s.is_value() && s.value()) fn(s.value());
}
template <typename T>
size_t replace_sym(T& s, Value* from, Value* to) {
  if (s.is_value() && s.value() == from) {
    s.v = to;
    return 1;
  }
  return 0;
}
size_t replace_in(std::vector<Value*>& items, Value* from, Value* to) {
  size_t n = 0;
  for (auto& p : items) {
    if (p == from) {
      p = to;
      ++n;
    }
  }
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

size_t Argument::replace_value(Value* from, Value* to) {
  return std::visit(
      [&](auto& a) -> size_t {
        using T = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<T, TensorRef> || std::is_same_v<T, OptionalTensor> ||
                      std::is_same_v<T, CustomObjRef>) {
          if (a.value == from) {
            a.value = to;
            return 1;
          }
          return 0;
        } else if constexpr (std::is_same_v<T, TensorList> || std::is_same_v<T, OptionalTensorList>) {
          return replace_in(a.items, from, to);
        } else if constexpr (std::is_same_v<T, SymIntArg> || std::is_same_v<T, SymFloatArg> ||
                             std::is_same_v<T, SymBoolArg>) {
          return replace_sym(a, from, to);
        } else if constexpr (std::is_same_v<T, SymIntList> || std::is_same_v<T, SymFloatList> ||
                             std::is_same_v<T, SymBoolList>) {
          size_t n = 0;
          for (auto& s : a.items) n += replace_sym(s, from, to);
          return n;
        } else if constexpr (std::is_same_v<T, NestedTensorList>) {
          size_t n = 0;
          for (auto& list : a.items) n += replace_in(list, from, to);
          return n;
        } else if constexpr (std::is_same_v<T, StringToArgument>) {
          size_t n = 0;
          for (auto& [k, sub] : a.items) n += sub.replace_value(from, to);
          return n;
        } else {
          return 0;
        }
      },
      v);
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
