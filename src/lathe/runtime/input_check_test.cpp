// Input checks before a call runs: symbolic dims against their symbol's
// range (the ranges are the fixtures' torch.export Dims, listed in
// fixtures/manifest.json "dynamic"), static dims, dtype and rank, and one
// symbol having one size across inputs.
#include <gtest/gtest.h>

#include "lathe/ir/graph_builder.h"
#include "lathe/runtime/executor.h"
#include "lathe/serde/pt2.h"
#include "support/testing.h"

namespace lathe {
namespace {

struct Loaded {
  Program program;
  std::unique_ptr<Executor> ex;
};

Loaded load(const std::string& fixture, const std::string& method = "model") {
  auto p = read_pt2(testing::source_path("fixtures/" + fixture + ".pt2"));
  EXPECT_TRUE(p.ok()) << p.error().message();
  Loaded l{std::move(p).value(), nullptr};
  auto ex = Executor::create(*l.program.find_method(method)->program);
  EXPECT_TRUE(ex.ok()) << ex.error().message();
  l.ex = std::move(ex).value();
  return l;
}

std::string run_error(Executor& ex, std::vector<Tensor> inputs) {
  auto out = ex.run(inputs);
  return out.ok() ? "" : out.error().message();
}

Tensor zeros(std::vector<int64_t> sizes, DType dtype = DType::Float32) { return Tensor::empty(dtype, std::move(sizes)); }

TEST(InputCheck, PlainSymbolReadsBothSpellings) {
  EXPECT_EQ(plain_symbol("s77"), "s77");
  EXPECT_EQ(plain_symbol("Symbol('s77', positive=True, integer=True)"), "s77");
  EXPECT_EQ(plain_symbol("Mul(Integer(2), Symbol('s77', positive=True, integer=True))"), std::nullopt);
  EXPECT_EQ(plain_symbol("2*s77"), std::nullopt);
}

// mlp's batch is Dim("batch", min=1, max=64): both ends run.
TEST(InputCheck, MlpRunsAtBothEndsOfItsBatchRange) {
  Loaded l = load("mlp");
  for (int64_t batch : {1, 64}) {
    auto out = l.ex->run(std::vector<Tensor>{zeros({batch, 64})});
    ASSERT_TRUE(out.ok()) << batch << ": " << out.error().message();
    EXPECT_EQ((*out)[0].sizes, (std::vector<int64_t>{batch, 10}));
  }
}

// Inputs each fixture's signature refuses, and what the refusal must say.
// mlp's batch is in [1, 64]; transformer_encoder's batch in [1, 16] and its
// sequence (a second symbol) in [2, 128]; decoder_lm's prefill takes [2, 32]
// tokens.
TEST(InputCheck, RefusalsNameTheInputDimAndRange_NEG) {
  struct Case {
    const char* what;
    const char* fixture;
    const char* method;
    std::vector<Tensor> inputs;
    std::vector<std::string> says;
  };
  const std::vector<Case> cases = {
      {"mlp batch above its range", "mlp", "model", {zeros({65, 64})}, {"input 'x' dim 0 is 65, outside", "range [1, 64]"}},
      {"mlp batch below its range", "mlp", "model", {zeros({0, 64})}, {"input 'x' dim 0 is 0, outside", "range [1, 64]"}},
      {"encoder sequence below its range", "transformer_encoder", "model", {zeros({2, 1, 64})},
       {"input 'x' dim 1 is 1, outside", "range [2, 128]"}},
      {"decoder prefill longer than its range", "decoder_lm", "prefill", {zeros({1, 33}, DType::Int64)},
       {"input 'tokens' dim 1 is 33, outside", "range [2, 32]"}},
      {"a static dim that differs", "mlp", "model", {zeros({2, 63})},
       {"input 0 'x': expected float32 [s", ", 64], got float32 [2, 63]"}},
      {"a wrong rank", "mlp", "model", {zeros({2, 64, 1})}, {"got float32 [2, 64, 1]"}},
      {"a wrong dtype", "mlp", "model", {zeros({2, 64}, DType::Float64)}, {"expected float32", "got float64 [2, 64]"}},
      {"a wrong input count", "mlp", "model", {}, {"expected 1 user input(s) (x), got 0"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Loaded l = load(c.fixture, c.method);
    const std::string msg = run_error(*l.ex, c.inputs);
    for (const std::string& s : c.says) EXPECT_NE(msg.find(s), std::string::npos) << msg;
  }
}

// x: [s0, 3], y: [s0, 3], out = x + y; s0 in [2, 8].
void build_shared_symbol(ExportedProgram& ep) {
  GraphBuilder b(ep);
  const SymDim s0 = SymExpr{"Symbol('s0', positive=True, integer=True)", int64_t{4}};
  Value* x = b.user_input("x", GraphBuilder::tensor_meta(DType::Float32, {s0, 3}));
  Value* y = b.user_input("y", GraphBuilder::tensor_meta(DType::Float32, {s0, 3}));
  b.user_output(b.call("aten.add.Tensor", {{"self", x}, {"other", y}}, GraphBuilder::tensor_meta(DType::Float32, {s0, 3})));
  ep.range_constraints.emplace_back("s0", RangeConstraint{2, 8});
}

TEST(InputCheck, SharedSymbolRunsWhenSizesAgree) {
  ExportedProgram ep;
  build_shared_symbol(ep);
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  auto out = (*ex)->run(std::vector<Tensor>{zeros({5, 3}), zeros({5, 3})});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ((*out)[0].sizes, (std::vector<int64_t>{5, 3}));
}

TEST(InputCheck, SharedSymbolWithTwoSizes_NEG) {
  ExportedProgram ep;
  build_shared_symbol(ep);
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok());
  const std::string msg = run_error(**ex, {zeros({5, 3}), zeros({6, 3})});
  EXPECT_EQ(msg, "input 'y' dim 0 is 6, but input 'x' dim 0 is 5 and both are s0");
}

TEST(InputCheck, UnboundedMaxIsNotChecked) {
  ExportedProgram ep;
  build_shared_symbol(ep);
  ep.range_constraints[0].second.max_val.reset();
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok());
  EXPECT_EQ(run_error(**ex, {zeros({100, 3}), zeros({100, 3})}), "");
  EXPECT_EQ(run_error(**ex, {zeros({1, 3}), zeros({1, 3})}), "input 'x' dim 0 is 1, outside s0's range [2, inf]");
}

}  // namespace
}  // namespace lathe

