// specialize_shapes: a program with symbolic sizes made concrete, checked
// on hand-built graphs whose sizes are worked out by hand.
#include "lathe/ir/specialize_shapes.h"

#include <gtest/gtest.h>

#include "lathe/ir/graph_builder.h"
#include "lathe/ir/verify.h"

namespace lathe {
namespace {

SymDim sym(const std::string& text, std::optional<int64_t> hint = std::nullopt) {
  SymExpr e{text, std::nullopt};
  if (hint) e.hint = *hint;
  return SymDim(std::move(e));
}

// x [s0, 4] -> n = sym_size(x, 0); m = n * 4; reshape(x, [m]) -> [4*s0]
struct Flatten {
  ExportedProgram ep;
  Value* x = nullptr;
  Value* flat = nullptr;
  Flatten() {
    GraphBuilder b(ep);
    ep.range_constraints.push_back({"s0", RangeConstraint{2, 64}});
    x = b.user_input("x", GraphBuilder::tensor_meta(DType::Float32, {sym("s0", 3), 4}));
    Value* n = b.call_sym_int("aten.sym_size.int", {{"self", x}, {"dim", int64_t{0}}}, sym("s0", 3));
    Value* m = b.call_sym_int("_operator.mul", {{"a", n}, {"b", int64_t{4}}}, sym("4*s0", 12));
    flat = b.call("aten.reshape.default", {{"self", x}, {"shape", SymIntList{{SymIntArg{m}}}}},
                  GraphBuilder::tensor_meta(DType::Float32, {sym("4*s0", 12)}));
    b.user_output(flat);
  }
};

TEST(SpecializeShapes, HintsComeFromWholeSymbolSizes) {
  Flatten f;
  EXPECT_TRUE(has_symbolic_shapes(f.ep));
  auto hints = export_hints(f.ep);
  ASSERT_TRUE(hints.ok()) << hints.error().message();
  EXPECT_EQ(*hints, (SymbolValues{{"s0", 3}}));
}

TEST(SpecializeShapes, SizesAndSymIntArgumentsBecomeNumbers) {
  Flatten f;
  ASSERT_TRUE(specialize_shapes(f.ep, {{"s0", 5}}).ok());
  EXPECT_FALSE(has_symbolic_shapes(f.ep));
  EXPECT_EQ(f.x->meta()->concrete_sizes(), (std::vector<int64_t>{5, 4}));
  EXPECT_EQ(f.flat->meta()->concrete_sizes(), (std::vector<int64_t>{20}));
  // 4 * 5, the reshape's size argument, is now a literal: the reshape no
  // longer reads the multiplication's value.
  const auto& shape = f.flat->producer()->input("shape")->as<SymIntList>();
  ASSERT_EQ(shape.items.size(), 1u);
  ASSERT_FALSE(shape.items[0].is_value());
  EXPECT_EQ(shape.items[0].literal(), 20);
  EXPECT_TRUE(verify(f.ep, "model").ok());
}

TEST(SpecializeShapes, AnUnboundSymbolIsAnErrorNamingTheValue_NEG) {
  Flatten f;
  Status s = specialize_shapes(f.ep, {{"s1", 5}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("value 'x'"), std::string::npos) << s.error().message();
  EXPECT_NE(s.error().message().find("s0"), std::string::npos) << s.error().message();
}

TEST(SpecializeShapes, ASymbolWithoutAHintIsNamed_NEG) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  b.user_output(b.user_input("x", GraphBuilder::tensor_meta(DType::Float32, {sym("s0"), 4})));
  auto hints = export_hints(ep);
  ASSERT_FALSE(hints.ok());
  EXPECT_NE(hints.error().message().find("symbol 's0' has no hint"), std::string::npos) << hints.error().message();
}

TEST(SpecializeShapes, BindingReadsWholeSymbolSizesAndChecksTheRest) {
  const TensorMeta m = GraphBuilder::tensor_meta(DType::Float32, {sym("s0"), sym("2*s0 - 1"), 3});
  SymbolValues symbols;
  ASSERT_TRUE(bind_symbols(m, {4, 7, 3}, symbols).ok());
  EXPECT_EQ(symbols, (SymbolValues{{"s0", 4}}));
}

TEST(SpecializeShapes, BindingNamesTheDimThatDisagrees_NEG) {
  const TensorMeta m = GraphBuilder::tensor_meta(DType::Float32, {sym("s0"), sym("2*s0 - 1"), 3});
  SymbolValues symbols;
  Status s = bind_symbols(m, {4, 8, 3}, symbols);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(), "dim 1 is 8, but 2*s0 - 1 = 7");
  SymbolValues other;
  Status rank = bind_symbols(m, {4, 7}, other);
  ASSERT_FALSE(rank.ok());
  EXPECT_EQ(rank.error().message(), "rank 2, expected 3");
  Status fixed = bind_symbols(m, {4, 7, 2}, other);
  ASSERT_FALSE(fixed.ok());
  EXPECT_EQ(fixed.error().message(), "dim 2 is 2, expected 3");
}

}  // namespace
}  // namespace lathe
