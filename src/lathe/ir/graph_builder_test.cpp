#include "lathe/ir/graph_builder.h"

#include <gtest/gtest.h>

#include <cstring>

#include "lathe/ir/program_test_support.h"
#include "lathe/ir/verify.h"

namespace lathe {
namespace {

std::vector<InputKind> input_kinds(const ExportedProgram& ep) {
  std::vector<InputKind> out;
  for (const auto& s : ep.input_specs) out.push_back(s.kind);
  return out;
}

std::vector<std::string> placeholder_names(const Graph& g) {
  std::vector<std::string> out;
  for (Value* v : g.placeholders()) out.push_back(v->name());
  return out;
}

class GraphBuilderTest : public testing::ProgramTest {};

TEST_F(GraphBuilderTest, SimpleLinearHasTheExportedLayout) {
  ExportedProgram ep;
  SimpleLinear s = build_simple_linear(ep);
  EXPECT_EQ(placeholder_names(ep.graph()), (std::vector<std::string>{"p_linear_weight", "p_linear_bias", "arg"}));
  EXPECT_EQ(input_kinds(ep),
            (std::vector<InputKind>{InputKind::Parameter, InputKind::Parameter, InputKind::UserInput}));
  EXPECT_EQ(ep.input_specs[0].target, "linear.weight");
  ASSERT_NE(ep.parameters.find("linear.bias"), nullptr);
  EXPECT_EQ(ep.parameters.find("linear.bias")->sizes, std::vector<int64_t>{3});
  Node* mm = s.addmm->producer();
  EXPECT_EQ(mm->target(), "torch.ops.aten.addmm.default");
  EXPECT_EQ(mm->inputs()[2].name, "mat2");
  EXPECT_EQ(mm->inputs()[2].arg.tensor(), s.permute);
  EXPECT_EQ(s.permute->producer()->inputs()[1].arg, Argument(IntList{{1, 0}}));
  ASSERT_TRUE(s.addmm->meta().has_value());
  EXPECT_EQ(s.addmm->meta()->strides, (std::vector<SymDim>{3, 1}));
  ASSERT_EQ(ep.output_specs.size(), 1u);
  EXPECT_EQ(ep.graph().outputs()[0].tensor(), s.addmm);
  Status st = verify(ep, "forward");
  EXPECT_TRUE(st.ok()) << st.error().message();
}

TEST_F(GraphBuilderTest, InputsGoWhereTorchExportPutsThem) {
  b.user_input("x", {2});
  b.constant("lifted_tensor_0", {2});
  b.buffer("bn.running_mean", {2});
  b.parameter("w", {2});
  b.buffer("scratch", {2}, /*persistent=*/false);
  b.parameter("v", {2});
  EXPECT_EQ(placeholder_names(ep.graph()),
            (std::vector<std::string>{"p_w", "p_v", "b_bn_running_mean", "b_scratch", "c_lifted_tensor_0", "x"}));
  EXPECT_EQ(input_kinds(ep),
            (std::vector<InputKind>{InputKind::Parameter, InputKind::Parameter, InputKind::Buffer, InputKind::Buffer,
                                    InputKind::TensorConstant, InputKind::UserInput}));
  EXPECT_TRUE(ep.buffers.contains("bn.running_mean"));
  EXPECT_TRUE(ep.constants.contains("scratch"));  // non-persistent → constants
  EXPECT_TRUE(ep.constants.contains("lifted_tensor_0"));
}

TEST_F(GraphBuilderTest, MutationOutputsGoBeforeUserOutputs) {
  Value* buf = b.buffer("count", {1});
  Value* x = b.user_input("x", {1});
  Value* y = b.call("aten.add.Tensor", {{"self", x}, {"other", buf}}, {1});
  b.user_output(y);
  Value* nb = b.call("aten.add.Tensor", {{"self", buf}, {"other", 1}}, {1});
  b.buffer_mutation(nb, "count");
  ASSERT_EQ(ep.output_specs.size(), 2u);
  EXPECT_EQ(ep.output_specs[0].kind, OutputKind::BufferMutation);
  EXPECT_EQ(ep.graph().outputs()[0].tensor(), nb);
  EXPECT_EQ(ep.graph().outputs()[1].tensor(), y);
  EXPECT_EQ(y->name(), "add");
  EXPECT_EQ(nb->name(), "add_1");
  Status st = verify(ep, "forward");
  EXPECT_TRUE(st.ok()) << st.error().message();
}

TEST_F(GraphBuilderTest, LiteralArgumentsKeepTheirType) {
  Value* x = b.user_input("x", {2, 2});
  // A literal 0 must be an int, not a null tensor pointer.
  b.call("aten.sum.dim_IntList", {{"self", x}, {"dim", 0}, {"keepdim", true}, {"scale", 0.5}, {"mode", "a"}},
         std::vector<int64_t>{2});
  const auto& in = b.last_node()->inputs();
  EXPECT_TRUE(in[1].arg.is<int64_t>());
  EXPECT_TRUE(in[2].arg.is<bool>());
  EXPECT_TRUE(in[3].arg.is<double>());
  EXPECT_TRUE(in[4].arg.is<std::string>());
  EXPECT_EQ(in[1].kind, ArgKind::Positional);
}

TEST_F(GraphBuilderTest, MultiOutputCalls) {
  Value* x = b.user_input("x", {4});
  auto parts = b.call_list("aten.split.Tensor", {{"self", x}, {"split_size", 2}},
                           {GraphBuilder::tensor_meta({2}), GraphBuilder::tensor_meta({2})});
  auto stats =
      b.call("aten.var_mean.correction", {{"self", x}},
             {GraphBuilder::tensor_meta(std::vector<int64_t>{}), GraphBuilder::tensor_meta(std::vector<int64_t>{})},
             {"var", "mean"});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0]->name(), "getitem");
  EXPECT_EQ(parts[1]->name(), "getitem_1");
  ASSERT_EQ(parts[0]->producer()->outputs().size(), 1u);
  EXPECT_TRUE(parts[0]->producer()->outputs()[0].is<TensorList>());
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[1]->name(), "mean");
  EXPECT_EQ(stats[0]->producer()->outputs().size(), 2u);
  b.user_output(parts[1]);
  Status st = verify(ep, "forward");
  EXPECT_TRUE(st.ok()) << st.error().message();
}

