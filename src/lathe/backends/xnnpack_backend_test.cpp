// XNNPACK backend: every fixture lowered, written, read back and run
// against PyTorch's stored outputs and the portable run; refusals (_NEG)
// for weights that are not compile-time constants; a hand-made payload
// that hands init() a runtime weight (the record codec: payload_test.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

#include "lathe/analysis/constness.h"
#include "lathe/backends/lower.h"
#include "lathe/backends/payload.h"
#include "lathe/backends/xnnpack_backend.h"
#include "lathe/harness/reference.h"
#include "lathe/ir/graph_builder.h"
#include "lathe/ir/rewriter.h"
#include "lathe/ir/verify.h"
#include "lathe/runtime/compare.h"
#include "lathe/runtime/executor.h"
#include "lathe/serde/pt2.h"
#include "support/testing.h"

namespace lathe {
namespace {

namespace fs = std::filesystem;

// XNNPACK's kernels sum in another order than MKL and the portable GEMM,
// and its sigmoid/hardswish are polynomial approximations: 1e-4 of each
// output's scale (compare.h) covers every fixture; most are ~1e-6.
constexpr double kRtol = 1e-4;

std::map<std::string, int64_t> op_counts(const Graph& g) {
  std::map<std::string, int64_t> ops;
  for (const Node* n : g.nodes()) ops[n->op_name()]++;
  return ops;
}

ExecutorOptions with_delegates() {
  ExecutorOptions o;
  o.delegates = &builtin_delegates();
  return o;
}

// fixtures/*.pt2, the data-dependent ones in fixtures/dynamic/ and the 13
// common architectures in fixtures/architectures/ (resnet18 ... swin_t).
std::vector<std::string> fixtures() {
  std::vector<std::string> out;
  for (const char* dir : {"fixtures", "fixtures/dynamic", "fixtures/architectures"}) {
    for (const auto& e : fs::directory_iterator(testing::source_path(dir))) {
      if (e.path().extension() == ".pt2") out.push_back(e.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(XnnpackFixtures, EveryFixtureLoweredWrittenReadMatchesPyTorchAndPortable) {
  set_xnnpack_threads(2);
  const std::string dir = testing::temp_dir();
  int delegated = 0;
  for (const std::string& path : fixtures()) {
    const std::string stem = fs::path(path).stem().string();
    SCOPED_TRACE(stem);
    if (!testing::fixture_runnable(path)) continue;  // a custom op no runtime here has (fixtures_test.cpp checks the refusal)
    auto original = read_pt2(path);
    ASSERT_TRUE(original.ok()) << original.error().message();
    auto program = read_pt2(path);
    ASSERT_TRUE(program.ok());
    auto lowered = lower_program(*program, xnnpack_backend());
    ASSERT_TRUE(lowered.ok()) << lowered.error().message();
    const std::string out_path = dir + "/" + fs::path(path).parent_path().filename().string() + "_" + stem + ".xnnpack.pt2";
    Status w = write_pt2(*program, out_path);
    ASSERT_TRUE(w.ok()) << w.error().message();
    auto back = read_pt2(out_path);
    ASSERT_TRUE(back.ok()) << back.error().message();
    for (const Method& m : back->methods) {
      SCOPED_TRACE(m.name);
      for (const Node* n : m.program->graph().nodes()) delegated += n->op_name().starts_with("lathe.delegate.") ? 1 : 0;
      auto calls = load_reference_calls(reference_dir(path, m.name));
      ASSERT_TRUE(calls.ok()) << calls.error().message();
      auto ex = Executor::create(*m.program, with_delegates());
      ASSERT_TRUE(ex.ok()) << ex.error().message();
      auto portable = Executor::create(*original->find_method(m.name)->program);
      ASSERT_TRUE(portable.ok());
      for (size_t k = 0; k < calls->size(); ++k) {
        auto got = (*ex)->run((*calls)[k].inputs);
        ASSERT_TRUE(got.ok()) << got.error().message();
        auto want = (*portable)->run((*calls)[k].inputs);
        ASSERT_TRUE(want.ok());
        ASSERT_EQ(got->size(), (*calls)[k].outputs.size());
        for (size_t i = 0; i < got->size(); ++i) {
          TensorDiff d = compare_tensors((*got)[i], (*calls)[k].outputs[i], Tolerance{kRtol, 0});
          TensorDiff p = compare_tensors((*got)[i], (*want)[i], Tolerance{kRtol, 0});
          std::printf("  %-32s %-7s call %zu output %zu: vs PyTorch %s; vs portable %s\n", stem.c_str(), m.name.c_str(), k, i,
                      d.describe().c_str(), p.describe().c_str());
          EXPECT_TRUE(d.ok) << "vs PyTorch: " << d.describe();
          EXPECT_TRUE(p.ok) << "vs portable: " << p.describe();
        }
      }
    }
  }
  EXPECT_GT(delegated, 8);
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
  for (const ReferenceCall& call : *calls) {
    auto got = (*ex)->run(call.inputs);
    ASSERT_TRUE(got.ok()) << got.error().message();
    ASSERT_EQ(got->size(), call.outputs.size());
    for (size_t i = 0; i < got->size(); ++i) {
      TensorDiff d = compare_tensors((*got)[i], call.outputs[i], Tolerance{kRtol, 0});
      EXPECT_TRUE(d.ok) << "output " << i << ": " << d.describe();
    }
  }
}

TEST(XnnpackFixtures, TtsKeepsRuntimeMmOnPortableAndDelegatesBothLinears) {
  auto program = read_pt2(testing::source_path("fixtures/tts_duration_predictor.pt2"));
  ASSERT_TRUE(program.ok());
  auto lowered = lower_program(*program, xnnpack_backend());
  ASSERT_TRUE(lowered.ok()) << lowered.error().message();
  const auto ops = op_counts(program->methods[0].program->graph());
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
  EXPECT_EQ(program->methods[0].program->parameters.size(), 4u);
}

TEST(XnnpackFixtures, ConvnetBatchNormsFoldIntoConvolutions) {
  auto program = read_pt2(testing::source_path("fixtures/convnet.pt2"));
  ASSERT_TRUE(program.ok());
  auto lowered = lower_program(*program, xnnpack_backend());
  ASSERT_TRUE(lowered.ok()) << lowered.error().message();
  const auto ops = op_counts(program->methods[0].program->graph());
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

// XNNPACK operators are created at init for fixed shapes, so a node whose
// tensors have symbolic sizes (mlp's batch is a Dim in [1, 64]) is never
// claimed, and --explain says why, node by node.
TEST(XnnpackDynamic, SymbolicSizesAreDeclinedNodeByNode_NEG) {
  auto program = read_pt2(testing::source_path("fixtures/mlp.pt2"));
  ASSERT_TRUE(program.ok());
  auto lowered = lower_program(*program, xnnpack_backend());
  ASSERT_TRUE(lowered.ok()) << lowered.error().message();
  EXPECT_EQ(op_counts(program->methods[0].program->graph()).count("lathe.delegate.xnnpack"), 0u);
  const MethodLowering& m = lowered->methods[0];
  ASSERT_FALSE(m.report.decisions.empty());
  for (const NodeDecision& d : m.report.decisions) {
    EXPECT_FALSE(d.claimed) << d.node;
    EXPECT_NE(d.reason.find("has symbolic sizes"), std::string::npos) << d.node << ": " << d.reason;
  }
  const std::string explain = explain_lowering(m);
  EXPECT_NE(explain.find("model: aten.linear.default 'addmm' not claimed: 'x' has symbolic sizes"), std::string::npos)
      << explain;
}

// ---- refusals ----------------------------------------------------------------------------

NodeSupport support_of(const ExportedProgram& ep, const Node* n) {
  Constness c(ep);
  return xnnpack_backend().support(*n, c);
}

int delegates_after_partition(ExportedProgram& ep) {
  auto r = partition(ep, xnnpack_backend());
  EXPECT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(verify(ep, "model").ok());
  return r.ok() ? r->delegates : -1;
}

TEST(XnnpackLowering, DecomposeKeepsWhatXnnpackWantsWhole) {
  // A linear that decompose would split into permute + addmm stays whole.
  Program program;
  ExportedProgram& ep = program.add_method("model");
  GraphBuilder b(ep);
  Value* w = b.parameter("fc.weight", {4, 3});
  Value* x = b.user_input("x", {2, 3});
  b.user_output(b.call("aten.linear.default", {{"input", x}, {"weight", w}}, {2, 4}));
  auto lowered = lower_program(program, xnnpack_backend());
  ASSERT_TRUE(lowered.ok()) << lowered.error().message();
  bool kept = false;
  for (const ExplainRecord& r : lowered->pass_records) kept = kept || (r.pass == "decompose" && r.message.find("keep-list") != std::string::npos);
  EXPECT_TRUE(kept);
  EXPECT_EQ(lowered->methods[0].report.delegates, 1);
  EXPECT_EQ(op_counts(ep.graph()), (std::map<std::string, int64_t>{{"lathe.delegate.xnnpack", 1}}));
}

TEST(XnnpackRefusal, MutatedBufferWeight_NEG) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* buf = b.buffer("w", {4, 3});
  Value* x = b.user_input("x", {2, 3});
  Value* y = b.call("aten.linear.default", {{"input", x}, {"weight", buf}}, {2, 4});
  Node* linear = b.last_node();
  Value* upd = b.call("aten.mul.Tensor", {{"self", buf}, {"other", buf}}, {4, 3});
  b.buffer_mutation(upd, "w");
  b.user_output(y);
  NodeSupport s = support_of(ep, linear);
  EXPECT_FALSE(s.claimed);
  EXPECT_NE(s.reason.find("mutable buffer"), std::string::npos) << s.reason;
  // The mul is claimed (elementwise), the linear is not.
  auto r = partition(ep, xnnpack_backend());
  ASSERT_TRUE(r.ok()) << r.error().message();
  for (const NodeDecision& d : r->decisions) {
    if (d.op == "aten.linear.default") {
      EXPECT_FALSE(d.claimed);
    }
  }
  EXPECT_TRUE(verify(ep, "model").ok());
}

Value* linear(GraphBuilder& b, Value* x, Value* w, Value* bias = nullptr) {
  std::vector<GraphBuilder::Arg> args{{"input", x}, {"weight", w}};
  if (bias) args.push_back({"bias", bias});
  return b.call("aten.linear.default", std::move(args), {2, 4});
}

// Weights XNNPACK would prepack that are not compile-time constants: each
// op is refused naming the operand and why, and no delegate is made.
TEST(XnnpackRefusal, WeightsThatAreNotCompileTimeConstants_NEG) {
  struct Case {
    const char* what;
    Value* (*build)(GraphBuilder& b, Value* x);
    const char* why;
  };
  const Case cases[] = {
      {"a user input weight", [](GraphBuilder& b, Value* x) { return linear(b, x, b.user_input("w", {4, 3})); },
       "weight 'w' is user input 'w'"},
      {"a computed weight",
       [](GraphBuilder& b, Value* x) {
         Value* p = b.parameter("fc.weight", {4, 3});
         return linear(b, x, b.call("aten.tanh.default", {{"self", p}}, {4, 3}, DType::Float32, "squashed"));
       },
       "computed at run time by 'squashed'"},
      {"a user input bias",
       [](GraphBuilder& b, Value* x) { return linear(b, x, b.parameter("fc.weight", {4, 3}), b.user_input("bias", {4})); },
       "bias 'bias' is user input 'bias'"},
      {"mm against a run-time matrix",
       [](GraphBuilder& b, Value* x) {
         return b.call("aten.mm.default", {{"self", x}, {"mat2", b.user_input("m", {3, 4})}}, {2, 4});
       },
       "mat2 'm' is user input 'm'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    ExportedProgram ep;
    GraphBuilder b(ep);
    b.user_output(c.build(b, b.user_input("x", {2, 3})));
    NodeSupport s = support_of(ep, b.last_node());
    EXPECT_FALSE(s.claimed);
    EXPECT_NE(s.reason.find(c.why), std::string::npos) << s.reason;
    EXPECT_EQ(delegates_after_partition(ep), 0);
  }
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
  auto a = Executor::create(ep, with_delegates());
  ASSERT_TRUE(a.ok()) << a.error().message();
  auto e = Executor::create(before);
  ASSERT_TRUE(e.ok());
  auto got = (*a)->run(std::vector<Tensor>{in});
  auto want = (*e)->run(std::vector<Tensor>{in});
  ASSERT_TRUE(got.ok() && want.ok());
  TensorDiff d = compare_tensors((*got)[0], (*want)[0], Tolerance{1e-5, 1e-6});
  EXPECT_TRUE(d.ok) << d.describe();
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

TEST(XnnpackRefusal, ExecutorWithoutTheBackendNamesTheDelegateNode_NEG) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* w = b.parameter("fc.weight", {4, 3});
  Value* x = b.user_input("x", {2, 3});
  b.user_output(b.call("aten.linear.default", {{"input", x}, {"weight", w}}, {2, 4}));
  ASSERT_EQ(delegates_after_partition(ep), 1);
  auto ex = Executor::create(ep);
  ASSERT_FALSE(ex.ok());
  EXPECT_NE(ex.error().message().find("backend 'xnnpack' not loaded"), std::string::npos) << ex.error().message();
}

// A payload made by hand (not by the partitioner) that puts a runtime
// value where XNNPACK needs a prepackable weight: init() must refuse and
// name the node, the operand and the node that computes it (linear-rewrite.md §6).
TEST(XnnpackRefusal, HandMadePayloadWithRuntimeWeightFailsInitNamingIt_NEG) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* x = b.user_input("x", {2, 3});
  Value* m = b.user_input("m", {3, 4});
  Value* w = b.call("aten.relu.default", {{"self", m}}, {3, 4}, DType::Float32, "computed_w");
  Value* y = b.call("aten.mm.default", {{"self", x}, {"mat2", w}}, {2, 4});
  b.user_output(y);
  Node* mm = b.last_node();

  DelegatePayload p;
  p.backend = "xnnpack";
  uint32_t xi = p.add_value({2, 3}, 0), wi = p.add_value({3, 4}, 1), yi = p.add_value({2, 4});
  p.ops.push_back(PayloadOp{"fully_connected", "mm", {{xi, "input"}, {wi, "weight"}}, {yi}, {2, 3, 4, 1}, {-INFINITY, INFINITY}});
  p.outputs = {yi};
  std::vector<std::byte> bytes = encode_payload(p);

  Rewriter rw(ep);
  Tensor record = Tensor::empty(DType::UInt8, {static_cast<int64_t>(bytes.size())});
  std::copy(bytes.begin(), bytes.end(), record.storage->mutable_data());
  auto pv = rw.add_constant("hand_made_payload", record);
  ASSERT_TRUE(pv.ok()) << pv.error().message();
  TensorMeta pm;
  pm.dtype = DType::UInt8;
  pm.sizes = {SymDim(static_cast<int64_t>(bytes.size()))};
  (*pv)->set_meta(pm);
  auto node = rw.create_node("lathe.delegate.xnnpack",
                             {NamedArgument{"payload", TensorRef{*pv}, ArgKind::Positional},
                              NamedArgument{"inputs", TensorList{{x, w}}, ArgKind::Positional}},
                             {NewOutput{ValueKind::Tensor, "delegated", y->meta()}}, mm);
  ASSERT_TRUE(node.ok()) << node.error().message();
  ASSERT_TRUE(rw.replace_all_uses(y, (*node)->output()).ok());
  ASSERT_TRUE(rw.erase_node(mm).ok());
  ASSERT_TRUE(verify(ep, "model").ok());

  auto ex = Executor::create(ep, with_delegates());
  ASSERT_FALSE(ex.ok());
  const std::string msg = ex.error().message();
  EXPECT_NE(msg.find("fully_connected 'mm'"), std::string::npos) << msg;             // the node
  EXPECT_NE(msg.find("operand 'weight' is 'computed_w'"), std::string::npos) << msg;  // the operand
  EXPECT_NE(msg.find("by node 'computed_w' (aten.relu.default)"), std::string::npos) << msg;  // its producer
  EXPECT_EQ(msg.find("Aborted"), std::string::npos);
}

}  // namespace
}  // namespace lathe
