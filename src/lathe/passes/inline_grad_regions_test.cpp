#include "lathe/passes/inline_grad_regions.h"

#include <gtest/gtest.h>

#include "lathe/ir/program_test_support.h"
#include "lathe/passes/pass_test_support.h"

namespace lathe {
namespace {

using testing::PassRun;
using testing::run_pass;

std::unique_ptr<Pass> inliner() { return std::make_unique<InlineGradRegions>(); }

// A region body: f(p, q) = unsqueeze(p, 0) * q, as the rotary embedding of
// a transformers decoder computes its tables inside torch.no_grad().
std::shared_ptr<Graph> body(bool list_output = false) {
  auto g = std::make_shared<Graph>();
  GraphBuilder b(*g);
  Value* p = b.input("p", GraphBuilder::tensor_meta({3}));
  Value* q = b.input("q", GraphBuilder::tensor_meta({2, 3}));
  Value* u = b.call("aten.unsqueeze.default", {{"self", p}, {"dim", int64_t{0}}}, {1, 3});
  Value* f = b.call("aten.mul.Tensor", {{"self", u}, {"other", q}}, {2, 3});
  if (list_output) {
    auto parts = b.call_list("aten.split.Tensor", {{"self", f}, {"split_size", int64_t{1}}},
                             {GraphBuilder::tensor_meta({1, 3}), GraphBuilder::tensor_meta({1, 3})});
    b.output(parts[0]);
  } else {
    b.output(f);
  }
  return g;
}

class InlineGradRegionsTest : public testing::ProgramTest {
 protected:
  // out = region(body)(x, w) + 1
  void build(const std::string& target, std::vector<GraphBuilder::Arg> head, std::shared_ptr<Graph> g,
             std::vector<int64_t> out_sizes = {2, 3}) {
    Value* x = b.user_input("x", {3});
    Value* w = b.parameter("w", {2, 3});
    head.push_back({"", Argument(GraphArg{"submod_1", std::move(g)})});
    head.push_back({"", x});
    head.push_back({"", w});
    Value* r = b.call(target, head, out_sizes);
    b.user_output(b.call("aten.add.Tensor", {{"self", r}, {"other", int64_t{1}}}, out_sizes));
  }
};

TEST_F(InlineGradRegionsTest, NoGradBodyMovesIntoTheGraph) {
  build("higher_order.wrap_with_set_grad_enabled", {{"", Argument(false)}}, body());
  PassRun r = testing::expect_nodes_after(ep, inliner(),
      "nodes:\n"
      "  %unsqueeze: f32[1, 3] = aten.unsqueeze.default(%x, 0)\n"
      "  %mul: f32[2, 3] = aten.mul.Tensor(%unsqueeze, %p_w)\n"
      "  %add: f32[2, 3] = aten.add.Tensor(%mul, 1)\n"
      "outputs:\n"
      "  %add  user_output\n");
  EXPECT_EQ(r.rewritten.size(), 1u);
}

TEST_F(InlineGradRegionsTest, DisabledAutocastBodyMovesIntoTheGraph) {
  build("higher_order.wrap_with_autocast",
        {{"", Argument(std::string("cpu"))}, {"", Argument()}, {"", Argument(false)}, {"", Argument()}}, body());
  PassRun r = run_pass(ep, inliner());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(r.changed);
  for (const Node* n : ep.graph().nodes()) EXPECT_NE(n->op_name(), "higher_order.wrap_with_autocast");
}

TEST_F(InlineGradRegionsTest, EnabledAutocastRegionIsKept_NEG) {
  build("higher_order.wrap_with_autocast",
        {{"", Argument(std::string("cpu"))}, {"", Argument()}, {"", Argument(true)}, {"", Argument()}}, body());
  PassRun r = testing::expect_unchanged(ep, inliner());
  ASSERT_EQ(r.kept.size(), 1u);
  EXPECT_NE(r.kept[0].find("enabled autocast region"), std::string::npos) << r.kept[0];
}

TEST_F(InlineGradRegionsTest, BodyWithAListOutputIsKept_NEG) {
  build("higher_order.wrap_with_set_grad_enabled", {{"", Argument(false)}}, body(/*list_output=*/true), {1, 3});
  PassRun r = testing::expect_unchanged(ep, inliner());
  ASSERT_EQ(r.kept.size(), 1u);
  EXPECT_NE(r.kept[0].find("not one tensor"), std::string::npos) << r.kept[0];
}

}  // namespace
}  // namespace lathe
