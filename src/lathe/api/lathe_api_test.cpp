// The public facade (include/lathe/lathe.h) on the real fixtures: what an
// embedder does, with nothing set up beforehand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

#include "lathe/harness/reference.h"
#include "lathe/backends/backend.h"
#include "lathe/ir/aten_schemas.h"
#include "lathe/ir/graph_builder.h"
#include "lathe/ir/rewriter.h"
#include "lathe/ir/verify.h"
#include "lathe/lathe.h"
#include "lathe/passes/constant_propagation.h"
#include "lathe/runtime/compare.h"
#include "lathe/runtime/kernels/util.h"
#include "support/testing.h"

namespace lathe {
namespace {

using ::testing::HasSubstr;
using ::lathe::testing::source_path;

TransformOptions passes(const std::string& list, std::vector<std::string> keep = {}) {
  TransformOptions o;
  o.passes = list;
  o.keep = std::move(keep);
  return o;
}

TransformOptions only(const std::string& method) {
  TransformOptions o;
  o.method = method;
  return o;
}

std::vector<std::byte> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(chars.size());
  std::memcpy(out.data(), chars.data(), chars.size());
  return out;
}

std::vector<ReferenceCall> reference(const std::string& fixture, const std::string& method) {
  auto calls = load_reference_calls(reference_dir(source_path("fixtures/" + fixture + ".pt2"), method));
  EXPECT_TRUE(calls.ok()) << calls.error().message();
  return calls.ok() ? *calls : std::vector<ReferenceCall>{};
}

void expect_matches_reference(Runner& runner, const std::vector<ReferenceCall>& calls, double rtol = 1e-5) {
  ASSERT_FALSE(calls.empty());
  for (const ReferenceCall& call : calls) {
    auto out = runner.run(call.inputs);
    ASSERT_TRUE(out.ok()) << out.error().message();
    ASSERT_EQ(out->size(), call.outputs.size());
    for (size_t i = 0; i < out->size(); ++i) {
      TensorDiff d = compare_tensors((*out)[i], call.outputs[i], Tolerance{rtol, 1e-6});
      EXPECT_TRUE(d.ok) << "output " << i << ": " << d.describe();
    }
  }
}

TEST(LatheApi, LoadsAndRunsAFixture) {
  auto program = load(source_path("fixtures/mlp.pt2"));
  ASSERT_TRUE(program.ok()) << program.error().message();
  auto runner = Runner::create(*program);
  ASSERT_TRUE(runner.ok()) << runner.error().message();
  EXPECT_EQ((*runner)->method(), "model");
  EXPECT_EQ((*runner)->inputs().size(), 1u);
  expect_matches_reference(**runner, reference("mlp", "model"));
}

TEST(LatheApi, LoadErrorsAreTheCliMessages) {
  auto missing = load("/nonexistent/model.pt2");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message(), "/nonexistent/model.pt2: cannot open: No such file or directory");
  auto garbage = load_bytes(std::vector<std::byte>(100, std::byte{7}), "blob");
  ASSERT_FALSE(garbage.ok());
  EXPECT_THAT(garbage.error().message(), HasSubstr("blob"));
}

TEST(LatheApi, LoadsFromBytesAndSavesToBytes) {
  auto program = load_bytes(file_bytes(source_path("fixtures/two_methods.pt2")), "two_methods.pt2");
  ASSERT_TRUE(program.ok()) << program.error().message();
  ASSERT_EQ(program->method_names().size(), 2u);
  for (const char* format : {"2.9", "2.8"}) {
    auto bytes = save_bytes(*program, SaveOptions{format});
    ASSERT_TRUE(bytes.ok()) << bytes.error().message();
    auto again = load_bytes(std::move(bytes).value());
    ASSERT_TRUE(again.ok()) << again.error().message();
    EXPECT_EQ(again->method_names(), program->method_names());
    EXPECT_EQ(again->source_format, std::string("pt2-") + format);
    if (std::string(format) == "2.9") {
      EXPECT_EQ(inspect_json(*again), inspect_json(*program));
    }
  }
  auto legacy = save_bytes(*program, SaveOptions{"legacy"});
  ASSERT_FALSE(legacy.ok());
  EXPECT_EQ(legacy.error().message(),
            "the legacy format holds one program, but this one has 2 methods; write 2.8 or 2.9 instead");
  auto bogus = save_bytes(*program, SaveOptions{"3.0"});
  ASSERT_FALSE(bogus.ok());
  EXPECT_EQ(bogus.error().message(), "unknown format '3.0' (valid: 2.9, 2.8, legacy)");
}

