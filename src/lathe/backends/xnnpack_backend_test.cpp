// XNNPACK backend: every fixture lowered, written, read back and run
// against PyTorch's stored outputs and the portable run; refusals (_NEG)
// for weights that are not compile-time constants; a hand-made payload
// that hands init() a runtime weight (the record codec: payload_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "lathe/backends/backend_test_support.h"
#include "lathe/backends/xnnpack_backend.h"
#include "lathe/backends/xnnpack_kinds.h"

namespace lathe {
namespace {

using testing::with_delegates;

// XNNPACK's kernels sum in another order than MKL and the portable GEMM,
// and its sigmoid/hardswish are polynomial approximations: 1e-4 of each
// output's scale (compare.h) covers every fixture; most are ~1e-6.
constexpr double kRtol = 1e-4;

std::map<std::string, int64_t> op_counts(const Graph& g) {
  std::map<std::string, int64_t> ops;
  for (const Node* n : g.nodes()) ops[n->op_name()]++;
  return ops;
}

// fixtures/<name>, read into `program` and lowered to XNNPACK in place.
Result<LowerResult> lower_fixture(const std::string& name, Program& program) {
  LATHE_ASSIGN_OR_RETURN(program, read_pt2(testing::source_path("fixtures/" + name)));
  return lower_program(program, xnnpack_backend());
}

TEST(XnnpackFixtures, EveryFixtureLoweredWrittenReadMatchesPyTorchAndPortable) {
  set_xnnpack_threads(2);
  // fixtures/*.pt2, the data-dependent ones in fixtures/dynamic/ and the 13
  // common architectures in fixtures/architectures/ (resnet18 ... swin_t);
  // those with nothing claimed still go through lowering's passes.
  const testing::SweepCounts n = testing::sweep_fixtures({"fixtures", "fixtures/dynamic", "fixtures/architectures"},
                                                         xnnpack_backend(), {.rtol = kRtol, .against_portable = true});
  EXPECT_GT(n.delegate_nodes, 8);
}

// A real PyTorch 2.2 archive (../shared/external/pt2) on which the old
// partitioner placed a delegate after a node that read it ("'add_2_delegate'
// is not defined before its new user 'convolution_2'"): lowered, it now
// verifies and matches PyTorch's own outputs (fixtures/external/hades_pid.ref).
TEST(XnnpackFixtures, RealTorch22ArchiveLowersInOrderAndMatchesPyTorch) {
  auto program = read_pt2(testing::shared_path("external/pt2/hades_pid_exported_program.pt2"));
  ASSERT_TRUE(program.ok()) << program.error().message();
  auto lowered = lower_program(*program, xnnpack_backend());
  ASSERT_TRUE(lowered.ok()) << lowered.error().message();
  EXPECT_GT(lowered->methods[0].report.delegates, 1);
  auto calls = load_reference_calls(testing::source_path("fixtures/external/hades_pid.ref/model"));
  ASSERT_TRUE(calls.ok()) << calls.error().message();
  auto ex = Executor::create(*program->methods[0].program, with_delegates());
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  testing::expect_calls_match(**ex, *calls, kRtol, "hades_pid model");
}

TEST(XnnpackFixtures, TtsKeepsRuntimeMmOnPortableAndDelegatesBothLinears) {
  Program program;
  auto lowered = lower_fixture("tts_duration_predictor.pt2", program);
  ASSERT_TRUE(lowered.ok()) << lowered.error().message();
  const auto ops = op_counts(program.methods[0].program->graph());
  EXPECT_EQ(ops.count("aten.mm.default") ? ops.at("aten.mm.default") : 0, 1);
  EXPECT_EQ(ops.count("aten.linear.default"), 0u);
  EXPECT_EQ(ops.count("aten.addmm.default"), 0u);
  const MethodLowering& m = lowered->methods[0];
  int linears = 0;
  for (const NodeDecision& d : m.report.decisions) {
    if (d.op == "aten.linear.default") {
      ++linears;
      EXPECT_TRUE(d.claimed) << d.node << ": " << d.reason;
    }
    if (d.op == "aten.mm.default") {
      EXPECT_FALSE(d.claimed);
      EXPECT_NE(d.reason.find("computed at run time"), std::string::npos) << d.reason;
    }
  }
  EXPECT_EQ(linears, 2);
  // The payload refers to the weights; they are stored once, in the state.
  EXPECT_EQ(program.methods[0].program->parameters.size(), 4u);
}

TEST(XnnpackFixtures, ConvnetBatchNormsFoldIntoConvolutions) {
  Program program;
  auto lowered = lower_fixture("convnet.pt2", program);
  ASSERT_TRUE(lowered.ok()) << lowered.error().message();
  const auto ops = op_counts(program.methods[0].program->graph());
  // PyTorch 2.13 keeps aten.batch_norm.default whole; each one folds into
  // the convolution before it, and the pooled classifier (mean.dim, then
  // linear: no flattening view in this export) joins the same delegate.
  EXPECT_EQ(ops, (std::map<std::string, int64_t>{{"lathe.delegate.xnnpack", 1}}));
  int folded = 0;
  for (const NodeDecision& d : lowered->methods[0].report.decisions) {
    if (d.op != "aten.batch_norm.default") continue;
    ++folded;
    EXPECT_TRUE(d.claimed) << d.node << ": " << d.reason;
    EXPECT_NE(d.reason.find("folded into convolution"), std::string::npos) << d.reason;
  }
  EXPECT_EQ(folded, 20);
}

// A program with symbolic sizes is decided on at the sizes torch.export
// saw (replanned_delegate_test.cpp); one whose symbol has no recorded hint
// gives nothing to decide on: every node is declined, and --explain says why.
TEST(XnnpackDynamic, SymbolWithoutAHintIsDeclinedNodeByNode_NEG) {
  Program program;
  ExportedProgram& ep = testing::one_method_with_s0(program, 1, 64);
  GraphBuilder b(ep);
  const SymDim batch(SymExpr{"s0", std::nullopt});
  Value* w = b.parameter("fc.weight", {10, 64});
  Value* x = b.user_input("x", GraphBuilder::tensor_meta(DType::Float32, {batch, 64}));
  Value* y = b.call("aten.linear.default", {{"input", x}, {"weight", w}}, GraphBuilder::tensor_meta(DType::Float32, {batch, 10}));
  b.user_output(b.call("aten.relu.default", {{"self", y}}, GraphBuilder::tensor_meta(DType::Float32, {batch, 10})));
  auto lowered = lower_program(program, xnnpack_backend());
  ASSERT_TRUE(lowered.ok()) << lowered.error().message();
  const MethodLowering& m = lowered->methods[0];
  EXPECT_EQ(m.report.delegates, 0);
  ASSERT_EQ(m.report.decisions.size(), 2u);
  for (const NodeDecision& d : m.report.decisions) {
    EXPECT_FALSE(d.claimed) << d.node;
    EXPECT_NE(d.reason.find("has symbolic sizes"), std::string::npos) << d.node << ": " << d.reason;
  }
  const std::string explain = explain_lowering(m);
  EXPECT_NE(explain.find("model: aten.linear.default 'linear' not claimed: 'x' has symbolic sizes"), std::string::npos)
      << explain;
}

// ---- refusals ----------------------------------------------------------------------------

int delegates_after_partition(ExportedProgram& ep) { return testing::delegates_after_partition(ep, xnnpack_backend()); }

TEST(XnnpackLowering, DecomposeKeepsWhatXnnpackWantsWhole) {
  // A linear that decompose would split into permute + addmm stays whole.
  Program program;
  ExportedProgram& ep = program.add_method("model");
  testing::build_linear(ep);
  auto lowered = lower_program(program, xnnpack_backend());
  ASSERT_TRUE(lowered.ok()) << lowered.error().message();
  bool kept = false;
  for (const ExplainRecord& r : lowered->pass_records) kept = kept || (r.pass == "decompose" && r.message.find("keep-list") != std::string::npos);
  EXPECT_TRUE(kept);
  EXPECT_EQ(lowered->methods[0].report.delegates, 1);
  EXPECT_EQ(op_counts(ep.graph()), (std::map<std::string, int64_t>{{"lathe.delegate.xnnpack", 1}}));
}

// The mul is claimed (elementwise), the linear is not.
TEST(XnnpackRefusal, MutatedBufferWeight_NEG) { testing::expect_mutated_buffer_weight_refused(xnnpack_backend()); }

// Weights XNNPACK would prepack that are not compile-time constants: each
// op is refused naming the operand and why, and no delegate is made (XNNPACK
// has no tanh to claim beside the refused linear).
TEST(XnnpackRefusal, WeightsThatAreNotCompileTimeConstants_NEG) {
  testing::expect_weight_refusals(xnnpack_backend(), [](const testing::WeightRefusal&) { return 0; });
}

TEST(XnnpackClaim, LinearReluFusesAndMatchesPortable) {
  auto build = [](ExportedProgram& ep) {
    GraphBuilder b(ep);
    Value* w = b.parameter("fc.weight", {5, 3});
    Value* bias = b.parameter("fc.bias", {5});
    Value* x = b.user_input("x", {2, 3});
    Value* y = b.call("aten.linear.default", {{"input", x}, {"weight", w}, {"bias", bias}}, {2, 5});
    b.user_output(b.call("aten.hardtanh.default", {{"self", y}, {"min_val", 0.0}, {"max_val", 0.5}}, {2, 5}));
  };
  ExportedProgram ep, before;
  build(ep);
  build(before);
  auto rep = partition(ep, xnnpack_backend());
  ASSERT_TRUE(rep.ok()) << rep.error().message();
  EXPECT_EQ(rep->delegates, 1);
  EXPECT_EQ(rep->claimed_nodes, 2);
  EXPECT_NE(rep->decisions[1].reason.find("fused"), std::string::npos) << rep->decisions[1].reason;
  ASSERT_TRUE(verify(ep, "model").ok());
  EXPECT_EQ(ep.graph().node_count(), 1u);
  Tensor in = Tensor::empty(DType::Float32, {2, 3});
  auto* p = reinterpret_cast<float*>(in.storage->mutable_data());
  for (int i = 0; i < 6; ++i) p[i] = static_cast<float>(i) * 0.7f - 2.0f;
  testing::expect_same_outputs(ep, before, {in}, Tolerance{1e-5, 1e-6});
}

// _NEG: XNNPACK's pooling operators refuse a 1x1 window at init ("invalid
// parameter"); found by the random-program sweep (seed 38). Not claimed,
// the pool runs on the portable kernels.
TEST(XnnpackRefusal, OneByOnePoolingWindow_NEG) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* x = b.user_input("x", {1, 1, 1, 1});
  b.user_output(b.call("aten.avg_pool2d.default", {{"self", x}, {"kernel_size", IntList{{1, 1}}}}, {1, 1, 1, 1}));
  auto rep = partition(ep, xnnpack_backend());
  ASSERT_TRUE(rep.ok()) << rep.error().message();
  EXPECT_EQ(rep->delegates, 0);
  EXPECT_NE(rep->decisions[0].reason.find("1x1 window"), std::string::npos) << rep->decisions[0].reason;
}

// A one-node program: `op` over a [1, 1, 4, 4] input `x` (and a [1, 1, 3, 3]
// weight for a convolution), declaring output `declared`.
void build_window_op(ExportedProgram& ep, const std::string& op, std::vector<int64_t> in, IntList kernel,
                     std::vector<int64_t> declared) {
  GraphBuilder b(ep);
  Value* x = b.user_input("x", std::move(in));
  if (op == "conv") {
    Value* w = b.parameter("w", {1, 1, kernel.items[0], kernel.items[1]});
    b.user_output(b.call("aten.convolution.default",
                         {{"input", x}, {"weight", w}, {"bias", OptionalTensor{}}, {"stride", IntList{{1, 1}}},
                          {"padding", IntList{{0, 0}}}, {"dilation", IntList{{1, 1}}}, {"transposed", false},
                          {"output_padding", IntList{{0, 0}}}, {"groups", int64_t{1}}},
                         std::move(declared)));
    return;
  }
  b.user_output(b.call(op, {{"self", x}, {"kernel_size", kernel}}, std::move(declared)));
}

// _NEG (issue 33, item 15): a max pool whose window is larger than its
// input; PyTorch refuses it, and so does the portable kernel. Claimed, it
// ran and returned values. Not claimed now, saying why, and the run fails.
TEST(XnnpackRefusal, PoolWindowLargerThanItsInput_NEG) {
  ExportedProgram ep;
  build_window_op(ep, "aten.max_pool2d.default", {1, 1, 2, 2}, IntList{{5, 5}}, {1, 1, 1, 1});
  auto rep = partition(ep, xnnpack_backend());
  ASSERT_TRUE(rep.ok()) << rep.error().message();
  EXPECT_EQ(rep->delegates, 0);
  EXPECT_EQ(rep->decisions[0].reason, "has a window [5, 5] that does not fit its padded input [1, 1, 2, 2] (PyTorch refuses it)");
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  Tensor in = Tensor::empty(DType::Float32, {1, 1, 2, 2});
  auto out = (*ex)->run(std::vector<Tensor>{in});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message().find("too small"), std::string::npos) << out.error().message();
}

