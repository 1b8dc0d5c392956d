// torch.cond and torch.while_loop on hand-built graphlets (the real
// torch.cond archive, fixtures/cond.pt2, runs in fixtures_test.cpp). Every
// expected value is worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include <limits>

#include "lathe/ir/graph_builder.h"
#include "lathe/runtime/executor.h"
#include "lathe/runtime/kernels/util.h"
#include "lathe/runtime/runtime_test_support.h"

namespace lathe {
namespace {

using testing::float_tensor;
using testing::float_values;

Tensor scalar_bool(bool v) {
  Tensor t = Tensor::empty(DType::Bool, {});
  *kernels::mdata<bool>(t) = v;
  return t;
}

// One-input branch: identity (returns its operand itself) or negation.
std::shared_ptr<Graph> branch(bool identity, const std::string& op = "aten.neg.default") {
  auto g = std::make_shared<Graph>();
  GraphBuilder b(*g);
  Value* x = b.input("x", GraphBuilder::tensor_meta({3}));
  b.output(identity ? x : b.call(op, {{"self", x}}, {3}));
  return g;
}

// out = cond(pred, x0 -> x0, x0 -> -x0, [x0]) + x * 3, with x0 = x * 2.
// The true branch hands back its operand: x0's buffer must stay alive
// while the cond's output is read (x*3 is computed after the cond).
void build_cond(ExportedProgram& ep, std::shared_ptr<Graph> t, std::shared_ptr<Graph> f) {
  GraphBuilder b(ep);
  Value* pred = b.user_input("pred", std::vector<int64_t>{}, DType::Bool);
  Value* x = b.user_input("x", {3});
  Value* x0 = b.call("aten.mul.Scalar", {{"self", x}, {"other", Argument(2.0)}}, {3});
  Value* c = b.call("higher_order.cond",
                    {{"", pred}, {"", Argument(GraphArg{"true_graph_0", t})}, {"", Argument(GraphArg{"false_graph_0", f})},
                     {"", Argument(TensorList{{x0}})}},
                    {3});
  Value* x3 = b.call("aten.mul.Scalar", {{"self", x}, {"other", Argument(3.0)}}, {3});
  b.user_output(b.call("aten.add.Tensor", {{"self", c}, {"other", x3}}, {3}));
}

TEST(ControlFlow, CondRunsTheChosenBranchAndKeepsAReturnedOperandAlive) {
  ExportedProgram ep;
  build_cond(ep, branch(true), branch(false));
  for (bool plan : {true, false}) {
    ExecutorOptions o;
    o.plan_memory = plan;
    auto ex = Executor::create(ep, o);
    ASSERT_TRUE(ex.ok()) << ex.error().message();
    const Tensor x = float_tensor({3}, {1, -2, 4});
    auto yes = (*ex)->run(std::vector<EValue>{scalar_bool(true), x});
    ASSERT_TRUE(yes.ok()) << yes.error().message();
    EXPECT_EQ(float_values((*yes)[0].tensor()), (std::vector<float>{5, -10, 20}));  // 2x + 3x
    auto no = (*ex)->run(std::vector<EValue>{scalar_bool(false), x});
    ASSERT_TRUE(no.ok()) << no.error().message();
    EXPECT_EQ(float_values((*no)[0].tensor()), (std::vector<float>{1, -2, 4}));  // -2x + 3x
  }
}

TEST(ControlFlow, CondBranchWithoutKernelFailsCreateNamingIt_NEG) {
  ExportedProgram ep;
  build_cond(ep, branch(false, "aten.frobnicate.default"), branch(false));
  testing::expect_create_fails(ep, {"higher_order.cond",
                                    "subgraph 'true_graph_0'",
                                    "aten.frobnicate.default (node 'frobnicate')"});
}

TEST(ControlFlow, CondPredicateWithTwoElements_NEG) {
  ExportedProgram ep;
  build_cond(ep, branch(true), branch(false));
  // Change the predicate's declared shape so the input check lets it pass.
  ep.graph().inputs()[0].tensor()->set_meta(GraphBuilder::tensor_meta({2}, DType::Bool));
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  Tensor two = Tensor::empty(DType::Bool, {2});
  auto out = (*ex)->run(std::vector<EValue>{two, float_tensor({3}, {1, 2, 3})});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message().find("predicate tensor has 2 elements, not 1"), std::string::npos)
      << out.error().message();
}

// while i < 3: (i, acc) = (i + 1, acc + step); returns (i, acc).
void build_loop(ExportedProgram& ep) {
  auto cond = std::make_shared<Graph>();
  {
    GraphBuilder b(*cond);
    Value* i = b.input("i", GraphBuilder::tensor_meta(std::vector<int64_t>{}, DType::Int64));
    b.input("acc", GraphBuilder::tensor_meta({2}));
    b.input("step", GraphBuilder::tensor_meta({2}));
    b.output(b.call("aten.lt.Scalar", {{"self", i}, {"other", Argument(int64_t{3})}}, std::vector<int64_t>{}, DType::Bool));
  }
  auto body = std::make_shared<Graph>();
  {
    GraphBuilder b(*body);
    Value* i = b.input("i", GraphBuilder::tensor_meta(std::vector<int64_t>{}, DType::Int64));
    Value* acc = b.input("acc", GraphBuilder::tensor_meta({2}));
    Value* step = b.input("step", GraphBuilder::tensor_meta({2}));
    b.output(b.call("aten.add.Scalar", {{"self", i}, {"other", Argument(int64_t{1})}}, std::vector<int64_t>{}, DType::Int64));
    b.output(b.call("aten.add.Tensor", {{"self", acc}, {"other", step}}, {2}));
  }
  GraphBuilder b(ep);
  Value* i0 = b.user_input("i0", std::vector<int64_t>{}, DType::Int64);
  Value* acc0 = b.user_input("acc0", {2});
  Value* step = b.user_input("step", {2});
  std::vector<Value*> out = b.call("higher_order.while_loop",
                                   {{"", Argument(GraphArg{"while_loop_cond_graph_0", cond})},
                                    {"", Argument(GraphArg{"while_loop_body_graph_0", body})},
                                    {"", Argument(TensorList{{i0, acc0}})},
                                    {"", Argument(TensorList{{step}})}},
                                   {GraphBuilder::tensor_meta(std::vector<int64_t>{}, DType::Int64),
                                    GraphBuilder::tensor_meta({2})});
  b.user_output(out[0]);
  b.user_output(out[1]);
}

TEST(ControlFlow, WhileLoopCarriesValuesUntilTheConditionFails) {
  ExportedProgram ep;
  build_loop(ep);
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  Tensor i0 = Tensor::empty(DType::Int64, {});
  for (int64_t start : {0, 2, 5}) {
    *kernels::mdata<int64_t>(i0) = start;
    auto out = (*ex)->run(std::vector<EValue>{i0, float_tensor({2}, {1, 2}), float_tensor({2}, {0.5f, -1})});
    ASSERT_TRUE(out.ok()) << out.error().message();
    const int64_t iterations = std::max<int64_t>(0, 3 - start);  // 3, 1, 0
    EXPECT_EQ(*kernels::cdata<int64_t>((*out)[0].tensor()), std::max<int64_t>(start, 3));
    EXPECT_EQ(float_values((*out)[1].tensor()), (std::vector<float>{1 + 0.5f * iterations, 2.0f - iterations}));
  }
}

// _NEG: a loop whose condition never turns false stops at the iteration
// limit with an error naming the node (the CLI and Python would hang).
TEST(ControlFlow, WhileLoopStopsAtTheIterationLimit_NEG) {
  ExportedProgram ep;
  build_loop(ep);
  ExecutorOptions o;
  o.max_loop_iterations = 1000;
  auto ex = Executor::create(ep, o);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  Tensor i0 = Tensor::empty(DType::Int64, {});
  *kernels::mdata<int64_t>(i0) = std::numeric_limits<int64_t>::min();  // i < 3 for 2^63 iterations
  auto out = (*ex)->run(std::vector<EValue>{i0, float_tensor({2}, {1, 2}), float_tensor({2}, {0.5f, -1})});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message().find("while_loop ran 1000 iterations without its condition becoming false"),
            std::string::npos) << out.error().message();
  EXPECT_NE(out.error().message().find("while_loop"), std::string::npos);
  *kernels::mdata<int64_t>(i0) = 2;  // 1 iteration: well inside the limit
  EXPECT_TRUE((*ex)->run(std::vector<EValue>{i0, float_tensor({2}, {1, 2}), float_tensor({2}, {0.5f, -1})}).ok());
}