TEST(LatheApi, SaveWritesAFileThatLoads) {
  auto program = load(source_path("fixtures/simple_linear.pt2"));
  ASSERT_TRUE(program.ok());
  const std::string path = lathe::testing::temp_dir() + "/out.pt2";
  ASSERT_TRUE(save(*program, path).ok());
  auto again = load(path);
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_EQ(inspect_json(*again).substr(0, 40), inspect_json(*program).substr(0, 40));
}

// save() verifies on a second thread while it writes; the file must still
// never appear for a program that does not verify, whatever else fails.
TEST(LatheApi, SaveNeverWritesAProgramThatDoesNotVerify_NEG) {
  auto program = load(source_path("fixtures/simple_linear.pt2"));
  ASSERT_TRUE(program.ok());
  ExportedProgram& ep = *program->methods[0].program;
  bool broken = false;
  for (InputSpec& s : ep.input_specs) {
    if (s.kind == InputKind::Parameter && !broken) {
      s.target = "no.such.parameter";
      broken = true;
    }
  }
  ASSERT_TRUE(broken) << "the fixture needs a parameter";
  const Status verdict = verify(*program);
  ASSERT_FALSE(verdict.ok());
  const std::string path = lathe::testing::temp_dir() + "/unverified.pt2";
  Status s = save(*program, path);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(), path + ": " + verdict.error().message());
  EXPECT_FALSE(std::filesystem::exists(path));
  auto bytes = save_bytes(*program);
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.error().message(), verdict.error().message());
  // A write that fails as well still reports what is wrong with the program.
  const std::string nowhere = lathe::testing::temp_dir() + "/no/such/dir/out.pt2";
  Status both = save(*program, nowhere);
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.error().message(), nowhere + ": " + verdict.error().message());
  // Unverified on request: written.
  EXPECT_TRUE(save(*program, path, SaveOptions{.verify = false}).ok());
  EXPECT_TRUE(std::filesystem::exists(path));
}

TEST(LatheApi, InspectJsonIsTheCliSummary) {
  auto program = load(source_path("fixtures/simple_linear.pt2"));
  ASSERT_TRUE(program.ok());
  EXPECT_EQ(inspect_json(*program),
            R"({"format":"pt2-2.9","methods":{"model":{"nodes":2,"schema_version":"8.20","torch_version":"2.13.0+cpu",)"
            R"("range_constraints":{},"ops":{"aten.addmm.default":1,"aten.permute.default":1},)"
            R"("inputs":[{"name":"p_linear_weight","kind":"parameter","target":"linear.weight"},)"
            R"({"name":"p_linear_bias","kind":"parameter","target":"linear.bias"},)"
            R"({"name":"arg","kind":"user_input","target":null}],)"
            R"("outputs":[{"name":"addmm","kind":"user_output","target":null}],)"
            R"("weights":{"count":2,"bytes":48,"dtypes":{"float32":2}}}}})");
}

TEST(LatheApi, TransformExplainsAsData) {
  auto program = load(source_path("fixtures/tts_duration_predictor.pt2"));
  ASSERT_TRUE(program.ok());
  auto report = transform(*program);
  ASSERT_TRUE(report.ok()) << report.error().message();
  EXPECT_TRUE(report->changed);
  std::vector<std::string> lines;
  for (const ExplainRecord& e : report->explanations) lines.push_back(e.method + ": " + e.message);
  EXPECT_THAT(lines, ::testing::ElementsAre(
                         "model: addmm 'addmm' rewritten to linear (weight 'p_encoder_weight' is parameter 'encoder.weight')",
                         "model: mm 'mm' kept: weight 'permute_1' is computed at run time by 'squeeze_1'",
                         "model: addmm 'addmm_1' rewritten to linear (weight 'p_duration_weight' is parameter 'duration.weight')"));
  ASSERT_EQ(report->methods.size(), 1u);
  const MethodChange& m = report->methods[0];
  EXPECT_EQ(m.nodes_before, 11u);
  EXPECT_EQ(m.nodes_after, 9u);
  EXPECT_EQ(m.ops.at("aten.addmm.default"), std::make_pair(int64_t{2}, int64_t{0}));
  EXPECT_EQ(m.ops.at("aten.linear.default"), std::make_pair(int64_t{0}, int64_t{2}));
  ASSERT_EQ(report->passes.size(), 2u);
  EXPECT_EQ(report->passes[0].pass, "addmm_mm_to_linear");
  auto runner = Runner::create(*program);
  ASSERT_TRUE(runner.ok()) << runner.error().message();
  expect_matches_reference(**runner, reference("tts_duration_predictor", "model"));
}

