// Executor behaviour on hand-built graphs; every expected value is computed
// by hand (or by a plain loop written out here).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <thread>

#include "lathe/ir/program_test_support.h"
#include "lathe/ir/graph_assembler.h"
#include "lathe/ir/graph_builder.h"
#include "lathe/runtime/executor.h"
#include "lathe/runtime/kernels/util.h"
#include "lathe/runtime/runtime_test_support.h"

namespace lathe {
namespace {

using testing::float_tensor;
using testing::float_values;

int64_t int_value(const Tensor& t) { return *kernels::cdata<int64_t>(kernels::as_contiguous(t)); }

class ExecutorTest : public testing::ProgramTest {};

TEST_F(ExecutorTest, MissingKernelsAreReportedAtPlanTimeWithTheirNodes) {
  Value* x = b.user_input("x", {2});
  Value* f = b.call("aten.frobnicate.default", {{"self", x}}, {2});
  Value* f1 = b.call("aten.frobnicate.default", {{"self", f}}, {2});
  Value* r = b.call("aten.relu.default", {{"self", f1}}, {2});
  Value* q = b.call("aten.quux.Tensor", {{"self", r}}, {2});
  b.user_output(q);
  testing::expect_create_fails(ep, {"no kernel for 2 op(s)",
                                    "aten.frobnicate.default (nodes 'frobnicate', 'frobnicate_1')",
                                    "aten.quux.Tensor (node 'quux')"});
}

// count += 1 every call; output = x * count.
void build_counter(ExportedProgram& ep, bool return_old_count = false) {
  GraphBuilder b(ep);
  Value* count = b.buffer("count", std::vector<int64_t>{}, true, DType::Int64);
  Value* x = b.user_input("x", {3});
  Value* next = b.call("aten.add.Tensor", {{"self", count}, {"other", Argument(int64_t{1})}}, std::vector<int64_t>{},
                       DType::Int64);
  Value* y = b.call("aten.mul.Tensor", {{"self", x}, {"other", next}}, {3});
  b.buffer_mutation(next, "count");
  b.user_output(y);
  if (return_old_count) b.user_output(count);
}

TEST_F(ExecutorTest, BufferMutationsCarryAcrossCallsWithoutTouchingTheProgram) {
  ExportedProgram ep;
  build_counter(ep);
  const int64_t c0 = int_value(*ep.buffers.find("count"));
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  const Tensor x = float_tensor({3}, {1, -2, 0.5});
  for (int64_t k = 1; k <= 3; ++k) {
    auto out = (*ex)->run(std::vector<Tensor>{x});
    ASSERT_TRUE(out.ok()) << out.error().message();
    const float c = static_cast<float>(c0 + k);
    EXPECT_EQ(float_values((*out)[0]), (std::vector<float>{c, -2 * c, 0.5f * c}));
    EXPECT_EQ(int_value(*(*ex)->buffer("count")), c0 + k);
  }
  EXPECT_EQ(int_value(*ep.buffers.find("count")), c0);  // the program's state is read only
  EXPECT_EQ((*ex)->mutated_buffers(), std::vector<std::string>{"count"});
  (*ex)->reset_state();
  EXPECT_EQ(int_value(*(*ex)->buffer("count")), c0);
}

TEST_F(ExecutorTest, ReturnedStateIsNotOverwrittenByTheNextCall) {
  ExportedProgram ep;
  build_counter(ep, /*return_old_count=*/true);
  const int64_t c0 = int_value(*ep.buffers.find("count"));
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  const Tensor x = float_tensor({3}, {1, 1, 1});
  std::vector<Tensor> old_counts;
  for (int k = 0; k < 4; ++k) {
    auto out = (*ex)->run(std::vector<Tensor>{x});
    ASSERT_TRUE(out.ok()) << out.error().message();
    old_counts.push_back((*out)[1]);
  }
  for (int k = 0; k < 4; ++k) EXPECT_EQ(int_value(old_counts[k]), c0 + k) << "call " << k;
}

TEST_F(ExecutorTest, OutputsSurviveLaterCalls) {
  Value* x = b.user_input("x", {4});
  Value* a = b.call("aten.relu.default", {{"self", x}}, {4});
  Value* n = b.call("aten.neg.default", {{"self", a}}, {4});
  Value* m = b.call("aten.mul.Tensor", {{"self", n}, {"other", Argument(2.0)}}, {4});
  b.user_output(m);
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok());
  auto first = (*ex)->run(std::vector<Tensor>{float_tensor({4}, {1, -1, 2, 3})});
  auto second = (*ex)->run(std::vector<Tensor>{float_tensor({4}, {5, 5, 5, 5})});
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(float_values((*first)[0]), (std::vector<float>{-2, 0, -4, -6}));
  EXPECT_EQ(float_values((*second)[0]), (std::vector<float>{-10, -10, -10, -10}));
}

TEST_F(ExecutorTest, ChainOfIntermediatesSharesTwoBuffers) {
  Value* v = b.user_input("x", {64});
  for (int i = 0; i < 10; ++i) v = b.call("aten.neg.default", {{"self", v}}, {64});
  b.user_output(v);
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok());
  const MemoryStats& s = (*ex)->memory_stats();
  EXPECT_EQ(s.planned_values, 9u);    // the last one is returned: fresh memory per call
  EXPECT_EQ(s.unplanned_values, 1u);
  EXPECT_EQ(s.buffers, 2u);           // v_i is still read while v_{i+1} is written
  EXPECT_EQ(s.buffer_bytes, 2u * 64 * 4);
  EXPECT_EQ(s.unshared_bytes, 9u * 64 * 4);
  std::vector<float> in(64);
  for (int i = 0; i < 64; ++i) in[i] = static_cast<float>(i);
  auto out = (*ex)->run(std::vector<Tensor>{float_tensor({64}, in)});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(float_values((*out)[0]), in);  // ten negations
}

