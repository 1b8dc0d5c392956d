// Symbolic shape expressions as torch.export writes them.
//
// PyTorch 2.5+ writes `expr_str` as sympy's srepr, e.g.
//   Symbol('s77', positive=True, integer=True)
//   Add(Mul(Integer(2), Symbol('s0', integer=True, positive=True)), Integer(-1))
// while older exports wrote the infix form ("s0", "2*s0 - 1"). Lathe keeps
// the text exactly as read (it is written back verbatim); this parses it to
// show people the infix form, to check an input's sizes when a program is
// loaded (ir/input_shapes.h) and to evaluate it for concrete symbol values.
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
  // Parses srepr text or the infix form ("2*s0 - 1", "((s0 - 1)//2) + 1").
  // nullopt when the text is neither, or nests deeper than 100 levels; then
  // `why`, when given, says what is wrong and where ("unexpected end of
  // text: missing ')' at character 28").
  static std::optional<SymExpression> parse(std::string_view text, std::string* why = nullptr);

  // "2*s0 - 1"
  std::string infix() const;
  // Whether the text was infix rather than srepr (kept as written for
  // people: it is already readable).
  bool is_infix_text() const { return infix_text_; }
  // The free symbols, sorted, without duplicates.
  std::vector<std::string> symbols() const;
  // "s77" when the expression is one symbol and nothing else.
  std::optional<std::string> plain_symbol() const;
  // The value for these symbol values, computed as Python computes ints;
  // nullopt if a symbol is unbound, a function is not one this evaluator
  // knows, a divisor is zero or a result does not fit in 64 bits (`why`,
  // when given, says which: "division by zero (5 // 0)").
  std::optional<int64_t> evaluate(const std::map<std::string, int64_t>& values, std::string* why = nullptr) const;

 private:
  std::shared_ptr<const SymNode> root_;
  bool infix_text_ = false;
};

// The infix form of an expr_str for messages and printouts; the text itself
// when it cannot be parsed.
std::string readable_sym_expr(std::string_view text);

}  // namespace lathe
