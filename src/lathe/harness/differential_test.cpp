#include "lathe/harness/differential.h"

#include <gtest/gtest.h>

#include "lathe/ir/graph_builder.h"
#include "lathe/runtime/kernels/util.h"
#include "lathe/serde/pt2.h"
#include "support/testing.h"

namespace lathe {
namespace {

// nn.Linear as torch.export decomposes it, and as the addmm -> linear pass
// rewrites it; same parameter names, so the same deterministic weights.
void build_addmm(ExportedProgram& ep) {
  GraphBuilder b(ep);
  Value* w = b.parameter("fc.weight", {6, 5});
  Value* bias = b.parameter("fc.bias", {6});
  Value* x = b.user_input("x", {3, 5});
  Value* t = b.call("aten.t.default", {{"self", w}}, {5, 6});
  b.user_output(b.call("aten.addmm.default", {{"self", bias}, {"mat1", x}, {"mat2", t}}, {3, 6}));
}

void build_linear(ExportedProgram& ep, const char* act = nullptr) {
  GraphBuilder b(ep);
  Value* w = b.parameter("fc.weight", {6, 5});
  Value* bias = b.parameter("fc.bias", {6});
  Value* x = b.user_input("x", {3, 5});
  Value* y = b.call("aten.linear.default", {{"input", x}, {"weight", w}, {"bias", bias}}, {3, 6});
  if (act) y = b.call(act, {{"self", y}}, {3, 6});
  b.user_output(y);
}

TEST(Differential, AddmmAndLinearAgree) {
  ExportedProgram before, after;
  build_addmm(before);
  build_linear(after);
  Status s = differential_check(before, after);
  EXPECT_TRUE(s.ok()) << s.error().message();
  DifferentialOptions o;
  o.calls = 3;
  o.seed = 7;
  auto r = differential_run(before, after, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->entries.size(), 3u);
  EXPECT_TRUE(r->ok) << r->summary();
  EXPECT_LE(r->max_rel, 1e-6);
}

TEST(Differential, AWrongRewriteIsCaughtAndNamed) {
  ExportedProgram before, after;
  build_addmm(before);
  build_linear(after, "aten.relu.default");  // a "rewrite" that changed the result
  Status s = differential_check(before, after);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("outputs differ after the rewrite: call 0 output 0 'addmm': max abs"),
            std::string::npos)
      << s.error().message();
}

TEST(Differential, SignatureChangesAreReported) {
  ExportedProgram before, after;
  build_addmm(before);
  GraphBuilder b(after);
  b.user_input("x", {3, 5});
  Value* y = b.user_input("y", {3, 5});
  b.user_output(y);
  Status s = differential_check(before, after);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(), "the programs' signatures differ (1 -> 2 user inputs, 1 -> 1 user outputs)");
}

TEST(Differential, RandomInputsAreDeterministicAndRespectIndexBounds) {
  auto program = read_pt2(testing::source_path("fixtures/tied_embedding.pt2"));
  ASSERT_TRUE(program.ok());
  const ExportedProgram& ep = *program->methods[0].program;
  auto a = random_inputs(ep, 42);
  auto b = random_inputs(ep, 42);
  auto c = random_inputs(ep, 43);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  ASSERT_EQ(a->size(), 1u);
  const Tensor& t = (*a)[0];
  EXPECT_EQ(t.dtype, DType::Int64);
  EXPECT_EQ(t.sizes, (std::vector<int64_t>{1, 6}));
  const int64_t* p = kernels::cdata<int64_t>(t);
  for (int i = 0; i < 6; ++i) {
    EXPECT_GE(p[i], 0);
    EXPECT_LT(p[i], 32);  // rows of the embedding
  }
  EXPECT_EQ(std::vector<int64_t>(p, p + 6),
            std::vector<int64_t>(kernels::cdata<int64_t>((*b)[0]), kernels::cdata<int64_t>((*b)[0]) + 6));
  EXPECT_NE(std::vector<int64_t>(p, p + 6),
            std::vector<int64_t>(kernels::cdata<int64_t>((*c)[0]), kernels::cdata<int64_t>((*c)[0]) + 6));
}

// `transform --verify` on a program declaring an input of [2^40, 3] once
// died of std::bad_alloc making its random input.
TEST(Differential, RandomInputsRefuseAbsurdDeclaredSizes) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* x = b.user_input("x", {int64_t{1} << 40, 3});
  b.user_output(b.call("aten.relu.default", {{"self", x}}, {int64_t{1} << 40, 3}));
  auto in = random_inputs(ep, 0);
  ASSERT_FALSE(in.ok());
  EXPECT_EQ(in.error().message(),
            "cannot make a random input 'x': [1099511627776, 3] float32 needs 13194139533312 bytes, more than the "
            "limit of 1073741824");
}

// A stateful fixture against itself over three calls: outputs and the
// mutated buffers are compared after each call.
TEST(Differential, ComparesMutatedBuffersAcrossCalls) {
  auto p1 = read_pt2(testing::source_path("fixtures/buffer_mutation.pt2"));
  auto p2 = read_pt2(testing::source_path("fixtures/buffer_mutation.pt2"));
  ASSERT_TRUE(p1.ok() && p2.ok());
  DifferentialOptions o;
  o.calls = 3;
  auto r = differential_run(*p1->methods[0].program, *p2->methods[0].program, o);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(r->ok);
  EXPECT_EQ(r->entries.size(), 9u);  // per call: 1 output + 2 buffers
  EXPECT_EQ(r->entries[1].what, "call 0 buffer 'count'");
  EXPECT_EQ(r->max_abs, 0.0);
}

}  // namespace
}  // namespace lathe
