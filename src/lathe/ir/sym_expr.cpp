#include "lathe/ir/sym_expr.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "lathe/core/int_arith.h"

namespace lathe {

// One srepr term: a call `Head(args...)`, a quoted string, a number, a bare
// identifier (True, s0) or a keyword argument `name=value` (args[0]).
struct SymNode {
  enum class Kind { Call, String, Number, Identifier, Keyword } kind = Kind::Identifier;
  std::string text;  // head, string contents, number text, identifier or keyword name
  std::vector<SymNode> args;
};

namespace {

// Reads srepr (`Add(Symbol('s0'), Integer(1))`) and the infix form older
// exports wrote (`((s0 - 1)//2) + 1`) into one tree of srepr calls: an
// infix operator becomes the call srepr would have written (a - b is
// Add(a, Mul(Integer(-1), b))). Nesting is bounded: the text comes from a
// file, and every walk of the tree (printing, evaluating) recurses.
class Parser {
 public:
  static constexpr int kMaxDepth = 100;

  explicit Parser(std::string_view s) : s_(s) {}

  std::optional<SymNode> parse_all(std::string* why) {
    auto n = expr();
    skip_space();
    if (n && pos_ != s_.size()) n = fail("unexpected '" + std::string(1, s_[pos_]) + "'");
    if (n) return n;
    if (why) *why = error_ + " at character " + std::to_string(error_pos_ + 1);
    return std::nullopt;
  }
  // Whether the text used an infix operator or parentheses (not srepr).
  bool used_infix() const { return infix_; }

 private:
  std::nullopt_t fail(std::string what) {
    if (error_.empty()) error_ = std::move(what), error_pos_ = pos_;
    return std::nullopt;
  }
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool at_end() {
    skip_space();
    return pos_ >= s_.size();
  }
  bool eat(std::string_view token) {
    skip_space();
    if (s_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }
  // `token` but not the start of the longer `unless` ('*' but not '**').
  bool eat_op(std::string_view token, std::string_view unless = {}) {
    skip_space();
    if (!unless.empty() && s_.substr(pos_, unless.size()) == unless) return false;
    if (!eat(token)) return false;
    infix_ = true;
    return true;
  }

  static SymNode call(std::string head, std::vector<SymNode> args) {
    return SymNode{SymNode::Kind::Call, std::move(head), std::move(args)};
  }
  static SymNode negated(SymNode n) {
    if (n.kind == SymNode::Kind::Number) {
      n.text = n.text[0] == '-' ? n.text.substr(1) : "-" + n.text;
      return n;
    }
    return call("Mul", {call("Integer", {SymNode{SymNode::Kind::Number, "-1", {}}}), std::move(n)});
  }

  // expr := product (('+' | '-') product)*
  std::optional<SymNode> expr() {
    auto lhs = product();
    while (lhs) {
      const bool plus = eat_op("+"), minus = !plus && eat_op("-");
      if (!plus && !minus) break;
      auto rhs = product();
      if (!rhs) return std::nullopt;
      lhs = call("Add", {std::move(*lhs), minus ? negated(std::move(*rhs)) : std::move(*rhs)});
    }
    return lhs;
  }

  // product := unary (('*' | '//' | '/' | '%') unary)*
  std::optional<SymNode> product() {
    auto lhs = unary();
    while (lhs) {
      const char* head = eat_op("*", "**") ? "Mul"
                         : eat_op("//")    ? "FloorDiv"
                         : eat_op("/")     ? "IntTrueDiv"
                         : eat_op("%")     ? "Mod"
                                           : nullptr;
      if (!head) break;
      auto rhs = unary();
      if (!rhs) return std::nullopt;
      lhs = call(head, {std::move(*lhs), std::move(*rhs)});
    }
    return lhs;
  }

  // unary := '-' unary | power; every level of nesting passes here.
  std::optional<SymNode> unary() {
    if (++depth_ > kMaxDepth) return fail("nested deeper than " + std::to_string(kMaxDepth) + " levels");
    auto n = signed_term();
    --depth_;
    return n;
  }
  std::optional<SymNode> signed_term() {
    skip_space();
    const bool literal = pos_ + 1 < s_.size() && s_[pos_] == '-' && std::isdigit(static_cast<unsigned char>(s_[pos_ + 1]));
    if (!literal && eat_op("-")) {
      auto n = unary();
      return n ? std::optional<SymNode>(negated(std::move(*n))) : std::nullopt;
    }
    return power();
  }

  // power := atom ('**' unary)?   (right-associative, as Python's)
  std::optional<SymNode> power() {
    auto base = atom();
    if (!base || !eat_op("**")) return base;
    auto exponent = unary();
    if (!exponent) return std::nullopt;
    return call("Pow", {std::move(*base), std::move(*exponent)});
  }

  std::optional<SymNode> atom() {
    if (at_end()) return fail("unexpected end of text");
    const char c = s_[pos_];
    if (c == '(') {
      infix_ = true;
      ++pos_;
      auto n = expr();
      if (n && !eat(")")) return fail(at_end() ? "unexpected end of text: missing ')'" : "expected ')'");
      return n;
    }
    if (c == '\'' || c == '"') return string_literal(c);
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '-') return number();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return named();
    return fail("unexpected '" + std::string(1, c) + "'");
  }

