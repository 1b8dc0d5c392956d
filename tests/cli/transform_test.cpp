// `lathe transform` end to end, on the committed fixtures: the written
// archive must reload and verify, and its IR must match the hand-checked
// golden text in tests/golden/.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <map>

#include "cli/cli_support.h"
#include "lathe/ir/printer.h"
#include "lathe/ir/verify.h"
#include "lathe/serde/pt2.h"
#include "support/testing.h"

namespace lathe {
namespace {

testing::CommandResult transform(const std::string& args) {
  return testing::run_lathe("transform " + args, testing::temp_dir() + "/stderr.txt");
}

std::string fixture(const std::string& name) { return testing::source_path("fixtures/" + name + ".pt2"); }

// Compares with tests/golden/<name>; on a difference writes the actual text
// beside the test's temporary files so it can be inspected (never over the
// golden file: goldens are checked by hand, not regenerated).
void expect_golden(const std::string& actual, const std::string& name) {
  std::string path = testing::source_path("tests/golden/" + name);
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  std::string expected = testing::read_text(path);
  if (actual != expected) {
    std::string dump = testing::temp_dir() + "/" + name + ".actual";
    testing::write_text(dump, actual);
    ADD_FAILURE() << "IR differs from " << path << "\n--- actual ---\n" << actual;
  }
}

Program reload(const std::string& path) {
  auto p = read_pt2(path);
  EXPECT_TRUE(p.ok()) << p.error().message();
  if (!p.ok()) return Program{};
  Status v = verify(*p);
  EXPECT_TRUE(v.ok()) << v.error().message();
  return std::move(*p);
}

std::map<std::string, int> ops(const Program& p, const std::string& method) {
  std::map<std::string, int> out;
  const Method* m = p.find_method(method);
  if (!m) return out;
  for (const Node* n : m->program->graph().nodes()) out[n->op_name()]++;
  return out;
}

// ---- §1: SimpleLinear ------------------------------------------------------------------

TEST(TransformCli, SimpleLinearReturnsTheLinearAndReloads) {
  auto before = read_pt2(fixture("simple_linear"));
  ASSERT_TRUE(before.ok()) << before.error().message();
  expect_golden(print_program(*before), "simple_linear.before.txt");

  std::string out = testing::temp_dir() + "/out.pt2";
  auto r = transform(fixture("simple_linear") + " -o " + out + " --verify");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  Program after = reload(out);
  expect_golden(print_program(after), "simple_linear.after.txt");
  // What the output spec describes is what the graph returns: the linear.
  const ExportedProgram& ep = *after.methods.at(0).program;
  ASSERT_EQ(ep.output_specs.size(), 1u);
  EXPECT_EQ(ep.output_specs[0].kind, OutputKind::UserOutput);
  Value* returned = nullptr;
  ep.graph().outputs()[0].for_each_value([&](Value* v) { returned = v; });
  ASSERT_NE(returned, nullptr);
  ASSERT_NE(returned->producer(), nullptr);
  EXPECT_EQ(returned->producer()->target(), "torch.ops.aten.linear.default");
}

TEST(TransformCli, SimpleLinearWithoutTheLinearPassKeepsAddmm_NEG) {
  std::string out = testing::temp_dir() + "/out.pt2";
  auto r = transform(fixture("simple_linear") + " -o " + out + " --passes remove_dead_code --verify");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_golden(print_program(reload(out)), "simple_linear.before.txt");
}

// ---- §2: the TTS duration predictor ---------------------------------------------------------

TEST(TransformCli, TtsParameterLinearsRewrittenRuntimeMmKept) {
  auto before = read_pt2(fixture("tts_duration_predictor"));
  ASSERT_TRUE(before.ok()) << before.error().message();
  expect_golden(print_program(*before), "tts_duration_predictor.before.txt");

  std::string out = testing::temp_dir() + "/out.pt2";
  auto r = transform(fixture("tts_duration_predictor") + " -o " + out + " --explain --verify");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("model: addmm 'addmm' rewritten to linear (weight 'p_encoder_weight' is parameter "
                       "'encoder.weight')\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("model: addmm 'addmm_1' rewritten to linear"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("method model: 11 -> 9 nodes; aten.addmm.default 2 -> 0, aten.linear.default 0 -> 2, "
                       "aten.permute.default 3 -> 1\n"),
            std::string::npos)
      << r.out;
  Program after = reload(out);
  auto counts = ops(after, "model");
  EXPECT_EQ(counts["aten.linear.default"], 2);
  EXPECT_EQ(counts["aten.mm.default"], 1);
  EXPECT_EQ(counts["aten.addmm.default"], 0);
  EXPECT_EQ(counts["aten.permute.default"], 1);  // the runtime weight's
  expect_golden(print_program(after), "tts_duration_predictor.after.txt");
}

TEST(TransformCli, TtsRuntimeMmIsExplainedByItsProducer_NEG) {
  std::string out = testing::temp_dir() + "/out.pt2";
  auto r = transform(fixture("tts_duration_predictor") + " -o " + out + " --explain");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("model: mm 'mm' kept: weight 'permute_1' is computed at run time by 'squeeze_1'\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(ops(reload(out), "model")["aten.mm.default"], 1);
}

// ---- §3: several methods -----------------------------------------------------------------------

TEST(TransformCli, EachMethodRewrittenAgainstItsOwnSignature) {
  std::string out = testing::temp_dir() + "/out.pt2";
  auto r = transform(fixture("two_methods") + " -o " + out + " --verify");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Program after = reload(out);
  ASSERT_EQ(after.method_names(), (std::vector<std::string>{"encode", "decode"}));
  for (const char* m : {"encode", "decode"}) {
    auto counts = ops(after, m);
    EXPECT_EQ(counts["aten.linear.default"], 2) << m;
    EXPECT_EQ(counts["aten.addmm.default"], 0) << m;
    EXPECT_EQ(counts["aten.t.default"], 0) << m;
  }
  // torch.export lifts the whole module's state into each method (the
  // manifest lists all eight parameters for both); each keeps its own copy,
  // and each method's linears read the weights of its own layers.
  for (const char* m : {"encode", "decode"}) EXPECT_EQ(after.find_method(m)->program->parameters.size(), 8u) << m;
  auto weights_read = [&](const char* method) {
    std::vector<std::string> names;
    for (const Node* n : after.find_method(method)->program->graph().nodes())
      if (n->op_name() == "aten.linear.default") names.push_back(n->input("weight")->tensor()->name());
    return names;
  };
  EXPECT_EQ(weights_read("encode"), (std::vector<std::string>{"p_enc1_weight", "p_enc2_weight"}));
  EXPECT_EQ(weights_read("decode"), (std::vector<std::string>{"p_dec1_weight", "p_dec2_weight"}));

  // --method: only that one.
  std::string only = testing::temp_dir() + "/only.pt2";
  r = transform(fixture("two_methods") + " -o " + only + " --method decode");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("method encode: not selected, unchanged"), std::string::npos) << r.out;
  Program partial = reload(only);
  EXPECT_EQ(ops(partial, "encode")["aten.addmm.default"], 2);
  EXPECT_EQ(ops(partial, "decode")["aten.linear.default"], 2);
}

TEST(TransformCli, MethodForwardOnTwoMethodsIsAClearError_NEG) {
  std::string out = testing::temp_dir() + "/out.pt2";
  auto r = transform(fixture("two_methods") + " -o " + out + " --method forward");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err, "lathe transform: " + fixture("two_methods") +
                       " has no method 'forward'; methods: encode, decode\n");
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(std::filesystem::exists(out));
}

