#include "lathe/ir/sym_expr.h"

#include <gtest/gtest.h>

#include <tuple>
#include <utility>
#include <vector>

namespace lathe {
namespace {

// Texts as PyTorch 2.13's torch.export wrote them into the fixtures
// (transformer_encoder, decoder_lm), and older infix forms.
constexpr const char* kBatch = "Symbol('s77', positive=True, integer=True)";
constexpr const char* kScaled = "Mul(Integer(128), Symbol('s27', positive=True, integer=True))";
constexpr const char* kSquare = "Mul(Integer(2), Pow(Symbol('s27', positive=True, integer=True), Integer(2)))";

TEST(SymExpr, SreprReadsAsInfix) {
  EXPECT_EQ(readable_sym_expr(kBatch), "s77");
  EXPECT_EQ(readable_sym_expr(kScaled), "128*s27");
  EXPECT_EQ(readable_sym_expr(kSquare), "2*s27**2");
  EXPECT_EQ(readable_sym_expr("Add(Mul(Integer(-1), Symbol('s0', integer=True)), Integer(7))"), "-s0 + 7");
  EXPECT_EQ(readable_sym_expr("Add(Symbol('s0'), Integer(-1))"), "s0 - 1");
  EXPECT_EQ(readable_sym_expr("FloorDiv(Add(Symbol('s0'), Integer(1)), Integer(2))"), "(s0 + 1)//2");
  EXPECT_EQ(readable_sym_expr("Max(Integer(1), Symbol('u0'))"), "max(1, u0)");
}

TEST(SymExpr, InfixTextThatIsNotSreprIsKept_NEG) {
  EXPECT_EQ(readable_sym_expr("s0 + 1"), "s0 + 1");
  EXPECT_EQ(readable_sym_expr("Mul(Integer(2)"), "Mul(Integer(2)");
  EXPECT_EQ(readable_sym_expr(""), "");
}

TEST(SymExpr, EvaluatesForSymbolValues) {
  auto e = SymExpression::parse(kSquare);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->symbols(), (std::vector<std::string>{"s27"}));
  EXPECT_EQ(e->evaluate({{"s27", 5}}), 50);
  auto bare = SymExpression::parse("s0");
  ASSERT_TRUE(bare.has_value());
  EXPECT_EQ(bare->evaluate({{"s0", 3}}), 3);
  // Python's floor division and modulo round toward minus infinity.
  auto fd = SymExpression::parse("FloorDiv(Symbol('a'), Integer(2))");
  EXPECT_EQ(fd->evaluate({{"a", -3}}), -2);
  auto md = SymExpression::parse("PythonMod(Symbol('a'), Integer(4))");
  EXPECT_EQ(md->evaluate({{"a", -3}}), 1);
}

TEST(SymExpr, UnboundSymbolOrUnknownFunctionHasNoValue_NEG) {
  auto e = SymExpression::parse(kScaled);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->evaluate({{"s77", 2}}), std::nullopt);
  auto f = SymExpression::parse("Piecewise(Symbol('s0'))");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->evaluate({{"s0", 2}}), std::nullopt);
  auto z = SymExpression::parse("FloorDiv(Symbol('s0'), Integer(0))");
  EXPECT_EQ(z->evaluate({{"s0", 2}}), std::nullopt);
}


// The infix form older exports wrote, and what a hand-edited file may hold:
// Python's precedence and associativity (** binds right, - of a power
// negates the power), floor division and modulo rounding as Python's.
TEST(SymExpr, InfixParsesAndEvaluates) {
  const std::vector<std::tuple<const char*, int64_t, int64_t>> cases = {
      {"2*s0 - 1", 5, 9},     {"((s0 - 1)//2) + 1", 7, 4}, {"-s0 + 7", 3, 4},    {"s0**2", 3, 9},
      {"2**3**s0", 2, 512},   {"Max(s0, 8) % 5", 3, 3},     {"s0*-1", 3, -3},     {"-s0**2", 3, -9},
      {"s0 - -2", 1, 3},      {"s0 % 4", -3, 1},        {"s0/2", 6, 3},       {"Min(s0, 4) - 1", 9, 3},
  };
  for (const auto& [text, s0, want] : cases) {
    std::string why;
    auto e = SymExpression::parse(text, &why);
    ASSERT_TRUE(e.has_value()) << text << ": " << why;
    EXPECT_TRUE(e->is_infix_text()) << text;
    EXPECT_EQ(e->symbols(), (std::vector<std::string>{"s0"})) << text;
    EXPECT_EQ(e->evaluate({{"s0", s0}}), want) << text;
    EXPECT_EQ(readable_sym_expr(text), text);  // already readable: kept as written
  }
  EXPECT_EQ(SymExpression::parse("s77")->plain_symbol(), "s77");
  EXPECT_EQ(SymExpression::parse(kBatch)->plain_symbol(), "s77");
  EXPECT_FALSE(SymExpression::parse(kBatch)->is_infix_text());
  EXPECT_EQ(SymExpression::parse("s77 + 0")->plain_symbol(), std::nullopt);
  EXPECT_EQ(SymExpression::parse("Integer(3)")->plain_symbol(), std::nullopt);
}

TEST(SymExpr, ParseErrorsSayWhatAndWhere_NEG) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"Mul(Integer(2)", "unexpected end of text: missing ')' at character 15"},
      {"s0 + * 2", "unexpected '*' at character 6"},
      {"Symbol('s0", "unterminated string at character 8"},
      {"s0 s1", "unexpected 's' at character 4"},
      {"", "unexpected end of text at character 1"},
      {std::string(200, '(') + "s0" + std::string(200, ')'), "nested deeper than 100 levels at character 101"},
  };
  for (const auto& [text, want] : cases) {
    std::string why;
    EXPECT_FALSE(SymExpression::parse(text, &why).has_value()) << text;
    EXPECT_EQ(why, want) << text;
  }
}

TEST(SymExpr, EvaluationFailuresSayWhy_NEG) {
  const std::vector<std::tuple<const char*, int64_t, std::string>> cases = {
      {"FloorDiv(Symbol('s0'), Integer(0))", 2, "division by zero (2 // 0)"},
      {"s0 % 0", 2, "division by zero (2 % 0)"},
      {"Piecewise(Symbol('s0'))", 2, "'Piecewise' is not a function Lathe evaluates"},
      {"s0 + s1", 2, "symbol 's1' has no value"},
      {"s0*4611686018427387904", 2, "2 * 4611686018427387904 does not fit in 64 bits"},
      {"s0**s0**s0", 4, "4 ** 256 does not fit in 64 bits"},
      {"s0/4", 6, "6 / 4 is not a whole number"},
      {"2.5*s0", 2, "'2.5' is not a 64-bit integer"},
  };
  for (const auto& [text, s0, want] : cases) {
    std::string why;
    auto e = SymExpression::parse(text, &why);
    ASSERT_TRUE(e.has_value()) << text << ": " << why;
    EXPECT_EQ(e->evaluate({{"s0", s0}}, &why), std::nullopt) << text;
    EXPECT_EQ(why, want) << text;
  }
}

}  // namespace
}  // namespace lathe
