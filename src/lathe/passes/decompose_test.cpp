#include "lathe/passes/decompose.h"

#include <gtest/gtest.h>

#include "lathe/ir/program_test_support.h"
#include "lathe/ir/printer.h"
#include "lathe/passes/addmm_mm_to_linear.h"
#include "lathe/passes/pass_test_support.h"
#include "lathe/passes/remove_dead_code.h"

namespace lathe {
namespace {

using testing::op_histogram;
using testing::PassRun;
using testing::run_pass;
using testing::run_passes;

std::unique_ptr<Pass> decompose() { return std::make_unique<Decompose>(); }

Value* linear(GraphBuilder& b, Value* x, Value* w, Value* bias, std::vector<int64_t> out) {
  std::vector<GraphBuilder::Arg> args = {{"input", x}, {"weight", w}};
  if (bias) args.push_back({"bias", bias});
  return b.call("aten.linear.default", std::move(args), std::move(out));
}

// A "linear-only" model: two linears and a relu, as addmm_mm_to_linear
// leaves an MLP.
void build_linear_mlp(ExportedProgram& ep) {
  GraphBuilder b(ep);
  Value* w1 = b.parameter("fc1.weight", {8, 4});
  Value* b1 = b.parameter("fc1.bias", {8});
  Value* w2 = b.parameter("fc2.weight", {2, 8});
  Value* x = b.user_input("x", {3, 4});
  Value* h = b.call("aten.relu.default", {{"self", linear(b, x, w1, b1, {3, 8})}}, {3, 8});
  b.user_output(linear(b, h, w2, nullptr, {3, 2}));
}

class DecomposeTest : public testing::ProgramTest {};

TEST_F(DecomposeTest, LinearBecomesPermuteAndAddmmOrMm) {
  ExportedProgram ep;
  build_linear_mlp(ep);
  PassRun r = testing::expect_program_after(ep, decompose(),
      "inputs:\n"
      "  %p_fc1_weight: f32[8, 4]  parameter fc1.weight\n"
      "  %p_fc1_bias: f32[8]  parameter fc1.bias\n"
      "  %p_fc2_weight: f32[2, 8]  parameter fc2.weight\n"
      "  %x: f32[3, 4]  user_input\n"
      "nodes:\n"
      "  %permute: f32[4, 8]{strides=[1, 4]} = aten.permute.default(%p_fc1_weight, [1, 0])\n"
      "  %linear: f32[3, 8] = aten.addmm.default(%p_fc1_bias, %x, %permute)\n"
      "  %relu: f32[3, 8] = aten.relu.default(%linear)\n"
      "  %permute_1: f32[8, 2]{strides=[1, 8]} = aten.permute.default(%p_fc2_weight, [1, 0])\n"
      "  %linear_1: f32[3, 2] = aten.mm.default(%relu, %permute_1)\n"
      "outputs:\n"
      "  %linear_1  user_output\n");
  EXPECT_EQ(r.rewritten, (std::vector<std::string>{
                             "aten.linear.default 'linear' decomposed into permute + addmm",
                             "aten.linear.default 'linear_1' decomposed into permute + mm",
                         }));
}

TEST_F(DecomposeTest, DecomposeThenLinearRewriteGivesTheSameProgramBack) {
  ExportedProgram ep;
  build_linear_mlp(ep);
  std::string before = print_program(ep);
  std::vector<std::unique_ptr<Pass>> passes;
  passes.push_back(decompose());
  passes.push_back(std::make_unique<AddmmMmToLinear>());
  passes.push_back(std::make_unique<RemoveDeadCode>());
  PassRun r = run_passes(ep, std::move(passes));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(print_program(ep), before);
}

TEST_F(DecomposeTest, KeepListLeavesLinearsWhole_NEG) {
  for (std::string keep : {"aten.linear.default", "torch.ops.aten.linear.default", "aten.linear"}) {
    ExportedProgram ep;
    build_linear_mlp(ep);
    std::string before = print_program(ep);
    PassRun r = run_pass(ep, std::make_unique<Decompose>(std::vector<std::string>{keep}));
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_FALSE(r.changed) << keep;
    EXPECT_EQ(print_program(ep), before) << keep;
    EXPECT_EQ(r.kept, (std::vector<std::string>{"aten.linear.default 'linear' kept: on the keep-list",
                                                "aten.linear.default 'linear_1' kept: on the keep-list"}));
  }
  // A keep-list naming another op does not protect linear.
  ExportedProgram ep;
  build_linear_mlp(ep);
  ASSERT_TRUE(run_pass(ep, std::make_unique<Decompose>(std::vector<std::string>{"aten.linear.out"})).changed);
}

TEST_F(DecomposeTest, LinearOnA3DInputFlattensTheLeadingDims) {
  Value* w = b.parameter("w", {6, 4});
  Value* bias = b.parameter("b", {6});
  Value* x = b.user_input("x", {2, 5, 4});
  b.user_output(linear(b, x, w, bias, {2, 5, 6}));
  testing::expect_program_after(ep, decompose(),
      "inputs:\n"
      "  %p_w: f32[6, 4]  parameter w\n"
      "  %p_b: f32[6]  parameter b\n"
      "  %x: f32[2, 5, 4]  user_input\n"
      "nodes:\n"
      "  %permute: f32[4, 6]{strides=[1, 4]} = aten.permute.default(%p_w, [1, 0])\n"
      "  %view: f32[10, 4] = aten.view.default(%x, [10, 4])\n"
      "  %addmm: f32[10, 6] = aten.addmm.default(%p_b, %view, %permute)\n"
      "  %linear: f32[2, 5, 6] = aten.view.default(%addmm, [2, 5, 6])\n"
      "outputs:\n"
      "  %linear  user_output\n");
}

TEST_F(DecomposeTest, NonContiguousInputIsReshapedNotViewed) {
  Value* w = b.parameter("w", {6, 4});
  TensorMeta m = GraphBuilder::tensor_meta({2, 5, 4});
  m.strides = {SymDim(4), SymDim(8), SymDim(1)};  // a transposed layout
  Value* x = b.user_input("x", m);
  b.user_output(linear(b, x, w, nullptr, {2, 5, 6}));
  ASSERT_TRUE(run_pass(ep, decompose()).ok);
  EXPECT_EQ(op_histogram(ep.graph()), (std::map<std::string, int>{{"mm", 1}, {"permute", 1}, {"reshape", 1}, {"view", 1}}));
  // reshape's schema calls its size list `shape` (view's is `size`); the
  // portable kernel looks it up by that name (found by the sweep, seed 94).
  for (Node* n : ep.graph().nodes()) {
    if (n->op_name() != "aten.reshape.default") continue;
    EXPECT_NE(n->input("shape"), nullptr);
    EXPECT_EQ(n->input("size"), nullptr);
  }
}

TEST_F(DecomposeTest, LinearThatCannotBeDecomposedIsKept_NEG) {
  Value* w = b.parameter("w", {6, 4});
  Value* x = b.user_input("x", {4});
  b.user_output(linear(b, x, w, nullptr, {6}));
  // 3-D with a symbolic batch: flattening it would need the symbolic size.
  const SymDim s0(SymExpr{"s0", int64_t{3}});
  ep.range_constraints.emplace_back("s0", RangeConstraint{2, std::nullopt});  // as torch.export writes a Dim's
  Value* y = b.user_input("y", GraphBuilder::tensor_meta(DType::Float32, {s0, SymDim(2), SymDim(4)}));
  b.user_output(b.call("aten.linear.default", {{"input", y}, {"weight", w}},
                       GraphBuilder::tensor_meta(DType::Float32, {s0, SymDim(2), SymDim(6)})));
  PassRun r = testing::expect_unchanged(ep, decompose());
  EXPECT_EQ(r.kept, (std::vector<std::string>{"aten.linear.default 'linear' kept: input 'x' is 1-D",
                                              "aten.linear.default 'linear_1' kept: its input shape is not concrete"}));
}

TEST_F(DecomposeTest, TwoDimensionalLinearWithASymbolicBatchIsDecomposed) {
  // torch.export with a Dim on the batch: [s0, 4] @ w.T needs no sizes.
  Value* w = b.parameter("w", {6, 4});
  const SymDim s0(SymExpr{"s0", int64_t{3}});
  ep.range_constraints.emplace_back("s0", RangeConstraint{2, std::nullopt});
  Value* x = b.user_input("x", GraphBuilder::tensor_meta(DType::Float32, {s0, SymDim(4)}));
  b.user_output(b.call("aten.linear.default", {{"input", x}, {"weight", w}},
                       GraphBuilder::tensor_meta(DType::Float32, {s0, SymDim(6)})));
  PassRun r = run_pass(ep, decompose());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(op_histogram(ep.graph()), (std::map<std::string, int>{{"mm", 1}, {"permute", 1}}));
}

TEST_F(DecomposeTest, MatmulByRank) {
  Value* a2 = b.user_input("a2", {3, 4});
  Value* b2 = b.user_input("b2", {4, 5});
  Value* a3 = b.user_input("a3", {2, 3, 4});
  Value* b3 = b.user_input("b3", {2, 4, 5});
  Value* v1 = b.user_input("v1", {4});
  b.user_output(b.call("aten.matmul.default", {{"self", a2}, {"other", b2}}, {3, 5}));
  b.user_output(b.call("aten.matmul.default", {{"self", a3}, {"other", b2}}, {2, 3, 5}));
  b.user_output(b.call("aten.matmul.default", {{"self", a3}, {"other", b3}}, {2, 3, 5}));
  b.user_output(b.call("aten.matmul.default", {{"self", a2}, {"other", v1}}, {3}));
  PassRun r = run_pass(ep, decompose());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(op_histogram(ep.graph()), (std::map<std::string, int>{{"bmm", 1}, {"matmul", 1}, {"mm", 2}, {"view", 2}}));
  EXPECT_EQ(r.rewritten, (std::vector<std::string>{"aten.matmul.default 'matmul' decomposed into mm",
                                                   "aten.matmul.default 'matmul_1' decomposed into view + mm + view",
                                                   "aten.matmul.default 'matmul_2' decomposed into bmm"}));
  EXPECT_EQ(r.kept, (std::vector<std::string>{"aten.matmul.default 'matmul_3' kept: a matmul of a 2-D and a 1-D "
                                              "tensor has no decomposition here"}));
}

TEST_F(DecomposeTest, TransposesBecomePermutes) {
  Value* x = b.user_input("x", {2, 3});
  Value* y = b.user_input("y", {2, 3, 4});
  Value* v = b.user_input("v", {3});
  b.user_output(b.call("aten.t.default", {{"self", x}}, {3, 2}));
  b.user_output(b.call("aten.transpose.int", {{"self", y}, {"dim0", int64_t{0}}, {"dim1", int64_t{-1}}}, {4, 3, 2}));
  b.user_output(b.call("aten.t.default", {{"self", v}}, {3}));
  PassRun r = testing::expect_nodes_after(ep, decompose(),
      "nodes:\n"
      "  %t: f32[3, 2] = aten.permute.default(%x, [1, 0])\n"
      "  %transpose: f32[4, 3, 2] = aten.permute.default(%y, [2, 1, 0])\n"
      "  %t_1: f32[3] = aten.t.default(%v)\n"
      "outputs:\n"
      "  %t  user_output\n"
      "  %transpose  user_output\n"
      "  %t_1  user_output\n");
  EXPECT_EQ(r.kept, (std::vector<std::string>{"aten.t.default 't_1' kept: t of a tensor that is not 2-D is left as it is"}));
}

TEST_F(DecomposeTest, SoftmaxLayerNormConvDropout) {
  Value* g = b.parameter("ln.weight", {4});
  Value* cw = b.parameter("conv.weight", {2, 3, 3, 3});
  Value* x = b.user_input("x", {2, 4});
  Value* img = b.user_input("img", {1, 3, 5, 5});
  b.user_output(b.call("aten.softmax.int", {{"self", x}, {"dim", int64_t{-1}}}, {2, 4}));
  b.user_output(b.call("aten.log_softmax.int", {{"self", x}, {"dim", int64_t{1}}}, {2, 4}));
  b.user_output(b.call("aten.layer_norm.default", {{"input", x}, {"normalized_shape", IntList{{4}}}, {"weight", g}}, {2, 4}));
  b.user_output(b.call("aten.conv2d.default", {{"input", img}, {"weight", cw}, {"padding", IntList{{1}}}}, {1, 2, 5, 5}));
  b.user_output(b.call("aten.dropout.default", {{"input", x}, {"p", 0.1}, {"train", false}}, {2, 4}));
  testing::expect_nodes_after(ep, decompose(),
      "nodes:\n"
      "  %softmax: f32[2, 4] = aten._softmax.default(%x, -1, False)\n"
      "  %log_softmax: f32[2, 4] = aten._log_softmax.default(%x, 1, False)\n"
      "  %layer_norm: f32[2, 4], %layer_norm_mean: f32[2, 1], %layer_norm_rstd: f32[2, 1] = aten.native_layer_norm.default(%x, [4], "
      "%p_ln_weight, None, 1e-05)\n"
      "  %conv2d: f32[1, 2, 5, 5] = aten.convolution.default(%img, %p_conv_weight, None, [1, 1], [1, 1], [1, 1], "
      "False, [0, 0], 1)\n"
      "  %dropout: f32[2, 4] = aten.clone.default(%x)\n"
      "outputs:\n"
      "  %softmax  user_output\n"
      "  %log_softmax  user_output\n"
      "  %layer_norm  user_output\n"
      "  %conv2d  user_output\n"
      "  %dropout  user_output\n");
  Value* mean = ep.graph().find_value("layer_norm_mean");
  ASSERT_NE(mean, nullptr);
  EXPECT_EQ(*mean->meta(), GraphBuilder::tensor_meta({2, 1}));
}

TEST_F(DecomposeTest, SoftmaxWithDtypeAndTrainingDropoutAreKept_NEG) {
  Value* x = b.user_input("x", {2, 4});
  b.user_output(b.call("aten.softmax.int", {{"self", x}, {"dim", int64_t{-1}}, {"dtype", ScalarTypeArg{DType::Float64}}},
                       {2, 4}, DType::Float64));
  b.user_output(b.call("aten.dropout.default", {{"input", x}, {"p", 0.1}, {"train", true}}, {2, 4}));
  PassRun r = testing::expect_unchanged(ep, decompose());
  EXPECT_EQ(r.kept.size(), 2u);
  EXPECT_EQ(r.kept[1], "aten.dropout.default 'dropout' kept: it is a training-mode dropout (random)");
}

}  // namespace
}  // namespace lathe
