// Unit tests of what constant_propagation folds and how it rewrites the
// program. Passes sit below the runtime, so these tests hand the pass a
// stub evaluator that records the constant program it is given and returns
// hand-computed values; the same pass on the portable kernels, over every
// fixture and against PyTorch's numbers, is tested in
// src/lathe/passes/passes_fixtures_test.cpp.
#include "lathe/passes/constant_propagation.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "lathe/ir/program_test_support.h"
#include "lathe/ir/printer.h"
#include "lathe/ir/rewriter.h"
#include "lathe/passes/addmm_mm_to_linear.h"
#include "lathe/passes/pass_test_support.h"
#include "lathe/passes/remove_dead_code.h"

namespace lathe {
namespace {

using testing::op_histogram;
using testing::PassRun;
using testing::run_pass;
using testing::run_passes;

Tensor f32(std::vector<int64_t> sizes, std::vector<float> values) {
  Tensor t = Tensor::empty(DType::Float32, std::move(sizes));
  EXPECT_EQ(static_cast<size_t>(t.numel()), values.size());
  std::memcpy(t.storage->mutable_data(), values.data(), values.size() * sizeof(float));
  return t;
}

std::vector<float> values_of(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.numel()));
  std::memcpy(v.data(), t.data(), v.size() * sizeof(float));
  return v;
}

// Records every program it is asked to evaluate and answers with `results`.
struct StubEvaluator {
  std::vector<std::string> programs;
  std::vector<Tensor> results;
  std::set<std::string> unsupported;

  ConstantEvaluator get() {
    return ConstantEvaluator{
        [this](std::string_view target) { return !unsupported.count(std::string(target)); },
        [this](const ExportedProgram& p) -> Result<std::vector<Tensor>> {
          programs.push_back(print_program(p));
          return results;
        }};
  }
};

std::unique_ptr<Pass> folding(StubEvaluator& stub, size_t max_bytes = size_t{16} << 20) {
  return std::make_unique<ConstantPropagation>(ConstantPropagationOptions{max_bytes, stub.get()});
}

Value* param(Rewriter& rw, const std::string& fqn, Tensor t) { return rw.add_parameter(fqn, std::move(t)).value(); }

// w = p1 @ p2.T as torch traces it (permute + mm), used by t + addmm: the
// computed_weight fixture in miniature, with values checked by hand.
//   p1 = [[1, 2], [3, 4], [5, 6]], p2 = [[1, 0], [1, 1]]
//   w  = p1 @ p2.T = [[1, 3], [3, 7], [5, 11]]
void build_computed_weight(ExportedProgram& ep) {
  Rewriter rw(ep);
  Value* p1 = param(rw, "p1", f32({3, 2}, {1, 2, 3, 4, 5, 6}));
  Value* p2 = param(rw, "p2", f32({2, 2}, {1, 0, 1, 1}));
  Value* bias = param(rw, "bias", f32({3}, {0.5f, -0.5f, 1}));
  GraphBuilder b(ep);
  Value* x = b.user_input("x", {4, 2});
  Value* p2t = b.call("aten.permute.default", {{"self", p2}, {"dims", IntList{{1, 0}}}}, {2, 2});
  Value* w = b.call("aten.mm.default", {{"self", p1}, {"mat2", p2t}}, {3, 2});
  Value* wt = b.call("aten.t.default", {{"self", w}}, {2, 3});
  b.user_output(b.call("aten.addmm.default", {{"self", bias}, {"mat1", x}, {"mat2", wt}}, {4, 3}));
}

class ConstantPropagationTest : public testing::ProgramTest {};