// The default pipeline folds constants on the portable kernels without any
// process-wide evaluator installed.
TEST(LatheApi, DefaultPipelineFoldsWithoutGlobalSetUp) {
  ASSERT_FALSE(static_cast<bool>(ConstantPropagation::default_evaluator()));
  auto program = load(source_path("fixtures/computed_weight.pt2"));
  ASSERT_TRUE(program.ok());
  auto report = transform(*program, passes("default"));
  ASSERT_TRUE(report.ok()) << report.error().message();
  bool folded = false;
  for (const ExplainRecord& e : report->explanations) {
    folded = folded || e.message == "aten.mm.default 'mm' folded into lifted constant 'folded_mm' (f32[8, 6])";
  }
  EXPECT_TRUE(folded);
  EXPECT_FALSE(static_cast<bool>(ConstantPropagation::default_evaluator()));
  auto runner = Runner::create(*program);
  ASSERT_TRUE(runner.ok()) << runner.error().message();
  expect_matches_reference(**runner, reference("computed_weight", "model"), 1e-4);
}

TEST(LatheApi, TransformErrors) {
  auto program = load(source_path("fixtures/two_methods.pt2"));
  ASSERT_TRUE(program.ok());
  auto typo = transform(*program, passes("remove_dead_cod"));
  ASSERT_FALSE(typo.ok());
  EXPECT_THAT(typo.error().message(), HasSubstr("remove_dead_cod"));
  auto method = transform(*program, only("forward"));
  ASSERT_FALSE(method.ok());
  EXPECT_THAT(method.error().message(), HasSubstr("no method 'forward'; methods: "));
  auto keep = transform(*program, passes("remove_dead_code", {"aten.linear.default"}));
  ASSERT_FALSE(keep.ok());
  auto one = transform(*program, only(program->method_names()[0]));
  ASSERT_TRUE(one.ok()) << one.error().message();
  EXPECT_TRUE(one->methods[0].selected);
  EXPECT_FALSE(one->methods[1].selected);
}

// The releases `lathe --version` and `lathe inspect` name are the ones the
// ATen schema table was generated from (tools/make_aten_schemas.py, run with
// each; the requirements files pin the same, tests/torch/core_aten_test.py).
TEST(LatheApi, VerifiedTorchVersions) {
  const std::vector<std::string> v = verified_torch_versions();
  std::string joined;
  for (const std::string& r : v) joined += (joined.empty() ? "" : " ") + r;
  EXPECT_EQ(joined, aten_schemas_torch_versions());
  EXPECT_EQ(v, (std::vector<std::string>{"2.13.0", "2.14.1"}));
  EXPECT_EQ(torch_version_status("2.13.0+cpu"), TorchVersionStatus::Verified);
  EXPECT_EQ(torch_version_status("2.14.1+cu130"), TorchVersionStatus::Verified);
  EXPECT_EQ(torch_version_status("2.14.1"), TorchVersionStatus::Verified);
  EXPECT_EQ(torch_version_status("2.9.0"), TorchVersionStatus::Older);
  EXPECT_EQ(torch_version_status("2.14.0"), TorchVersionStatus::Older);
  EXPECT_EQ(torch_version_status("2.14.2"), TorchVersionStatus::Newer);
  EXPECT_EQ(torch_version_status("2.15.0a0+git1234"), TorchVersionStatus::Newer);
  EXPECT_EQ(torch_version_status("3"), TorchVersionStatus::Newer);
  EXPECT_EQ(torch_version_status(""), TorchVersionStatus::Unknown);
  EXPECT_EQ(torch_version_status("unknown"), TorchVersionStatus::Unknown);
}