namespace lathe {
namespace {

// A size passed as an int: n is s0 in [1, 4], and x is [s0, 2].
void build_sym_int_input(ExportedProgram& ep) {
  GraphBuilder b(ep);
  const SymDim s0 = SymExpr{"Symbol('s0', positive=True, integer=True)", int64_t{3}};
  Value* x = b.user_input("x", GraphBuilder::tensor_meta(DType::Float32, {s0, 2}));
  b.sym_int_input("n", SymExpr{"Symbol('s0', positive=True, integer=True)", int64_t{3}});
  b.user_output(b.call("aten.relu.default", {{"self", x}}, GraphBuilder::tensor_meta(DType::Float32, {s0, 2})));
  ep.range_constraints.emplace_back("s0", RangeConstraint{1, 4});
}

std::string sym_int_error(int64_t rows, int64_t n) {
  ExportedProgram ep;
  build_sym_int_input(ep);
  auto ex = Executor::create(ep);
  EXPECT_TRUE(ex.ok()) << ex.error().message();
  auto out = (*ex)->run(std::vector<EValue>{Tensor::empty(DType::Float32, {rows, 2}), EValue(n)});
  return out.ok() ? "" : out.error().message();
}

TEST(InputCheck, SymIntInputAgreeingWithItsTensorRuns) { EXPECT_EQ(sym_int_error(3, 3), ""); }

TEST(InputCheck, SymIntInputOutsideItsRange_NEG) {
  EXPECT_EQ(sym_int_error(5, 5), "input 'x' dim 0 is 5, outside s0's range [1, 4]");
}

TEST(InputCheck, SymIntInputDisagreeingWithItsTensor_NEG) {
  EXPECT_EQ(sym_int_error(3, 2), "input 'n' is 2, but input 'x' dim 0 is 3 and both are s0");
}

}  // namespace
}  // namespace lathe