// a = relu(x); v = t(a) is a view of a's buffer; b = neg(x) must not take
// a's buffer while v is still to be read.
TEST_F(ExecutorTest, ViewsKeepTheirBaseBufferAlive) {
  Value* x = b.user_input("x", {3, 3});
  Value* a = b.call("aten.relu.default", {{"self", x}}, {3, 3});
  Value* v = b.call("aten.t.default", {{"self", a}}, {3, 3});
  Value* n = b.call("aten.neg.default", {{"self", x}}, {3, 3});
  Value* e = b.call("aten.exp.default", {{"self", n}}, {3, 3});
  Value* c = b.call("aten.add.Tensor", {{"self", v}, {"other", e}}, {3, 3});
  b.user_output(c);
  std::vector<float> xs = {1, -2, 3, -4, 5, -6, 7, -8, 9};
  for (bool plan : {true, false}) {
    ExecutorOptions o;
    o.plan_memory = plan;
    auto ex = Executor::create(ep, o);
    ASSERT_TRUE(ex.ok());
    auto out = (*ex)->run(std::vector<Tensor>{float_tensor({3, 3}, xs)});
    ASSERT_TRUE(out.ok()) << out.error().message();
    std::vector<float> got = float_values((*out)[0]);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        const float expect = std::max(xs[j * 3 + i], 0.0f) + std::exp(-xs[i * 3 + j]);
        EXPECT_FLOAT_EQ(got[i * 3 + j], expect) << i << "," << j << " plan " << plan;
      }
  }
}