// Lowering needs the library; a build without it (LATHE_WITH_XNNPACK=OFF)
// checks instead that the backend says so and leaves the program alone.
#if LATHE_WITH_XNNPACK
TEST(LatheApi, LowersToXnnpackAndRuns) {
  auto program = load(source_path("fixtures/convnet.pt2"));
  ASSERT_TRUE(program.ok());
  auto report = lower(*program);
  ASSERT_TRUE(report.ok()) << report.error().message();
  ASSERT_EQ(report->methods.size(), 1u);
  EXPECT_GE(report->methods[0].delegates, 1u);
  EXPECT_THAT(report->methods[0].explanation, HasSubstr("claimed"));
  auto runner = Runner::create(*program);
  ASSERT_TRUE(runner.ok()) << runner.error().message();
  expect_matches_reference(**runner, reference("convnet", "model"), 1e-4);
}

// lower() says per node what it decided, as data: the TTS predictor's two
// parameter linears are claimed into two delegates, the matmul against a
// matrix computed at run time stays on the portable kernels, with why.
TEST(LatheApi, LowerReportsEachNodesDecisionAsData) {
  auto program = load(source_path("fixtures/tts_duration_predictor.pt2"));
  ASSERT_TRUE(program.ok());
  auto report = lower(*program);
  ASSERT_TRUE(report.ok()) << report.error().message();
  ASSERT_EQ(report->methods.size(), 1u);
  const MethodLoweringReport& m = report->methods[0];
  ASSERT_EQ(m.decisions.size(), 9u);
  std::map<std::string, const LoweringDecision*> by_node;
  std::string text;
  size_t claimed = 0;
  for (const LoweringDecision& d : m.decisions) {
    EXPECT_EQ(d.method, "model");
    EXPECT_EQ(d.delegate >= 0, d.claimed) << d.node;
    by_node[d.node] = &d;
    text += to_string(d) + "\n";
    claimed += d.claimed ? 1 : 0;
  }
  EXPECT_EQ(text, m.explanation);  // `lathe lower --explain` prints the same lines
  EXPECT_EQ(claimed, m.claimed_nodes);
  ASSERT_TRUE(by_node.count("mm") && by_node.count("addmm") && by_node.count("addmm_1") && by_node.count("relu"));
  const LoweringDecision& mm = *by_node["mm"];
  EXPECT_EQ(mm.op, "aten.mm.default");
  EXPECT_FALSE(mm.claimed);
  EXPECT_EQ(mm.delegate, -1);
  EXPECT_EQ(mm.reason, "mat2 'permute_1' is computed at run time by 'permute_1' "
                       "(XNNPACK prepacks it at init: it must be a compile-time constant)");
  EXPECT_EQ(to_string(mm), "model: aten.mm.default 'mm' not claimed: " + mm.reason);
  const LoweringDecision& linear = *by_node["addmm"];
  EXPECT_EQ(linear.op, "aten.linear.default");
  EXPECT_TRUE(linear.claimed);
  EXPECT_EQ(linear.delegate, 0);
  EXPECT_EQ(linear.reason, "fully_connected, weight parameter 'encoder.weight' prepacked");
  EXPECT_EQ(by_node["relu"]->delegate, 0);
  EXPECT_EQ(by_node["addmm_1"]->delegate, 1);
  EXPECT_EQ(to_string(*by_node["addmm_1"]),
            "model: aten.linear.default 'addmm_1' claimed (delegate 1): fully_connected, weight parameter "
            "'duration.weight' prepacked");
}
#else
TEST(LatheApi, LoweringToXnnpackSaysItIsNotBuilt_NEG) {
  auto program = load(source_path("fixtures/convnet.pt2"));
  ASSERT_TRUE(program.ok());
  const size_t nodes = program->methods[0].program->graph().node_count();
  auto report = lower(*program);
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(report.error().message(), HasSubstr("built without the XNNPACK backend (LATHE_WITH_XNNPACK=OFF"));
  EXPECT_EQ(program->methods[0].program->graph().node_count(), nodes);
}
#endif

