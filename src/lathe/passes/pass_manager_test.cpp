#include "lathe/passes/pass_manager.h"

#include <gtest/gtest.h>

#include <sstream>

#include "lathe/ir/graph_builder.h"
#include "lathe/passes/pass_registry.h"

namespace lathe {
namespace {

// Records which program and method it was handed.
class Recorder : public Pass {
 public:
  std::vector<std::pair<std::string, const ExportedProgram*>>* seen;
  explicit Recorder(std::vector<std::pair<std::string, const ExportedProgram*>>* s) : seen(s) {}
  std::string_view name() const override { return "recorder"; }
  std::string_view description() const override { return "records its calls"; }
  Result<bool> run(ExportedProgram& ep, PassContext& ctx) override {
    seen->emplace_back(ctx.method() + "/" + ctx.pass(), &ep);
    return false;
  }
};

// Adds a spec with no placeholder: the signature disagrees with the graph.
class Breaker : public Pass {
 public:
  std::string_view name() const override { return "breaker"; }
  std::string_view description() const override { return "breaks the signature"; }
  Result<bool> run(ExportedProgram& ep, PassContext&) override {
    ep.input_specs.push_back(InputSpec{InputKind::UserInput, "", true, {}});
    return true;
  }
};

// Reports a change `budget` times, then converges.
class Countdown : public Pass {
 public:
  int budget;
  explicit Countdown(int n) : budget(n) {}
  std::string_view name() const override { return "countdown"; }
  std::string_view description() const override { return "changes a few times"; }
  Result<bool> run(ExportedProgram&, PassContext& ctx) override {
    ctx.kept("n", "always the same refusal");
    return budget-- > 0;
  }
};

class Failing : public Pass {
 public:
  std::string_view name() const override { return "failing"; }
  std::string_view description() const override { return "fails"; }
  Result<bool> run(ExportedProgram&, PassContext&) override { return make_error("boom"); }
};

Program two_methods() {
  Program p;
  build_simple_linear(p.add_method("encode"));
  build_simple_linear(p.add_method("decode"));
  return p;
}

TEST(PassManagerTest, EachPassGetsEachMethodsOwnProgramInOrder) {
  Program p = two_methods();
  std::vector<std::pair<std::string, const ExportedProgram*>> seen;
  PassManager pm(PassManagerOptions{.verify_each = true});
  pm.add(std::make_unique<Recorder>(&seen));
  PassContext ctx;
  ASSERT_TRUE(pm.run(p, ctx).ok());
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].first, "encode/recorder");
  EXPECT_EQ(seen[0].second, p.methods[0].program.get());
  EXPECT_EQ(seen[1].first, "decode/recorder");
  EXPECT_EQ(seen[1].second, p.methods[1].program.get());
  seen.clear();
  ASSERT_TRUE(pm.run(p, ctx, "decode").ok());
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].first, "decode/recorder");
  EXPECT_EQ(pm.timings().size(), 3u);
  EXPECT_EQ(pm.timings()[2].method, "decode");
  EXPECT_GE(pm.timings()[2].seconds, 0.0);
}

TEST(PassManagerTest, UnknownMethodListsTheMethods_NEG) {
  Program p = two_methods();
  PassManager pm;
  PassContext ctx;
  Result<bool> r = pm.run(p, ctx, "forward");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(), "no method 'forward'; methods: encode, decode");
}

TEST(PassManagerTest, VerifyAfterEachPassNamesThePassThatBrokeIt_NEG) {
  ExportedProgram ep;
  build_simple_linear(ep);
  std::vector<std::pair<std::string, const ExportedProgram*>> seen;
  PassManager pm(PassManagerOptions{.verify_each = true});
  pm.add(std::make_unique<Recorder>(&seen));
  pm.add(std::make_unique<Breaker>());
  pm.add(std::make_unique<Recorder>(&seen));
  PassContext ctx;
  Result<bool> r = pm.run(ep, "forward", ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message().rfind("after pass 'breaker': method 'forward': the graph has 3 input(s) but the "
                                      "signature 4 input spec(s)", 0),
            0u)
      << r.error().message();
  EXPECT_EQ(seen.size(), 1u);  // stopped at the breaker
}

TEST(PassManagerTest, WithoutVerifyEachABrokenProgramGoesUnnoticed) {
  ExportedProgram ep;
  build_simple_linear(ep);
  PassManager pm;
  pm.add(std::make_unique<Breaker>());
  PassContext ctx;
  EXPECT_TRUE(pm.run(ep, "forward", ctx).ok());
}

TEST(PassManagerTest, InvalidInputIsReportedBeforeAnyPass_NEG) {
  ExportedProgram ep;
  build_simple_linear(ep);
  ep.output_specs.clear();
  PassManager pm(PassManagerOptions{.verify_each = true});
  pm.add(std::make_unique<Countdown>(0));
  PassContext ctx;
  Result<bool> r = pm.run(ep, "forward", ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message().rfind("before any pass: method 'forward'", 0), 0u) << r.error().message();
}

TEST(PassManagerTest, FixpointConvergesAndDeduplicatesExplanations) {
  ExportedProgram ep;
  build_simple_linear(ep);
  PassManager pm(PassManagerOptions{.verify_each = true, .fixpoint = true, .max_iterations = 5});
  pm.add(std::make_unique<Countdown>(2));
  PassContext ctx;
  Result<bool> r = pm.run(ep, "forward", ctx);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(*r);
  EXPECT_EQ(pm.timings().size(), 3u);
  EXPECT_EQ(ctx.records().size(), 1u);
}