TEST_F(ConstantPropagationTest, ComputedWeightBecomesALiftedConstantThenALinear) {
  ExportedProgram ep;
  build_computed_weight(ep);
  StubEvaluator stub;
  stub.results = {f32({3, 2}, {1, 3, 3, 7, 5, 11})};
  PassRun r = run_pass(ep, folding(stub));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(r.changed);
  // What the evaluator was asked: the constant region, its inputs as lifted
  // constants, the frontier value as the output. The t feeding the addmm is
  // not folded (layout only, at the edge).
  ASSERT_EQ(stub.programs.size(), 1u);
  EXPECT_EQ(stub.programs[0],
            "inputs:\n"
            "  %c_p_p2: f32[2, 2]  constant p_p2\n"
            "  %c_p_p1: f32[3, 2]  constant p_p1\n"
            "nodes:\n"
            "  %permute: f32[2, 2] = aten.permute.default(%c_p_p2, [1, 0])\n"
            "  %mm: f32[3, 2] = aten.mm.default(%c_p_p1, %permute)\n"
            "outputs:\n"
            "  %mm  user_output\n");
  EXPECT_EQ(print_program(ep),
            "inputs:\n"
            "  %p_bias: f32[3]  parameter bias\n"
            "  %c_folded_mm: f32[3, 2]  constant folded_mm\n"
            "  %x: f32[4, 2]  user_input\n"
            "nodes:\n"
            "  %t: f32[2, 3] = aten.t.default(%c_folded_mm)\n"
            "  %addmm: f32[4, 3] = aten.addmm.default(%p_bias, %x, %t)\n"
            "outputs:\n"
            "  %addmm  user_output\n");
  // p1 and p2 went with their specs and state; the folded value is state.
  EXPECT_FALSE(ep.parameters.contains("p1"));
  EXPECT_FALSE(ep.parameters.contains("p2"));
  ASSERT_TRUE(ep.constants.contains("folded_mm"));
  EXPECT_EQ(values_of(*ep.constants.find("folded_mm")), (std::vector<float>{1, 3, 3, 7, 5, 11}));
  EXPECT_EQ(r.rewritten, (std::vector<std::string>{
                             "aten.mm.default 'mm' folded into lifted constant 'folded_mm' (f32[3, 2])"}));

  // Now the weight is provably constant: the linear rewrite fires.
  std::vector<std::unique_ptr<Pass>> next;
  next.push_back(std::make_unique<AddmmMmToLinear>());
  next.push_back(std::make_unique<RemoveDeadCode>());
  PassRun l = run_passes(ep, std::move(next));
  ASSERT_TRUE(l.ok) << l.error;
  EXPECT_EQ(op_histogram(ep.graph()), (std::map<std::string, int>{{"linear", 1}}));
  EXPECT_EQ(l.rewritten, (std::vector<std::string>{"addmm 'addmm' rewritten to linear (weight 'c_folded_mm' is "
                                                   "lifted constant 'folded_mm')"}));
}

TEST_F(ConstantPropagationTest, WithoutFoldingTheComputedWeightIsRefused_NEG) {
  ExportedProgram ep;
  build_computed_weight(ep);
  PassRun l = run_pass(ep, std::make_unique<AddmmMmToLinear>());
  ASSERT_TRUE(l.ok) << l.error;
  EXPECT_EQ(op_histogram(ep.graph())["addmm"], 1);
  EXPECT_EQ(l.kept, (std::vector<std::string>{"addmm 'addmm' kept: weight 't' is computed at run time by 'mm'"}));
}

TEST_F(ConstantPropagationTest, NothingThatReadsAMutableBufferIsFolded_NEG) {
  Value* stats = b.buffer("stats", {3});
  Value* frozen = b.buffer("frozen", {3});
  Value* p = b.parameter("p", {3});
  Value* x = b.user_input("x", {3});
  // stats <- stats * p; the output reads stats + p, and a chain from it.
  b.buffer_mutation(b.call("aten.mul.Tensor", {{"self", stats}, {"other", p}}, {3}), "stats");
  Value* s = b.call("aten.add.Tensor", {{"self", stats}, {"other", p}}, {3});
  Value* chain = b.call("aten.neg.default", {{"self", s}}, {3});
  b.user_output(b.call("aten.add.Tensor", {{"self", chain}, {"other", x}}, {3}));
  b.user_output(b.call("aten.mul.Tensor", {{"self", frozen}, {"other", x}}, {3}));
  StubEvaluator stub;
  PassRun r = testing::expect_unchanged(ep, folding(stub));
  EXPECT_TRUE(stub.programs.empty());
  EXPECT_EQ(r.kept, (std::vector<std::string>{
                        "aten.mul.Tensor 'mul' kept: operand 'b_stats' reads mutable buffer 'stats'",
                        "aten.add.Tensor 'add' kept: operand 'b_stats' reads mutable buffer 'stats'",
                    }));
}