TEST(LatheApi, UnknownBackendListsTheBackends_NEG) {
  auto program = load(source_path("fixtures/mlp.pt2"));
  ASSERT_TRUE(program.ok());
  auto unknown = lower(*program, LowerOptions{"tpu", ""});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message(), "unknown backend 'tpu'; backends: vulkan, xnnpack");
  EXPECT_EQ(available_backends(), (std::vector<std::string>{"vulkan", "xnnpack"}));
}

TEST(LatheApi, RunnerErrorsNameTheMethodAndInput) {
  auto program = load(source_path("fixtures/two_methods.pt2"));
  ASSERT_TRUE(program.ok());
  auto ambiguous = Runner::create(*program);
  ASSERT_FALSE(ambiguous.ok());
  EXPECT_THAT(ambiguous.error().message(), HasSubstr("pick one"));
  auto missing = Runner::create(*program, "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message(), HasSubstr("no method 'nope'; methods: "));

  auto mlp = load(source_path("fixtures/mlp.pt2"));
  ASSERT_TRUE(mlp.ok());
  auto runner = Runner::create(*mlp);
  ASSERT_TRUE(runner.ok());
  auto wrong = (*runner)->run(std::vector<Tensor>{Tensor::empty(DType::Int64, {2, 3})});
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(wrong.error().message(), HasSubstr("model: "));
  EXPECT_THAT(wrong.error().message(), HasSubstr((*runner)->inputs()[0].name));
}

TEST(LatheApi, ListsPasses) {
  auto passes = available_passes();
  EXPECT_GE(passes.size(), 5u);
  EXPECT_THAT(default_pipeline(), HasSubstr("constant_propagation"));
}

// transform's check_outputs (`lathe transform --verify`) on a program held
// only in memory: the "before" copy comes through an in-memory archive.
TEST(Api, CheckOutputsComparesEveryPassOnAnInMemoryProgram) {
  auto program = load_bytes(file_bytes(source_path("fixtures/mlp.pt2")));
  ASSERT_TRUE(program.ok()) << program.error().message();
  TransformOptions o = passes("default");
  o.check_outputs = true;
  auto report = transform(*program, o);
  ASSERT_TRUE(report.ok()) << report.error().message();
  ASSERT_EQ(report->checked.size(), 1u);
  EXPECT_THAT(report->checked[0], HasSubstr("outputs equal after each of " + std::to_string(report->passes.size()) +
                                            " pass(es)"));
}

TEST(Api, CheckPassesRefusesAnUnknownPassBeforeAnythingIsRead_NEG) {
  Status s = check_passes(passes("addmm_mm_to_linear,no_such_pass"));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message(), HasSubstr("no_such_pass"));
  EXPECT_TRUE(check_passes(passes("default")).ok());
}

TEST(Api, PrintAfterEachWritesTheIrOfEveryMethodAfterEveryPass) {
  auto program = load(source_path("fixtures/mlp.pt2"));
  ASSERT_TRUE(program.ok()) << program.error().message();
  std::ostringstream printed;
  TransformOptions o = passes("addmm_mm_to_linear");
  o.print_after_each = &printed;
  ASSERT_TRUE(transform(*program, o).ok());
  EXPECT_THAT(printed.str(), HasSubstr("aten.linear.default"));
}

// Program::clone (what Python's transform works on): on every fixture the
// copy writes the same bytes as the original, the default pipeline on the
// copy writes what it writes on the original, and the original is untouched.
TEST(Api, AClonedProgramWritesAndTransformsLikeTheOriginal) {
  size_t checked = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(source_path("fixtures"))) {
    if (entry.path().extension() != ".pt2") continue;
    SCOPED_TRACE(entry.path().string());
    auto original = load(entry.path().string());
    if (!original.ok()) continue;  // the malformed ones
    auto before = save_bytes(*original);
    if (!before.ok()) continue;  // a fixture that does not verify as read
    Program copy = original->clone();
    auto copied = save_bytes(copy);
    ASSERT_TRUE(copied.ok()) << copied.error().message();
    EXPECT_TRUE(*copied == *before);
    auto on_copy = transform(copy, passes("default"));
    auto fresh = load(entry.path().string());
    ASSERT_TRUE(fresh.ok());
    ASSERT_EQ(on_copy.ok(), transform(*fresh, passes("default")).ok());
    if (on_copy.ok()) {
      EXPECT_TRUE(*save_bytes(copy) == *save_bytes(*fresh));
    }
    auto after = save_bytes(*original);
    ASSERT_TRUE(after.ok());
    EXPECT_TRUE(*after == *before) << "transforming a copy changed the original";
    ++checked;
  }
  EXPECT_GE(checked, 40u);
}

}  // namespace
}  // namespace lathe