TEST_F(GraphBuilderTest, DeterministicTensorsDependOnlyOnTheName) {
  Tensor a = GraphBuilder::deterministic_tensor("linear.weight", DType::Float32, {3, 3});
  Tensor b = GraphBuilder::deterministic_tensor("linear.weight", DType::Float32, {3, 3});
  Tensor c = GraphBuilder::deterministic_tensor("linear.bias", DType::Float32, {3, 3});
  ASSERT_EQ(a.nbytes(), 36u);
  EXPECT_EQ(std::memcmp(a.storage->data(), b.storage->data(), a.nbytes()), 0);
  EXPECT_NE(std::memcmp(a.storage->data(), c.storage->data(), a.nbytes()), 0);
  const float* f = reinterpret_cast<const float*>(a.storage->data());
  bool any_nonzero = false;
  for (int i = 0; i < 9; ++i) {
    EXPECT_GE(f[i], -1.0f);
    EXPECT_LT(f[i], 1.0f);
    any_nonzero = any_nonzero || f[i] != 0.0f;
  }
  EXPECT_TRUE(any_nonzero);
}

TEST_F(GraphBuilderTest, SymbolicMetaAndNames) {
  TensorMeta m = GraphBuilder::tensor_meta(DType::Float32, {SymExpr{"s0", std::nullopt}, 3, 4});
  EXPECT_EQ(m.strides[0], SymDim(12));
  EXPECT_EQ(m.strides[2], SymDim(1));
  TensorMeta n = GraphBuilder::tensor_meta(DType::Float32, {2, SymExpr{"s0", std::nullopt}, 4});
  ASSERT_FALSE(n.strides[0].is_concrete());
  EXPECT_EQ(n.strides[0].expr().expr, "s0*4");
  EXPECT_EQ(GraphBuilder::op_base_name("aten.permute_copy.default"), "permute_copy");
  EXPECT_EQ(GraphBuilder::op_base_name("torch.ops.aten.addmm.default"), "addmm");
  EXPECT_EQ(GraphBuilder::op_base_name("_operator.add"), "add");
  EXPECT_EQ(GraphBuilder::full_target("aten.mm.default"), "torch.ops.aten.mm.default");
  EXPECT_EQ(GraphBuilder::full_target("_operator.add"), "_operator.add");
}

}  // namespace
}  // namespace lathe