// ---- passes ---------------------------------------------------------------------------------

TEST(TransformCli, ListPasses) {
  auto r = transform("--list-passes");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("passes (default: addmm_mm_to_linear,remove_dead_code):\n", 0), 0u) << r.out;
  // One line per pass, descriptions aligned after the longest name.
  EXPECT_NE(r.out.find("\n  addmm_mm_to_linear                 addmm(b, x, t(w))"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n  remove_dead_code                   drop unused pure nodes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n  fuse_weight_only_quantized_linear  linear(x, dequantize("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n--passes default: inline_grad_regions,decompose,constant_propagation,"), std::string::npos) << r.out;
}

TEST(TransformCli, UnknownPassListsTheValidOnes_NEG) {
  std::string out = testing::temp_dir() + "/out.pt2";
  auto r = transform(fixture("simple_linear") + " -o " + out + " --passes addmm_mm_to_linear,fold_everything");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "lathe transform: unknown pass 'fold_everything'; passes: addmm_mm_to_linear, bmm_to_linear, sdpa_additive_mask, remove_dead_code, decompose, "
            "constant_propagation, remove_redundant_views, common_subexpression_elimination, "
            "fuse_weight_only_quantized_linear, fuse_int8_weight_only_matmul, fuse_dynamic_int8_linear, "
            "inline_grad_regions, sdpa_grouped_query\n");
  EXPECT_FALSE(std::filesystem::exists(out));
  r = transform(fixture("simple_linear"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "lathe transform: needs IN.pt2 and -o OUT.pt2 (or --list-passes)\n");
}

// Transforms every committed fixture with `args` (after -o OUT), requires
// success, and hands the command's result and the reloaded archive to
// `check`. Returns how many fixtures it saw.
int transform_every_fixture(
    const std::string& args,
    const std::function<void(const std::filesystem::path&, const testing::CommandResult&, const Program&)>& check) {
  int seen = 0;
  for (const auto& e : std::filesystem::directory_iterator(testing::source_path("fixtures"))) {
    if (e.path().extension() != ".pt2") continue;
    // --verify runs the program; a fixture calling a user's custom op cannot
    // run here (CustomOpProgramTransformsButCannotBeVerified_NEG).
    if (!testing::fixture_runnable(e.path().stem().string())) continue;
    ++seen;
    SCOPED_TRACE(e.path().string());
    std::string out = testing::temp_dir() + "/" + e.path().filename().string();
    auto r = transform("'" + e.path().string() + "' -o " + out + " " + args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (r.exit_code != 0) continue;
    check(e.path(), r, reload(out));
  }
  return seen;
}

// Every committed fixture goes through the default passes, verifies after
// each pass, and reloads.
TEST(TransformCli, EveryFixtureTransformsVerifiesAndReloads) {
  int seen = transform_every_fixture("--verify", [](const auto& path, const auto&, const Program& after) {
    for (const auto& m : after.methods) {
      // Every fixture addmm has a parameter weight, except computed_weight's,
      // whose weight is p1 @ p2.T: kept until constant_propagation folds it.
      const bool computed = path.stem() == "computed_weight";
      EXPECT_EQ(ops(after, m.name)["aten.addmm.default"], computed ? 1 : 0) << m.name;
    }
  });
  EXPECT_GE(seen, 8);
}

// ---- the core passes: --passes default, --keep ------------------------------------------

// The default pipeline over every fixture with --verify (verify and a
// differential run after every pass), and the result reloads.
TEST(TransformCli, DefaultPipelineOnEveryFixtureVerifies) {
  int seen = transform_every_fixture("--passes default --verify", [](const auto&, const auto& r, const Program& after) {
    EXPECT_NE(r.out.find("  decompose: "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("  remove_dead_code: "), std::string::npos) << r.out;
    for (const auto& m : after.methods) EXPECT_EQ(ops(after, m.name)["aten.addmm.default"], 0) << m.name;
  });
  EXPECT_GE(seen, 9);
}

TEST(TransformCli, DefaultPipelineFoldsTheComputedWeightIntoALinear) {
  std::string out = testing::temp_dir() + "/out.pt2";
  auto r = transform(fixture("computed_weight") + " -o " + out + " --passes default --explain");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("model: aten.mm.default 'mm' folded into lifted constant 'folded_mm' (f32[8, 6])\n"),
            std::string::npos)
      << r.out;
  Program after = reload(out);
  EXPECT_EQ(ops(after, "model"), (std::map<std::string, int>{{"aten.linear.default", 1}}));
  // The default passes alone (no folding) must keep it an addmm.
  r = transform(fixture("computed_weight") + " -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ops(reload(out), "model")["aten.addmm.default"], 1);
}

TEST(TransformCli, DecomposeKeepLinearLeavesLinearsAlone) {
  // temp_dir() is emptied on every call (transform() calls it too), so the
  // files this test reads back across several runs live beside it.
  auto dir = std::filesystem::path(testing::temp_dir()).parent_path() / "DecomposeKeepLinearLeavesLinearsAlone.files";
  std::filesystem::create_directories(dir);
  std::string linear_only = (dir / "linear_only.pt2").string();
  ASSERT_EQ(transform(fixture("mlp") + " -o " + linear_only).exit_code, 0);
  ASSERT_EQ(ops(reload(linear_only), "model")["aten.linear.default"], 3);
  std::string out = (dir / "out.pt2").string();
  auto r = transform(linear_only + " -o " + out + " --passes decompose --keep aten.linear.default --verify");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ops(reload(out), "model"), ops(reload(linear_only), "model"));
  // Without --keep the linears are split, and the linear rewrite puts them back.
  r = transform(linear_only + " -o " + out + " --passes decompose --verify");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ops(reload(out), "model")["aten.linear.default"], 0);
  r = transform(linear_only + " -o " + out + " --passes decompose,addmm_mm_to_linear,remove_dead_code --verify");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(print_program(reload(out)), print_program(reload(linear_only)));
}

// A call to a user's custom op (auto_functionalized_v2 around
// lathe_fixtures::scaled_accumulate_) is read, rewritten and written, but
// --verify cannot run it and says why instead of passing it unchecked.
TEST(TransformCli, CustomOpProgramTransformsButCannotBeVerified_NEG) {
  std::string out = testing::temp_dir() + "/out.pt2";
  auto r = transform(fixture("custom_op_mutation") + " -o " + out + " --passes default");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ops(reload(out), "model")["aten.linear.default"], 1);
  EXPECT_EQ(ops(reload(out), "model")["higher_order.auto_functionalized_v2"], 1);
  r = transform(fixture("custom_op_mutation") + " -o " + out + " --verify");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("auto_functionalized_v2"), std::string::npos) << r.err;
}

TEST(TransformCli, KeepWithoutDecomposeIsAnError_NEG) {
  std::string out = testing::temp_dir() + "/out.pt2";
  auto r = transform(fixture("mlp") + " -o " + out + " --passes addmm_mm_to_linear --keep aten.linear.default");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "lathe transform: --keep applies to the decompose pass, which is not in the pass list\n");
  EXPECT_FALSE(std::filesystem::exists(out));
  r = transform("--list-passes");
  EXPECT_NE(r.out.find("--passes default: inline_grad_regions,decompose,constant_propagation,remove_redundant_views,"
                       "common_subexpression_elimination,addmm_mm_to_linear,bmm_to_linear,sdpa_grouped_query,remove_dead_code\n"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace lathe