// _NEG (issue 33, found by tools/hostile_probe.py): a pool with stride 0
// (or a negative one) killed `lathe lower` and `run --backend xnnpack` with
// SIGFPE: the window check divided by the stride. Not claimed now, saying
// why; the portable kernel refuses it at run time, as PyTorch does.
TEST(XnnpackRefusal, PoolStrideNotPositive_NEG) {
  for (const IntList& stride : {IntList{{0, 1}}, IntList{{1, -1}}}) {
    for (const std::string op : {"aten.max_pool2d.default", "aten.avg_pool2d.default"}) {
      SCOPED_TRACE(op);
      ExportedProgram ep;
      GraphBuilder b(ep);
      Value* x = b.user_input("x", {1, 1, 4, 4});
      b.user_output(b.call(op, {{"self", x}, {"kernel_size", IntList{{2, 2}}}, {"stride", stride}}, {1, 1, 2, 2}));
      auto rep = partition(ep, xnnpack_backend());
      ASSERT_TRUE(rep.ok()) << rep.error().message();
      EXPECT_EQ(rep->delegates, 0);
      EXPECT_EQ(rep->decisions[0].reason, "has a kernel, stride or dilation that is not positive (PyTorch refuses it)");
    }
  }
}

// _NEG (issue 33, item 18): declared output sizes that the input and
// window do not give (ATen: (4 - 2) / 2 + 1 = 2 for the pool, 4 - 3 + 1 = 2
// for the convolution) are the input program's fault, and said so; they
// were lowered into a payload the runtime then refused as malformed.
TEST(XnnpackRefusal, DeclaredWindowOutputTheInputDoesNotGive_NEG) {
  struct Case {
    std::string op;
    IntList kernel;
  };
  for (const Case& c : {Case{"aten.max_pool2d.default", IntList{{2, 2}}}, Case{"aten.avg_pool2d.default", IntList{{2, 2}}},
                        Case{"conv", IntList{{3, 3}}}}) {
    SCOPED_TRACE(c.op);
    ExportedProgram ep;
    build_window_op(ep, c.op, {1, 1, 4, 4}, c.kernel, {1, 1, 3, 3});
    auto rep = partition(ep, xnnpack_backend());
    ASSERT_TRUE(rep.ok()) << rep.error().message();
    EXPECT_EQ(rep->delegates, 0);
    EXPECT_EQ(rep->decisions[0].reason,
              "declares output [1, 1, 3, 3] where its input [1, 1, 4, 4] and window give [1, 1, 2, 2]: the program's "
              "tensor metadata is inconsistent");
    ExportedProgram honest;
    build_window_op(honest, c.op, {1, 1, 4, 4}, c.kernel, {1, 1, 2, 2});
    auto claimed = partition(honest, xnnpack_backend());
    ASSERT_TRUE(claimed.ok()) << claimed.error().message();
    EXPECT_EQ(claimed->delegates, 1) << claimed->decisions[0].reason;
  }
}

