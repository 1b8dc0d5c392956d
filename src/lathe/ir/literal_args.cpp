#include "lathe/ir/literal_args.h"

namespace lathe {

std::optional<int64_t> int_literal(const Argument* a) {
  if (!a) return std::nullopt;
  if (const auto* i = a->get_if<int64_t>()) return *i;
  if (const auto* s = a->get_if<SymIntArg>(); s && !s->is_value()) return s->literal();
  return std::nullopt;
}

std::optional<double> float_literal(const Argument* a) {
  if (!a) return std::nullopt;
  if (const auto* d = a->get_if<double>()) return *d;
  if (const auto* f = a->get_if<SymFloatArg>(); f && !f->is_value()) return f->literal();
  return std::nullopt;
}

std::optional<std::vector<int64_t>> int_list_literal(const Argument* a) {
  if (!a) return std::nullopt;
  if (const auto* l = a->get_if<IntList>()) return l->items;
  if (const auto* s = a->get_if<SymIntList>()) {
    std::vector<int64_t> v;
    for (const auto& x : s->items) {
      if (x.is_value()) return std::nullopt;
      v.push_back(x.literal());
    }
    return v;
  }
  return std::nullopt;
}

Value* tensor_input(const Node& n, std::string_view name) {
  const Argument* a = n.input(name);
  if (!a) return nullptr;
  if (Value* v = a->tensor()) return v;
  if (const auto* o = a->get_if<OptionalTensor>()) return o->value;
  return nullptr;
}

bool is_none_input(const Node& n, std::string_view name) {
  const Argument* a = n.input(name);
  return !a || a->is_none() || (a->is<OptionalTensor>() && !a->as<OptionalTensor>().value);
}

std::optional<int64_t> literal_int(const Node& n, std::string_view name) {
  const Argument* a = n.input(name);
  if (auto i = int_literal(a)) return i;
  if (const auto* b = a ? a->get_if<bool>() : nullptr) return *b ? 1 : 0;
  return std::nullopt;
}

std::optional<int64_t> literal_int_or(const Node& n, std::string_view name, int64_t dflt) {
  return n.input(name) ? literal_int(n, name) : std::optional<int64_t>(dflt);
}

std::optional<double> literal_number(const Node& n, std::string_view name) {
  if (auto d = float_literal(n.input(name))) return d;
  if (auto i = literal_int(n, name)) return static_cast<double>(*i);
  return std::nullopt;
}

std::optional<bool> literal_bool(const Node& n, std::string_view name) {
  const Argument* a = n.input(name);
  if (!a) return std::nullopt;
  if (const auto* b = a->get_if<bool>()) return *b;
  return std::nullopt;
}

const std::string* literal_string(const Node& n, std::string_view name) {
  const Argument* a = n.input(name);
  return a ? a->get_if<std::string>() : nullptr;
}

std::optional<std::vector<int64_t>> literal_int_list(const Node& n, std::string_view name) {
  const Argument* a = n.input(name);
  if (!a || a->is_none()) return std::nullopt;
  if (a->is<IntList>() || a->is<SymIntList>()) return int_list_literal(a);
  if (auto i = literal_int(n, name)) return std::vector<int64_t>{*i};
  return std::nullopt;
}

std::optional<std::vector<int64_t>> literal_ints(const Node& n, std::string_view name, size_t len,
                                                 std::vector<int64_t> dflt) {
  const Argument* a = n.input(name);
  std::optional<std::vector<int64_t>> v = (!a || a->is_none()) ? std::optional(std::move(dflt)) : literal_int_list(n, name);
  if (!v) return std::nullopt;
  if (v->size() == 1 && len > 1) v->assign(len, (*v)[0]);
  if (v->size() != len) return std::nullopt;
  return v;
}

}  // namespace lathe
