// Symbolic integers, floats and bools as torch.export records them: either a
// concrete number or an expression over shape symbols ("s0 + 1"), optionally
// with a hint (the value seen at export time).
#pragma once

#include <cstdint>
#include <memory>
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

// A dimension or offset: concrete, or a symbolic expression. Kept to 16
// bytes because every tensor value carries several (sizes, strides, offset):
// the rare expression lives behind a shared, immutable pointer.
class SymDim {
 public:
  SymDim() = default;
  SymDim(int64_t n) : value_(n) {}  // NOLINT(implicit)
  SymDim(SymExpr e) : expr_(std::make_shared<const SymExpr>(std::move(e))) {}  // NOLINT(implicit)
  bool is_concrete() const { return expr_ == nullptr; }
  int64_t value() const { return value_; }
  const SymExpr& expr() const { return *expr_; }
  bool operator==(const SymDim& o) const {
    if (is_concrete() != o.is_concrete()) return false;
    return is_concrete() ? value_ == o.value_ : *expr_ == *o.expr_;
  }

 private:
  int64_t value_ = 0;
  std::shared_ptr<const SymExpr> expr_;
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