TEST_F(ConstantPropagationTest, ConstantBufferIsFoldedButAMutationOutputIsNot) {
  Value* frozen = b.buffer("frozen", {2});
  Value* count = b.buffer("count", {2});
  Value* x = b.user_input("x", {2});
  // count <- frozen * 2: computed from constants only, but it is state.
  b.buffer_mutation(b.call("aten.mul.Tensor", {{"self", frozen}, {"other", 2.0}}, {2}), "count");
  b.user_output(b.call("aten.add.Tensor", {{"self", count}, {"other", x}}, {2}));
  b.user_output(b.call("aten.add.Tensor", {{"self", b.call("aten.neg.default", {{"self", frozen}}, {2})}, {"other", x}}, {2}));
  StubEvaluator stub;
  stub.results = {f32({2}, {-1, -2})};
  PassRun r = run_pass(ep, folding(stub));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(op_histogram(ep.graph()), (std::map<std::string, int>{{"add", 2}, {"mul", 1}}));
  EXPECT_EQ(r.kept, (std::vector<std::string>{"aten.mul.Tensor 'mul' kept: value 'mul' is read by a mutation output"}));
  // frozen is still read by the mutation's mul, so it stays an input.
  EXPECT_TRUE(ep.buffers.contains("frozen"));
}

TEST_F(ConstantPropagationTest, SizeCapStopsFolding_NEG) {
  Value* x = b.user_input("x", {512, 512});
  Value* big = b.call("aten.full.default", {{"size", IntList{{512, 512}}}, {"fill_value", 1.0}}, {512, 512});
  b.user_output(b.call("aten.add.Tensor", {{"self", big}, {"other", x}}, {512, 512}));
  std::string before = print_program(ep);
  StubEvaluator stub;
  PassRun r = run_pass(ep, folding(stub, /*max_bytes=*/(1 << 20) - 1));  // the full takes exactly 1 MiB
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(print_program(ep), before);
  EXPECT_EQ(r.kept, (std::vector<std::string>{"aten.full.default 'full' kept: value 'full' (f32[512, 512]) would take "
                                              "1048576 bytes, over the fold limit of 1048575"}));
  // At the limit it is folded.
  stub.results = {Tensor::empty(DType::Float32, {512, 512})};
  EXPECT_TRUE(run_pass(ep, folding(stub, 1 << 20)).changed);
}

TEST_F(ConstantPropagationTest, ExpandOfAFoldedScalarStaysAnExpand) {
  Value* c = b.constant("scale", {1});
  Value* x = b.user_input("x", {1000, 1000});
  Value* s = b.call("aten.mul.Tensor", {{"self", c}, {"other", 2.0}}, {1});
  Value* e = b.call("aten.expand.default", {{"self", s}, {"size", IntList{{1000, 1000}}}}, {1000, 1000});
  b.user_output(b.call("aten.add.Tensor", {{"self", x}, {"other", e}}, {1000, 1000}));
  StubEvaluator stub;
  stub.results = {f32({1}, {4})};
  testing::expect_program_after(ep, folding(stub, 1024),
      "inputs:\n"
      "  %c_folded_mul: f32[1]  constant folded_mul\n"
      "  %x: f32[1000, 1000]  user_input\n"
      "nodes:\n"
      "  %expand: f32[1000, 1000] = aten.expand.default(%c_folded_mul, [1000, 1000])\n"
      "  %add: f32[1000, 1000] = aten.add.Tensor(%x, %expand)\n"
      "outputs:\n"
      "  %add  user_output\n");
  EXPECT_FALSE(ep.constants.contains("scale"));
}

TEST_F(ConstantPropagationTest, QuantizeAndDequantizeAreNeverFolded_NEG) {
  Value* w = b.parameter("w", {4, 3});
  Value* x = b.user_input("x", {2, 3});
  auto qargs = [](Value* in) {
    return std::vector<GraphBuilder::Arg>{{"input", in}, {"scale", 0.5}, {"zero_point", int64_t{0}},
                                          {"quant_min", int64_t{-128}}, {"quant_max", int64_t{127}},
                                          {"dtype", ScalarTypeArg{DType::Int8}}};
  };
  Value* q = b.call("quantized_decomposed.quantize_per_tensor.default", qargs(w), {4, 3}, DType::Int8);
  Value* dq = b.call("quantized_decomposed.dequantize_per_tensor.default", qargs(q), {4, 3});
  Value* t = b.call("aten.t.default", {{"self", dq}}, {3, 4});
  b.user_output(b.call("aten.mm.default", {{"self", x}, {"mat2", t}}, {2, 4}));
  StubEvaluator stub;
  PassRun r = testing::expect_unchanged(ep, folding(stub));
  EXPECT_EQ(r.kept, (std::vector<std::string>{"quantized_decomposed.quantize_per_tensor.default "
                                              "'quantize_per_tensor' kept: quantize/dequantize ops are never folded "
                                              "(quantized-weight patterns match on them)"}));
}

