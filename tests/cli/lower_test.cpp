// `lathe lower` and `lathe run` on lowered archives, end to end: the built
// binary lowers every fixture to XNNPACK, writes it, runs it (prepacking at
// load) and checks the outputs against PyTorch's stored ones.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli/cli_support.h"
#include "support/testing.h"

namespace lathe::testing {
namespace {

namespace fs = std::filesystem;

// Lowers fixtures/<stem>.pt2 into dir/<stem>.pt2, with the fixture's
// reference outputs linked beside it so --check finds them.
CommandResult lower(const Lathe& lathe, const std::string& stem, const std::string& extra = "") {
  const std::string out = lathe.dir + "/" + stem + ".pt2";
  std::error_code ec;
  fs::create_directory_symlink(source_path("fixtures/" + stem + ".ref"), lathe.dir + "/" + stem + ".ref", ec);
  return lathe("lower " + quoted_fixture(stem + ".pt2") + " -o '" + out + "' --backend xnnpack " + extra);
}

// Lowering needs the library; a build without it (LATHE_WITH_XNNPACK=OFF)
// checks instead that both commands say so and write nothing.
#if LATHE_WITH_XNNPACK
TEST(LowerCommand, EveryFixtureLoweredToXnnpackMatchesPyTorch) {
  const Lathe lathe;
  for (const char* name : {"simple_linear", "mlp", "convnet", "transformer_block", "buffer_mutation",
                           "tts_duration_predictor", "tied_embedding", "two_methods"}) {
    SCOPED_TRACE(name);
    CommandResult l = lower(lathe, name);
    ASSERT_EQ(l.exit_code, 0) << l.out << l.err;
    EXPECT_NE(l.out.find("xnnpack delegate(s)"), std::string::npos) << l.out;
    const std::string lowered = "'" + lathe.dir + "/" + name + ".pt2'";
    for (const char* method : {"model", "encode", "decode"}) {
      if ((std::string(name) == "two_methods") == (std::string(method) == "model")) continue;
      CommandResult r = lathe("run " + lowered + " --method " + method + " --check --rtol 1e-4 --threads 2");
      EXPECT_EQ(r.exit_code, 0) << method << "\n" << r.out << r.err;
      EXPECT_NE(r.out.find("check passed"), std::string::npos) << r.out;
    }
  }
}

TEST(LowerCommand, ExplainSaysWhatIsClaimedAndWhyTheRuntimeMmIsNot) {
  const Lathe lathe;
  CommandResult r = lower(lathe, "tts_duration_predictor", "--explain");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("model: aten.linear.default 'addmm' claimed (delegate 0): fully_connected, weight parameter "
                       "'encoder.weight' prepacked"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("model: aten.relu.default 'relu' claimed (delegate 0): fused into its producer"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("model: aten.mm.default 'mm' not claimed: mat2 'permute_1' is computed at run time by 'permute_1'"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("method model: 11 -> 8 nodes; 2 xnnpack delegate(s) holding 3 node(s)"), std::string::npos) << r.out;
}

TEST(LowerCommand, WeightsAreStoredOnceInTheLoweredArchive) {
  const Lathe lathe;
  // (The TTS model's two parameter linears become two delegates.)
  ASSERT_EQ(lower(lathe, "tts_duration_predictor").exit_code, 0);
  CommandResult before = lathe("inspect --json " + quoted_fixture("tts_duration_predictor.pt2"));
  CommandResult after = lathe("inspect --json '" + lathe.dir + "/tts_duration_predictor.pt2'");
  // 4 float32 weights before; after, the same 4 plus one uint8 payload record per delegate.
  EXPECT_NE(before.out.find("\"weights\":{\"count\":4,"), std::string::npos) << before.out;
  EXPECT_NE(after.out.find("\"weights\":{\"count\":6,"), std::string::npos) << after.out;
  EXPECT_NE(after.out.find("\"lathe.delegate.xnnpack\":2"), std::string::npos) << after.out;
  EXPECT_LT(fs::file_size(lathe.dir + "/tts_duration_predictor.pt2"),
            fs::file_size(source_path("fixtures/tts_duration_predictor.pt2")) + 8192);
}

// mlp's batch is a Dim: its delegate holds the claimed nodes, planned per
// input size at run time. `lathe view` opens it on those nodes.
TEST(LowerCommand, ViewOpensADelegateOfSymbolicSizesOnItsNodes) {
  const Lathe lathe;
  ASSERT_EQ(lower(lathe, "mlp").exit_code, 0);
  const std::string page = lathe.dir + "/mlp.html";
  CommandResult v = lathe("view '" + lathe.dir + "/mlp.pt2' -o '" + page + "'");
  ASSERT_EQ(v.exit_code, 0) << v.out << v.err;
  const std::string html = read_text(page);
  EXPECT_EQ(html.find("bad magic"), std::string::npos);
  EXPECT_EQ(html.find("\"error\""), std::string::npos);
  size_t planned = 0;
  for (size_t at = html.find("planned per input size"); at != std::string::npos; at = html.find("planned per input size", at + 1))
    ++planned;
  // The three linears and the two relus: five nodes inside the delegate.
  EXPECT_EQ(planned, 5u);
  EXPECT_NE(html.find("aten.linear.default"), std::string::npos);
}

TEST(LowerCommand, RunBackendLowersInMemory) {
  const Lathe lathe;
  CommandResult r = lathe("run " + quoted_fixture("convnet.pt2") + " --backend xnnpack --check --rtol 1e-4");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // Every node, the 20 eval batch norms folded into their convolutions: one delegate.
  EXPECT_NE(r.err.find("lowered to xnnpack: 1 delegate(s) holding 59 node(s)"), std::string::npos) << r.err;
}
#else
TEST(LowerCommand, XnnpackLeftOutOfTheBuildSaysSo_NEG) {
  const Lathe lathe;
  CommandResult l = lower(lathe, "mlp");
  EXPECT_NE(l.exit_code, 0);
  EXPECT_NE(l.err.find("built without the XNNPACK backend (LATHE_WITH_XNNPACK=OFF"), std::string::npos) << l.err;
  EXPECT_FALSE(fs::exists(lathe.dir + "/mlp.pt2"));
  CommandResult r = lathe("run " + quoted_fixture("mlp.pt2") + " --backend xnnpack");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("built without the XNNPACK backend"), std::string::npos) << r.err;
}
#endif

TEST(LowerCommand, UnknownBackend_NEG) {
  const Lathe lathe;
  CommandResult r = lathe("lower " + quoted_fixture("mlp.pt2") + " -o '" + lathe.dir + "/x.pt2' --backend tpu");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown backend 'tpu'; backends: vulkan, xnnpack"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(lathe.dir + "/x.pt2"));
}

}  // namespace
}  // namespace lathe::testing