TEST(PassManagerTest, FixpointCapFailsLoudly_NEG) {
  ExportedProgram ep;
  build_simple_linear(ep);
  PassManager pm(PassManagerOptions{.fixpoint = true, .max_iterations = 3});
  pm.add(std::make_unique<Countdown>(100));
  PassContext ctx;
  Result<bool> r = pm.run(ep, "forward", ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(),
            "method 'forward': passes did not reach a fixpoint within 3 iterations (still changing: countdown)");
}

TEST(PassManagerTest, PassErrorsNameThePassAndMethod_NEG) {
  ExportedProgram ep;
  build_simple_linear(ep);
  PassManager pm;
  pm.add(std::make_unique<Failing>());
  PassContext ctx;
  Result<bool> r = pm.run(ep, "forward", ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(), "pass 'failing' failed on method 'forward': boom");
}

TEST(PassManagerTest, PrintsAfterEachPass) {
  ExportedProgram ep;
  build_simple_linear(ep);
  std::ostringstream out;
  PassManager pm(PassManagerOptions{.print_after_each = &out});
  pm.add(std::make_unique<Countdown>(0));
  PassContext ctx;
  ASSERT_TRUE(pm.run(ep, "forward", ctx).ok());
  EXPECT_EQ(out.str().rfind("// after pass 'countdown' on method 'forward'\ninputs:\n", 0), 0u) << out.str();
}

TEST(PassManagerTest, AfterEachHookSeesEveryPassByPosition) {
  ExportedProgram ep;
  build_simple_linear(ep);
  std::vector<std::string> calls;
  PassManagerOptions o;
  o.after_each = [&](const std::string& method, size_t index, ExportedProgram& program) {
    calls.push_back(method + "#" + std::to_string(index) + (&program == &ep ? "" : " (other program)"));
    return Status::Ok();
  };
  PassManager pm(o);
  pm.add(std::make_unique<Countdown>(0));
  pm.add(std::make_unique<Countdown>(0));
  PassContext ctx;
  ASSERT_TRUE(pm.run(ep, "forward", ctx).ok());
  EXPECT_EQ(calls, (std::vector<std::string>{"forward#0", "forward#1"}));
}

TEST(PassManagerTest, AfterEachHookErrorStopsTheRunNamingThePass_NEG) {
  ExportedProgram ep;
  build_simple_linear(ep);
  int later = 0;
  PassManagerOptions o;
  o.after_each = [&](const std::string&, size_t index, ExportedProgram&) -> Status {
    if (index == 0) return make_error("outputs differ");
    ++later;
    return Status::Ok();
  };
  PassManager pm(o);
  pm.add(std::make_unique<Countdown>(0));
  pm.add(std::make_unique<Countdown>(0));
  PassContext ctx;
  Result<bool> r = pm.run(ep, "forward", ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(), "after pass 'countdown' on method 'forward': outputs differ");
  EXPECT_EQ(later, 0);
}

TEST(PassRegistryTest, BuiltinsHaveOneLineDescriptionsAndTheDefaultListResolves) {
  const PassRegistry& r = builtin_passes();
  EXPECT_EQ(r.names(), (std::vector<std::string>{"addmm_mm_to_linear", "bmm_to_linear", "sdpa_additive_mask", "remove_dead_code", "decompose",
                                                 "constant_propagation", "remove_redundant_views",
                                                 "common_subexpression_elimination",
                                                 "fuse_weight_only_quantized_linear",
                                                 "fuse_int8_weight_only_matmul", "fuse_dynamic_int8_linear",
                                                 "inline_grad_regions", "sdpa_grouped_query"}));
  for (const auto& e : r.entries()) {
    EXPECT_FALSE(e.description.empty());
    EXPECT_EQ(e.description.find('\n'), std::string::npos);
  }
  auto list = r.create_list(kDefaultPasses);
  ASSERT_TRUE(list.ok()) << list.error().message();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0]->name(), "addmm_mm_to_linear");
  EXPECT_EQ((*list)[1]->name(), "remove_dead_code");
  auto spaced = r.create_list(" remove_dead_code , addmm_mm_to_linear");
  ASSERT_TRUE(spaced.ok());
  EXPECT_EQ((*spaced)[0]->name(), "remove_dead_code");
}

TEST(PassRegistryTest, UnknownOrEmptyPassNamesListTheValidOnes_NEG) {
  const PassRegistry& r = builtin_passes();
  auto bad = r.create_list("addmm_mm_to_linear,fuse_everything");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message(),
            "unknown pass 'fuse_everything'; passes: addmm_mm_to_linear, bmm_to_linear, sdpa_additive_mask, remove_dead_code, decompose, "
            "constant_propagation, remove_redundant_views, common_subexpression_elimination, "
            "fuse_weight_only_quantized_linear, fuse_int8_weight_only_matmul, fuse_dynamic_int8_linear, inline_grad_regions, "
            "sdpa_grouped_query");
  auto empty = r.create_list("addmm_mm_to_linear,");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().message().find("empty pass name"), std::string::npos);
  PassRegistry mine;
  ASSERT_TRUE(mine.add([] { return std::make_unique<Failing>(); }).ok());
  EXPECT_FALSE(mine.add([] { return std::make_unique<Failing>(); }).ok());
}

}  // namespace
}  // namespace lathe
