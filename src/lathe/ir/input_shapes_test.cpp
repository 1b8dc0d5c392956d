// check_input_shapes: what real exports write for their inputs passes (srepr
// and the older infix form, derived dims, SymInt inputs); each broken
// signature (_NEG) is refused with the input, the quoted size and what is
// wrong. verify() refuses the same for programs built in memory.
#include "lathe/ir/input_shapes.h"

#include <gtest/gtest.h>

#include "lathe/ir/graph_builder.h"
#include "lathe/ir/verify.h"

namespace lathe {
namespace {

constexpr const char* kS77 = "Symbol('s77', positive=True, integer=True)";

// x: [<size>, 4] -> relu, with s77 in [1, 64] unless the test changes it.
void build_input_sized(ExportedProgram& ep, const std::string& size) {
  GraphBuilder b(ep);
  const TensorMeta m = GraphBuilder::tensor_meta(DType::Float32, {SymDim(SymExpr{size, std::nullopt}), 4});
  Value* x = b.user_input("x", m);
  b.user_output(b.call("aten.relu.default", {{"self", x}}, m));
  ep.range_constraints.emplace_back("s77", RangeConstraint{1, 64});
}

std::string failure(const ExportedProgram& ep) {
  Status s = check_input_shapes(ep);
  return s.ok() ? "" : s.error().message();
}

std::string failure_for_size(const std::string& size) {
  ExportedProgram ep;
  build_input_sized(ep, size);
  return failure(ep);
}

TEST(InputShapes, SizesRealExportsWritePass) {
  for (const std::string& size : {std::string(kS77), std::string("s77"), std::string("2*s77"), std::string("s77 + 1"),
                                 std::string("((s77 - 1)//2) + 1"), std::string("Max(1, s77 - 1)"),
                                 std::string("Mul(Integer(2), Symbol('s77', positive=True, integer=True))"),
                                 std::string("Add(Symbol('s77', positive=True, integer=True), Integer(-1))")}) {
    EXPECT_EQ(failure_for_size(size), "") << size;
  }
}

TEST(InputShapes, SymbolicSizeUnparsable_NEG) {
  EXPECT_EQ(failure_for_size("Symbol('s77', positive=True"),
            "user input 'x' dim 0: size \"Symbol('s77', positive=True\" does not parse: unexpected end of text: "
            "missing ')' at character 28");
  EXPECT_EQ(failure_for_size("s77 +"), "user input 'x' dim 0: size \"s77 +\" does not parse: unexpected end of text at character 6");
}

TEST(InputShapes, SymbolicSizeUnknownSymbol_NEG) {
  EXPECT_EQ(failure_for_size("Symbol('s99', positive=True, integer=True)"),
            "user input 'x' dim 0: size \"Symbol('s99', positive=True, integer=True)\" names symbol 's99', which has "
            "no range in range_constraints");
  ExportedProgram ep;  // the file's own symbol, its range left out
  build_input_sized(ep, kS77);
  ep.range_constraints.clear();
  EXPECT_NE(failure(ep).find("names symbol 's77', which has no range in range_constraints"), std::string::npos);
}

TEST(InputShapes, SymbolicSizeDivisionByZero_NEG) {
  EXPECT_EQ(failure_for_size("s77//0"),
            "user input 'x' dim 0: size \"s77//0\" cannot be computed for s77 = 1 (the lower end of its range): "
            "division by zero (1 // 0)");
}

TEST(InputShapes, SymbolicSizePowerTower_NEG) {
  EXPECT_EQ(failure_for_size("s77**s77**s77"),
            "user input 'x' dim 0: size \"s77**s77**s77\" cannot be computed for s77 = 64 (the upper end of its "
            "range): 64 ** 64 does not fit in 64 bits");
  std::string tower = "s77";
  for (int i = 0; i < 5000; ++i) tower += "**s77";
  const std::string msg = failure_for_size(tower);
  EXPECT_NE(msg.find("does not parse: nested deeper than 100 levels"), std::string::npos) << msg;
  EXPECT_NE(msg.find("...\" (25003 characters)"), std::string::npos) << msg;  // quoted, not copied whole
}

TEST(InputShapes, RangeMinAboveMax_NEG) {
  ExportedProgram ep;
  build_input_sized(ep, kS77);
  ep.range_constraints[0].second = RangeConstraint{64, 1};
  EXPECT_EQ(failure(ep), "range_constraints: s77's range [64, 1] is empty: min_val 64 is above max_val 1");
}

TEST(InputShapes, PlaceholderNegativeSize_NEG) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* w = b.parameter("linear.weight", {3, 3});
  Value* x = b.user_input("x", {3, 3});
  b.user_output(b.call("aten.mm.default", {{"self", x}, {"mat2", w}}, {3, 3}));
  EXPECT_EQ(failure(ep), "");
  w->set_meta(GraphBuilder::tensor_meta(DType::Float32, {-3, 3}));
  EXPECT_EQ(failure(ep), "placeholder 'p_linear_weight' (input 0, parameter 'linear.weight') declares a negative size: "
                         "dim 0 is -3");
}

// A size passed as an int: its value is checked as a tensor dim is, but
// may be negative (torch gives int inputs unbounded ranges).
TEST(InputShapes, SymIntInputValue) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* n = b.sym_int_input("n", SymExpr{"s0", std::nullopt});
  b.user_output(b.call_sym_int("_operator.neg", {{"a", n}}, SymDim(SymExpr{"r", std::nullopt})));
  EXPECT_EQ(failure(ep), "user input 'n': value \"s0\" names symbol 's0', which has no range in range_constraints");
  ep.range_constraints.emplace_back("s0", RangeConstraint{});
  EXPECT_EQ(failure(ep), "");
}

// verify() refuses what the loader refuses, naming the method.
TEST(InputShapes, VerifyRefusesTheSame_NEG) {
  ExportedProgram ep;
  build_input_sized(ep, "s77//0");
  Status s = verify(ep, "forward");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message().rfind("method 'forward': user input 'x' dim 0: size \"s77//0\" cannot be computed", 0), 0u)
      << s.error().message();
}

}  // namespace
}  // namespace lathe