namespace lathe {
namespace {

// A caller's pass object in the pipeline, between built-in names: it runs
// in order, sees the method as the built-ins left it, and its explanations
// come back with theirs.
class CountNodes : public NamedPass<"count_nodes", "records how many nodes the method has"> {
 public:
  Result<bool> run(ExportedProgram& program, PassContext& ctx) override {
    ctx.kept("-", "nodes: " + std::to_string(program.graph().node_count()));
    return false;
  }
};

TEST(LatheApi, PassObjectsMixWithNamesInOneOrderedPipeline) {
  auto program = load(source_path("fixtures/simple_linear.pt2"));
  ASSERT_TRUE(program.ok()) << program.error().message();
  TransformOptions o;
  o.pipeline = {std::make_shared<CountNodes>(), "addmm_mm_to_linear,remove_dead_code", std::make_shared<CountNodes>()};
  auto report = transform(*program, o);
  ASSERT_TRUE(report.ok()) << report.error().message();
  std::vector<std::string> counts;
  for (const ExplainRecord& e : report->explanations) {
    if (e.pass == "count_nodes") counts.push_back(e.message);
  }
  EXPECT_EQ(counts, (std::vector<std::string>{"nodes: 2", "nodes: 1"}));  // permute + addmm, then linear
}

// A caller's pass that changes the graph without a Rewriter and leaves it
// invalid (a node reading a value defined after it) is stopped right
// after it runs, named, even without verify_each.
class BreakOrder : public NamedPass<"break_order", "moves the last node first, around the Rewriter"> {
 public:
  Result<bool> run(ExportedProgram& program, PassContext&) override {
    Graph& g = program.graph();
    std::vector<Node*> nodes = g.nodes_snapshot();
    Rewriter rw(program);
    // Rewriter refuses the move; a caller's pass cannot do it through the
    // Rewriter at all, so check that the refusal comes back named.
    LATHE_RETURN_IF_ERROR(rw.move_before(nodes.back(), nodes.front()));
    return true;
  }
};

// One that goes around the Rewriter and leaves the output specs out of
// step with the graph: caught by the verify that follows every caller pass.
class StaleSpec : public NamedPass<"stale_spec", "adds an output spec with no output"> {
 public:
  Result<bool> run(ExportedProgram& program, PassContext&) override {
    program.output_specs.push_back(OutputSpec{OutputKind::UserOutput, ""});
    return true;
  }
};

TEST(LatheApi, PassObjectThatBreaksAnInvariantIsNamed_NEG) {
  auto program = load(source_path("fixtures/simple_linear.pt2"));
  ASSERT_TRUE(program.ok()) << program.error().message();
  TransformOptions o;
  o.pipeline = {std::make_shared<BreakOrder>()};
  auto report = transform(*program, o);
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(report.error().message(), HasSubstr("pass 'break_order' failed on method 'model'"));
  EXPECT_THAT(report.error().message(), HasSubstr("addmm"));
  o.pipeline = {std::make_shared<StaleSpec>()};
  report = transform(*program, o);
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(report.error().message(), HasSubstr("pass 'stale_spec' failed on method 'model': it left the method invalid"));
  o.pipeline = {"no_such_pass"};
  EXPECT_THAT(transform(*program, o).error().message(), HasSubstr("unknown pass 'no_such_pass'"));
}

}  // namespace
}  // namespace lathe

