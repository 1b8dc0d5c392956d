#include "lathe/passes/addmm_mm_to_linear.h"

#include <gtest/gtest.h>

#include <map>

#include "lathe/ir/program_test_support.h"
#include "lathe/core/log.h"
#include "lathe/ir/graph_builder.h"
#include "lathe/ir/printer.h"
#include "lathe/ir/verify.h"
#include "lathe/passes/pass_manager.h"
#include "lathe/passes/remove_dead_code.h"

namespace lathe {
namespace {

std::map<std::string, int> op_counts(const Graph& g) {
  std::map<std::string, int> ops;
  for (const Node* n : g.nodes()) ops[GraphBuilder::op_base_name(n->target())]++;
  return ops;
}

// Runs the pass (optionally followed by remove_dead_code) with verify after
// every pass, as the manager does in tests; returns the explain lines.
std::vector<std::string> run_linear(ExportedProgram& ep, bool dce = false, bool* changed = nullptr) {
  PassManager pm(PassManagerOptions{.verify_each = true});
  pm.add(std::make_unique<AddmmMmToLinear>());
  if (dce) pm.add(std::make_unique<RemoveDeadCode>());
  PassContext ctx;
  Result<bool> r = pm.run(ep, "forward", ctx);
  EXPECT_TRUE(r.ok()) << r.error().message();
  if (changed) *changed = r.ok() && *r;
  std::vector<std::string> lines;
  for (const auto& rec : ctx.records()) lines.push_back(rec.message);
  return lines;
}

Value* transpose(GraphBuilder& b, Value* w, const std::string& op = "aten.t.default", IntList dims = {{1, 0}}) {
  auto sizes = w->meta()->concrete_sizes().value();
  std::reverse(sizes.begin(), sizes.end());
  if (op.find("permute") != std::string::npos) return b.call(op, {{"self", w}, {"dims", dims}}, sizes);
  return b.call(op, {{"self", w}}, sizes);
}

// out = addmm(bias, x, T(w)) / mm(x, T(w)) for x [2, K] and w [N, K].
Value* addmm(GraphBuilder& b, Value* bias, Value* x, Value* mat2, std::vector<GraphBuilder::Arg> extra = {}) {
  std::vector<GraphBuilder::Arg> args = {{"self", bias}, {"mat1", x}, {"mat2", mat2}};
  for (auto& e : extra) args.push_back(std::move(e));
  return b.call("aten.addmm.default", std::move(args),
                {x->meta()->concrete_sizes().value()[0], mat2->meta()->concrete_sizes().value()[1]});
}
Value* mm(GraphBuilder& b, Value* x, Value* mat2) {
  return b.call("aten.mm.default", {{"self", x}, {"mat2", mat2}},
                {x->meta()->concrete_sizes().value()[0], mat2->meta()->concrete_sizes().value()[1]});
}

Value* dq_per_tensor(GraphBuilder& b, Value* q8) {
  return b.call("quantized_decomposed.dequantize_per_tensor.default",
                {{"input", q8}, {"scale", 0.5}, {"zero_point", int64_t{0}}, {"quant_min", int64_t{-128}},
                 {"quant_max", int64_t{127}}, {"dtype", ScalarTypeArg{DType::Int8}}},
                q8->meta()->concrete_sizes().value());
}

// ---- §1: the signature follows the rewrite ---------------------------------------

class AddmmMmToLinearTest : public testing::ProgramTest {};

TEST_F(AddmmMmToLinearTest, SimpleLinearReturnsTheLinear) {
  ExportedProgram ep;
  build_simple_linear(ep);
  std::vector<std::string> explain = run_linear(ep, /*dce=*/true);
  EXPECT_EQ(print_program(ep),
            testing::kSimpleLinearInputs +
                "nodes:\n"
                "  %addmm: f32[2, 3] = aten.linear.default(%arg, %p_linear_weight, %p_linear_bias)\n"
                "outputs:\n"
                "  %addmm  user_output\n");
  Value* out = ep.graph().outputs()[0].tensor();
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->producer()->target(), "torch.ops.aten.linear.default");
  EXPECT_EQ(ep.output_specs[0].kind, OutputKind::UserOutput);
  EXPECT_EQ(explain, (std::vector<std::string>{"addmm 'addmm' rewritten to linear (weight 'p_linear_weight' is "
                                               "parameter 'linear.weight')"}));
}

TEST_F(AddmmMmToLinearTest, SimpleLinearWithUserInputWeight_NEG) {
  Value* bias = b.parameter("linear.bias", {3});
  Value* w = b.user_input("w", {3, 3});
  Value* x = b.user_input("arg", {2, 3});
  b.user_output(addmm(b, bias, x, transpose(b, w)));
  std::string before = print_program(ep);
  bool changed = true;
  auto explain = run_linear(ep, false, &changed);
  EXPECT_FALSE(changed);
  EXPECT_EQ(print_program(ep), before);
  EXPECT_EQ(explain, (std::vector<std::string>{"addmm 'addmm' kept: weight 't' is user input 'w'"}));
}

// ---- §2: only compile-time constant weights ---------------------------------------

TEST_F(AddmmMmToLinearTest, ConstantWeightsOfEveryKindAndSpellingAreRewritten) {
  Value* p = b.parameter("p", {4, 3});
  Value* buf = b.buffer("frozen", {4, 3});
  Value* np = b.buffer("scratch", {4, 3}, /*persistent=*/false);
  Value* c = b.constant("lifted_tensor_0", {4, 3});
  Value* bias = b.parameter("bias", {4});
  Value* x = b.user_input("x", {2, 3});
  std::vector<Value*> outs;
  outs.push_back(addmm(b, bias, x, transpose(b, p, "aten.t.default")));
  outs.push_back(mm(b, x, transpose(b, buf, "aten.t_copy.default")));
  outs.push_back(mm(b, x, transpose(b, np, "aten.permute.default")));
  outs.push_back(addmm(b, bias, x, transpose(b, c, "aten.permute_copy.default")));
  outs.push_back(mm(b, x, transpose(b, p, "aten.permute.default", IntList{{-1, -2}})));
  for (Value* o : outs) b.user_output(o);
  bool changed = false;
  auto explain = run_linear(ep, /*dce=*/true, &changed);
  EXPECT_TRUE(changed);
  EXPECT_EQ(op_counts(ep.graph()), (std::map<std::string, int>{{"linear", 5}})) << print_program(ep);
  ASSERT_EQ(explain.size(), 5u);
  EXPECT_EQ(explain[1], "mm 'mm' rewritten to linear (weight 'b_frozen' is constant buffer 'frozen')");
  EXPECT_EQ(explain[3],
            "addmm 'addmm_1' rewritten to linear (weight 'c_lifted_tensor_0' is lifted constant 'lifted_tensor_0')");
  // mm -> linear(x, w): no bias argument; values keep their metadata.
  const Node* lin = ep.graph().outputs()[1].tensor()->producer();
  ASSERT_EQ(lin->inputs().size(), 2u);
  EXPECT_EQ(lin->inputs()[1].arg.tensor(), buf);
  EXPECT_EQ(*ep.graph().outputs()[1].tensor()->meta(), GraphBuilder::tensor_meta({2, 4}));
}

// The TTS duration predictor of §2: two parameter addmms and an mm whose
// second operand is a per-request 64x64 activation.
TEST_F(AddmmMmToLinearTest, ComputedMmOperandStaysMm_NEG) {
  Value* ew = b.parameter("encoder.weight", {64, 32});
  Value* eb = b.parameter("encoder.bias", {64});
  Value* dw = b.parameter("duration.weight", {1, 64});
  Value* db = b.parameter("duration.bias", {1});
  Value* x = b.user_input("x", {1, 64, 32});
  Value* sq = b.call("aten.squeeze.dim", {{"self", x}, {"dim", 0}}, {64, 32});
  Value* h = b.call("aten.relu.default", {{"self", addmm(b, eb, sq, transpose(b, ew))}}, {64, 64});
  Value* th = b.call("aten.tanh.default", {{"self", h}}, {64, 64});
  Value* un = b.call("aten.unsqueeze.default", {{"self", th}, {"dim", 0}}, {1, 64, 64});
  Value* sq1 = b.call("aten.squeeze.dim", {{"self", un}, {"dim", 0}}, {64, 64});
  Value* m = mm(b, h, transpose(b, sq1, "aten.permute.default"));
  b.user_output(addmm(b, db, m, transpose(b, dw)));
  auto explain = run_linear(ep, /*dce=*/true);
  auto ops = op_counts(ep.graph());
  EXPECT_EQ(ops["linear"], 2);
  EXPECT_EQ(ops["mm"], 1);
  EXPECT_EQ(ops["addmm"], 0);
  EXPECT_EQ(ops["permute"], 1);  // still read by the mm
  EXPECT_EQ(ops["t"], 0);
  ASSERT_EQ(explain.size(), 3u);
  EXPECT_EQ(explain[1], "mm 'mm' kept: weight 'permute' is computed at run time by 'squeeze_1'");
}

TEST_F(AddmmMmToLinearTest, ComputedAddmmOperandStaysAddmm_NEG) {
  Value* bias = b.parameter("bias", {3});
  Value* x = b.user_input("x", {2, 3});
  Value* y = b.user_input("y", {3, 3});
  Value* w = b.call("aten.relu.default", {{"self", y}}, {3, 3});
  b.user_output(addmm(b, bias, x, transpose(b, w)));
  auto explain = run_linear(ep, true);
  EXPECT_EQ(op_counts(ep.graph())["addmm"], 1);
  EXPECT_EQ(explain, (std::vector<std::string>{"addmm 'addmm' kept: weight 't' is computed at run time by 'relu'"}));
}

TEST_F(AddmmMmToLinearTest, MutatedBufferKeptWhileNeverMutatedBufferIsRewritten_NEG) {
  Value* stats = b.buffer("running_mean", {3, 3});
  Value* frozen = b.buffer("frozen", {3, 3});
  Value* x = b.user_input("x", {2, 3});
  Value* updated = b.call("aten.mul.Tensor", {{"self", stats}, {"other", 0.9}}, {3, 3});
  b.buffer_mutation(updated, "running_mean");
  b.user_output(mm(b, x, transpose(b, stats)));
  b.user_output(mm(b, x, transpose(b, frozen)));
  auto explain = run_linear(ep, true);
  auto ops = op_counts(ep.graph());
  EXPECT_EQ(ops["mm"], 1);
  EXPECT_EQ(ops["linear"], 1);
  EXPECT_EQ(ep.graph().outputs()[1].tensor()->producer()->op_name(), "aten.mm.default");
  EXPECT_EQ(ep.graph().outputs()[2].tensor()->producer()->op_name(), "aten.linear.default");
  ASSERT_EQ(explain.size(), 2u);
  EXPECT_EQ(explain[0], "mm 'mm' kept: weight 't' reads mutable buffer 'running_mean'");
}

// ---- quantized weights --------------------------------------------------------------

TEST_F(AddmmMmToLinearTest, DequantizedParametersAreRewritten) {
  Value* q8 = b.parameter("w_int8", {4, 3}, DType::Int8);
  Value* scales = b.constant("scales", {4});
  Value* zeros = b.constant("zeros", {4}, DType::Int64);
  Value* g4 = b.parameter("w_int4", {4, 3}, DType::Int8);
  Value* fw = b.parameter("w", {4, 3});
  Value* x = b.user_input("x", {2, 3});
  Value* per_tensor = dq_per_tensor(b, q8);
  Value* per_channel = b.call("quantized_decomposed.dequantize_per_channel.default",
                              {{"input", q8}, {"scales", scales}, {"zero_points", zeros}, {"axis", int64_t{0}},
                               {"quant_min", int64_t{-128}}, {"quant_max", int64_t{127}},
                               {"dtype", ScalarTypeArg{DType::Int8}}},
                              {4, 3});
  Value* group = b.call("quantized_decomposed.dequantize_per_channel_group.default",
                        {{"input", g4}, {"scales", scales}, {"zero_points", zeros}, {"quant_min", int64_t{-8}},
                         {"quant_max", int64_t{7}}, {"dtype", ScalarTypeArg{DType::Int8}},
                         {"group_size", int64_t{3}}, {"output_dtype", ScalarTypeArg{DType::Float32}}},
                        {4, 3});
  Value* q = b.call("quantized_decomposed.quantize_per_tensor.default",
                    {{"input", fw}, {"scale", 0.5}, {"zero_point", int64_t{0}}, {"quant_min", int64_t{-128}},
                     {"quant_max", int64_t{127}}, {"dtype", ScalarTypeArg{DType::Int8}}},
                    {4, 3}, DType::Int8);
  Value* dq_q = dq_per_tensor(b, q);
  for (Value* w : {per_tensor, per_channel, group, dq_q}) b.user_output(mm(b, x, transpose(b, w)));
  auto explain = run_linear(ep, true);
  auto ops = op_counts(ep.graph());
  EXPECT_EQ(ops["linear"], 4) << print_program(ep);
  EXPECT_EQ(ops["mm"], 0);
  // The weight-only fusion (§5) matches linear(x, dq(...)): the dq stays.
  EXPECT_EQ(ops["dequantize_per_channel_group"], 1);
  ASSERT_EQ(explain.size(), 4u);
  EXPECT_EQ(explain[2],
            "mm 'mm_2' rewritten to linear (weight 'dequantize_per_channel_group' is "
            "'dequantize_per_channel_group' (dequantize_per_channel_group of constants))");
}

TEST_F(AddmmMmToLinearTest, DequantizeOfRuntimeDataKept_NEG) {
  Value* x = b.user_input("x", {2, 3});
  Value* raw = b.user_input("w_q", {4, 3}, DType::Int8);
  b.user_output(mm(b, x, transpose(b, dq_per_tensor(b, raw))));
  auto explain = run_linear(ep, true);
  EXPECT_EQ(op_counts(ep.graph())["mm"], 1);
  EXPECT_EQ(explain, (std::vector<std::string>{"mm 'mm' kept: weight 't' is computed at run time by "
                                               "'dequantize_per_tensor': its input 'w_q' is user input 'w_q'"}));
}

// ---- what the identity assumes ----------------------------------------------------------

TEST_F(AddmmMmToLinearTest, OtherPermutationsAndShapesKept_NEG) {
  Value* sq = b.parameter("square", {3, 3});
  Value* cube = b.parameter("cube", {3, 3, 3});
  Value* x = b.user_input("x", {2, 3});
  b.user_output(mm(b, x, transpose(b, sq, "aten.permute.default", IntList{{0, 1}})));
  b.user_output(mm(b, x, transpose(b, sq, "aten.permute_copy.default", IntList{{3, 0}})));
  Value* c2 = b.call("aten.permute.default", {{"self", cube}, {"dims", IntList{{1, 0}}}}, {3, 3});
  b.user_output(mm(b, x, c2));
  b.user_output(mm(b, x, sq));
  auto explain = run_linear(ep, true);
  EXPECT_EQ(op_counts(ep.graph())["linear"], 0);
  EXPECT_EQ(explain, (std::vector<std::string>{
                         "mm 'mm' kept: mat2 'permute' permutes dims [0, 1], not [1, 0]",
                         "mm 'mm_1' kept: mat2 'permute_copy' permutes dims [3, 0], not [1, 0]",
                         "mm 'mm_2' kept: weight 'p_cube' is 3-D, not 2-D",
                         "mm 'mm_3' kept: mat2 'p_square' is a graph input, not a transposed weight",
                     }));
}

TEST_F(AddmmMmToLinearTest, AlphaBetaOtherThanOneKept_NEG) {
  Value* w = b.parameter("w", {3, 3});
  Value* bias = b.parameter("bias", {3});
  Value* x = b.user_input("x", {2, 3});
  b.user_output(addmm(b, bias, x, transpose(b, w), {{"alpha", 2.0, ArgKind::Keyword}}));
  b.user_output(addmm(b, bias, x, transpose(b, w), {{"beta", int64_t{0}, ArgKind::Keyword}}));
  auto explain = run_linear(ep, true);
  EXPECT_EQ(op_counts(ep.graph())["addmm"], 2);
  EXPECT_EQ(explain, (std::vector<std::string>{"addmm 'addmm' kept: alpha is 2.0, not 1",
                                               "addmm 'addmm_1' kept: beta is 0, not 1"}));
}

TEST_F(AddmmMmToLinearTest, AlphaBetaSpelledOutAsOneAreRewritten) {
  Value* w = b.parameter("w", {3, 3});
  Value* bias = b.parameter("bias", {3});
  Value* x = b.user_input("x", {2, 3});
  b.user_output(addmm(b, bias, x, transpose(b, w),
                      {{"beta", int64_t{1}, ArgKind::Keyword}, {"alpha", 1.0, ArgKind::Keyword}}));
  run_linear(ep, true);
  EXPECT_EQ(op_counts(ep.graph()), (std::map<std::string, int>{{"linear", 1}}));
}

TEST_F(AddmmMmToLinearTest, BiasThatIsNotALinearBiasKept_NEG) {
  Value* w = b.parameter("w", {3, 3});
  Value* full = b.parameter("full_bias", {2, 3});
  Value* one = b.parameter("one", {1});
  Value* x = b.user_input("x", {2, 3});
  b.user_output(addmm(b, full, x, transpose(b, w)));
  b.user_output(addmm(b, one, x, transpose(b, w)));
  auto explain = run_linear(ep, true);
  EXPECT_EQ(op_counts(ep.graph())["addmm"], 2);
  EXPECT_EQ(explain, (std::vector<std::string>{
                         "addmm 'addmm' kept: bias 'p_full_bias' is 2-D [2, 3], not a 1-D bias",
                         "addmm 'addmm_1' kept: bias 'p_one' has shape [1], not [3] (one entry per output feature)",
                     }));
}

// ---- bare graphs: never guess ---------------------------------------------------------

TEST_F(AddmmMmToLinearTest, BareGraphRefusesPlaceholdersAndWarnsOnce_NEG) {
  Graph g;
  GraphBuilder b(g);
  Value* w = b.input("w", GraphBuilder::tensor_meta({3, 3}));
  Value* w2 = b.input("w2", GraphBuilder::tensor_meta({3, 3}, DType::Int8));
  Value* x = b.input("x", GraphBuilder::tensor_meta({2, 3}));
  b.output(mm(b, x, transpose(b, w)));
  b.output(mm(b, x, transpose(b, dq_per_tensor(b, w2))));
  b.output(mm(b, x, transpose(b, b.call("aten.relu.default", {{"self", w}}, {3, 3}))));
  std::vector<std::pair<LogLevel, std::string>> logged;
  LogSink previous = set_log_sink([&](LogLevel l, const std::string& m) { logged.emplace_back(l, m); });
  PassContext ctx("graph");
  Result<bool> r = AddmmMmToLinear().run_on_graph(g, ctx);
  set_log_sink(previous);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_FALSE(*r);
  EXPECT_EQ(op_counts(g)["mm"], 3);
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_EQ(logged[0].first, LogLevel::Warning);
  EXPECT_NE(logged[0].second.find("kept 2 candidate(s) whose weight is a graph input"), std::string::npos)
      << logged[0].second;
  ASSERT_EQ(ctx.records().size(), 3u);
  EXPECT_EQ(ctx.records()[0].message,
            "mm 'mm' kept: weight 't' is graph input 'w', which cannot be classified without a program");
  EXPECT_TRUE(verify_graph(g, "graph").ok());
}

TEST_F(AddmmMmToLinearTest, SameShapeInAProgramIsRewrittenWithoutWarning) {
  Value* w = b.parameter("w", {3, 3});
  Value* x = b.user_input("x", {2, 3});
  b.user_output(mm(b, x, transpose(b, w)));
  size_t warnings = 0;
  LogSink previous = set_log_sink([&](LogLevel l, const std::string&) { warnings += l == LogLevel::Warning; });
  run_linear(ep, true);
  set_log_sink(previous);
  EXPECT_EQ(op_counts(ep.graph()), (std::map<std::string, int>{{"linear", 1}}));
  EXPECT_EQ(warnings, 0u);
}

// ---- §3: each method against its own signature ---------------------------------------

TEST_F(AddmmMmToLinearTest, EachMethodIsJudgedByItsOwnSignature) {
  // Both methods have a placeholder called p_w; only in `encode` is it a
  // parameter. `decode` takes it from the caller.
  Program program;
  {
    GraphBuilder b(program.add_method("encode"));
    Value* w = b.parameter("w", {3, 3});
    b.user_output(mm(b, b.user_input("x", {2, 3}), transpose(b, w)));
  }
  {
    GraphBuilder b(program.add_method("decode"));
    Value* w = b.user_input("p_w", {3, 3});
    b.user_output(mm(b, b.user_input("x", {2, 3}), transpose(b, w)));
  }
  PassManager pm(PassManagerOptions{.verify_each = true});
  pm.add(std::make_unique<AddmmMmToLinear>());
  PassContext ctx;
  Result<bool> r = pm.run(program, ctx);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(op_counts(program.find_method("encode")->program->graph())["linear"], 1);
  EXPECT_EQ(op_counts(program.find_method("decode")->program->graph())["mm"], 1);
  ASSERT_EQ(ctx.records().size(), 2u);
  EXPECT_EQ(ctx.records()[0].method, "encode");
  EXPECT_TRUE(ctx.records()[0].rewritten);
  EXPECT_EQ(ctx.records()[1].method, "decode");
  EXPECT_EQ(ctx.records()[1].message, "mm 'mm' kept: weight 't' is user input 'p_w'");
}

TEST_F(AddmmMmToLinearTest, ReachesAFixpointInOneIteration) {
  ExportedProgram ep;
  build_simple_linear(ep);
  PassManager pm(PassManagerOptions{.verify_each = true, .fixpoint = true, .max_iterations = 3});
  pm.add(std::make_unique<AddmmMmToLinear>());
  pm.add(std::make_unique<RemoveDeadCode>());
  PassContext ctx;
  Result<bool> r = pm.run(ep, "forward", ctx);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(*r);
  EXPECT_EQ(pm.timings().size(), 4u);  // iteration 2 changes nothing
  EXPECT_FALSE(pm.timings()[2].changed);
  EXPECT_EQ(ctx.records().size(), 1u);
}

}  // namespace
}  // namespace lathe