TEST_F(ExecutorTest, ChecksUserInputsAgainstTheSignature) {
  Value* x = b.user_input("x", {2, 3});
  b.user_output(b.call("aten.relu.default", {{"self", x}}, {2, 3}));
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok());
  auto wrong_shape = (*ex)->run(std::vector<Tensor>{Tensor::empty(DType::Float32, {3, 2})});
  ASSERT_FALSE(wrong_shape.ok());
  EXPECT_EQ(wrong_shape.error().message(), "input 0 'x': expected float32 [2, 3], got float32 [3, 2]");
  auto wrong_dtype = (*ex)->run(std::vector<Tensor>{Tensor::empty(DType::Int64, {2, 3})});
  ASSERT_FALSE(wrong_dtype.ok());
  EXPECT_EQ(wrong_dtype.error().message(), "input 0 'x': expected float32 [2, 3], got int64 [2, 3]");
  auto none = (*ex)->run(std::vector<Tensor>{});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message(), "expected 1 user input(s) (x), got 0");
}

// _NEG, issue 33 item 23: a parameter or buffer placeholder whose declared
// shape or dtype disagrees with its stored weight is refused when the
// Executor is made (every run path: lathe run, Python, view), as verify()
// refuses it, naming the placeholder, the state entry and both sides. It
// used to run, the kernels reading the stored [3, 3] as if it were [3, 4].
TEST_F(ExecutorTest, StateThatDisagreesWithItsPlaceholderIsRefused_NEG) {
  Value* x = b.user_input("x", {2, 3});
  Value* w = b.parameter("linear.weight", {3, 3});
  Value* bias = b.buffer("bias", {3});
  Value* y = b.call("aten.mm.default", {{"self", x}, {"mat2", w}}, {2, 3});
  b.user_output(b.call("aten.add.Tensor", {{"self", y}, {"other", bias}}, {2, 3}));
  ASSERT_TRUE(Executor::create(ep).ok());

  w->set_meta(GraphBuilder::tensor_meta({3, 4}));
  testing::expect_create_fails(ep, {"input 'p_linear_weight': parameter 'linear.weight': state tensor 'linear.weight' "
                                    "has shape [3, 3] but the placeholder has [3, 4]"});
  w->set_meta(GraphBuilder::tensor_meta({3, 3, 1}));
  testing::expect_create_fails(ep, {"state tensor 'linear.weight' has shape [3, 3] but the placeholder has [3, 3, 1]"});
  w->set_meta(GraphBuilder::tensor_meta({3, 3}, DType::Int64));
  testing::expect_create_fails(ep, {"input 'p_linear_weight': parameter 'linear.weight': state tensor 'linear.weight' "
                                    "is float32 but the placeholder is int64"});
  w->set_meta(GraphBuilder::tensor_meta({3, 3}));
  bias->set_meta(GraphBuilder::tensor_meta({4}));
  testing::expect_create_fails(ep, {"input 'b_bias': buffer 'bias': state tensor 'bias' has shape [3] but the "
                                    "placeholder has [4]"});
  bias->set_meta(GraphBuilder::tensor_meta({3}, DType::Float16));
  testing::expect_create_fails(ep, {"state tensor 'bias' is float32 but the placeholder is float16"});
  bias->set_meta(GraphBuilder::tensor_meta({3}));
  EXPECT_TRUE(Executor::create(ep).ok());
}

TEST_F(ExecutorTest, KernelErrorsNameTheNode) {
  Value* x = b.user_input("x", {2, 3});
  Value* y = b.user_input("y", {4, 5});
  b.user_output(b.call("aten.mm.default", {{"self", x}, {"mat2", y}}, {2, 5}));
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok());
  auto out = (*ex)->run(std::vector<Tensor>{Tensor::empty(DType::Float32, {2, 3}), Tensor::empty(DType::Float32, {4, 5})});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().message(), "node 'mm' (aten.mm.default): mm: shapes [2, 3] and [4, 5] cannot be multiplied");
}

