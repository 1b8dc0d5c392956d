// Symbolic integers, floats and bools as torch.export records them: either a
// concrete number or an expression over shape symbols ("s0 + 1"), optionally
// with a hint (the value seen at export time).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

namespace lathe {

struct SymExpr {
  std::string expr;
  // The hint's type is that of the symbol (int for SymInt, ...).
  std::optional<std::variant<int64_t, bool, double>> hint;
  bool operator==(const SymExpr&) const = default;
};

// A dimension or offset: concrete, or a symbolic expression.
struct SymDim {
  std::variant<int64_t, SymExpr> v;
  SymDim() : v(int64_t{0}) {}
  SymDim(int64_t n) : v(n) {}  // NOLINT(implicit)
  SymDim(SymExpr e) : v(std::move(e)) {}  // NOLINT(implicit)
  bool is_concrete() const { return v.index() == 0; }
  int64_t value() const { return std::get<0>(v); }
  const SymExpr& expr() const { return std::get<1>(v); }
  bool operator==(const SymDim&) const = default;
};

struct SymFloatValue {
  std::variant<double, SymExpr> v;
  bool operator==(const SymFloatValue&) const = default;
};

struct SymBoolValue {
  std::variant<bool, SymExpr> v;
  bool operator==(const SymBoolValue&) const = default;
};

}  // namespace lathe