// torchao's Int8WeightOnlyConfig widens its weight with to(int8 -> float32)
// and scales the matmul's output: folding the widening would turn the int8
// weight back into a float one, four times the bytes, and hide the pattern
// fuse_int8_weight_only_matmul matches.
TEST_F(ConstantPropagationTest, AnInt8WeightWidenedToFloatIsNeverFolded_NEG) {
  Value* q = b.parameter("q", {4, 3}, DType::Int8);
  Value* x = b.user_input("x", {2, 3});
  Value* t = b.call("aten.t.default", {{"self", q}}, {3, 4}, DType::Int8);
  Value* w = b.call("aten.to.dtype", {{"self", t}, {"dtype", ScalarTypeArg{DType::Float32}}}, {3, 4});
  b.user_output(b.call("aten.mm.default", {{"self", x}, {"mat2", w}}, {2, 4}));
  StubEvaluator stub;
  PassRun r = testing::expect_unchanged(ep, folding(stub));
  EXPECT_TRUE(stub.programs.empty());
  EXPECT_EQ(r.kept, (std::vector<std::string>{"aten.to.dtype 'to' kept: it turns an 8-bit integer tensor into a "
                                              "floating one (a dequantization: quantized-weight patterns match on "
                                              "it)"}));
}

// A view at the edge of the region that folded nodes also read stays in the
// region: its value is materialised (it is read outside) and so is what the
// folded node computes from it. (Un-folding it left the folded mul reading
// a value that was no longer constant, and the pass threw.)
TEST_F(ConstantPropagationTest, AViewReadInsideAndOutsideTheRegionIsFolded) {
  Value* p = b.parameter("p", {2, 3});
  Value* x = b.user_input("x", {3, 2});
  Value* t = b.call("aten.t.default", {{"self", p}}, {3, 2});
  Value* m = b.call("aten.mul.Tensor", {{"self", t}, {"other", 2.0}}, {3, 2});
  b.user_output(b.call("aten.add.Tensor", {{"self", x}, {"other", t}}, {3, 2}));
  b.user_output(b.call("aten.add.Tensor", {{"self", x}, {"other", m}}, {3, 2}));
  StubEvaluator stub;
  // p = [[1, 2, 3], [4, 5, 6]]: t(p) = [[1, 4], [2, 5], [3, 6]], twice that.
  stub.results = {f32({3, 2}, {1, 4, 2, 5, 3, 6}), f32({3, 2}, {2, 8, 4, 10, 6, 12})};
  PassRun r = run_pass(ep, folding(stub));
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(stub.programs.size(), 1u);
  EXPECT_EQ(print_program(ep),
            "inputs:\n"
            "  %c_folded_t: f32[3, 2]  constant folded_t\n"
            "  %c_folded_mul: f32[3, 2]  constant folded_mul\n"
            "  %x: f32[3, 2]  user_input\n"
            "nodes:\n"
            "  %add: f32[3, 2] = aten.add.Tensor(%x, %c_folded_t)\n"
            "  %add_1: f32[3, 2] = aten.add.Tensor(%x, %c_folded_mul)\n"
            "outputs:\n"
            "  %add  user_output\n"
            "  %add_1  user_output\n");
  EXPECT_EQ(values_of(*ep.constants.find("folded_mul")), (std::vector<float>{2, 8, 4, 10, 6, 12}));
  EXPECT_FALSE(ep.parameters.contains("p"));
}

