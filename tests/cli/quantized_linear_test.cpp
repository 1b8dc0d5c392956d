// Weight-only quantized linear end to end (issue 8, linear-rewrite.md §5):
// the committed *_int8 / *_int4g32 fixtures (PyTorch-made, every Linear
// weight behind dequantize_per_channel / dequantize_per_channel_group) go
// through `lathe transform --passes addmm_mm_to_linear,
// fuse_weight_only_quantized_linear,remove_dead_code`; the result must hold
// one fused matmul per original linear and no dequantize, reload and
// verify, and `lathe run --check` must match PyTorch's reference outputs
// (computed with the dequantized float weights).
//
// Tolerance: rtol 1e-5 of each output's max |ref|, the bound every float
// fixture meets. The fused ops sum x * q in float32 and scale once per
// output (per group for int4), where PyTorch sums x * (q * scale): the same
// products up to one rounding each, so the difference is accumulation
// rounding, not quantization error (the reference already carries that).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "cli/cli_support.h"
#include "lathe/ir/verify.h"
#include "lathe/serde/pt2.h"
#include "support/testing.h"

namespace lathe {
namespace {

constexpr const char* kPasses = "addmm_mm_to_linear,fuse_weight_only_quantized_linear,remove_dead_code";

// `dir` is the test's temp_dir(), made once: temp_dir() empties it on every call.
testing::CommandResult lathe(const std::string& args, const std::string& dir) {
  return testing::run_lathe(args, dir + "/stderr.txt");
}

std::map<std::string, int> ops(const std::string& path) {
  std::map<std::string, int> out;
  auto p = read_pt2(path);
  EXPECT_TRUE(p.ok()) << p.error().message();
  if (!p.ok()) return out;
  Status v = verify(*p);
  EXPECT_TRUE(v.ok()) << v.error().message();
  for (const Node* n : p->find_method("model")->program->graph().nodes()) out[n->op_name()]++;
  return out;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

struct Case {
  const char* fixture;
  int linears;
  const char* dequantize;  // op in the input
  const char* fused;       // op in the output
};

class QuantizedLinear : public ::testing::TestWithParam<Case> {};

TEST_P(QuantizedLinear, EveryLinearIsFusedAndMatchesPyTorch) {
  const Case& c = GetParam();
  const std::string in = testing::source_path(std::string("fixtures/") + c.fixture + ".pt2");
  auto before = ops(in);
  ASSERT_EQ(before[c.dequantize], c.linears);
  ASSERT_EQ(before["aten.addmm.default"], c.linears);

  // The output sits beside a link to the fixture's reference outputs, so
  // `lathe run --check` finds them.
  const std::string dir = testing::temp_dir();
  const std::string out = dir + "/" + c.fixture + ".pt2";
  std::filesystem::create_directory_symlink(testing::source_path(std::string("fixtures/") + c.fixture + ".ref"),
                                            dir + "/" + c.fixture + ".ref");
  auto r = lathe("transform '" + in + "' -o '" + out + "' --passes " + kPasses + " --verify --explain", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string record = c.fused == std::string("aten._weight_int8pack_mm.default") ? "_weight_int8pack_mm"
                                                                                      : "lathe.weight_int4_group_mm";
  EXPECT_EQ(count(r.out + r.err, "rewritten to " + record), static_cast<size_t>(c.linears))
      << r.out << r.err;

  auto after = ops(out);
  EXPECT_EQ(after[c.fused], c.linears);
  EXPECT_EQ(after[c.dequantize], 0);
  EXPECT_EQ(after["aten.linear.default"], 0);
  EXPECT_EQ(after["aten.addmm.default"], 0);
  EXPECT_EQ(after["aten.t.default"], 0);
  EXPECT_EQ(after["aten.add.Tensor"], before["aten.add.Tensor"] + c.linears);  // every Linear has a bias

  r = lathe("run '" + out + "' --check --rtol 1e-5", dir);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("check passed"), std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, QuantizedLinear,
    ::testing::Values(
        Case{"mlp_int8", 3, "quantized_decomposed.dequantize_per_channel.default", "aten._weight_int8pack_mm.default"},
        Case{"transformer_block_int8", 4, "quantized_decomposed.dequantize_per_channel.default",
             "aten._weight_int8pack_mm.default"},
        Case{"mlp_int4g32", 3, "quantized_decomposed.dequantize_per_channel_group.default",
             "lathe.weight_int4_group_mm.default"},
        Case{"transformer_block_int4g32", 4, "quantized_decomposed.dequantize_per_channel_group.default",
             "lathe.weight_int4_group_mm.default"}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.fixture); });

// The unfused archive runs too (portable dequantize kernels), matching
// PyTorch as tightly as the float fixtures.
TEST(QuantizedLinearCli, UnfusedFixtureRunsOnTheDequantizeKernels) {
  auto r = lathe("run '" + testing::source_path("fixtures/mlp_int8.pt2") + "' --check --rtol 1e-5", testing::temp_dir());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("check passed"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace lathe
