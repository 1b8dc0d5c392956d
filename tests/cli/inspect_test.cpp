// `lathe inspect` end to end, on the committed fixtures.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "cli/cli_support.h"
#include "lathe/serde/pt2.h"
#include "support/testing.h"

namespace lathe {
namespace {

using nlohmann::json;

testing::CommandResult inspect(const std::string& args) {
  return testing::run_lathe("inspect " + args, testing::temp_dir() + "/stderr.txt");
}

TEST(InspectCli, JsonForEveryFixture) {
  int seen = 0;
  for (const auto& e : std::filesystem::directory_iterator(testing::source_path("fixtures"))) {
    if (e.path().extension() != ".pt2") continue;
    ++seen;
    SCOPED_TRACE(e.path().string());
    auto r = inspect("--json '" + e.path().string() + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    json j = json::parse(r.out);
    EXPECT_EQ(j["format"], "pt2-2.9");
    ASSERT_TRUE(j["methods"].is_object());
    for (auto& [name, m] : j["methods"].items()) {
      EXPECT_GT(m["nodes"].get<int>(), 0) << name;
      int total = 0;
      for (auto& [op, count] : m["ops"].items()) {
        EXPECT_EQ(op.rfind("torch.ops.", 0), std::string::npos) << op;
        total += count.get<int>();
      }
      EXPECT_EQ(total, m["nodes"].get<int>()) << name;
      for (auto& in : m["inputs"]) {
        EXPECT_TRUE(in.contains("name") && in.contains("kind") && in.contains("target"));
      }
      for (auto& out : m["outputs"]) {
        EXPECT_TRUE(out.contains("name") && out.contains("kind") && out.contains("target"));
      }
    }
  }
  EXPECT_GE(seen, 7);
}

// The values below were read off the fixture's own manifest (written by the
// PyTorch-side fixture tool), not off Lathe's output.
TEST(InspectCli, TtsDurationPredictorMatchesManifest) {
  auto r = inspect("--json " + testing::source_path("fixtures/tts_duration_predictor.pt2"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json m = json::parse(r.out)["methods"]["model"];
  EXPECT_EQ(m["ops"]["aten.addmm.default"], 2);
  EXPECT_EQ(m["ops"]["aten.mm.default"], 1);
  EXPECT_EQ(m["ops"]["aten.permute.default"], 3);
  ASSERT_EQ(m["inputs"].size(), 5u);
  EXPECT_EQ(m["inputs"][0]["kind"], "parameter");
  EXPECT_EQ(m["inputs"][0]["target"], "encoder.weight");
  EXPECT_EQ(m["inputs"][4]["kind"], "user_input");
  EXPECT_TRUE(m["inputs"][4]["target"].is_null());
  ASSERT_EQ(m["outputs"].size(), 1u);
  EXPECT_EQ(m["outputs"][0]["kind"], "user_output");
}

// The ranges are the Dims the fixture was exported with (batch 1..16,
// sequence 2..128; tools/torch_fixtures/models.py), under the symbol names
// PyTorch gave them in the archive.
TEST(InspectCli, ShowsSchemaTorchVersionAndRanges) {
  auto r = inspect(testing::source_path("fixtures/transformer_encoder.pt2"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("method model: 33 nodes (export schema 8.20, torch 2.13.0+cpu, verified)\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  ranges: s77 in [1, 16], s27 in [2, 128]\n"), std::string::npos) << r.out;
  auto j = inspect("--json " + testing::source_path("fixtures/transformer_encoder.pt2"));
  json m = json::parse(j.out)["methods"]["model"];
  EXPECT_EQ(m["schema_version"], "8.20");
  EXPECT_EQ(m["range_constraints"]["s27"], json::array({2, 128}));
}

// The torch that wrote an archive: a release Lathe is verified against says
// so, a newer one names those, an older one is just named.
TEST(InspectCli, SaysWhetherTheTorchThatWroteItIsVerified) {
  for (const auto& [version, shown] : std::vector<std::pair<std::string, std::string>>{
           {"2.14.1+cu130", "torch 2.14.1+cu130, verified)"},
           {"2.15.0", "torch 2.15.0, newer than the verified 2.13.0 and 2.14.1)"},
           {"2.9.0", "torch 2.9.0)"}}) {
    auto program = read_pt2(testing::source_path("fixtures/simple_linear.pt2"));
    ASSERT_TRUE(program.ok()) << program.error().message();
    program->methods[0].program->torch_version = version;
    const std::string dir = testing::temp_dir();  // inspect() would empty it: run_lathe directly
    const std::string path = dir + "/by_torch.pt2";
    ASSERT_TRUE(write_pt2(*program, path).ok());
    auto r = testing::run_lathe("inspect " + path, dir + "/stderr.txt");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("(export schema 8.20, " + shown + "\n"), std::string::npos) << r.out;
  }
}

TEST(InspectCli, BufferMutationOutputsComeFirstWithTargets) {
  auto r = inspect("--json " + testing::source_path("fixtures/buffer_mutation.pt2"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json outs = json::parse(r.out)["methods"]["model"]["outputs"];
  ASSERT_EQ(outs.size(), 3u);
  EXPECT_EQ(outs[0]["kind"], "buffer_mutation");
  EXPECT_EQ(outs[0]["target"], "count");
  EXPECT_EQ(outs[1]["kind"], "buffer_mutation");
  EXPECT_EQ(outs[1]["target"], "running_mean");
  EXPECT_EQ(outs[2]["kind"], "user_output");
}

TEST(InspectCli, TwoMethodsAreListedByName) {
  auto r = inspect("--json " + testing::source_path("fixtures/two_methods.pt2"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json methods = json::parse(r.out)["methods"];
  EXPECT_TRUE(methods.contains("encode"));
  EXPECT_TRUE(methods.contains("decode"));
  EXPECT_FALSE(methods.contains("forward"));
}

TEST(InspectCli, TextModeShowsSignatureAndWeights) {
  auto r = inspect(testing::source_path("fixtures/simple_linear.pt2"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("parameter"), std::string::npos);
  EXPECT_NE(r.out.find("linear.weight"), std::string::npos);
  EXPECT_NE(r.out.find("aten.addmm.default"), std::string::npos);
  EXPECT_NE(r.out.find("weights: 2 tensors, 48 B (float32 x2)"), std::string::npos) << r.out;
}

TEST(InspectCli, MissingFileIsOneLineErrorAndNonZeroExit_NEG) {
  auto r = inspect("/nonexistent/model.pt2");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("/nonexistent/model.pt2"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// The PyTorch 2.2 archive (schema 2, which PyTorch itself no longer loads) is
// read; the op counts were taken with Python's json module from the archive's
// serialized_exported_program.json (34 nodes, 10 addmm, 10 t, 7 leaky_relu).
TEST(InspectCli, PyTorch22ArchiveIsRead) {
  auto r = inspect("--json " + testing::shared_path("external/pt2/hades_pid_exported_program.pt2"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["format"], "legacy-2.2");
  ASSERT_TRUE(j["methods"].contains("model")) << r.out;
  const json& m = j["methods"]["model"];
  EXPECT_EQ(m["nodes"], 34);
  EXPECT_EQ(m["ops"]["aten.addmm.default"], 10);
  EXPECT_EQ(m["ops"]["aten.t.default"], 10);
  EXPECT_EQ(m["ops"]["aten.leaky_relu.default"], 7);
  EXPECT_EQ(m["ops"]["aten._native_batch_norm_legit_functional.default"], 2);
}

// A file that is not a zip at all is refused with the file named.
TEST(InspectCli, NotAnArchiveIsAClearError_NEG) {
  std::string path = testing::temp_dir() + "/not_a_zip.pt2";
  testing::write_text(path, "this is not a zip archive\n");
  auto r = inspect(path);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("not_a_zip.pt2"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace lathe
