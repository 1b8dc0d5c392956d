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
// `int_condition`: the condition is i - 3 (int64), which torch.while_loop
// refuses (it wants a bool).
void build_loop(ExportedProgram& ep, bool int_condition = false) {
  auto cond = std::make_shared<Graph>();
  {
    GraphBuilder b(*cond);
    Value* i = b.input("i", GraphBuilder::tensor_meta(std::vector<int64_t>{}, DType::Int64));
    b.input("acc", GraphBuilder::tensor_meta({2}));
    b.input("step", GraphBuilder::tensor_meta({2}));
    b.output(int_condition ? b.call("aten.sub.Scalar", {{"self", i}, {"other", Argument(int64_t{3})}},
                                    std::vector<int64_t>{}, DType::Int64)
                           : b.call("aten.lt.Scalar", {{"self", i}, {"other", Argument(int64_t{3})}},
                                    std::vector<int64_t>{}, DType::Bool));
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

// _NEG: an int64 condition is refused as torch.while_loop refuses it, not
// read as "non-zero is true" (issue 33, the hostile probe's while_loop class).
TEST(ControlFlow, WhileLoopConditionMustBeABool_NEG) {
  ExportedProgram ep;
  build_loop(ep, /*int_condition=*/true);
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  Tensor i0 = Tensor::empty(DType::Int64, {});
  *kernels::mdata<int64_t>(i0) = 0;
  auto out = (*ex)->run(std::vector<EValue>{i0, float_tensor({2}, {1, 2}), float_tensor({2}, {0.5f, -1})});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message().find("cond_fn returned a tensor of dtype int64 and shape [], not a bool or a 0-d bool tensor"),
            std::string::npos) << out.error().message();
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

// _NEG, issue 33 item 14 (the issue's own example): a declared SYMBOLIC
// size is checked against this call's value of the symbol, as the operands
// give it. cond(pred, x -> w, x -> -x, [x]) over x [s0, 3] declares [s0, 3];
// the true branch returns the [3, 3] parameter-like input w. With x [3, 3]
// (s0 = 3) it fits and runs; with x [2, 3] (s0 = 2) it is refused (it used
// to run and answer [3, 3]). A size over a symbol no operand gives (an
// unbacked u0) is not checked.
std::shared_ptr<Graph> sym_branch(bool return_w) {
  auto g = std::make_shared<Graph>();
  GraphBuilder b(*g);
  Value* x = b.input("x", GraphBuilder::tensor_meta(DType::Float32, {SymDim(SymExpr{"s0", 2}), 3}));
  Value* w = b.input("w", GraphBuilder::tensor_meta({3, 3}));
  b.output(return_w ? w : b.call("aten.neg.default", {{"self", x}}, GraphBuilder::tensor_meta(DType::Float32, {SymDim(SymExpr{"s0", 2}), 3})));
  return g;
}

void build_sym_cond(ExportedProgram& ep, const std::string& declared_symbol) {
  GraphBuilder b(ep);
  Value* pred = b.user_input("pred", std::vector<int64_t>{}, DType::Bool);
  Value* x = b.user_input("x", GraphBuilder::tensor_meta(DType::Float32, {SymDim(SymExpr{"s0", 2}), 3}));
  Value* w = b.user_input("w", {3, 3});
  ep.range_constraints.emplace_back("s0", RangeConstraint{2, 8});
  Value* c = b.call("higher_order.cond",
                    {{"", pred}, {"", Argument(GraphArg{"true_graph_0", sym_branch(true)})},
                     {"", Argument(GraphArg{"false_graph_0", sym_branch(false)})}, {"", Argument(TensorList{{x, w}})}},
                    GraphBuilder::tensor_meta(DType::Float32, {SymDim(SymExpr{declared_symbol, std::nullopt}), 3}));
  b.user_output(c);
}

TEST(ControlFlow, SubgraphResultsMustMatchTheDeclaredSymbolicSizes_NEG) {
  ExportedProgram ep;
  build_sym_cond(ep, "s0");
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  const Tensor w = float_tensor({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto fits = (*ex)->run(std::vector<EValue>{scalar_bool(true), float_tensor({3, 3}, std::vector<float>(9, 1.f)), w});
  ASSERT_TRUE(fits.ok()) << fits.error().message();  // s0 = 3: [3, 3] is what is declared
  auto neg = (*ex)->run(std::vector<EValue>{scalar_bool(false), float_tensor({2, 3}, {1, 2, 3, 4, 5, 6}), w});
  ASSERT_TRUE(neg.ok()) << neg.error().message();
  EXPECT_EQ(float_values((*neg)[0].tensor()), (std::vector<float>{-1, -2, -3, -4, -5, -6}));
  auto out = (*ex)->run(std::vector<EValue>{scalar_bool(true), float_tensor({2, 3}, {1, 2, 3, 4, 5, 6}), w});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message().find("the true branch returned float32 [3, 3] as output 0 'cond', declared float32 "
                                       "[s0, 3] (s0 = 2 for this call)"),
            std::string::npos) << out.error().message();

  ExportedProgram unbacked;  // declared [u0, 3]: no operand gives u0, so it is not checked
  build_sym_cond(unbacked, "u0");
  unbacked.range_constraints.emplace_back("u0", RangeConstraint{0, std::nullopt});
  auto ex2 = Executor::create(unbacked);
  ASSERT_TRUE(ex2.ok()) << ex2.error().message();
  auto ok = (*ex2)->run(std::vector<EValue>{scalar_bool(true), float_tensor({2, 3}, {1, 2, 3, 4, 5, 6}), w});
  EXPECT_TRUE(ok.ok()) << ok.error().message();
}

// _NEG: a while_loop body that returns a concrete [4] (its extra input e)
// for the [s0] carry runs when s0 = 4 and is refused on the first
// iteration when s0 = 2 (the probe's while_loop_tanh: [4, 4] for [s77, 4]).
TEST(ControlFlow, WhileLoopBodyMustKeepTheSymbolicCarrySize_NEG) {
  const TensorMeta carry = GraphBuilder::tensor_meta(DType::Float32, {SymDim(SymExpr{"s0", 2})});
  auto make = [&](bool cond_graph) {
    auto g = std::make_shared<Graph>();
    GraphBuilder b(*g);
    Value* i = b.input("i", GraphBuilder::tensor_meta(std::vector<int64_t>{}, DType::Int64));
    b.input("x", carry);
    Value* e = b.input("e", GraphBuilder::tensor_meta({4}));
    if (cond_graph) {
      b.output(b.call("aten.lt.Scalar", {{"self", i}, {"other", Argument(int64_t{2})}}, std::vector<int64_t>{}, DType::Bool));
    } else {
      b.output(b.call("aten.add.Scalar", {{"self", i}, {"other", Argument(int64_t{1})}}, std::vector<int64_t>{}, DType::Int64));
      b.output(e);
    }
    return g;
  };
  ExportedProgram ep;
  {
    GraphBuilder b(ep);
    Value* i0 = b.user_input("i0", std::vector<int64_t>{}, DType::Int64);
    Value* x = b.user_input("x", carry);
    Value* e = b.user_input("e", {4});
    ep.range_constraints.emplace_back("s0", RangeConstraint{2, 8});
    std::vector<Value*> out = b.call("higher_order.while_loop",
                                     {{"", Argument(GraphArg{"while_loop_cond_graph_0", make(true)})},
                                      {"", Argument(GraphArg{"while_loop_body_graph_0", make(false)})},
                                      {"", Argument(TensorList{{i0, x}})},
                                      {"", Argument(TensorList{{e}})}},
                                     {GraphBuilder::tensor_meta(std::vector<int64_t>{}, DType::Int64), carry});
    b.user_output(out[0]);
    b.user_output(out[1]);
  }
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  Tensor i0 = Tensor::empty(DType::Int64, {});
  *kernels::mdata<int64_t>(i0) = 0;
  const Tensor e = float_tensor({4}, {1, 2, 3, 4});
  auto fits = (*ex)->run(std::vector<EValue>{i0, float_tensor({4}, {0, 0, 0, 0}), e});  // s0 = 4
  ASSERT_TRUE(fits.ok()) << fits.error().message();
  EXPECT_EQ(float_values((*fits)[1].tensor()), (std::vector<float>{1, 2, 3, 4}));
  auto out = (*ex)->run(std::vector<EValue>{i0, float_tensor({2}, {0, 0}), e});  // s0 = 2
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message().find("body_fn, iteration 0, returned float32 [4] as output 1"), std::string::npos)
      << out.error().message();
  EXPECT_NE(out.error().message().find("declared float32 [s0] (s0 = 2 for this call)"), std::string::npos)
      << out.error().message();
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
