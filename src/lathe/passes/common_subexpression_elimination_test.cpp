#include "lathe/passes/common_subexpression_elimination.h"

#include <gtest/gtest.h>

#include "lathe/ir/program_test_support.h"
#include "lathe/ir/printer.h"
#include "lathe/passes/pass_test_support.h"

namespace lathe {
namespace {

using testing::op_histogram;
using testing::PassRun;
using testing::run_pass;

std::unique_ptr<Pass> cse() { return std::make_unique<CommonSubexpressionElimination>(); }

class CommonSubexpressionEliminationTest : public testing::ProgramTest {};

TEST_F(CommonSubexpressionEliminationTest, MergesIdenticalPureNodesAndTheirUsers) {
  Value* w = b.parameter("w", {3, 3});
  Value* x = b.user_input("x", {3, 3});
  Value* r1 = b.call("aten.relu.default", {{"self", x}}, {3, 3});
  Value* r2 = b.call("aten.relu.default", {{"self", x}}, {3, 3});
  Value* t1 = b.call("aten.t.default", {{"self", w}}, {3, 3});
  Value* t2 = b.call("aten.t.default", {{"self", w}}, {3, 3});
  Value* m1 = b.call("aten.mm.default", {{"self", r1}, {"mat2", t1}}, {3, 3});
  Value* m2 = b.call("aten.mm.default", {{"self", r2}, {"mat2", t2}}, {3, 3});  // same once r and t merge
  b.user_output(b.call("aten.add.Tensor", {{"self", m1}, {"other", m2}}, {3, 3}));
  b.user_output(m2);
  PassRun r = run_pass(ep, cse());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(testing::nodes_and_outputs(ep),
            "nodes:\n"
            "  %relu: f32[3, 3] = aten.relu.default(%x)\n"
            "  %t: f32[3, 3] = aten.t.default(%p_w)\n"
            "  %mm: f32[3, 3] = aten.mm.default(%relu, %t)\n"
            "  %add: f32[3, 3] = aten.add.Tensor(%mm, %mm)\n"
            "outputs:\n"
            "  %add  user_output\n"
            "  %mm  user_output\n");
  EXPECT_EQ(r.rewritten.size(), 3u);
  EXPECT_EQ(r.rewritten[2], "aten.mm.default 'mm_1' computes what 'mm' computes: merged");
  EXPECT_FALSE(run_pass(ep, cse()).changed);  // a fixpoint in one sweep
}

TEST_F(CommonSubexpressionEliminationTest, DifferentArgumentsAreNotMerged_NEG) {
  Value* x = b.user_input("x", {3});
  Value* y = b.user_input("y", {3});
  b.user_output(b.call("aten.mul.Tensor", {{"self", x}, {"other", int64_t{2}}}, {3}));
  b.user_output(b.call("aten.mul.Tensor", {{"self", x}, {"other", 2.0}}, {3}));  // 2 and 2.0 promote differently
  b.user_output(b.call("aten.mul.Tensor", {{"self", y}, {"other", int64_t{2}}}, {3}));
  b.user_output(b.call("aten.sum.dim_IntList", {{"self", x}, {"dim", IntList{{0}}}}, std::vector<int64_t>{}));
  b.user_output(b.call("aten.sum.dim_IntList", {{"self", x}, {"dim", IntList{{0}}}, {"keepdim", true}}, {1}));
  PassRun r = testing::expect_unchanged(ep, cse());
}

TEST_F(CommonSubexpressionEliminationTest, ImpureRandomAllocatingAndMutatedAreLeftAlone_NEG) {
  Value* x = b.user_input("x", {3});
  Value* y = b.user_input("y", {3});
  for (int i = 0; i < 2; ++i) {
    b.user_output(b.call("aten.bernoulli.default", {{"self", x}}, {3}));
    b.user_output(b.call("aten.empty.memory_format", {{"size", IntList{{3}}}}, {3}));
    b.user_output(b.call("my_ops.custom.default", {{"self", x}}, {3}));
    b.user_output(b.call("aten.neg.default", {{"self", y}}, {3}));  // y is written in place below
  }
  b.call("aten.add_.Tensor", {{"self", y}, {"other", x}}, {3});
  // A result an in-place op writes into must stay its own buffer.
  Value* w = b.user_input("w", {3});
  Value* z1 = b.call("aten.relu.default", {{"self", w}}, {3});
  Value* z2 = b.call("aten.relu.default", {{"self", w}}, {3});
  b.call("aten.fill_.Scalar", {{"self", z1}, {"value", 0.0}}, {3});
  b.user_output(z1);
  b.user_output(z2);
  PassRun r = testing::expect_unchanged(ep, cse());
}

TEST_F(CommonSubexpressionEliminationTest, MultiOutputNodesMergeEveryOutput) {
  Value* x = b.user_input("x", {2, 4});
  auto meta = GraphBuilder::tensor_meta({2, 4});
  auto stat = GraphBuilder::tensor_meta({2, 1});
  std::vector<GraphBuilder::Arg> args = {{"input", x}, {"normalized_shape", IntList{{4}}}, {"weight", Argument()},
                                         {"bias", Argument()}, {"eps", 1e-5}};
  auto a = b.call("aten.native_layer_norm.default", args, {meta, stat, stat});
  auto c = b.call("aten.native_layer_norm.default", args, {meta, stat, stat});
  b.user_output(a[0]);
  b.user_output(c[0]);
  b.user_output(c[2]);
  PassRun r = run_pass(ep, cse());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(op_histogram(ep.graph())["native_layer_norm"], 1);
  EXPECT_EQ(ep.graph().outputs()[1].tensor(), a[0]);
  EXPECT_EQ(ep.graph().outputs()[2].tensor(), a[2]);
}

}  // namespace
}  // namespace lathe