namespace lathe {
namespace {

// A backend of the caller's own, in C++: claims relu, writes a one-byte
// payload of its own format (the output scale), and runs it itself. Lower
// and Runner find it by name once registered.
class ScaledRelu : public Backend {
 public:
  std::string_view name() const override { return "test_scaled_relu"; }
  NodeSupport support(const Node& n, const Constness&) const override {
    return n.op_name() == "aten.relu.default" ? NodeSupport::yes("relu, scaled") : NodeSupport::no("only relu");
  }
  std::vector<std::string> ops_to_keep() const override { return {}; }
  Result<std::vector<std::byte>> preprocess(const DelegateSubgraph& sub) const override {
    if (sub.nodes.size() != 1) return make_error("one relu per delegate");
    return std::vector<std::byte>{std::byte{3}};  // this backend's "format": outputs times 3
  }
  Result<std::unique_ptr<DelegateHandle>> init(const DelegateInitArgs& args) const override {
    if (args.payload.size() != 1) return make_error("test_scaled_relu: bad payload");
    return std::unique_ptr<DelegateHandle>(std::make_unique<Handle>(static_cast<float>(args.payload[0])));
  }

 private:
  struct Handle : DelegateHandle {
    explicit Handle(float s) : scale(s) {}
    Status execute(KernelCall& call) override {
      LATHE_ASSIGN_OR_RETURN(std::vector<const Tensor*> in, call.tensor_list(ops::arg::inputs));
      const Tensor x = kernels::contiguous_copy(*in[0]);
      LATHE_ASSIGN_OR_RETURN(Tensor * out, call.alloc_output(0, DType::Float32, x.sizes));
      const float* src = reinterpret_cast<const float*>(x.data());
      float* dst = reinterpret_cast<float*>(const_cast<std::byte*>(out->data()));
      for (int64_t i = 0; i < x.numel(); ++i) dst[i] = scale * std::max(src[i], 0.0f);
      return Status::Ok();
    }
    float scale;
  };
};

// A program with one method, "model", whose graph the test builds.
Program one_empty_method() {
  Program program;
  Method m;
  m.name = "model";
  m.program = std::make_unique<ExportedProgram>();
  program.methods.push_back(std::move(m));
  return program;
}

TEST(LatheApi, ACallersBackendIsRegisteredLoweredToAndRun) {
  ASSERT_TRUE(register_backend(std::make_shared<ScaledRelu>()).ok());
  EXPECT_THAT(available_backends(), ::testing::Contains("test_scaled_relu"));
  EXPECT_THAT(register_backend(std::make_shared<ScaledRelu>()).error().message(),
              HasSubstr("a backend named 'test_scaled_relu' is already registered"));
  Program program = one_empty_method();
  GraphBuilder b(*program.methods[0].program);
  Value* x = b.user_input("x", {4});
  b.user_output(b.call("aten.relu.default", {{"self", x}}, {4}));
  auto report = lower(program, LowerOptions{"test_scaled_relu", ""});
  ASSERT_TRUE(report.ok()) << report.error().message();
  EXPECT_THAT(report->methods[0].explanation, HasSubstr("claimed (delegate 0): relu, scaled"));
  auto runner = Runner::create(program);
  ASSERT_TRUE(runner.ok()) << runner.error().message();
  Tensor in = Tensor::empty(DType::Float32, {4});
  float* p = reinterpret_cast<float*>(const_cast<std::byte*>(in.data()));
  p[0] = -1, p[1] = 0.5f, p[2] = 2, p[3] = -3;
  auto out = (*runner)->run(std::vector<Tensor>{in});
  ASSERT_TRUE(out.ok()) << out.error().message();
  const float* y = reinterpret_cast<const float*>((*out)[0].data());
  EXPECT_EQ(std::vector<float>(y, y + 4), (std::vector<float>{0, 1.5f, 6, 0}));  // 3 * relu, by hand
}

// partitions(): what lower() hands the backend, for a caller's own
// serializer; the program itself is not lowered.
TEST(LatheApi, PartitionsAreWhatLowerHandsTheBackend) {
  const std::vector<std::string> known = available_backends();
  if (std::find(known.begin(), known.end(), "test_scaled_relu") == known.end()) {
    ASSERT_TRUE(register_backend(std::make_shared<ScaledRelu>()).ok());
  }
  Program program = one_empty_method();
  GraphBuilder b(*program.methods[0].program);
  Value* x = b.user_input("x", {4});
  Value* r1 = b.call("aten.relu.default", {{"self", x}}, {4});
  Value* n = b.call("aten.neg.default", {{"self", r1}}, {4});
  b.user_output(b.call("aten.relu.default", {{"self", n}}, {4}));
  auto parts = partitions(program, LowerOptions{"test_scaled_relu", ""});
  ASSERT_TRUE(parts.ok()) << parts.error().message();
  ASSERT_EQ(parts->size(), 2u);  // neg between the relus splits them
  EXPECT_EQ((*parts)[0].method, "model");
  EXPECT_EQ((*parts)[0].nodes, (std::vector<std::string>{r1->producer()->name()}));
  EXPECT_EQ((*parts)[0].inputs, (std::vector<std::string>{"x"}));
  EXPECT_TRUE((*parts)[0].constants.empty());
  EXPECT_EQ((*parts)[0].outputs, (std::vector<std::string>{r1->name()}));
  EXPECT_EQ((*parts)[0].payload, (std::vector<std::byte>{std::byte{3}}));
  EXPECT_EQ((*parts)[1].delegate, 1);
  EXPECT_EQ((*parts)[1].inputs, (std::vector<std::string>{n->name()}));
  EXPECT_EQ(program.methods[0].program->graph().node_count(), 3u);  // left as it was
  EXPECT_FALSE(partitions(program, LowerOptions{"tpu", ""}).ok());
}

}  // namespace
}  // namespace lathe