// _NEG: a branch or loop body whose result disagrees with what the node
// declares (dtype, rank, a concrete size) is an error naming both, each
// call; it used to flow on as the declared type.
TEST(ControlFlow, SubgraphResultsMustMatchTheDeclaredOutputs_NEG) {
  auto doubling = std::make_shared<Graph>();  // x[3] -> cat(x, x): [6], declared [3]
  {
    GraphBuilder b(*doubling);
    Value* x = b.input("x", GraphBuilder::tensor_meta({3}));
    b.output(b.call("aten.cat.default", {{"tensors", Argument(TensorList{{x, x}})}}, {6}));
  }
  ExportedProgram ep;
  build_cond(ep, branch(true), doubling);
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  const Tensor x = float_tensor({3}, {1, -2, 4});
  EXPECT_TRUE((*ex)->run(std::vector<EValue>{scalar_bool(true), x}).ok());
  auto out = (*ex)->run(std::vector<EValue>{scalar_bool(false), x});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message().find("the false branch returned float32 [6] as output 0 'cond', declared float32 [3]"),
            std::string::npos) << out.error().message();
}

// out = wrap(x -> -x)(x * 2): the region's subgraph runs on the operands
// after it. Hand-checked: x = [1, -2, 4] -> [-2, 4, -8].
void build_wrap(ExportedProgram& ep, const std::string& target, std::vector<GraphBuilder::Arg> head) {
  GraphBuilder b(ep);
  Value* x = b.user_input("x", {3});
  Value* x2 = b.call("aten.mul.Scalar", {{"self", x}, {"other", Argument(2.0)}}, {3});
  head.push_back({"", Argument(GraphArg{"submod_1", branch(false)})});
  head.push_back({"", x2});
  b.user_output(b.call(target, head, {3}));
}

