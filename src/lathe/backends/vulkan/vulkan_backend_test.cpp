// Vulkan backend on lavapipe (or any Vulkan device): every fixture that
// the partitioner claims any node of is lowered, written, read back, run,
// and matched against PyTorch's stored outputs; refusals (_NEG) for each
// kind of weight that is not a compile-time constant; a hand-made payload
// that hands init() a runtime weight; malformed payload ops.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "lathe/analysis/constness.h"
#include "lathe/backends/lower.h"
#include "lathe/backends/payload.h"
#include "lathe/backends/vulkan/vulkan_backend.h"
#include "lathe/backends/vulkan/vulkan_test_support.h"
#include "lathe/ir/graph_builder.h"
#include "lathe/ir/rewriter.h"
#include "lathe/ir/verify.h"
#include "lathe/runtime/compare.h"
#include "lathe/runtime/executor.h"
#include "lathe/harness/reference.h"
#include "lathe/serde/pt2.h"
#include "support/testing.h"

namespace lathe {
namespace {

namespace fs = std::filesystem;

// The shaders sum in another order than PyTorch's kernels, and erf, exp and
// division are the device's own: 1e-4 of each output's scale (compare.h).
// Every fixture passes at 1e-5 on lavapipe today; the margin is for other
// devices' transcendental functions.
constexpr double kRtol = 1e-4;

ExecutorOptions with_delegates() {
  ExecutorOptions o;
  o.delegates = &builtin_delegates();
  return o;
}

std::vector<std::string> fixtures() {
  std::vector<std::string> out;
  for (const char* dir : {"fixtures", "fixtures/architectures"}) {
    for (const auto& e : fs::directory_iterator(testing::source_path(dir))) {
      if (e.path().extension() == ".pt2") out.push_back(e.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

class VulkanFixtures : public ::testing::Test {
 protected:
  void SetUp() override { LATHE_REQUIRE_VULKAN_DRIVER(); }
};

TEST_F(VulkanFixtures, EveryClaimedFixtureLoweredWrittenReadMatchesPyTorch) {
  const std::string dir = testing::temp_dir();
  int delegated_fixtures = 0;
  for (const std::string& path : fixtures()) {
    const std::string stem = fs::path(path).stem().string();
    SCOPED_TRACE(stem);
    if (!testing::fixture_runnable(path)) continue;  // a custom op no runtime here has
    auto program = read_pt2(path);
    ASSERT_TRUE(program.ok()) << program.error().message();
    auto lowered = lower_program(*program, vulkan_backend());
    ASSERT_TRUE(lowered.ok()) << lowered.error().message();
    int claimed = 0;
    for (const MethodLowering& m : lowered->methods) claimed += m.report.claimed_nodes;
    if (claimed == 0) continue;  // nothing for Vulkan (mlp: symbolic batch)
    ++delegated_fixtures;
    const std::string out_path = dir + "/" + stem + ".vulkan.pt2";
    ASSERT_TRUE(write_pt2(*program, out_path).ok());
    auto back = read_pt2(out_path);
    ASSERT_TRUE(back.ok()) << back.error().message();
    for (const Method& m : back->methods) {
      auto calls = load_reference_calls(reference_dir(path, m.name));
      ASSERT_TRUE(calls.ok()) << calls.error().message();
      auto ex = Executor::create(*m.program, with_delegates());
      ASSERT_TRUE(ex.ok()) << ex.error().message();
      for (size_t k = 0; k < calls->size(); ++k) {
        auto got = (*ex)->run((*calls)[k].inputs);
        ASSERT_TRUE(got.ok()) << got.error().message();
        ASSERT_EQ(got->size(), (*calls)[k].outputs.size());
        for (size_t i = 0; i < got->size(); ++i) {
          TensorDiff d = compare_tensors((*got)[i], (*calls)[k].outputs[i], Tolerance{kRtol, 0});
          std::printf("  %-26s %-8s call %zu output %zu: vs PyTorch %s\n", stem.c_str(), m.name.c_str(), k, i, d.describe().c_str());
          EXPECT_TRUE(d.ok) << m.name << " call " << k << " output " << i << ": " << d.describe();
        }
      }
    }
  }
  std::printf("%d fixtures have Vulkan delegates\n", delegated_fixtures);
  EXPECT_GE(delegated_fixtures, 25);
}

TEST_F(VulkanFixtures, TtsKeepsTheRuntimeMmOffTheDevice) {
  auto program = read_pt2(testing::source_path("fixtures/tts_duration_predictor.pt2"));
  ASSERT_TRUE(program.ok());
  auto lowered = lower_program(*program, vulkan_backend());
  ASSERT_TRUE(lowered.ok()) << lowered.error().message();
  int linears = 0, mms = 0;
  for (const NodeDecision& d : lowered->methods[0].report.decisions) {
    if (d.op == "aten.linear.default") {
      ++linears;
      EXPECT_TRUE(d.claimed) << d.node << ": " << d.reason;
    }
    if (d.op == "aten.mm.default") {
      ++mms;
      EXPECT_FALSE(d.claimed);
      EXPECT_NE(d.reason.find("mat2 'permute_1' is computed at run time by 'permute_1'"), std::string::npos) << d.reason;
    }
  }
  EXPECT_EQ(linears, 2);
  EXPECT_EQ(mms, 1);
  EXPECT_EQ(program->methods[0].program->parameters.size(), 4u);  // each weight once, in the state
}

// A delegate initialised and then dropped (create() failing on a later
// node, or a program loaded and never called) releases at once.
TEST_F(VulkanFixtures, HandleDroppedBeforeAnyCallReleasesAtOnce) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* w = b.parameter("fc.weight", {4, 3});
  Value* x = b.user_input("x", {2, 3});
  b.user_output(b.call("aten.linear.default", {{"input", x}, {"weight", w}}, {2, 4}));
  ASSERT_TRUE(partition(ep, vulkan_backend()).ok());
  const auto start = std::chrono::steady_clock::now();
  {
    auto ex = Executor::create(ep, with_delegates());
    ASSERT_TRUE(ex.ok()) << ex.error().message();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

// ---- refusals ----------------------------------------------------------------------------

NodeSupport support_of(const ExportedProgram& ep, const Node* n) {
  Constness c(ep);
  return vulkan_backend().support(*n, c);
}

int delegates_after_partition(ExportedProgram& ep) {
  auto r = partition(ep, vulkan_backend());
  EXPECT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(verify(ep, "model").ok());
  return r.ok() ? r->delegates : -1;
}

TEST(VulkanRefusal, UserInputWeight_NEG) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* w = b.user_input("w", {4, 3});
  Value* x = b.user_input("x", {2, 3});
  b.user_output(b.call("aten.linear.default", {{"input", x}, {"weight", w}}, {2, 4}));
  NodeSupport s = support_of(ep, b.last_node());
  EXPECT_FALSE(s.claimed);
  EXPECT_NE(s.reason.find("weight 'w' is user input 'w'"), std::string::npos) << s.reason;
  EXPECT_EQ(delegates_after_partition(ep), 0);
}

TEST(VulkanRefusal, WeightComputedAtRunTime_NEG) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* p = b.parameter("fc.weight", {4, 3});
  Value* x = b.user_input("x", {2, 3});
  Value* w = b.call("aten.tanh.default", {{"self", p}}, {4, 3}, DType::Float32, "squashed");
  b.user_output(b.call("aten.linear.default", {{"input", x}, {"weight", w}}, {2, 4}));
  NodeSupport s = support_of(ep, b.last_node());
  EXPECT_FALSE(s.claimed);
  EXPECT_NE(s.reason.find("weight 'squashed' is computed at run time by 'squashed'"), std::string::npos) << s.reason;
  // The tanh itself is claimed; the linear that reads it stays portable.
  auto r = partition(ep, vulkan_backend());
  ASSERT_TRUE(r.ok());
  for (const NodeDecision& d : r->decisions) EXPECT_EQ(d.claimed, d.op != "aten.linear.default") << d.node;
}

TEST(VulkanRefusal, MutatedBufferWeight_NEG) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* buf = b.buffer("w", {4, 3});
  Value* x = b.user_input("x", {2, 3});
  Value* y = b.call("aten.linear.default", {{"input", x}, {"weight", buf}}, {2, 4});
  Node* linear = b.last_node();
  b.buffer_mutation(b.call("aten.mul.Tensor", {{"self", buf}, {"other", buf}}, {4, 3}), "w");
  b.user_output(y);
  NodeSupport s = support_of(ep, linear);
  EXPECT_FALSE(s.claimed);
  EXPECT_NE(s.reason.find("mutable buffer"), std::string::npos) << s.reason;
  auto r = partition(ep, vulkan_backend());
  ASSERT_TRUE(r.ok());
  for (const NodeDecision& d : r->decisions) {
    if (d.op == "aten.linear.default") EXPECT_FALSE(d.claimed);
  }
  EXPECT_TRUE(verify(ep, "model").ok());
}

TEST(VulkanRefusal, MmAgainstARuntimeMatrix_NEG) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* x = b.user_input("x", {2, 3});
  Value* m = b.user_input("m", {3, 4});
  b.user_output(b.call("aten.mm.default", {{"self", x}, {"mat2", m}}, {2, 4}));
  NodeSupport s = support_of(ep, b.last_node());
  EXPECT_FALSE(s.claimed);
  EXPECT_NE(s.reason.find("mat2 'm' is user input 'm'"), std::string::npos) << s.reason;
  EXPECT_EQ(delegates_after_partition(ep), 0);
}

TEST(VulkanRefusal, ConvolutionWithAUserInputBias_NEG) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* x = b.user_input("x", {1, 2, 5, 5});
  Value* w = b.parameter("conv.weight", {3, 2, 3, 3});
  Value* bias = b.user_input("bias", {3});
  b.user_output(b.call("aten.convolution.default",
                       {{"input", x}, {"weight", w}, {"bias", bias}, {"stride", IntList{{1, 1}}}, {"padding", IntList{{0, 0}}},
                        {"dilation", IntList{{1, 1}}}, {"transposed", false}, {"output_padding", IntList{{0, 0}}}, {"groups", int64_t{1}}},
                       {1, 3, 3, 3}));
  NodeSupport s = support_of(ep, b.last_node());
  EXPECT_FALSE(s.claimed);
  EXPECT_NE(s.reason.find("bias 'bias' is user input 'bias'"), std::string::npos) << s.reason;
}

// Buffers are sized at load, so a node with symbolic sizes (mlp's batch is
// a Dim) is declined, node by node. (lower_program opens the device first.)
TEST_F(VulkanFixtures, SymbolicSizesAreDeclined_NEG) {
  auto program = read_pt2(testing::source_path("fixtures/mlp.pt2"));
  ASSERT_TRUE(program.ok());
  auto lowered = lower_program(*program, vulkan_backend());
  ASSERT_TRUE(lowered.ok()) << lowered.error().message();
  for (const NodeDecision& d : lowered->methods[0].report.decisions) {
    EXPECT_FALSE(d.claimed) << d.node;
    EXPECT_NE(d.reason.find("has symbolic sizes"), std::string::npos) << d.reason;
  }
}

// ---- hand-made payloads --------------------------------------------------------------------

// Replaces the graph's single node by a vulkan delegate node running `p`
// over `inputs`.
void replace_with_payload(ExportedProgram& ep, Node* node, const DelegatePayload& p, std::vector<Value*> inputs) {
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
  Value* y = node->output();
  auto n = rw.create_node("lathe.delegate.vulkan",
                          {NamedArgument{"payload", TensorRef{*pv}, ArgKind::Positional},
                           NamedArgument{"inputs", TensorList{std::move(inputs)}, ArgKind::Positional}},
                          {NewOutput{ValueKind::Tensor, "delegated", y->meta()}}, node);
  ASSERT_TRUE(n.ok()) << n.error().message();
  ASSERT_TRUE(rw.replace_all_uses(y, (*n)->output()).ok());
  ASSERT_TRUE(rw.erase_node(node).ok());
  ASSERT_TRUE(verify(ep, "model").ok());
}

TEST_F(VulkanFixtures, HandMadePayloadWithARuntimeWeightFailsInitNamingIt_NEG) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* x = b.user_input("x", {2, 3});
  Value* m = b.user_input("m", {3, 4});
  Value* w = b.call("aten.relu.default", {{"self", m}}, {3, 4}, DType::Float32, "computed_w");
  b.user_output(b.call("aten.mm.default", {{"self", x}, {"mat2", w}}, {2, 4}));
  DelegatePayload p;
  p.backend = "vulkan";
  const uint32_t xi = p.add_value({2, 3}, 0), wi = p.add_value({3, 4}, 1), yi = p.add_value({2, 4});
  p.ops.push_back(PayloadOp{"linear", "mm", {{xi, "input"}, {wi, "weight"}}, {yi}, {2, 3, 4, 1}, {-INFINITY, INFINITY}});
  p.outputs = {yi};
  replace_with_payload(ep, b.last_node(), p, {x, w});
  auto ex = Executor::create(ep, with_delegates());
  ASSERT_FALSE(ex.ok());
  const std::string msg = ex.error().message();
  EXPECT_NE(msg.find("vulkan: linear 'mm'"), std::string::npos) << msg;                      // the node
  EXPECT_NE(msg.find("operand 'weight' is 'computed_w'"), std::string::npos) << msg;          // the operand
  EXPECT_NE(msg.find("by node 'computed_w' (aten.relu.default)"), std::string::npos) << msg;  // its producer
}

// Malformed ops: each an init() error naming the op, never a shader
// reading out of bounds.
TEST_F(VulkanFixtures, MalformedPayloadOpsAreInitErrors_NEG) {
  struct Case {
    PayloadOp op;
    const char* says;
  };
  const std::vector<Case> cases = {
      {{"unary", "u", {{0, "self"}}, {1}, {99}, {0, 1}}, "unknown activation"},
      {{"unary", "u", {{0, "self"}}, {1}, {}, {}}, "parameters"},
      {{"binary", "b", {{0, "self"}}, {1}, {0, 1, 7, 1, 1, 1, 1, 1, 1, 6, 1, 1, 1, 1, 1, 1, 6}, {1, 0, 0, 0}}, "op or rank"},
      {{"binary", "b", {{0, "self"}}, {1}, {0, 1, 1, 5, 6}, {1, 0, 0, 0}}, "broadcast"},
      {{"softmax", "s", {{0, "self"}}, {1}, {2, 4}, {}}, "shapes"},
      {{"pool2d", "p", {{0, "self"}}, {1}, {1, 6, 1, 1, 1, 1, 1, 1, 0, 1, 0, 0, 1, 1, 0, 0}, {}}, "window"},
      {{"permute", "t", {{0, "self"}}, {1}, {0, 0}, {}}, "dims"},
      {{"mean", "m", {{0, "self"}}, {1}, {9}, {}}, "rank"},
      {{"slice", "s", {{0, "self"}}, {1}, {0, 5, 1}, {}}, "slice"},
      {{"frobnicate", "f", {{0, "self"}}, {1}, {}, {}}, "unknown op kind 'frobnicate'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op.kind + " expecting '" + c.says + "'");
    ExportedProgram ep;
    GraphBuilder b(ep);
    Value* x = b.user_input("x", {6});
    b.user_output(b.call("aten.relu.default", {{"self", x}}, {6}));
    DelegatePayload p;
    p.backend = "vulkan";
    p.add_value({6}, 0);
    p.add_value({6});
    p.ops.push_back(c.op);
    p.outputs = {1};
    replace_with_payload(ep, b.last_node(), p, {x});
    auto ex = Executor::create(ep, with_delegates());
    ASSERT_FALSE(ex.ok());
    EXPECT_NE(ex.error().message().find(c.says), std::string::npos) << ex.error().message();
  }
}

}  // namespace
}  // namespace lathe