#include "lathe/extend.h"

namespace lathe {
namespace {

// schema_arguments names a call's arguments as torch.export writes them.
// The schema is aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1).
std::vector<std::string> names_and_kinds(const std::vector<NamedArgument>& args) {
  std::vector<std::string> out;
  for (const NamedArgument& a : args)
    out.push_back(a.name + (a.kind == ArgKind::Positional ? ":positional" : a.kind == ArgKind::Keyword ? ":keyword" : ":?"));
  return out;
}

TEST(SchemaArguments, NamesPositionalArgumentsAndKeepsSchemaOrder) {
  auto args = schema_arguments("aten.add.Tensor", {Argument(int64_t{1})}, {{"alpha", Argument(2.0)}, {"other", Argument(int64_t{3})}});
  ASSERT_TRUE(args.ok()) << args.error().message();
  EXPECT_EQ(names_and_kinds(*args), (std::vector<std::string>{"self:positional", "other:positional", "alpha:keyword"}));
  EXPECT_EQ((*args)[1].arg.as<int64_t>(), 3);
  EXPECT_EQ((*args)[2].arg.as<double>(), 2.0);
}

TEST(SchemaArguments, AnOpWithoutASchemaTakesKeywordsOnly) {
  auto named = schema_arguments("my_ns.my_op.default", {}, {{"x", Argument(int64_t{1})}});
  ASSERT_TRUE(named.ok()) << named.error().message();
  EXPECT_EQ(names_and_kinds(*named), (std::vector<std::string>{"x:keyword"}));
}

TEST(SchemaArguments, WrongCallsAreRefusedNamingTheOp_NEG) {
  auto too_many = schema_arguments("aten.add.Tensor", {Argument(int64_t{1}), Argument(int64_t{2}), Argument(1.0)}, {});
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(too_many.error().message(), "aten.add.Tensor takes 2 positional argument(s), 3 given");
  auto unknown = schema_arguments("aten.add.Tensor", {}, {{"beta", Argument(1.0)}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message(), "aten.add.Tensor has no argument 'beta'");
  auto twice = schema_arguments("aten.add.Tensor", {Argument(int64_t{1})}, {{"self", Argument(int64_t{2})}});
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().message(), "aten.add.Tensor: argument 'self' given twice");
  auto no_schema = schema_arguments("my_ns.my_op.default", {Argument(int64_t{1})}, {});
  ASSERT_FALSE(no_schema.ok());
  EXPECT_THAT(no_schema.error().message(), HasSubstr("my_ns.my_op.default has no schema Lathe knows"));
}

}  // namespace
}  // namespace lathe