// _NEG (issue 33, item 18): lying metadata on an op without a window (a
// linear declaring [2, 7] for a [5, 3] weight, or [2, 5, 1]: the right count
// at the wrong rank, which the delegate would have returned as declared) is
// refused when lower builds the delegate, naming the node and both shapes.
TEST(XnnpackRefusal, LowerBuildsTheDelegatesItWrites_NEG) {
  for (const std::vector<int64_t>& declared : {std::vector<int64_t>{2, 7}, std::vector<int64_t>{2, 5, 1}}) {
    Program program;
    program.methods.push_back(Method{"forward", std::make_unique<ExportedProgram>(), {}, {}});
    GraphBuilder b(*program.methods[0].program);
    Value* w = b.parameter("fc.weight", {5, 3});
    Value* x = b.user_input("x", {2, 3});
    b.user_output(b.call("aten.linear.default", {{"input", x}, {"weight", w}}, declared));
    auto lowered = lower_program(program, xnnpack_backend());
    ASSERT_FALSE(lowered.ok());
    EXPECT_NE(lowered.error().message().find("node 'linear' (aten.linear.default): output 'linear' is declared " +
                                             shape_string(declared) + ", but input [2, 3] and weight [5, 3] give [2, 5]"),
              std::string::npos)
        << lowered.error().message();
  }
}