namespace lathe {
namespace {

// torch.export's derived dims (Dim arithmetic: 2*dx, dx + 1): x is [s0, 3]
// when `with_x`, y is [<y_size>, 3]; s0 in [2, 8]. Outputs relu of each.
Result<std::unique_ptr<Executor>> derived(ExportedProgram& ep, const std::string& y_size, bool with_x) {
  GraphBuilder b(ep);
  const SymDim s0 = SymExpr{"Symbol('s0', positive=True, integer=True)", int64_t{4}};
  const SymDim ys = SymExpr{y_size, std::nullopt};
  if (with_x) {
    Value* x = b.user_input("x", GraphBuilder::tensor_meta(DType::Float32, {s0, 3}));
    b.user_output(b.call("aten.relu.default", {{"self", x}}, GraphBuilder::tensor_meta(DType::Float32, {s0, 3})));
  }
  Value* y = b.user_input("y", GraphBuilder::tensor_meta(DType::Float32, {ys, 3}));
  b.user_output(b.call("aten.relu.default", {{"self", y}}, GraphBuilder::tensor_meta(DType::Float32, {ys, 3})));
  ep.range_constraints.emplace_back("s0", RangeConstraint{2, 8});
  return Executor::create(ep);
}

TEST(InputCheck, DerivedSizeIsComputedFromItsSymbol) {
  ExportedProgram ep;
  auto ex = derived(ep, "Mul(Integer(2), Symbol('s0', positive=True, integer=True))", true);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  EXPECT_EQ(run_error(**ex, {zeros({4, 3}), zeros({8, 3})}), "");
  EXPECT_EQ(run_error(**ex, {zeros({4, 3}), zeros({7, 3})}), "input 'y' dim 0 is 7, but its size \"2*s0\" is 8 for s0 = 4");
}

// With no plain dim giving s0, the size is solved for s0, within its range.
TEST(InputCheck, DerivedSizeAloneIsSolvedWithinTheRange) {
  ExportedProgram ep;
  auto ex = derived(ep, "s0 + 1", false);  // the infix form older exports wrote
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  for (int64_t rows : {3, 9}) EXPECT_EQ(run_error(**ex, {zeros({rows, 3})}), "") << rows;
  for (int64_t rows : {0, 2, 10, 1000}) {
    EXPECT_EQ(run_error(**ex, {zeros({rows, 3})}),
              "input 'y' dim 0 is " + std::to_string(rows) + ", which its size \"s0 + 1\" is for no s0 in its range [2, 8]");
  }
  ExportedProgram doubled;
  auto ex2 = derived(doubled, "2*s0", false);
  ASSERT_TRUE(ex2.ok()) << ex2.error().message();
  EXPECT_EQ(run_error(**ex2, {zeros({6, 3})}), "");
  EXPECT_EQ(run_error(**ex2, {zeros({7, 3})}), "input 'y' dim 0 is 7, which its size \"2*s0\" is for no s0 in its range [2, 8]");
}

// A program built in memory reaches the executor without the loader's
// check: the executor refuses it the same way rather than skip the size.
TEST(InputCheck, UncheckableSizeIsRefusedWhenTheExecutorIsMade_NEG) {
  for (auto [size, says] : std::vector<std::pair<std::string, std::string>>{
           {"Symbol('s0', positive=True", "size \"Symbol('s0', positive=True\" does not parse"},
           {"s9", "size \"s9\" names symbol 's9', which has no range in range_constraints"},
           {"s0//0", "size \"s0//0\" cannot be computed for s0 = 2 (the lower end of its range): division by zero"}}) {
    ExportedProgram ep;
    auto ex = derived(ep, size, true);
    ASSERT_FALSE(ex.ok()) << size;
    EXPECT_NE(ex.error().message().find("user input 'y' dim 0: " + says), std::string::npos) << ex.error().message();
  }
  ExportedProgram empty_range;
  build_shared_symbol(empty_range);
  empty_range.range_constraints[0].second = RangeConstraint{8, 2};
  auto ex = Executor::create(empty_range);
  ASSERT_FALSE(ex.ok());
  EXPECT_EQ(ex.error().message(), "range_constraints: s0's range [8, 2] is empty: min_val 8 is above max_val 2");
}

}  // namespace
}  // namespace lathe