// Sizes read at run time feed a view: x [2, 6] -> view(x, [sym_size(x, 1) // 2, -1]) = [3, 4].
TEST_F(ExecutorTest, SymbolicSizesComputedAtRunTime) {
  Value* x = b.user_input("x", {2, 6});
  Value* s = b.call_sym_int("aten.sym_size.int", {{"self", x}, {"dim", Argument(int64_t{1})}}, SymDim(int64_t{6}));
  Value* h = b.call_sym_int("_operator.floordiv", {{"a", s}, {"b", Argument(int64_t{2})}}, SymDim(int64_t{3}));
  Value* v = b.call("aten.view.default", {{"self", x}, {"size", Argument(SymIntList{{SymIntArg{h}, SymIntArg{int64_t{-1}}}})}},
                    {3, 4});
  b.user_output(v);
  b.user_output(h);
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  std::vector<float> xs(12);
  for (int i = 0; i < 12; ++i) xs[i] = static_cast<float>(i);
  auto out = (*ex)->run(std::vector<EValue>{float_tensor({2, 6}, xs)});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ((*out)[0].tensor().sizes, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(float_values((*out)[0].tensor()), xs);
  EXPECT_EQ((*out)[1].to_int(), 3);
}

// Python operators on SymInts, each checked against Python's own rules.
TEST_F(ExecutorTest, SymbolicArithmeticFollowsPython) {
  struct Case {
    const char* op;
    int64_t a, b;
    EValue expect;
  };
  const std::vector<Case> cases = {
      {"_operator.add", -7, 2, EValue(int64_t{-5})},   {"_operator.sub", -7, 2, EValue(int64_t{-9})},
      {"_operator.mul", -7, 2, EValue(int64_t{-14})},  {"_operator.floordiv", -7, 2, EValue(int64_t{-4})},
      {"_operator.mod", -7, 2, EValue(int64_t{1})},    {"_operator.truediv", -7, 2, EValue(-3.5)},
      {"_operator.pow", -7, 2, EValue(int64_t{49})},   {"torch.sym_max", -7, 2, EValue(int64_t{2})},
      {"torch.sym_min", -7, 2, EValue(int64_t{-7})},   {"_operator.lt", -7, 2, EValue(true)},
      {"_operator.ge", -7, 2, EValue(false)},          {"_operator.eq", 2, 2, EValue(true)},
      {"_operator.ne", 2, 2, EValue(false)},           {"_operator.le", 2, 2, EValue(true)},
      {"_operator.gt", 3, 2, EValue(true)},            {"_operator.and_", 3, 0, EValue(false)},
      {"_operator.or_", 3, 0, EValue(true)},
  };
  for (const Case& c : cases) {
    ExportedProgram ep;
    GraphBuilder b(ep);
    Value* a = b.sym_int_input("a", SymExpr{"s0", std::nullopt});
    ep.range_constraints.emplace_back("s0", RangeConstraint{});  // an int input: unbounded
    Value* r = b.call_sym_int(c.op, {{"a", a}, {"b", Argument(c.b)}}, SymDim(SymExpr{"r", std::nullopt}));
    b.user_output(r);
    auto ex = Executor::create(ep);
    ASSERT_TRUE(ex.ok()) << c.op << ": " << ex.error().message();
    auto out = (*ex)->run(std::vector<EValue>{EValue(c.a)});
    ASSERT_TRUE(out.ok()) << c.op << ": " << out.error().message();
    EXPECT_EQ((*out)[0].describe(), c.expect.describe()) << c.op;
  }
  for (auto [op, in, expect] : std::vector<std::tuple<const char*, int64_t, EValue>>{
           {"_operator.neg", 5, EValue(int64_t{-5})}, {"torch.sym_not", 0, EValue(true)},
           {"torch.sym_float", 3, EValue(3.0)}, {"math.ceil", 4, EValue(int64_t{4})},
           {"math.floor", 4, EValue(int64_t{4})}, {"torch.sym_int", 4, EValue(int64_t{4})},
           {"torch._sym_sqrt", 9, EValue(3.0)}}) {
    ExportedProgram ep;
    GraphBuilder b(ep);
    Value* a = b.sym_int_input("a", SymExpr{"s0", std::nullopt});
    ep.range_constraints.emplace_back("s0", RangeConstraint{});  // an int input: unbounded
    b.user_output(b.call_sym_int(op, {{"a", a}}, SymDim(SymExpr{"r", std::nullopt})));
    auto ex = Executor::create(ep);
    ASSERT_TRUE(ex.ok()) << op;
    auto out = (*ex)->run(std::vector<EValue>{EValue(in)});
    ASSERT_TRUE(out.ok()) << op << ": " << out.error().message();
    EXPECT_EQ((*out)[0].describe(), expect.describe()) << op;
  }
}

// _NEG: Python's integers never overflow and Lathe's symbolic ones are
// int64, so a result past 64 bits is an error naming the operation, never
// a wrapped size or a SIGFPE (INT64_MIN // -1 traps in C++); a huge
// exponent is refused at once, not looped over.
TEST_F(ExecutorTest, SymbolicArithmeticPastInt64IsAnError_NEG) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  for (auto [op, a, b, expect] : std::vector<std::tuple<const char*, int64_t, int64_t, std::string>>{
           {"_operator.floordiv", kMin, -1, "integer overflow: -9223372036854775808 // -1 does not fit in 64 bits"},
           {"_operator.mul", int64_t{1} << 62, 2, "integer overflow: 4611686018427387904 * 2 does not fit in 64 bits"},
           {"_operator.add", kMax, 1, "integer overflow: 9223372036854775807 + 1 does not fit in 64 bits"},
           {"_operator.sub", kMin, 1, "integer overflow: -9223372036854775808 - 1 does not fit in 64 bits"},
           {"_operator.pow", 3, 64, "integer overflow: 3 ** 64 does not fit in 64 bits"},
           {"_operator.pow", 2, int64_t{1} << 62, "integer overflow: 2 ** 4611686018427387904 does not fit in 64 bits"},
           {"_operator.floordiv", 5, 0, "integer division by zero"},
           {"_operator.mod", 5, 0, "integer division by zero"}}) {
    ExportedProgram ep;
    GraphBuilder g(ep);
    Value* x = g.sym_int_input("a", SymExpr{"s0", std::nullopt});
    ep.range_constraints.emplace_back("s0", RangeConstraint{});  // an int input: unbounded
    g.user_output(g.call_sym_int(op, {{"a", x}, {"b", Argument(b)}}, SymDim(SymExpr{"r", std::nullopt})));
    auto ex = Executor::create(ep);
    ASSERT_TRUE(ex.ok()) << op;
    auto out = (*ex)->run(std::vector<EValue>{EValue(a)});
    ASSERT_FALSE(out.ok()) << op << " " << a << " " << b << " gave " << (*out)[0].describe();
    EXPECT_NE(out.error().message().find(expect), std::string::npos) << out.error().message();
  }
  ExportedProgram ep;  // the one that fits: INT64_MIN % -1 is 0 in Python
  GraphBuilder g(ep);
  Value* x = g.sym_int_input("a", SymExpr{"s0", std::nullopt});
  ep.range_constraints.emplace_back("s0", RangeConstraint{});  // an int input: unbounded
  g.user_output(g.call_sym_int("_operator.mod", {{"a", x}, {"b", Argument(int64_t{-1})}}, SymDim(SymExpr{"r", std::nullopt})));
  auto out = (*Executor::create(ep))->run(std::vector<EValue>{EValue(kMin)});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ((*out)[0].to_int(), 0);
}

