#include "lathe/ir/sym_expr.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <functional>

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

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  std::optional<SymNode> parse_all() {
    auto n = term();
    skip_space();
    if (!n || pos_ != s_.size()) return std::nullopt;
    return n;
  }

 private:
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) return ++pos_, true;
    return false;
  }

  std::optional<SymNode> term() {
    skip_space();
    if (pos_ >= s_.size()) return std::nullopt;
    const char c = s_[pos_];
    if (c == '\'' || c == '"') return string_literal(c);
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '-') return number();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return named();
    return std::nullopt;
  }

  std::optional<SymNode> string_literal(char quote) {
    const size_t end = s_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) return std::nullopt;
    SymNode n{SymNode::Kind::String, std::string(s_.substr(pos_ + 1, end - pos_ - 1)), {}};
    pos_ = end + 1;
    return n;
  }

  std::optional<SymNode> number() {
    const size_t start = pos_++;
    while (pos_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.')) ++pos_;
    if (pos_ == start + 1 && s_[start] == '-') return std::nullopt;
    return SymNode{SymNode::Kind::Number, std::string(s_.substr(start, pos_ - start)), {}};
  }

  std::optional<SymNode> named() {
    const size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    SymNode n{SymNode::Kind::Identifier, std::string(s_.substr(start, pos_ - start)), {}};
    if (eat('=')) {
      auto value = term();
      if (!value) return std::nullopt;
      n.kind = SymNode::Kind::Keyword;
      n.args.push_back(std::move(*value));
      return n;
    }
    if (!eat('(')) return n;
    n.kind = SymNode::Kind::Call;
    if (eat(')')) return n;
    do {
      auto a = term();
      if (!a) return std::nullopt;
      n.args.push_back(std::move(*a));
    } while (eat(','));
    if (!eat(')')) return std::nullopt;
    return n;
  }

  std::string_view s_;
  size_t pos_ = 0;
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
std::optional<int64_t> eval(const SymNode& n, const Values& values);

// Folds the positional arguments of `n` left to right with `op`.
std::optional<int64_t> fold(const SymNode& n, const Values& values, const std::function<std::optional<int64_t>(int64_t, int64_t)>& op) {
  const auto args = positional(n);
  if (args.empty()) return std::nullopt;
  auto acc = eval(*args[0], values);
  for (size_t i = 1; acc && i < args.size(); ++i) {
    auto v = eval(*args[i], values);
    if (!v) return std::nullopt;
    acc = op(*acc, *v);
  }
  return acc;
}

std::optional<int64_t> eval_call(const SymNode& n, const Values& values) {
  const auto args = positional(n);
  const std::string& h = n.text;
  if (h == "Integer" && args.size() == 1) return parse_int(args[0]->text);
  if (h == "Symbol" && args.size() >= 1) {
    auto it = values.find(args[0]->text);
    return it == values.end() ? std::nullopt : std::optional<int64_t>(it->second);
  }
  // Exact, as Python computes them: a result past int64 is unknown (nullopt), never wrapped.
  if (h == "Add") return fold(n, values, checked_add);
  if (h == "Mul") return fold(n, values, checked_mul);
  if (h == "Max") return fold(n, values, [](int64_t a, int64_t b) { return std::max(a, b); });
  if (h == "Min") return fold(n, values, [](int64_t a, int64_t b) { return std::min(a, b); });
  if (h == "FloorDiv") return fold(n, values, checked_floor_div);
  if (h == "CeilDiv") return fold(n, values, [](int64_t a, int64_t b) -> std::optional<int64_t> {
    auto neg_a = checked_sub(0, a);
    auto q = neg_a ? checked_floor_div(*neg_a, b) : std::nullopt;
    return q ? checked_sub(0, *q) : std::nullopt;
  });
  if (h == "CleanDiv" || h == "IntTrueDiv") return fold(n, values, [](int64_t a, int64_t b) -> std::optional<int64_t> {
    auto m = checked_floor_mod(a, b);
    return m && *m == 0 ? checked_floor_div(a, b) : std::nullopt;
  });
  if (h == "Mod" || h == "PythonMod") return fold(n, values, checked_floor_mod);
  if (h == "Pow") return fold(n, values, checked_pow);
  return std::nullopt;
}

std::optional<int64_t> eval(const SymNode& n, const Values& values) {
  switch (n.kind) {
    case SymNode::Kind::Call: return eval_call(n, values);
    case SymNode::Kind::Number: return parse_int(n.text);
    case SymNode::Kind::Identifier: {
      auto it = values.find(n.text);
      return it == values.end() ? std::nullopt : std::optional<int64_t>(it->second);
    }
    default: return std::nullopt;
  }
}

}  // namespace

std::optional<SymExpression> SymExpression::parse(std::string_view text) {
  auto node = Parser(text).parse_all();
  if (!node) return std::nullopt;
  SymExpression e;
  e.root_ = std::make_shared<const SymNode>(std::move(*node));
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

std::optional<int64_t> SymExpression::evaluate(const std::map<std::string, int64_t>& values) const {
  return eval(*root_, values);
}

std::string readable_sym_expr(std::string_view text) {
  auto e = SymExpression::parse(text);
  return e ? e->infix() : std::string(text);
}

}  // namespace lathe