TEST_F(ConstantPropagationTest, ImpureUnknownAndKernelLessOpsAreKept_NEG) {
  Value* p = b.parameter("p", {3});
  Value* x = b.user_input("x", {3});
  Value* r1 = b.call("aten.bernoulli.default", {{"self", p}}, {3});
  Value* r2 = b.call("my_ops.custom.default", {{"self", p}}, {3});
  Value* r3 = b.call("aten.erfinv.default", {{"self", p}}, {3});
  for (Value* v : {r1, r2, r3}) b.user_output(b.call("aten.add.Tensor", {{"self", v}, {"other", x}}, {3}));
  StubEvaluator stub;
  stub.unsupported = {"torch.ops.aten.erfinv.default"};
  PassRun r = testing::expect_unchanged(ep, folding(stub));
  EXPECT_EQ(r.kept, (std::vector<std::string>{
                        "aten.bernoulli.default 'bernoulli' kept: not a known pure aten op",
                        "my_ops.custom.default 'custom' kept: not a known pure aten op",
                        "aten.erfinv.default 'erfinv' kept: no kernel to evaluate it",
                    }));
}

TEST_F(ConstantPropagationTest, FoldedUserOutputAndInputsStillReadElsewhere) {
  Value* c0 = b.constant("c0", {2});
  Value* p = b.parameter("p", {2});
  Value* x = b.user_input("x", {2});
  b.user_output(b.call("aten.mul.Tensor", {{"self", p}, {"other", 3.0}}, {2}));  // constant user output
  b.user_output(b.call("aten.add.Tensor", {{"self", p}, {"other", x}}, {2}));    // p is still read here
  b.user_output(b.call("aten.add.Tensor", {{"self", c0}, {"other", x}}, {2}));
  StubEvaluator stub;
  stub.results = {f32({2}, {3, 6})};
  PassRun r = run_pass(ep, folding(stub));
  ASSERT_TRUE(r.ok) << r.error;
  // The folded constant goes after the existing constants, before the user
  // inputs; the output is now that constant; p stays (add reads it).
  EXPECT_EQ(print_program(ep),
            "inputs:\n"
            "  %p_p: f32[2]  parameter p\n"
            "  %c_c0: f32[2]  constant c0\n"
            "  %c_folded_mul: f32[2]  constant folded_mul\n"
            "  %x: f32[2]  user_input\n"
            "nodes:\n"
            "  %add: f32[2] = aten.add.Tensor(%p_p, %x)\n"
            "  %add_1: f32[2] = aten.add.Tensor(%c_c0, %x)\n"
            "outputs:\n"
            "  %c_folded_mul  user_output\n"
            "  %add  user_output\n"
            "  %add_1  user_output\n");
  EXPECT_TRUE(ep.parameters.contains("p"));
}

TEST_F(ConstantPropagationTest, ParameterThatIsOnlyTransposedIsLeftAlone_NEG) {
  ExportedProgram ep;
  build_simple_linear(ep);
  StubEvaluator stub;
  PassRun r = testing::expect_unchanged(ep, folding(stub));
  EXPECT_TRUE(stub.programs.empty());
}

TEST_F(ConstantPropagationTest, WithoutAnEvaluatorFoldingIsAnError_NEG) {
  ConstantEvaluator previous = ConstantPropagation::set_default_evaluator({});
  ExportedProgram ep;
  build_computed_weight(ep);
  PassRun r = run_pass(ep, std::make_unique<ConstantPropagation>());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("no constant evaluator installed"), std::string::npos) << r.error;
  // Nothing to fold: no evaluator needed.
  ExportedProgram plain;
  build_simple_linear(plain);
  EXPECT_TRUE(run_pass(plain, std::make_unique<ConstantPropagation>()).ok);
  ConstantPropagation::set_default_evaluator(std::move(previous));
}

TEST_F(ConstantPropagationTest, AnEvaluatorAnsweringTheWrongShapeIsAnError_NEG) {
  ExportedProgram ep;
  build_computed_weight(ep);
  std::string before = print_program(ep);
  StubEvaluator stub;
  stub.results = {f32({2, 3}, {1, 3, 3, 7, 5, 11})};
  PassRun r = run_pass(ep, folding(stub));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("the evaluator returned float32[2, 3] for 'mm' (f32[3, 2])"), std::string::npos) << r.error;
  EXPECT_EQ(print_program(ep), before);  // checked before anything changed
}

}  // namespace
}  // namespace lathe
