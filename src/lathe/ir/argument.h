// A node argument, typed as the export schema types it (schema.py Argument).
// References to values are Value pointers, never names, so renaming or
// replacing a value can never leave an argument pointing at a stale name.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "lathe/core/dtype.h"
#include "lathe/ir/value.h"

namespace lathe {

class Graph;
struct Argument;

struct NoneArg {
  bool operator==(const NoneArg&) const = default;
};
struct TensorRef {
  Value* value = nullptr;
  bool operator==(const TensorRef&) const = default;
};
struct TensorList {
  std::vector<Value*> items;
  bool operator==(const TensorList&) const = default;
};
// Tensor? — value == nullptr means None.
struct OptionalTensor {
  Value* value = nullptr;
  bool operator==(const OptionalTensor&) const = default;
};
// Tensor?[] — nullptr items are None.
struct OptionalTensorList {
  std::vector<Value*> items;
  bool operator==(const OptionalTensorList&) const = default;
};
struct IntList {
  std::vector<int64_t> items;
  bool operator==(const IntList&) const = default;
};
struct FloatList {
  std::vector<double> items;
  bool operator==(const FloatList&) const = default;
};
struct StringList {
  std::vector<std::string> items;
  bool operator==(const StringList&) const = default;
};
struct BoolList {
  std::vector<bool> items;
  bool operator==(const BoolList&) const = default;
};
// A symbolic scalar argument: a value (as_name) or a literal (as_int...).
template <typename Literal>
struct SymArg {
  std::variant<Literal, Value*> v;
  bool is_value() const { return v.index() == 1; }
  Value* value() const { return std::get<1>(v); }
  Literal literal() const { return std::get<0>(v); }
  bool operator==(const SymArg&) const = default;
};
using SymIntArg = SymArg<int64_t>;
using SymFloatArg = SymArg<double>;
using SymBoolArg = SymArg<bool>;
struct SymIntList {
  std::vector<SymIntArg> items;
  bool operator==(const SymIntList&) const = default;
};
struct SymFloatList {
  std::vector<SymFloatArg> items;
  bool operator==(const SymFloatList&) const = default;
};
struct SymBoolList {
  std::vector<SymBoolArg> items;
  bool operator==(const SymBoolList&) const = default;
};
struct ScalarTypeArg {
  DType dtype;
  bool operator==(const ScalarTypeArg&) const = default;
};
struct MemoryFormatArg {
  int64_t format;  // schema MemoryFormat numbering
  bool operator==(const MemoryFormatArg&) const = default;
};
struct LayoutArg {
  int64_t layout;  // schema Layout numbering
  bool operator==(const LayoutArg&) const = default;
};
struct DeviceArg {
  Device device;
  bool operator==(const DeviceArg&) const = default;
};
// A subgraph of a higher-order op (cond branches, map bodies...).
struct GraphArg {
  std::string name;
  std::shared_ptr<Graph> graph;
  bool operator==(const GraphArg& o) const { return name == o.name && graph == o.graph; }
};
struct CustomObjRef {
  Value* value = nullptr;
  bool operator==(const CustomObjRef&) const = default;
};
struct OperatorArg {
  std::string name;
  bool operator==(const OperatorArg&) const = default;
};
struct ComplexArg {
  double real = 0, imag = 0;
  bool operator==(const ComplexArg&) const = default;
};
struct NestedTensorList {
  std::vector<std::vector<Value*>> items;
  bool operator==(const NestedTensorList&) const = default;
};
struct IntLists {
  std::vector<std::vector<int64_t>> items;
  bool operator==(const IntLists&) const = default;
};
struct FloatLists {  // schema 8.19+ `as_float_lists`
  std::vector<std::vector<double>> items;
  bool operator==(const FloatLists&) const = default;
};
struct StringToArgument {
  std::vector<std::pair<std::string, Argument>> items;
  bool operator==(const StringToArgument&) const;
};

using ArgumentVariant =
    std::variant<NoneArg, TensorRef, TensorList, OptionalTensor, OptionalTensorList, int64_t, IntList,
                 double, FloatList, std::string, StringList, bool, BoolList, SymIntArg, SymIntList,
                 SymFloatArg, SymFloatList, SymBoolArg, SymBoolList, ScalarTypeArg, MemoryFormatArg,
                 LayoutArg, DeviceArg, GraphArg, CustomObjRef, OperatorArg, ComplexArg, NestedTensorList,
                 IntLists, StringToArgument, FloatLists>;

struct Argument {
  ArgumentVariant v;

  Argument() : v(NoneArg{}) {}
  template <typename T, typename = std::enable_if_t<std::is_constructible_v<ArgumentVariant, T&&> &&
                                                    !std::is_same_v<std::decay_t<T>, Argument>>>
  Argument(T&& x) : v(std::forward<T>(x)) {}  // NOLINT(implicit)

  template <typename T>
  bool is() const { return std::holds_alternative<T>(v); }
  template <typename T>
  const T& as() const { return std::get<T>(v); }
  template <typename T>
  T& as() { return std::get<T>(v); }
  template <typename T>
  const T* get_if() const { return std::get_if<T>(&v); }

  bool is_none() const { return is<NoneArg>(); }
  // The tensor value of a TensorRef argument, or nullptr.
  Value* tensor() const {
    auto* t = get_if<TensorRef>();
    return t ? t->value : nullptr;
  }

  bool operator==(const Argument&) const = default;

  // Every Value this argument references, in order (None slots skipped).
  void for_each_value(const std::function<void(Value*)>& fn) const;
  // Rewrites references to `from` into `to`; returns how many were replaced.
  size_t replace_value(Value* from, Value* to);
  // Rewrites every value reference v into fn(v) (nested lists and
  // string-to-argument maps included); returns how many changed.
  size_t map_values(const std::function<Value*(Value*)>& fn);
};

inline bool StringToArgument::operator==(const StringToArgument& o) const { return items == o.items; }

// The argument that refers to `v` as the schema writes a value of its kind:
// TensorRef (tensors, tokens), SymIntArg, SymFloatArg, SymBoolArg, CustomObjRef.
Argument value_argument(Value* v);

// Argument kind from the schema: positional or keyword.
// One byte: a NamedArgument per call argument adds up in a large graph.
enum class ArgKind : uint8_t { Unknown = 0, Positional = 1, Keyword = 2 };

struct NamedArgument {
  std::string name;
  Argument arg;
  std::optional<ArgKind> kind;
};

}  // namespace lathe