TEST(ControlFlow, GradModeRegionRunsItsSubgraph) {
  ExportedProgram ep;
  build_wrap(ep, "higher_order.wrap_with_set_grad_enabled", {{"", Argument(false)}});
  auto ex = Executor::create(ep, ExecutorOptions{});
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  auto out = (*ex)->run(std::vector<EValue>{float_tensor({3}, {1, -2, 4})});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(float_values((*out)[0].tensor()), (std::vector<float>{-2, 4, -8}));
}

TEST(ControlFlow, DisabledAutocastRegionRunsAndAnEnabledOneIsRefused) {
  for (bool enabled : {false, true}) {
    ExportedProgram ep;
    build_wrap(ep, "higher_order.wrap_with_autocast",
               {{"", Argument(std::string("cpu"))}, {"", Argument()}, {"", Argument(enabled)}, {"", Argument()}});
    auto ex = Executor::create(ep, ExecutorOptions{});
    if (enabled) {
      ASSERT_FALSE(ex.ok());
      EXPECT_NE(ex.error().message().find("enabled autocast region"), std::string::npos) << ex.error().message();
      continue;
    }
    ASSERT_TRUE(ex.ok()) << ex.error().message();
    auto out = (*ex)->run(std::vector<EValue>{float_tensor({3}, {1, -2, 4})});
    ASSERT_TRUE(out.ok()) << out.error().message();
    EXPECT_EQ(float_values((*out)[0].tensor()), (std::vector<float>{-2, 4, -8}));
  }
}

}  // namespace
}  // namespace lathe
