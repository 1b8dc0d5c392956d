#include "lathe/passes/bmm_to_linear.h"

#include <gtest/gtest.h>

#include "lathe/ir/graph_builder.h"
#include "lathe/passes/pass_test_support.h"
#include "lathe/passes/remove_dead_code.h"

namespace lathe {
namespace {

using testing::expect_unchanged;
using testing::nodes_and_outputs;
using testing::run_passes;

std::vector<std::unique_ptr<Pass>> with_dce() {
  std::vector<std::unique_ptr<Pass>> v;
  v.push_back(std::make_unique<BmmToLinear>());
  v.push_back(std::make_unique<RemoveDeadCode>());
  return v;
}

Value* bmm(GraphBuilder& b, Value* x, Value* mat2, std::vector<int64_t> sizes) {
  return b.call("aten.bmm.default", {{"self", x}, {"mat2", mat2}}, std::move(sizes));
}

// torch.einsum("bsh,oh->bso", x, w) as torch.export 2.13 decomposes it: the
// weight [6, 4] unsqueezed twice, permuted twice and viewed as [1, 4, 6]
// (w^T with a batch of 1), the input folded to [1, 10, 4].
void build_einsum(ExportedProgram& ep) {
  GraphBuilder b(ep);
  Value* w = b.parameter("w", {6, 4});
  Value* x = b.user_input("x", {1, 10, 4});
  Value* u1 = b.call("aten.unsqueeze.default", {{"self", w}, {"dim", int64_t{2}}}, {6, 4, 1});
  Value* u2 = b.call("aten.unsqueeze.default", {{"self", u1}, {"dim", int64_t{3}}}, {6, 4, 1, 1});
  Value* p1 = b.call("aten.permute.default", {{"self", u2}, {"dims", IntList{{2, 3, 0, 1}}}}, {1, 1, 6, 4});
  Value* p2 = b.call("aten.permute.default", {{"self", p1}, {"dims", IntList{{3, 2, 0, 1}}}}, {4, 1, 1, 6});
  Value* v = b.call("aten.view.default", {{"self", p2}, {"size", IntList{{1, 4, 6}}}}, {1, 4, 6});
  b.user_output(bmm(b, x, v, {1, 10, 6}));
}

TEST(BmmToLinear, EinsumWithAWeightBecomesALinearOnTheWeight) {
  ExportedProgram ep;
  build_einsum(ep);
  testing::PassRun r = run_passes(ep, with_dce());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(nodes_and_outputs(ep),
            "nodes:\n"
            "  %bmm: f32[1, 10, 6] = aten.linear.default(%x, %p_w)\n"
            "outputs:\n"
            "  %bmm  user_output\n");
}

// The 3-D linear decomposition: bmm(x, expand(t(w), [3, 4, 6])).
void build_expanded_transpose(ExportedProgram& ep, const std::string& weight_kind = "parameter") {
  GraphBuilder b(ep);
  Value* w = weight_kind == "parameter" ? b.parameter("w", {6, 4})
             : weight_kind == "mutable buffer" ? b.buffer("w", {6, 4})
                                               : b.user_input("w", {6, 4});
  Value* x = b.user_input("x", {3, 5, 4});
  Value* t = b.call("aten.permute.default", {{"self", w}, {"dims", IntList{{1, 0}}}}, {4, 6});
  Value* e = b.call("aten.expand.default", {{"self", t}, {"size", IntList{{3, 4, 6}}}}, {3, 4, 6});
  Value* y = bmm(b, x, e, {3, 5, 6});
  if (weight_kind == "mutable buffer") {
    // w <- w + 1 after the bmm: state, not a constant.
    Value* next = b.call("aten.add.Tensor", {{"self", w}, {"other", 1.0}}, {6, 4});
    b.buffer_mutation(next, "w");
  }
  b.user_output(y);
}

TEST(BmmToLinear, AnExpandedTransposedWeightBecomesALinear) {
  ExportedProgram ep;
  build_expanded_transpose(ep);
  testing::PassRun r = run_passes(ep, with_dce());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(nodes_and_outputs(ep),
            "nodes:\n"
            "  %bmm: f32[3, 5, 6] = aten.linear.default(%x, %p_w)\n"
            "outputs:\n"
            "  %bmm  user_output\n");
}

TEST(BmmToLinear, RewritesAreExplainedNamingTheWeight) {
  ExportedProgram ep;
  build_expanded_transpose(ep);
  PassManager pm(PassManagerOptions{.verify_each = true});
  pm.add(std::make_unique<BmmToLinear>());
  PassContext ctx;
  ASSERT_TRUE(pm.run(ep, "forward", ctx).ok());
  ASSERT_EQ(ctx.records().size(), 1u);
  EXPECT_EQ(ctx.records()[0].message,
            "bmm 'bmm' rewritten to linear (mat2 is weight 'p_w', parameter 'w', transposed and broadcast over the "
            "batch)");
}

// ---- kept: the guard and the layouts that are not w^T -----------------------------

// Runs the pass on a program it must leave as it is; its one explain line.
std::string the_one_kept_line(ExportedProgram& ep) {
  testing::PassRun r = expect_unchanged(ep, std::make_unique<BmmToLinear>());
  EXPECT_EQ(r.kept.size(), 1u);
  return r.kept.empty() ? std::string() : r.kept[0];
}

TEST(BmmToLinear, ARuntimeMatrixIsKept_NEG) {
  ExportedProgram ep;
  build_expanded_transpose(ep, "user input");
  const std::string kept = the_one_kept_line(ep);
  EXPECT_NE(kept.find("bmm 'bmm' kept: mat2 'expand' rests on 'w', which is user input"), std::string::npos)
      << kept;
}

TEST(BmmToLinear, AMutatedBufferIsKept_NEG) {
  ExportedProgram ep;
  build_expanded_transpose(ep, "mutable buffer");
  const std::string kept = the_one_kept_line(ep);
  EXPECT_NE(kept.find("bmm 'bmm' kept: mat2 'expand' rests on 'b_w', which"), std::string::npos) << kept;
  EXPECT_NE(kept.find("mutable buffer"), std::string::npos) << kept;
}

// x @ w with w [4, 6]: mat2 is w itself, and a linear would need w^T.
TEST(BmmToLinear, TheWeightItselfIsKept_NEG) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* w = b.parameter("w", {4, 6});
  Value* x = b.user_input("x", {3, 5, 4});
  Value* e = b.call("aten.expand.default", {{"self", w}, {"size", IntList{{3, 4, 6}}}}, {3, 4, 6});
  b.user_output(bmm(b, x, e, {3, 5, 6}));
  const std::string kept = the_one_kept_line(ep);
  EXPECT_EQ(kept, "bmm 'bmm' kept: mat2 'expand' is weight 'p_w' itself (x @ w): a linear would need it "
                       "transposed, a copy of the weight");
}

// w [12, 4] viewed as [3, 4, 4]: each batch reads its own rows.
TEST(BmmToLinear, ADifferentMatrixPerBatchIsKept_NEG) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* w = b.parameter("w", {12, 4});
  Value* x = b.user_input("x", {3, 5, 4});
  Value* v = b.call("aten.view.default", {{"self", w}, {"size", IntList{{3, 4, 4}}}}, {3, 4, 4});
  b.user_output(bmm(b, x, v, {3, 5, 4}));
  const std::string kept = the_one_kept_line(ep);
  EXPECT_EQ(kept, "bmm 'bmm' kept: mat2 'view' holds a different slice of weight 'p_w' per batch");
}

