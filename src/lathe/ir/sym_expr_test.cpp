#include "lathe/ir/sym_expr.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace lathe
