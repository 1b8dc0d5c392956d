// The differential check behind `lathe transform --verify`: a pass that
// keeps the numbers passes, a pass that changes them is named.
#include "lathe/api/pass_differential.h"

#include <gtest/gtest.h>

#include "lathe/ir/rewriter.h"
#include "lathe/passes/pass_manager.h"
#include "lathe/passes/pass_registry.h"
#include "lathe/serde/pt2.h"
#include "support/testing.h"

namespace lathe {
namespace {

// Deliberately wrong: relu(x) becomes neg(x).
class ReluToNeg : public Pass {
 public:
  std::string_view name() const override { return "relu_to_neg"; }
  std::string_view description() const override { return "breaks the numbers"; }
  Result<bool> run(ExportedProgram& ep, PassContext&) override {
    Rewriter rw(ep);
    for (Node* n : ep.graph().nodes()) {
      if (n->target() != "torch.ops.aten.relu.default") continue;
      LATHE_RETURN_IF_ERROR(rw.retarget(n, "torch.ops.aten.neg.default", n->inputs()));
      return true;
    }
    return false;
  }
};

std::vector<std::unique_ptr<Pass>> builtin(const std::string& list) {
  auto passes = builtin_passes().create_list(list);
  EXPECT_TRUE(passes.ok());
  return std::move(passes).value();
}

struct CheckedRun {
  Status status;
  std::vector<std::string> summary;
};

CheckedRun run_checked(const std::string& archive, std::vector<std::unique_ptr<Pass>> passes,
                std::vector<std::unique_ptr<Pass>> mirror, bool drop_sample_inputs = false,
                const std::string& reference_archive_path = "") {
  auto work = read_pt2(archive);
  auto reference = read_pt2(archive);
  EXPECT_TRUE(work.ok() && reference.ok());
  if (drop_sample_inputs) {
    for (Method& m : work->methods) m.sample_inputs = {};
    for (Method& m : reference->methods) m.sample_inputs = {};
  }
  DifferentialPassCheck check(std::move(reference).value(), std::move(mirror),
                              DifferentialPassOptions{reference_archive_path.empty() ? archive : reference_archive_path});
  PassManagerOptions o;
  o.verify_each = true;
  o.after_each = [&](const std::string& method, size_t index, ExportedProgram& p) {
    return check.after_pass(method, index, p);
  };
  PassManager pm(o);
  for (auto& p : passes) pm.add(std::move(p));
  PassContext ctx;
  Result<bool> r = pm.run(*work, ctx);
  return CheckedRun{r.ok() ? Status::Ok() : Status(r.error()), check.summary()};
}

TEST(DifferentialPassCheck, SoundPassesKeepTheOutputsOnTheSampleInputs) {
  CheckedRun r = run_checked(testing::source_path("fixtures/mlp.pt2"), builtin("addmm_mm_to_linear,remove_dead_code"),
                      builtin("addmm_mm_to_linear,remove_dead_code"));
  ASSERT_TRUE(r.status.ok()) << r.status.error().message();
  ASSERT_EQ(r.summary.size(), 1u);
  EXPECT_NE(r.summary[0].find("model: outputs equal after each of 2 pass(es) on the archive's sample inputs"),
            std::string::npos)
      << r.summary[0];
}

TEST(DifferentialPassCheck, EveryMethodOfATwoMethodProgramIsChecked) {
  CheckedRun r = run_checked(testing::source_path("fixtures/two_methods.pt2"), builtin("addmm_mm_to_linear"),
                      builtin("addmm_mm_to_linear"));
  ASSERT_TRUE(r.status.ok()) << r.status.error().message();
  ASSERT_EQ(r.summary.size(), 2u);
  EXPECT_EQ(r.summary[0].rfind("encode: ", 0), 0u) << r.summary[0];
  EXPECT_EQ(r.summary[1].rfind("decode: ", 0), 0u) << r.summary[1];
}

TEST(DifferentialPassCheck, WithoutSampleInputsFallsBackToSeededRandomInputs) {
  // No sample inputs and no reference files beside a made-up path.
  CheckedRun r = run_checked(testing::source_path("fixtures/buffer_mutation.pt2"), builtin("remove_dead_code"),
                      builtin("remove_dead_code"), /*drop_sample_inputs=*/true, testing::temp_dir() + "/none.pt2");
  ASSERT_TRUE(r.status.ok()) << r.status.error().message();
  ASSERT_EQ(r.summary.size(), 1u);
  EXPECT_NE(r.summary[0].find("seeded random inputs"), std::string::npos) << r.summary[0];
}

TEST(DifferentialPassCheck, APassThatChangesTheNumbersIsNamed_NEG) {
  std::vector<std::unique_ptr<Pass>> passes, mirror;
  passes.push_back(std::make_unique<ReluToNeg>());
  mirror.push_back(std::make_unique<ReluToNeg>());
  CheckedRun r = run_checked(testing::source_path("fixtures/mlp.pt2"), std::move(passes), std::move(mirror));
  ASSERT_FALSE(r.status.ok());
  const std::string& msg = r.status.error().message();
  EXPECT_EQ(msg.rfind("after pass 'relu_to_neg' on method 'model': outputs changed (on the archive's sample inputs)", 0),
            0u)
      << msg;
  EXPECT_NE(msg.find("output 0"), std::string::npos) << msg;
}

TEST(DifferentialPassCheck, TheReferenceCopyFollowsOnePassBehind_NEG) {
  // The break happens in the second pass; the first (sound) pass must have
  // been mirrored, or the second comparison would also see its changes.
  std::vector<std::unique_ptr<Pass>> passes = builtin("addmm_mm_to_linear");
  std::vector<std::unique_ptr<Pass>> mirror = builtin("addmm_mm_to_linear");
  passes.push_back(std::make_unique<ReluToNeg>());
  mirror.push_back(std::make_unique<ReluToNeg>());
  CheckedRun r = run_checked(testing::source_path("fixtures/mlp.pt2"), std::move(passes), std::move(mirror));
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.error().message().find("after pass 'relu_to_neg'"), std::string::npos)
      << r.status.error().message();
}

}  // namespace
}  // namespace lathe