// permute(w [6, 4], [1, 0]) viewed as [1, 6, 4]: a view that would copy
// (the transposed rows are not contiguous), so no element map exists.
TEST(BmmToLinear, AViewThatWouldCopyIsKept_NEG) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* w = b.parameter("w", {6, 4});
  Value* x = b.user_input("x", {1, 5, 6});
  Value* t = b.call("aten.permute.default", {{"self", w}, {"dims", IntList{{1, 0}}}}, {4, 6});
  Value* v = b.call("aten.view.default", {{"self", t}, {"size", IntList{{1, 6, 4}}}}, {1, 6, 4});
  b.user_output(bmm(b, x, v, {1, 5, 4}));
  const std::string kept = the_one_kept_line(ep);
  EXPECT_EQ(kept, "bmm 'bmm' kept: mat2 'view' is reached from weight 'p_w' through aten.view.default 'view', which "
                       "this pass cannot replay as a view of the weight");
}

// A matrix computed from the weight by arithmetic is not a layout of it.
TEST(BmmToLinear, ArithmeticOnTheWeightIsKept_NEG) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* w = b.parameter("w", {6, 4});
  Value* x = b.user_input("x", {1, 5, 4});
  Value* t = b.call("aten.permute.default", {{"self", w}, {"dims", IntList{{1, 0}}}}, {4, 6});
  Value* m = b.call("aten.mul.Tensor", {{"self", t}, {"other", 2.0}}, {4, 6});
  Value* u = b.call("aten.unsqueeze.default", {{"self", m}, {"dim", int64_t{0}}}, {1, 4, 6});
  b.user_output(bmm(b, x, u, {1, 5, 6}));
  const std::string kept = the_one_kept_line(ep);
  EXPECT_NE(kept.find("bmm 'bmm' kept: mat2 'unsqueeze' rests on 'mul', which"), std::string::npos) << kept;
}

}  // namespace
}  // namespace lathe