TEST_F(ExecutorTest, SizeStrideNumelItemAndAssertions) {
  Value* x = b.user_input("x", {2, 3});
  Value* t = b.call("aten.t.default", {{"self", x}}, {3, 2});
  b.user_output(b.call_sym_int("aten.sym_numel.default", {{"self", x}}, SymDim(int64_t{6})));
  b.user_output(b.call_sym_int("aten.sym_stride.int", {{"self", t}, {"dim", Argument(int64_t{0})}}, SymDim(int64_t{1})));
  b.user_output(b.call_sym_int("aten.sym_storage_offset.default", {{"self", t}}, SymDim(int64_t{0})));
  Value* s = b.call("aten.sum.default", {{"self", x}}, std::vector<int64_t>{});
  Value* item = b.call_sym_int("aten._local_scalar_dense.default", {{"self", s}}, SymDim(SymExpr{"u0", std::nullopt}));
  b.user_output(item);
  Value* big = b.call_sym_int("_operator.gt", {{"a", item}, {"b", Argument(int64_t{100})}}, SymDim(SymExpr{"u1", std::nullopt}));
  // A node with no outputs, as torch.export writes runtime assertions.
  GraphAssembler(b.graph())
      .create_node(GraphBuilder::full_target("aten._assert_scalar.default"),
                   {NamedArgument{"self", GraphBuilder::value_arg(big), ArgKind::Positional},
                    NamedArgument{"assert_msg", Argument(std::string("sum > 100")), ArgKind::Positional}});
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  auto small = (*ex)->run(std::vector<EValue>{float_tensor({2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_FALSE(small.ok());
  EXPECT_NE(small.error().message().find("runtime assertion failed: sum > 100"), std::string::npos) << small.error().message();
  auto ok = (*ex)->run(std::vector<EValue>{float_tensor({2, 3}, {100, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(ok.ok()) << ok.error().message();
  EXPECT_EQ((*ok)[0].to_int(), 6);
  EXPECT_EQ((*ok)[1].to_int(), 1);   // t's dim 0 is x's dim 1
  EXPECT_EQ((*ok)[2].to_int(), 0);
  EXPECT_EQ((*ok)[3].to_double(), 120.0);
}

// n.item() constrained as torch.export (before 2.13's _assert_scalar form)
// wrote it: sym_constrain_range_for_size(u0, min=2, max=5) and
// sym_constrain_range(u0, max=4). Nodes without outputs, as torch writes them.
TEST_F(ExecutorTest, SymConstrainRangeRefusesAnItemOutsideItsRange_NEG) {
  Value* n = b.user_input("n", std::vector<int64_t>{}, DType::Int64);
  Value* item = b.call_sym_int("aten._local_scalar_dense.default", {{"self", n}}, SymDim(SymExpr{"u0", std::nullopt}));
  GraphAssembler ga(b.graph());
  ga.create_node(GraphBuilder::full_target("aten.sym_constrain_range_for_size.default"),
                 {NamedArgument{"size", GraphBuilder::value_arg(item), ArgKind::Positional},
                  NamedArgument{"min", Argument(int64_t{2}), ArgKind::Keyword},
                  NamedArgument{"max", Argument(int64_t{5}), ArgKind::Keyword}});
  ga.create_node(GraphBuilder::full_target("aten.sym_constrain_range.default"),
                 {NamedArgument{"size", GraphBuilder::value_arg(item), ArgKind::Positional},
                  NamedArgument{"max", Argument(int64_t{4}), ArgKind::Keyword}});
  b.user_output(item);
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  auto run = [&](int64_t v) {
    Tensor t = Tensor::empty(DType::Int64, {});
    *kernels::mdata<int64_t>(t) = v;
    return (*ex)->run(std::vector<EValue>{EValue(t)});
  };
  auto ok = run(3);
  ASSERT_TRUE(ok.ok()) << ok.error().message();
  EXPECT_EQ((*ok)[0].to_int(), 3);
  auto low = run(1);
  ASSERT_FALSE(low.ok());
  EXPECT_NE(low.error().message().find("value 1 outside its constrained range [2, 5]"), std::string::npos)
      << low.error().message();
  auto high = run(5);  // inside [2, 5], outside the second constraint's [-inf, 4]
  ASSERT_FALSE(high.ok());
  EXPECT_NE(high.error().message().find("value 5 outside its constrained range [-inf, 4]"), std::string::npos)
      << high.error().message();
}

// copy_ writes into its destination (a user input here), as in PyTorch.
TEST_F(ExecutorTest, CopyInPlaceWritesItsDestination) {
  Value* dst = b.user_input("dst", {2, 2});
  Value* src = b.user_input("src", {2});
  Value* c = b.call("aten.copy_.default", {{"self", dst}, {"src", src}}, {2, 2});
  b.user_output(c);
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok());
  Tensor d = float_tensor({2, 2}, {0, 0, 0, 0});
  auto out = (*ex)->run(std::vector<Tensor>{d, float_tensor({2}, {7, 8})});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(float_values(d), (std::vector<float>{7, 8, 7, 8}));
  EXPECT_EQ((*out)[0].storage, d.storage);
}

// add_ as torchao's quantized linears use it: the bias added in place to
// an intermediate (transposed here, so the write goes through strides),
// alpha applied, and the inputs untouched. Hand-checked values.
TEST_F(ExecutorTest, AddInPlaceWritesThroughTheIntermediate) {
  Value* x = b.user_input("x", {2, 3});
  Value* bias = b.user_input("bias", {2});
  Value* t = b.call("aten.permute.default", {{"self", b.call("aten.mul.Scalar", {{"self", x}, {"other", 2.0}}, {2, 3})},
                                             {"dims", IntList{{1, 0}}}},
                    {3, 2});
  Value* a = b.call("aten.add_.Tensor", {{"self", t}, {"other", bias}, {"alpha", 10.0}}, {3, 2});
  b.user_output(b.call("aten.add_.Scalar", {{"self", a}, {"other", 0.5}}, {3, 2}));
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  const Tensor xin = float_tensor({2, 3}, {1, 2, 3, 4, 5, 6}), bin = float_tensor({2}, {1, -1});
  auto out = (*ex)->run(std::vector<Tensor>{xin, bin});
  ASSERT_TRUE(out.ok()) << out.error().message();
  // 2 * x^T = [[2, 8], [4, 10], [6, 12]]; + 10 * [1, -1]; + 0.5
  EXPECT_EQ(float_values(kernels::contiguous_copy((*out)[0])), (std::vector<float>{12.5f, -1.5f, 14.5f, 0.5f, 16.5f, 2.5f}));
  EXPECT_EQ(float_values(xin), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(float_values(bin), (std::vector<float>{1, -1}));
}

TEST_F(ExecutorTest, ConcurrentExecutorsOverOneProgram) {
  Value* w = b.parameter("w", {16, 16});
  Value* x = b.user_input("x", {4, 16});
  Value* h = b.call("aten.mm.default", {{"self", x}, {"mat2", w}}, {4, 16});
  Value* r = b.call("aten.tanh.default", {{"self", h}}, {4, 16});
  b.user_output(b.call("aten.sum.dim_IntList", {{"self", r}, {"dim", IntList{{1}}}}, {4}));
  std::vector<float> xs(64);
  for (int i = 0; i < 64; ++i) xs[i] = 0.01f * static_cast<float>(i % 13);
  const Tensor xin = float_tensor({4, 16}, xs);
  auto ref_ex = Executor::create(ep);
  ASSERT_TRUE(ref_ex.ok());
  const std::vector<float> expect = float_values((*(*ref_ex)->run(std::vector<Tensor>{xin}))[0]);
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&, k] {
      auto ex = Executor::create(ep);
      for (int i = 0; i < 50; ++i) {
        auto out = (*ex)->run(std::vector<Tensor>{xin});
        if (!out.ok() || float_values((*out)[0]) != expect) ++mismatches[k];
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches, (std::vector<int>{0, 0, 0, 0}));
}

}  // namespace
}  // namespace lathe
