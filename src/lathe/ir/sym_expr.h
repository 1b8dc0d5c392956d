// Symbolic shape expressions as torch.export writes them.
//
// PyTorch 2.5+ writes `expr_str` as sympy's srepr, e.g.
//   Symbol('s77', positive=True, integer=True)
//   Add(Mul(Integer(2), Symbol('s0', integer=True, positive=True)), Integer(-1))
// while older exports wrote the infix form ("s0", "2*s0 - 1"). Lathe keeps
// the text exactly as read (it is written back verbatim); this parses it to
// show people the infix form and to evaluate it for concrete symbol values.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lathe {

struct SymNode;

class SymExpression {
 public:
  // Parses srepr text, or a bare symbol or integer in infix form. nullopt
  // when the text is neither (an infix expression is kept as text).
  static std::optional<SymExpression> parse(std::string_view text);

  // "2*s0 - 1"
  std::string infix() const;
  // The free symbols, sorted, without duplicates.
  std::vector<std::string> symbols() const;
  // The value for these symbol values; nullopt if a symbol is unbound or the
  // expression uses something this evaluator does not know.
  std::optional<int64_t> evaluate(const std::map<std::string, int64_t>& values) const;

 private:
  std::shared_ptr<const SymNode> root_;
};

// The infix form of an expr_str for messages and printouts; the text itself
// when it cannot be parsed.
std::string readable_sym_expr(std::string_view text);

}  // namespace lathe
