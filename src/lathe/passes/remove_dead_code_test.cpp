#include "lathe/passes/remove_dead_code.h"

#include <gtest/gtest.h>

#include "lathe/ir/graph_assembler.h"
#include "lathe/ir/graph_builder.h"
#include "lathe/ir/printer.h"
#include "lathe/passes/pass_manager.h"

namespace lathe {
namespace {

bool run_dce(ExportedProgram& ep) {
  PassManager pm(PassManagerOptions{.verify_each = true});
  pm.add(std::make_unique<RemoveDeadCode>());
  PassContext ctx;
  Result<bool> r = pm.run(ep, "forward", ctx);
  EXPECT_TRUE(r.ok()) << r.error().message();
  return r.ok() && *r;
}

TEST(RemoveDeadCodeTest, DropsADeadPureChainButKeepsInputs) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* w = b.parameter("w", {3, 3});
  Value* unused = b.parameter("unused", {3});
  Value* x = b.user_input("x", {3, 3});
  Value* t = b.call("aten.t.default", {{"self", w}}, {3, 3});
  Value* r = b.call("aten.relu.default", {{"self", t}}, {3, 3});
  b.call("quantized_decomposed.dequantize_per_tensor.default",
         {{"input", r}, {"scale", 0.5}, {"zero_point", int64_t{0}}, {"quant_min", int64_t{-128}},
          {"quant_max", int64_t{127}}, {"dtype", ScalarTypeArg{DType::Int8}}},
         {3, 3});
  b.user_output(b.call("aten.neg.default", {{"self", x}}, {3, 3}));
  EXPECT_TRUE(run_dce(ep));
  EXPECT_EQ(ep.graph().node_count(), 1u);
  EXPECT_EQ(ep.graph().placeholders().size(), 3u);  // inputs are the calling convention
  EXPECT_TRUE(ep.parameters.contains("unused"));
  (void)unused;
  EXPECT_FALSE(run_dce(ep));  // nothing left to do
}

TEST(RemoveDeadCodeTest, KeepsMutationOutputsAndSideEffects_NEG) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* buf = b.buffer("count", {1});
  Value* x = b.user_input("x", {1});
  // Read only by a buffer_mutation output: a use like any other.
  b.buffer_mutation(b.call("aten.add.Tensor", {{"self", buf}, {"other", int64_t{1}}}, {1}), "count");
  b.call("aten.copy_.default", {{"self", x}, {"src", buf}}, {1});
  b.call("aten.add_.Tensor", {{"self", x}, {"other", buf}}, {1});
  b.call("aten.add.out", {{"self", x}, {"other", buf}, {"out", x}}, {1});
  b.call("aten._assert_scalar.default", {{"self", x}, {"assert_msg", std::string("x")}}, {1});
  b.call("aten.bernoulli.default", {{"self", x}}, {1});
  b.call("aten.native_dropout.default", {{"input", x}, {"p", 0.5}, {"train", true}}, {1});
  b.call("my_ops.custom.default", {{"self", x}}, {1});
  b.call("torch.ops.higher_order.with_effects", {{"token", x}}, {1});
  b.call("_operator.add", {{"a", x}, {"b", x}}, {1});
  // A node defining nothing exists for its effect.
  GraphAssembler(b.graph()).create_node("torch.ops.aten._assert_async.msg", {NamedArgument{"self", TensorRef{x}, ArgKind::Positional}});
  b.user_output(x);
  std::string before = print_program(ep);
  EXPECT_FALSE(run_dce(ep));
  EXPECT_EQ(print_program(ep), before);
}

}  // namespace
}  // namespace lathe