  std::optional<SymNode> string_literal(char quote) {
    const size_t end = s_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) return fail("unterminated string");
    SymNode n{SymNode::Kind::String, std::string(s_.substr(pos_ + 1, end - pos_ - 1)), {}};
    pos_ = end + 1;
    return n;
  }

  std::optional<SymNode> number() {
    const size_t start = pos_++;
    while (pos_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.')) ++pos_;
    return SymNode{SymNode::Kind::Number, std::string(s_.substr(start, pos_ - start)), {}};
  }

  std::string_view identifier() {
    const size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    return s_.substr(start, pos_ - start);
  }

  // A name, or a call `Head(args...)` whose arguments may be keywords.
  std::optional<SymNode> named() {
    SymNode n{SymNode::Kind::Identifier, std::string(identifier()), {}};
    if (!eat("(")) return n;
    n.kind = SymNode::Kind::Call;
    if (eat(")")) return n;
    do {
      auto a = argument();
      if (!a) return std::nullopt;
      n.args.push_back(std::move(*a));
    } while (eat(","));
    if (!eat(")")) return fail(at_end() ? "unexpected end of text: missing ')'" : "expected ',' or ')'");
    return n;
  }

  // name=value (a keyword such as positive=True) or an expression.
  std::optional<SymNode> argument() {
    skip_space();
    const size_t start = pos_;
    if (pos_ < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) {
      std::string name(identifier());
      if (eat("=") && !eat("=")) {
        auto value = expr();
        if (!value) return std::nullopt;
        return SymNode{SymNode::Kind::Keyword, std::move(name), {std::move(*value)}};
      }
      pos_ = start;
    }
    return expr();
  }

  std::string_view s_;
  size_t pos_ = 0;
  int depth_ = 0;
  bool infix_ = false;
  std::string error_;
  size_t error_pos_ = 0;
};

// Positional arguments of a call (keywords such as positive=True dropped).
std::vector<const SymNode*> positional(const SymNode& n) {
  std::vector<const SymNode*> out;
  for (const SymNode& a : n.args)
    if (a.kind != SymNode::Kind::Keyword) out.push_back(&a);
  return out;
}

bool is_call(const SymNode& n, std::string_view head) { return n.kind == SymNode::Kind::Call && n.text == head; }

std::string infix_of(const SymNode& n);

// Wraps a compound operand in parentheses where precedence needs it.
std::string operand(const SymNode& n) {
  std::string s = infix_of(n);
  return is_call(n, "Add") || is_call(n, "Mul") || is_call(n, "FloorDiv") || is_call(n, "Mod") ? "(" + s + ")" : s;
}

std::string join_sum(const std::vector<const SymNode*>& terms) {
  std::string s;
  for (const SymNode* t : terms) {
    std::string term = infix_of(*t);
    if (s.empty()) s = term;
    else if (!term.empty() && term[0] == '-') s += " - " + term.substr(1);
    else s += " + " + term;
  }
  return s;
}

std::string join_product(const std::vector<const SymNode*>& factors) {
  std::string s;
  size_t first = 0;
  if (!factors.empty() && is_call(*factors[0], "Integer") && infix_of(*factors[0]) == "-1") s = "-", first = 1;
  for (size_t i = first; i < factors.size(); ++i) {
    std::string f = is_call(*factors[i], "Add") ? "(" + infix_of(*factors[i]) + ")" : infix_of(*factors[i]);
    s += (i > first ? "*" : "") + f;
  }
  return s;
}

std::string infix_of(const SymNode& n) {
  if (n.kind != SymNode::Kind::Call) return n.text;
  const auto args = positional(n);
  if ((n.text == "Symbol" || n.text == "Integer" || n.text == "Float") && args.size() >= 1) return args[0]->text;
  if (n.text == "Rational" && args.size() == 2) return args[0]->text + "/" + args[1]->text;
  if (n.text == "Add") return join_sum(args);
  if (n.text == "Mul") return join_product(args);
  if (n.text == "Pow" && args.size() == 2) return operand(*args[0]) + "**" + operand(*args[1]);
  if (n.text == "FloorDiv" && args.size() == 2) return operand(*args[0]) + "//" + operand(*args[1]);
  if ((n.text == "Mod" || n.text == "PythonMod") && args.size() == 2) return operand(*args[0]) + " % " + operand(*args[1]);
  std::string s = n.text == "Max" || n.text == "Min" ? std::string(1, static_cast<char>(std::tolower(n.text[0]))) + n.text.substr(1) : n.text;
  s += "(";
  for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + infix_of(*args[i]);
  return s + ")";
}

void collect_symbols(const SymNode& n, std::vector<std::string>& out) {
  if (is_call(n, "Symbol")) {
    if (auto a = positional(n); !a.empty()) out.push_back(a[0]->text);
    return;
  }
  if (n.kind == SymNode::Kind::Identifier && n.text != "True" && n.text != "False") out.push_back(n.text);
  for (const SymNode& a : n.args)
    if (a.kind != SymNode::Kind::Keyword) collect_symbols(a, out);
}

std::optional<int64_t> parse_int(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

using Values = std::map<std::string, int64_t>;

// A binary operation as Python computes it on ints: exact, so a result past
// int64 is unknown, never wrapped.
struct BinaryOp {
  std::string_view head;
  std::string_view spelling;  // for messages
  std::optional<int64_t> (*apply)(int64_t, int64_t);
  bool divides = false;  // b == 0 is a division by zero
  bool exact = false;    // b must divide a
};

std::optional<int64_t> ceil_div(int64_t a, int64_t b) {
  auto neg_a = checked_sub(0, a);
  auto q = neg_a ? checked_floor_div(*neg_a, b) : std::nullopt;
  return q ? checked_sub(0, *q) : std::nullopt;
}
std::optional<int64_t> exact_div(int64_t a, int64_t b) {
  auto m = checked_floor_mod(a, b);
  return m && *m == 0 ? checked_floor_div(a, b) : std::nullopt;
}
std::optional<int64_t> max_of(int64_t a, int64_t b) { return std::max(a, b); }
std::optional<int64_t> min_of(int64_t a, int64_t b) { return std::min(a, b); }

constexpr BinaryOp kBinaryOps[] = {
    {"Add", "+", checked_add},
    {"Mul", "*", checked_mul},
    {"Max", "max", max_of},
    {"Min", "min", min_of},
    {"FloorDiv", "//", checked_floor_div, true},
    {"CeilDiv", "ceildiv", ceil_div, true},
    {"CleanDiv", "/", exact_div, true, true},
    {"IntTrueDiv", "/", exact_div, true, true},
    {"Mod", "%", checked_floor_mod, true},
    {"PythonMod", "%", checked_floor_mod, true},
    {"Pow", "**", checked_pow},
};

// Evaluates a tree for symbol values; on failure, `why` (when given) says
// what failed first.
class Evaluator {
 public:
  Evaluator(const Values& values, std::string* why) : values_(values), why_(why) {}

  std::optional<int64_t> eval(const SymNode& n) {
    switch (n.kind) {
      case SymNode::Kind::Call: return call(n);
      case SymNode::Kind::Number: return integer(n.text);
      case SymNode::Kind::Identifier: return symbol(n.text);
      default: return fail("'" + n.text + "' is not a number");
    }
  }

 private:
  std::nullopt_t fail(std::string what) {
    if (why_ && why_->empty()) *why_ = std::move(what);
    return std::nullopt;
  }
  std::optional<int64_t> integer(const std::string& text) {
    if (auto v = parse_int(text)) return v;
    return fail("'" + text + "' is not a 64-bit integer");
  }
  std::optional<int64_t> symbol(const std::string& name) {
    auto it = values_.find(name);
    if (it == values_.end()) return fail("symbol '" + name + "' has no value");
    return it->second;
  }

  std::optional<int64_t> call(const SymNode& n) {
    const auto args = positional(n);
    if (n.text == "Integer" && args.size() == 1) return integer(args[0]->text);
    if (n.text == "Symbol" && !args.empty()) return symbol(args[0]->text);
    for (const BinaryOp& op : kBinaryOps) {
      if (op.head == n.text) return fold(op, args);
    }
    return fail("'" + n.text + "' is not a function Lathe evaluates");
  }

  // The arguments left to right: ((a op b) op c)...
  std::optional<int64_t> fold(const BinaryOp& op, const std::vector<const SymNode*>& args) {
    if (args.empty() || (args.size() == 1 && op.divides)) return fail(std::string(op.head) + " needs two arguments");
    auto acc = eval(*args[0]);
    for (size_t i = 1; acc && i < args.size(); ++i) {
      auto b = eval(*args[i]);
      if (!b) return std::nullopt;
      auto r = op.apply(*acc, *b);
      if (!r) return fail(failure(op, *acc, *b));
      acc = r;
    }
    return acc;
  }

  static std::string failure(const BinaryOp& op, int64_t a, int64_t b) {
    const std::string text = std::to_string(a) + " " + std::string(op.spelling) + " " + std::to_string(b);
    if (op.divides && b == 0) return "division by zero (" + text + ")";
    if (op.exact && checked_floor_mod(a, b).value_or(0) != 0) return text + " is not a whole number";
    if (op.head == "Pow" && b < 0) return text + " is not an integer";
    return text + " does not fit in 64 bits";
  }

  const Values& values_;
  std::string* why_;
};

}  // namespace

std::optional<SymExpression> SymExpression::parse(std::string_view text, std::string* why) {
  Parser parser(text);
  auto node = parser.parse_all(why);
  if (!node) return std::nullopt;
  SymExpression e;
  e.root_ = std::make_shared<const SymNode>(std::move(*node));
  e.infix_text_ = parser.used_infix();
  return e;
}

std::string SymExpression::infix() const { return infix_of(*root_); }

std::vector<std::string> SymExpression::symbols() const {
  std::vector<std::string> out;
  collect_symbols(*root_, out);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::optional<std::string> SymExpression::plain_symbol() const {
  if (root_->kind == SymNode::Kind::Identifier && root_->text != "True" && root_->text != "False") return root_->text;
  if (!is_call(*root_, "Symbol")) return std::nullopt;
  const auto args = positional(*root_);
  if (args.size() != 1 || args[0]->kind != SymNode::Kind::String) return std::nullopt;
  return args[0]->text;
}

std::optional<int64_t> SymExpression::evaluate(const std::map<std::string, int64_t>& values, std::string* why) const {
  return Evaluator(values, why).eval(*root_);
}

std::string readable_sym_expr(std::string_view text) {
  auto e = SymExpression::parse(text);
  return e && !e->is_infix_text() ? e->infix() : std::string(text);
}

}  // namespace lathe
