#include "lathe/ir/op_catalogue.h"

#include <gtest/gtest.h>

#include "lathe/ir/graph_builder.h"
#include "lathe/ir/literal_args.h"

namespace lathe {
namespace {

// `predicate` holds for every target in `yes` and for none in `no`.
void expect_sorted(bool (*predicate)(std::string_view), std::initializer_list<const char*> yes,
                   std::initializer_list<const char*> no) {
  for (const char* op : yes) EXPECT_TRUE(predicate(op)) << op;
  for (const char* op : no) EXPECT_FALSE(predicate(op)) << op;
}

TEST(OpCatalogueTest, Spelling) {
  EXPECT_EQ(ops::strip_torch_ops("torch.ops.aten.addmm.default"), "aten.addmm.default");
  EXPECT_EQ(ops::strip_torch_ops("aten.addmm.default"), "aten.addmm.default");
  EXPECT_EQ(ops::strip_torch_ops("_operator.mul"), "_operator.mul");
  EXPECT_EQ(ops::full_target("aten.mm.default"), "torch.ops.aten.mm.default");
  EXPECT_EQ(ops::full_target("torch.ops.aten.mm.default"), "torch.ops.aten.mm.default");
  for (const char* python : {"_operator.add", "math.ceil", "builtins.getattr", "torch.sym_max"}) {
    EXPECT_EQ(ops::full_target(python), python);
  }
  const ops::TargetParts add = ops::split_target("torch.ops.aten.add.Tensor");
  EXPECT_EQ(add.ns, "aten");
  EXPECT_EQ(add.name, "add");
  EXPECT_EQ(add.overload, "Tensor");
  const ops::TargetParts mul = ops::split_target("_operator.mul");
  EXPECT_EQ(mul.ns, "_operator");
  EXPECT_EQ(mul.name, "mul");
  EXPECT_EQ(mul.overload, "");
  EXPECT_EQ(ops::aten_op_name("torch.ops.aten.view.default"), "view");
  EXPECT_EQ(ops::aten_op_name("aten.view.default"), "");  // a node's target is always prefixed
  EXPECT_EQ(ops::aten_op_name("torch.ops.my_ops.view.default"), "");
}

TEST(OpCatalogueTest, InternedOpsAreTheNodesTargets) {
  Graph g;
  GraphBuilder b(g);
  Value* x = b.input("x", GraphBuilder::tensor_meta({2, 3}));
  b.call("aten.t.default", {{"self", x}}, {3, 2});
  EXPECT_TRUE(b.last_node()->op_target() == ops::aten::t);
  EXPECT_FALSE(b.last_node()->op_target() == ops::aten::t_copy);
  EXPECT_EQ(ops::op_name(ops::aten::add_Tensor), "aten.add.Tensor");
  EXPECT_EQ(ops::op_name(ops::higher_order::cond), "higher_order.cond");
  // The predicates on interned ops compare pointers.
  EXPECT_TRUE(ops::is_reshape(ops::aten::flatten_using_ints));
  EXPECT_FALSE(ops::is_reshape(ops::aten::permute));
  EXPECT_TRUE(ops::is_batch_norm(ops::aten::_native_batch_norm_legit_no_training));
  EXPECT_FALSE(ops::is_batch_norm(ops::aten::layer_norm));
  // Every aten entry is spelled as its variable says: the name, then the
  // overload unless it is "default".
  for (OpTarget op : {ops::aten::squeeze_dim, ops::aten::slice_Tensor, ops::aten::mean_dim, ops::aten::_softmax,
                      ops::aten::flatten_using_ints, ops::aten::transpose_int}) {
    const ops::TargetParts parts = ops::split_target(op.str());
    EXPECT_EQ(parts.ns, "aten") << op.str();
    EXPECT_FALSE(parts.overload.empty()) << op.str();
  }
}

TEST(OpCatalogueTest, WhatCountsAsLayoutOnly) {
  expect_sorted(ops::is_layout_only,
                {"torch.ops.aten.permute_copy.default", "torch.ops.aten.expand.default",
                 "torch.ops.aten.lift_fresh_copy.default"},
                {"torch.ops.aten.mm.default", "torch.ops.aten.index_copy.default", "my_ops.view.default"});
}

TEST(OpCatalogueTest, WhatCountsAsAPermutation) {
  Graph g;
  GraphBuilder b(g);
  Value* x = b.input("x", GraphBuilder::tensor_meta({2, 3, 4}));
  b.call("aten.transpose.int", {{"self", x}, {"dim0", int64_t{-1}}, {"dim1", int64_t{1}}}, {2, 4, 3});
  Node* tr = b.last_node();
  b.call("aten.permute.default", {{"self", x}, {"dims", IntList{{-1, 0, 1}}}}, {4, 2, 3});
  Node* pm = b.last_node();
  b.call("aten.permute.default", {{"self", x}, {"dims", IntList{{0, 0, 1}}}}, {2, 2, 3});
  Node* bad = b.last_node();
  b.call("aten.relu.default", {{"self", x}}, {2, 3, 4});
  Node* relu = b.last_node();
  EXPECT_EQ(ops::permutation_of(*tr), (std::vector<int64_t>{0, 2, 1}));
  EXPECT_EQ(ops::permutation_of(*pm), (std::vector<int64_t>{2, 0, 1}));
  EXPECT_EQ(ops::permutation_of(*bad), std::nullopt);
  EXPECT_EQ(ops::permutation_of(*relu), std::nullopt);
  EXPECT_TRUE(ops::is_transpose_or_permute(ops::aten::permute_copy));
  EXPECT_FALSE(ops::is_transpose_or_permute(ops::aten::transpose_int));
}

TEST(OpCatalogueTest, WhatCountsAsEffectFree) {
  // Not: in place, out=, asserts, constraints, prints, randomness, and
  // anything Lathe does not know (kept even when unused).
  expect_sorted(ops::is_effect_free,
                {"torch.ops.aten.t.default", "torch.ops.aten.permute_copy.default", "torch.ops.aten.sym_size.int",
                 "torch.ops.quantized_decomposed.quantize_per_tensor.default", "torch.ops.aten.__and__.Tensor"},
                {"torch.ops.aten.copy_.default", "torch.ops.aten.add_.Tensor", "torch.ops.aten.mm.out",
                 "torch.ops.aten._index_put_impl_.default",
                 "torch.ops.aten.max.dim_max_out", "torch.ops.aten._assert_async.msg",
                 "torch.ops.aten._assert_scalar.default", "torch.ops.aten.sym_constrain_range.default",
                 "torch.ops.aten._print.default", "torch.ops.aten.rand.default", "torch.ops.higher_order.cond",
                 "torch.ops.my_ops.custom.default", "_operator.getitem", "builtins.print"});
  expect_sorted(ops::is_allocation, {"torch.ops.aten.empty_like.default"}, {"torch.ops.aten.zeros_like.default"});
}

TEST(OpCatalogueTest, WhatCountsAsQuantize) {
  expect_sorted(ops::is_quantize,
                {"torch.ops.quantized_decomposed.dequantize_per_channel.default",
                 "torch.ops.quantized_decomposed.quantize_per_tensor.tensor2",
                 "torch.ops.torchao.dequantize_affine.default"},
                {"torch.ops.quantized_decomposed.choose_qparams.tensor", "torch.ops.aten.dequantize.self",
                 "torch.ops.torchao.choose_qparams_affine.default"});
  EXPECT_TRUE(ops::is_batch_norm(ops::aten::_native_batch_norm_legit_no_training));
  EXPECT_FALSE(ops::is_batch_norm(ops::aten::layer_norm));
}

TEST(LiteralArgsTest, LiteralsAndWhatIsNotOne_NEG) {
  Graph g;
  GraphBuilder b(g);
  Value* x = b.input("x", GraphBuilder::tensor_meta({2, 3, 4}));
  Value* s = b.call_sym_int("aten.sym_size.int", {{"self", x}, {"dim", int64_t{0}}}, SymDim(int64_t{2}));
  b.call("aten.fake.default",
         {{"self", x},
          {"i", int64_t{3}},
          {"b", true},
          {"f", 0.5},
          {"sym", SymIntArg{s}},
          {"lst", IntList{{1, 2}}},
          {"one", IntList{{7}}},
          {"syml", SymIntList{{SymIntArg{int64_t{4}}, SymIntArg{s}}}},
          {"none", Argument()},
          {"opt", OptionalTensor{nullptr}},
          {"str", std::string("tanh")}},
         {2, 3, 4});
  const Node& n = *b.last_node();
  EXPECT_EQ(tensor_input(n, "self"), x);
  EXPECT_EQ(tensor_input(n, "i"), nullptr);
  EXPECT_TRUE(is_none_input(n, "none"));
  EXPECT_TRUE(is_none_input(n, "opt"));
  EXPECT_TRUE(is_none_input(n, "absent"));
  EXPECT_FALSE(is_none_input(n, "self"));
  EXPECT_EQ(literal_int(n, "i"), 3);
  EXPECT_EQ(literal_int(n, "b"), 1);
  EXPECT_EQ(literal_int(n, "sym"), std::nullopt);  // a value, not a literal
  EXPECT_EQ(literal_int(n, "f"), std::nullopt);
  EXPECT_EQ(literal_int_or(n, "absent", 9), 9);
  EXPECT_EQ(literal_int_or(n, "sym", 9), std::nullopt);
  EXPECT_EQ(literal_number(n, "f"), 0.5);
  EXPECT_EQ(literal_number(n, "i"), 3.0);
  EXPECT_EQ(literal_bool(n, "b"), true);
  EXPECT_EQ(literal_bool(n, "i"), std::nullopt);
  ASSERT_NE(literal_string(n, "str"), nullptr);
  EXPECT_EQ(*literal_string(n, "str"), "tanh");
  EXPECT_EQ(literal_int_list(n, "lst"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(literal_int_list(n, "i"), (std::vector<int64_t>{3}));
  EXPECT_EQ(literal_int_list(n, "syml"), std::nullopt);
  EXPECT_EQ(literal_ints(n, "one", 3, {}), (std::vector<int64_t>{7, 7, 7}));
  EXPECT_EQ(literal_ints(n, "none", 2, {0, 0}), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(literal_ints(n, "lst", 3, {}), std::nullopt);
}

}  // namespace
}  // namespace lathe
