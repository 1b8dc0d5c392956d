// Vulkan backend on lavapipe (or any Vulkan device): every fixture that
// the partitioner claims any node of is lowered, written, read back, run,
// and matched against PyTorch's stored outputs; refusals (_NEG) for each
// kind of weight that is not a compile-time constant; a hand-made payload
// that hands init() a runtime weight; malformed payload ops.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "lathe/backends/backend_test_support.h"
#include "lathe/backends/vulkan/vulkan_backend.h"
#include "lathe/backends/vulkan/vulkan_ops.h"
#include "lathe/backends/vulkan/vulkan_test_support.h"

namespace lathe {
namespace {

using testing::with_delegates;

// The shaders sum in another order than PyTorch's kernels, and erf, exp and
// division are the device's own: 1e-4 of each output's scale (compare.h).
// Every fixture passes at 1e-5 on lavapipe today; the margin is for other
// devices' transcendental functions.
constexpr double kRtol = 1e-4;

class VulkanFixtures : public ::testing::Test {
 protected:
  void SetUp() override { LATHE_REQUIRE_VULKAN_DRIVER(); }
};

TEST_F(VulkanFixtures, EveryClaimedFixtureLoweredWrittenReadMatchesPyTorch) {
  // Fixtures of which nothing is claimed (mlp: symbolic batch) are passed over.
  const testing::SweepCounts n = testing::sweep_fixtures({"fixtures", "fixtures/architectures"}, vulkan_backend(),
                                                         {.rtol = kRtol, .skip_unclaimed = true});
  std::printf("%d fixtures have Vulkan delegates\n", n.claimed_fixtures);
  EXPECT_GE(n.claimed_fixtures, 25);
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
  testing::build_linear(ep);
  ASSERT_TRUE(partition(ep, vulkan_backend()).ok());
  const auto start = std::chrono::steady_clock::now();
  {
    auto ex = Executor::create(ep, with_delegates());
    ASSERT_TRUE(ex.ok()) << ex.error().message();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

// ---- refusals ----------------------------------------------------------------------------

// Each weight Vulkan would upload at init that is not a compile-time
// constant. The tanh that computes a weight is claimed itself (one
// delegate); the linear that reads it stays portable.
TEST(VulkanRefusal, WeightsThatAreNotCompileTimeConstants_NEG) {
  testing::expect_weight_refusals(vulkan_backend(), [](const testing::WeightRefusal& c) {
    return std::string_view(c.what) == "a computed weight" ? 1 : 0;
  });
}

TEST(VulkanRefusal, MutatedBufferWeight_NEG) { testing::expect_mutated_buffer_weight_refused(vulkan_backend()); }

// Buffers are sized at load, so a program with symbolic sizes (mlp's batch
// is a Dim in [1, 64]) gets a re-planned delegate (replanned_delegate.h):
// one pipeline set per batch, each matching PyTorch at batches 2, 1 and 37.
TEST_F(VulkanFixtures, SymbolicBatchIsDelegatedAndReplannedPerSize) {
  auto program = read_pt2(testing::source_path("fixtures/mlp.pt2"));
  ASSERT_TRUE(program.ok());
  auto lowered = lower_program(*program, vulkan_backend());
  ASSERT_TRUE(lowered.ok()) << lowered.error().message();
  EXPECT_EQ(lowered->methods[0].report.delegates, 1);
  for (const NodeDecision& d : lowered->methods[0].report.decisions) EXPECT_TRUE(d.claimed) << d.node << ": " << d.reason;
  auto calls = load_reference_calls(testing::source_path("fixtures/mlp.ref/model"));
  ASSERT_TRUE(calls.ok()) << calls.error().message();
  auto ex = Executor::create(*program->methods[0].program, testing::with_delegates());
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  testing::expect_calls_match(**ex, *calls, kRtol, "mlp on vulkan, batch 2, 1, 37");
}

// ---- hand-made payloads --------------------------------------------------------------------

TEST_F(VulkanFixtures, HandMadePayloadWithARuntimeWeightFailsInitNamingIt_NEG) {
  testing::expect_runtime_weight_refused_at_init("vulkan", "linear", "vulkan: linear 'mm'");
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
    testing::replace_with_payload(ep, b.last_node(), p, {x});
    auto ex = Executor::create(ep, with_delegates());
    ASSERT_FALSE(ex.ok());
    EXPECT_NE(ex.error().message().find(c.says), std::string::npos) << ex.error().message();
  }
}

// The keep-list is derived from the support table (hand-checked against
// decompose.cpp's rules); the unary rows of shaders/unary_ops.def are
// claimed, and every payload kind round-trips through its name.
TEST(VulkanTables, KeepListClaimsAndKindsComeFromTheTables) {
  EXPECT_EQ(vulkan_backend().ops_to_keep(),
            (std::vector<std::string>{"aten.layer_norm.default", "aten.linear.default", "aten.softmax.int"}));
  const std::vector<std::string> claimed = vulkan_backend().claimed_ops();
  for (const char* op : {"aten.tanh.default", "aten.silu.default", "aten.hardsigmoid.default", "aten.gelu.default"})
    EXPECT_NE(std::find(claimed.begin(), claimed.end(), op), claimed.end()) << op;
  EXPECT_EQ(kVulkanUnaryCount, 8);
  EXPECT_EQ(static_cast<int64_t>(VulkanUnary::Hardsigmoid), 7);  // stored in lowered archives: never renumbered
  for (int k = 0; k <= static_cast<int>(VulkanKind::View); ++k) {
    const auto kind = static_cast<VulkanKind>(k);
    EXPECT_EQ(vulkan_kind_named(vulkan_kind_name(kind)), kind) << vulkan_kind_name(kind);
  }
  EXPECT_FALSE(vulkan_kind_named("fully_connected").has_value());
}

}  // namespace
}  // namespace lathe
