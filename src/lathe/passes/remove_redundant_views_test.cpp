#include "lathe/passes/remove_redundant_views.h"

#include <gtest/gtest.h>

#include "lathe/ir/program_test_support.h"
#include "lathe/ir/printer.h"
#include "lathe/passes/pass_test_support.h"

namespace lathe {
namespace {

using testing::nodes_and_outputs;
using testing::op_histogram;
using testing::PassRun;
using testing::run_pass;

std::unique_ptr<Pass> views() { return std::make_unique<RemoveRedundantViews>(); }

Value* permute(GraphBuilder& b, Value* x, std::vector<int64_t> dims) {
  auto in = x->meta()->concrete_sizes().value();
  std::vector<int64_t> out;
  for (int64_t d : dims) out.push_back(in[d < 0 ? d + static_cast<int64_t>(in.size()) : d]);
  return b.call("aten.permute.default", {{"self", x}, {"dims", IntList{dims}}}, out);
}

class RemoveRedundantViewsTest : public testing::ProgramTest {};

TEST_F(RemoveRedundantViewsTest, CancellingPermutationsAndSameShapeViewsGo) {
  Value* w = b.parameter("w", {3, 4});
  Value* x = b.user_input("x", {2, 3, 4});
  Value* tt = b.call("aten.t.default", {{"self", b.call("aten.t.default", {{"self", w}}, {4, 3})}}, {3, 4});
  Value* pp = permute(b, permute(b, x, {2, 0, 1}), {1, 2, 0});
  Value* tr = b.call("aten.transpose.int", {{"self", b.call("aten.transpose.int", {{"self", x}, {"dim0", int64_t{0}}, {"dim1", int64_t{2}}}, {4, 3, 2})},
                                            {"dim0", int64_t{-1}}, {"dim1", int64_t{0}}}, {2, 3, 4});
  Value* same = b.call("aten.view.default", {{"self", pp}, {"size", IntList{{2, 3, 4}}}}, {2, 3, 4});
  Value* ident = permute(b, tr, {0, 1, 2});
  Value* s = b.call("aten.add.Tensor", {{"self", same}, {"other", ident}}, {2, 3, 4});
  b.user_output(b.call("aten.add.Tensor", {{"self", s}, {"other", tt}}, {2, 3, 4}));
  PassRun r = testing::expect_nodes_after(ep, views(),
      "nodes:\n"
      "  %add: f32[2, 3, 4] = aten.add.Tensor(%x, %x)\n"
      "  %add_1: f32[2, 3, 4] = aten.add.Tensor(%add, %p_w)\n"
      "outputs:\n"
      "  %add_1  user_output\n");
  EXPECT_EQ(r.rewritten, (std::vector<std::string>{
                             "aten.t.default 't_1' removed: cancels 't'; its users read 'p_w'",
                             "aten.permute.default 'permute_1' removed: cancels 'permute'; its users read 'x'",
                             "aten.transpose.int 'transpose_1' removed: cancels 'transpose'; its users read 'x'",
                             "aten.view.default 'view' removed: a view to the same shape; its users read 'x'",
                             "aten.permute.default 'permute_2' removed: an identity permutation; its users read 'x'",
                         }));
}

TEST_F(RemoveRedundantViewsTest, ViewOfViewReadsTheBase) {
  Value* x = b.user_input("x", {2, 3, 4});
  Value* v1 = b.call("aten.view.default", {{"self", x}, {"size", IntList{{6, 4}}}}, {6, 4});
  Value* v2 = b.call("aten._unsafe_view.default", {{"self", v1}, {"size", IntList{{24}}}}, {24});
  Value* v3 = b.call("aten.view.default", {{"self", v2}, {"size", IntList{{4, 6}}}}, {4, 6});
  Value* r = b.call("aten.reshape.default", {{"self", v3}, {"size", IntList{{8, 3}}}}, {8, 3});
  b.user_output(b.call("aten.relu.default", {{"self", r}}, {8, 3}));
  PassRun run = testing::expect_nodes_after(ep, views(),
      "nodes:\n"
      "  %reshape: f32[8, 3] = aten.reshape.default(%x, [8, 3])\n"
      "  %relu: f32[8, 3] = aten.relu.default(%reshape)\n"
      "outputs:\n"
      "  %relu  user_output\n");
}

TEST_F(RemoveRedundantViewsTest, NonCancellingPermutesAndRealReshapesAreKept_NEG) {
  Value* x = b.user_input("x", {2, 3, 4});
  Value* y = b.user_input("y", {3, 3});
  b.user_output(permute(b, permute(b, x, {1, 2, 0}), {1, 2, 0}));  // a 3-cycle applied twice
  b.user_output(b.call("aten.t.default", {{"self", b.call("aten.relu.default", {{"self", y}}, {3, 3})}}, {3, 3}));
  b.user_output(b.call("aten.view.default", {{"self", x}, {"size", IntList{{6, 4}}}}, {6, 4}));
  // A reshape of a computed value is not a view chain.
  Value* r = b.call("aten.relu.default", {{"self", x}}, {2, 3, 4});
  b.user_output(b.call("aten.view.default", {{"self", b.call("aten.mul.Tensor", {{"self", r}, {"other", 2.0}}, {2, 3, 4})},
                                             {"size", IntList{{24}}}},
                       {24}));
  PassRun run = testing::expect_unchanged(ep, views());
}

TEST_F(RemoveRedundantViewsTest, NeverReturnsAnInputItselfNorTouchesMutationOutputs_NEG) {
  Value* buf = b.buffer("state", {3, 3});
  Value* x = b.user_input("x", {3, 3});
  Value* tt = b.call("aten.t.default", {{"self", b.call("aten.t.default", {{"self", x}}, {3, 3})}}, {3, 3});
  b.user_output(tt);
  Value* bt = b.call("aten.t.default", {{"self", b.call("aten.t.default", {{"self", buf}}, {3, 3})}}, {3, 3});
  b.buffer_mutation(bt, "state");
  PassRun run = testing::expect_unchanged(ep, views());
  EXPECT_EQ(run.kept, (std::vector<std::string>{
                          "aten.t.default 't_1' kept: removing it would return program input 'x' itself",
                          "aten.t.default 't_3' kept: a mutation output reads it",
                      }));
}

}  // namespace
}  // namespace lathe
