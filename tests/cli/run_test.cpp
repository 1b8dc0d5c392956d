// `lathe run` end to end: the built binary on the committed fixtures.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli/cli_support.h"
#include "lathe/serde/pt2.h"
#include "support/testing.h"

namespace lathe::testing {
namespace {

namespace fs = std::filesystem;

TEST(RunCommand, ChecksEveryFixtureAgainstPyTorch) {
  const Lathe lathe;
  for (const char* name : {"simple_linear", "mlp", "convnet", "transformer_block", "transformer_encoder",
                           "buffer_mutation", "batchnorm_train", "tts_duration_predictor", "tied_embedding"}) {
    CommandResult r = lathe("run " + quoted_fixture(std::string(name) + ".pt2") + " --check");
    EXPECT_EQ(r.exit_code, 0) << name << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find("check passed"), std::string::npos) << name << "\n" << r.out;
  }
  CommandResult bm = lathe("run " + quoted_fixture("buffer_mutation.pt2") + " --check");
  EXPECT_NE(bm.out.find("call 2 output 0 'mul_1'"), std::string::npos) << bm.out;  // three calls, state carried
  for (const char* m : {"encode", "decode"}) {
    CommandResult r = lathe("run " + quoted_fixture("two_methods.pt2") + " --method " + m + " --check");
    EXPECT_EQ(r.exit_code, 0) << m << "\n" << r.out << r.err;
  }
  for (const char* m : {"prefill", "decode"}) {
    CommandResult r = lathe("run " + quoted_fixture("decoder_lm.pt2") + " --method " + m + " --check");
    EXPECT_EQ(r.exit_code, 0) << m << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find("check passed (3 call(s)"), std::string::npos) << m << "\n" << r.out;
  }
}