TEST(XnnpackRefusal, ExecutorWithoutTheBackendNamesTheDelegateNode_NEG) {
  ExportedProgram ep;
  testing::build_linear(ep);
  ASSERT_EQ(delegates_after_partition(ep), 1);
  auto ex = Executor::create(ep);
  ASSERT_FALSE(ex.ok());
  EXPECT_NE(ex.error().message().find("backend 'xnnpack' not loaded"), std::string::npos) << ex.error().message();
}

// A payload made by hand (not by the partitioner) that puts a runtime
// value where XNNPACK needs a prepackable weight: init() must refuse and
// name the node, the operand and the node that computes it (linear-rewrite.md §6).
TEST(XnnpackRefusal, HandMadePayloadWithRuntimeWeightFailsInitNamingIt_NEG) {
  testing::expect_runtime_weight_refused_at_init("xnnpack", "fully_connected", "fully_connected 'mm'");
}

// The keep-list is derived from the support table: the claimed ops that
// decompose would split (hand-checked against decompose.cpp's rules), and
// nothing the table has no row for.
TEST(XnnpackTables, KeepListIsTheClaimedOpsDecomposeWouldSplit) {
  EXPECT_EQ(xnnpack_backend().ops_to_keep(),
            (std::vector<std::string>{"aten.layer_norm.default", "aten.linear.default", "aten.softmax.int"}));
  const std::vector<std::string> claimed = xnnpack_backend().claimed_ops();
  EXPECT_TRUE(std::is_sorted(claimed.begin(), claimed.end()));
  for (const char* op : {"aten.sigmoid.default", "aten.hardswish.default", "aten.hardsigmoid.default", "aten.convolution.default"})
    EXPECT_NE(std::find(claimed.begin(), claimed.end(), op), claimed.end()) << op;
  EXPECT_EQ(std::find(claimed.begin(), claimed.end(), "aten.tanh.default"), claimed.end());
}

// Every kind of xnnpack_ops.def round-trips through its payload name, and
// the host ops are exactly the LATHE_XNNPACK_HOST_OP rows.
TEST(XnnpackTables, KindsRoundTripThroughTheirPayloadNames) {
  int host = 0;
  for (int k = 0; k <= static_cast<int>(XnnpackKind::ChannelAffine); ++k) {
    const auto kind = static_cast<XnnpackKind>(k);
    EXPECT_EQ(xnnpack_kind_named(xnnpack_kind_name(kind)), kind) << xnnpack_kind_name(kind);
    if (auto h = host_op_of(kind)) {
      ++host;
      EXPECT_EQ(host_op_name(*h), xnnpack_kind_name(kind));
    }
  }
  EXPECT_EQ(host, 10);
  EXPECT_EQ(xnnpack_kind_name(XnnpackKind::FullyConnected), "fully_connected");
  EXPECT_FALSE(xnnpack_kind_named("linear").has_value());
}

}  // namespace
}  // namespace lathe