// The older generations (fixtures/pt2-2.8, fixtures/legacy-2.4) were
// synthesized by tools/make_fixtures.py on torch 1.13, which cannot write
// them itself; each has its own eager references beside it.
TEST(RunCommand, ChecksEverySynthesizedOlderGenerationAgainstItsReference) {
  const Lathe lathe;
  int checked = 0;
  for (const char* dir : {"fixtures/pt2-2.8", "fixtures/legacy-2.4"}) {
    for (const auto& e : fs::directory_iterator(source_path(dir))) {
      if (e.path().extension() != ".pt2") continue;
      const std::string stem = e.path().stem().string();
      for (const char* m : {"model", "encode", "decode"}) {
        if ((stem == "two_methods") == (std::string(m) == "model")) continue;
        CommandResult r = lathe("run '" + e.path().string() + "' --method " + m + " --check");
        EXPECT_EQ(r.exit_code, 0) << e.path() << " " << m << "\n" << r.out << r.err;
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 10);
}

TEST(RunCommand, FailsTheCheckBeyondTolerance) {
  const Lathe lathe;
  // A zero tolerance is beyond what float32 GEMM accumulation order allows (mlp differs by ~6e-8).
  CommandResult r = lathe("run " + quoted_fixture("mlp.pt2") + " --check --rtol 0 --atol 0");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("FAIL"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("check FAILED"), std::string::npos) << r.out;
}

TEST(RunCommand, WritesOutputsAsNpyAndReadsInputsFromNpy) {
  const Lathe lathe;
  const std::string& dir = lathe.dir;
  CommandResult r = lathe("run " + quoted_fixture("mlp.pt2") + " --out '" + dir + "/out'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("output 0 'addmm_2': float32 [2, 10]"), std::string::npos) << r.out;  // call 0 has batch 2
  ASSERT_TRUE(fs::exists(dir + "/out/output_0.npy"));
  // Feed the written output of one method into the next one.
  CommandResult enc = lathe("run " + quoted_fixture("two_methods.pt2") + " --method encode --out '" + dir + "/enc'");
  ASSERT_EQ(enc.exit_code, 0) << enc.err;
  CommandResult dec = lathe("run " + quoted_fixture("two_methods.pt2") + " --method decode --inputs '" + dir +
                            "/enc/output_0.npy' --out '" + dir + "/dec'");
  ASSERT_EQ(dec.exit_code, 0) << dec.err;
  EXPECT_NE(dec.out.find("output 0 'sigmoid': float32 [2, 16]"), std::string::npos) << dec.out;
}

// Without reference files beside it, an archive runs on its own sample
// inputs (data/sample_inputs/<method>.pt): the copy of mlp.pt2 must give
// the output PyTorch gave for those inputs (the fixture's reference call 0
// was made with the same example inputs the archive stores).
TEST(RunCommand, FallsBackToTheArchivesSampleInputs) {
  const Lathe lathe;
  const std::string& dir = lathe.dir;
  fs::copy_file(source_path("fixtures/mlp.pt2"), dir + "/copy.pt2");
  CommandResult r = lathe("run '" + dir + "/copy.pt2' --out '" + dir + "/out'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("inputs: the archive's sample inputs"), std::string::npos) << r.err;
  CommandResult ref = lathe("run " + quoted_fixture("mlp.pt2") + " --out '" + dir + "/ref'");
  ASSERT_EQ(ref.exit_code, 0) << ref.err;
  EXPECT_NE(ref.err.find("inputs: reference inputs at"), std::string::npos) << ref.err;
  EXPECT_EQ(testing::read_text(dir + "/out/output_0.npy"), testing::read_text(dir + "/ref/output_0.npy"));
  CommandResult c = lathe("run '" + dir + "/copy.pt2' --check");
  EXPECT_EQ(c.exit_code, 1);
  EXPECT_NE(c.err.find("--check compares with reference outputs, and there are none"), std::string::npos) << c.err;
}

// A transformed copy is checked against the original fixture's reference
// calls with --reference; a wrong folder is a clear error.
TEST(RunCommand, ChecksACopyAgainstTheOriginalsReference) {
  const Lathe lathe;
  const std::string& dir = lathe.dir;
  CommandResult t = lathe("transform " + quoted_fixture("tts_duration_predictor.pt2") + " -o '" + dir + "/tts.pt2'");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  CommandResult c = lathe("run '" + dir + "/tts.pt2' --check --reference " +
                          source_path("fixtures/tts_duration_predictor.ref"));
  EXPECT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("check passed (1 call(s)"), std::string::npos) << c.out;
  CommandResult bad = lathe("run '" + dir + "/tts.pt2' --check --reference '" + dir + "/nowhere'");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("there are none at " + dir + "/nowhere/model/call_0"), std::string::npos) << bad.err;
}

TEST(RunCommand, ExplainsMissingInputsAndMethods) {
  const Lathe lathe;
  const std::string& dir = lathe.dir;
  // The archive without its sample inputs, and no reference files beside it.
  auto program = read_pt2(source_path("fixtures/mlp.pt2"));
  ASSERT_TRUE(program.ok());
  for (Method& m : program->methods) m.sample_inputs = {};
  ASSERT_TRUE(write_pt2(*program, dir + "/lonely.pt2").ok());
  CommandResult r = lathe("run '" + dir + "/lonely.pt2'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no inputs: pass --inputs a.npy[,b.npy...] for 1 user input(s) (x float32 [s77, 64])"),
            std::string::npos)
      << r.err;
  CommandResult m = lathe("run " + quoted_fixture("two_methods.pt2"));
  EXPECT_EQ(m.exit_code, 1);
  EXPECT_NE(m.err.find("has methods encode, decode; pick one with --method"), std::string::npos) << m.err;
  CommandResult bad = lathe("run " + quoted_fixture("mlp.pt2") + " --inputs '" +
                            source_path("fixtures/tied_embedding.ref/model/call_0/input_0.npy") + "'");
  EXPECT_EQ(bad.exit_code, 1);
  // The error names the file it read (and is one line).
  EXPECT_EQ(bad.err, "lathe run: " + source_path("fixtures/tied_embedding.ref/model/call_0/input_0.npy") +
                         ": input 0 'x': expected float32 [s77, 64], got int64 [1, 6]\n");
}

TEST(RunCommand, RepeatPrintsLatency) {
  const Lathe lathe;
  CommandResult r = lathe("run " + quoted_fixture("mlp.pt2") + " --repeat 5 --threads 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("latency over 5 runs (2 thread(s)): median "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" ms, p90 "), std::string::npos) << r.out;
}

}  // namespace
}  // namespace lathe::testing
