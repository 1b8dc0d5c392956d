#include "lathe/analysis/constness.h"

#include <gtest/gtest.h>

#include "lathe/ir/program_test_support.h"
#include "lathe/ir/graph_builder.h"
#include "lathe/ir/rewriter.h"

namespace lathe {
namespace {

// An int8 weight dequantized per tensor: dq(q8, 0.5, 0, -128, 127, int8).
Value* dq_per_tensor(GraphBuilder& b, Value* q8, std::vector<int64_t> sizes) {
  return b.call("quantized_decomposed.dequantize_per_tensor.default",
                {{"input", q8}, {"scale", 0.5}, {"zero_point", int64_t{0}}, {"quant_min", int64_t{-128}},
                 {"quant_max", int64_t{127}}, {"dtype", ScalarTypeArg{DType::Int8}}},
                sizes);
}

Value* dq_per_channel(GraphBuilder& b, Value* q8, Value* scales, Value* zeros, std::vector<int64_t> sizes) {
  return b.call("quantized_decomposed.dequantize_per_channel.default",
                {{"input", q8}, {"scales", scales}, {"zero_points", zeros}, {"axis", int64_t{0}},
                 {"quant_min", int64_t{-128}}, {"quant_max", int64_t{127}}, {"dtype", ScalarTypeArg{DType::Int8}}},
                sizes);
}

class ConstnessTest : public testing::ProgramTest {};

TEST_F(ConstnessTest, OriginsFollowTheSignature) {
  Value* w = b.parameter("w", {2});
  Value* stat = b.buffer("stat", {2});
  Value* rm = b.buffer("running_mean", {2});
  Value* scratch = b.buffer("scratch", {2}, /*persistent=*/false);
  Value* c = b.constant("lifted_tensor_0", {2});
  Value* x = b.user_input("x", {2});
  Value* y = b.call("aten.add.Tensor", {{"self", x}, {"other", rm}}, {2}, DType::Float32, "new_mean");
  b.buffer_mutation(y, "running_mean");
  b.user_output(y);
  Constness k(ep);
  EXPECT_EQ(k.origin(w), Origin::Parameter);
  EXPECT_EQ(k.origin(stat), Origin::ConstantBuffer);
  EXPECT_EQ(k.origin(scratch), Origin::ConstantBuffer);
  EXPECT_EQ(k.origin(rm), Origin::MutableBuffer);
  EXPECT_EQ(k.origin(c), Origin::LiftedConstant);
  EXPECT_EQ(k.origin(x), Origin::UserInput);
  EXPECT_EQ(k.origin(y), Origin::Computed);
  for (Value* v : {w, stat, scratch, c}) EXPECT_TRUE(k.is_compile_time_constant(v)) << v->name();
  for (Value* v : {rm, x, y}) EXPECT_FALSE(k.is_compile_time_constant(v)) << v->name();
  EXPECT_EQ(k.explain(w), "");
  EXPECT_EQ(k.explain(x), "is user input 'x'");
  EXPECT_EQ(k.explain(rm), "reads mutable buffer 'running_mean'");
  EXPECT_EQ(k.explain(y), "is computed at run time by 'new_mean'");
  EXPECT_EQ(k.describe(w), "parameter 'w'");
  EXPECT_EQ(k.describe(c), "lifted constant 'lifted_tensor_0'");
  EXPECT_EQ(origin_name(Origin::MutableBuffer), "mutable_buffer");
}

// Constness keeps the inputs' origins in a table by position, read once.
// Inputs added and removed while it is alive shift every later position:
// each placeholder must still be classified from its own spec, before and
// after the table is redone (enough lookups after a change trigger that).
TEST_F(ConstnessTest, InputsAddedAndRemovedLaterAreClassifiedByTheirOwnSpec) {
  std::vector<Value*> params;
  for (int i = 0; i < 40; ++i) params.push_back(b.parameter("w" + std::to_string(i), {2}));
  Value* x = b.user_input("x", {2});
  b.user_output(b.call("aten.add.Tensor", {{"self", x}, {"other", params[0]}}, {2}));
  Constness k(ep);
  EXPECT_EQ(k.origin(params[39]), Origin::Parameter);  // the table is made here
  EXPECT_EQ(k.origin(x), Origin::UserInput);

  Rewriter rw(ep);
  Tensor t = Tensor::empty(DType::Float32, {2});
  // A lifted constant goes after the parameters: x moves one place on.
  Result<Value*> c = rw.add_constant("c0", t);
  ASSERT_TRUE(c.ok()) << c.error().message();
  // Many lookups: the first are answered from the specs, then the table is
  // redone; either way every answer must be right.
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(k.origin(x), Origin::UserInput);
    EXPECT_EQ(k.origin(*c), Origin::LiftedConstant);
    for (Value* p : params) ASSERT_EQ(k.origin(p), Origin::Parameter) << p->name();
  }
  // Removing an unused parameter moves everything after it back a place.
  ASSERT_TRUE(rw.remove_input(params[39]).ok());
  EXPECT_EQ(k.origin(x), Origin::UserInput);
  EXPECT_EQ(k.origin(*c), Origin::LiftedConstant);
  EXPECT_EQ(k.origin(params[38]), Origin::Parameter);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(k.origin(x), Origin::UserInput);
  EXPECT_TRUE(k.is_compile_time_constant(*c));
  EXPECT_FALSE(k.is_compile_time_constant(x));
}

TEST_F(ConstnessTest, BufferSharingStorageWithAMutatedBuffer_NEG) {
  Value* table = b.buffer("pos_table", {4});
  Value* tail = b.buffer("pos_tail", {4});
  Value* other = b.buffer("other", {4});
  ep.buffers.set("pos_tail", *ep.buffers.find("pos_table"));  // a view of the same storage
  Value* x = b.user_input("x", {4});
  Value* y = b.call("aten.add.Tensor", {{"self", x}, {"other", table}}, {4});
  b.buffer_mutation(y, "pos_table");
  b.user_output(b.call("aten.add.Tensor", {{"self", tail}, {"other", other}}, {4}));
  Constness k(ep);
  EXPECT_EQ(k.origin(tail), Origin::MutableBuffer);
  EXPECT_FALSE(k.is_compile_time_constant(tail));
  EXPECT_EQ(k.explain(tail), "reads buffer 'pos_tail', which shares storage with mutable buffer 'pos_table'");
  EXPECT_TRUE(k.is_compile_time_constant(other));
}

TEST_F(ConstnessTest, MutatedParameter_NEG) {
  Value* w = b.parameter("w", {2});
  Value* x = b.user_input("x", {2});
  Value* y = b.call("aten.add.Tensor", {{"self", x}, {"other", w}}, {2});
  b.user_output(y);
  ASSERT_TRUE(Rewriter(ep).add_output(y, OutputSpec{OutputKind::ParameterMutation, "w"}).ok());
  Constness k(ep);
  EXPECT_EQ(k.origin(w), Origin::Parameter);
  EXPECT_FALSE(k.is_compile_time_constant(w));
  EXPECT_EQ(k.explain(w), "reads parameter 'w', which the program mutates");
}

TEST_F(ConstnessTest, DequantizedConstantsAreConstantWeights) {
  Value* q8 = b.parameter("w_int8", {4, 2}, DType::Int8);
  Value* scales = b.constant("scales", {4});
  Value* zeros = b.constant("zeros", {4}, DType::Int64);
  Value* fw = b.parameter("w", {4, 2});
  Value* g4 = b.parameter("w_int4", {4, 2}, DType::Int8);
  Value* x = b.user_input("x", {4, 2});
  Value* per_tensor = dq_per_tensor(b, q8, {4, 2});
  Value* per_channel = dq_per_channel(b, q8, scales, zeros, {4, 2});
  Value* group = b.call("quantized_decomposed.dequantize_per_channel_group.default",
                        {{"input", g4}, {"scales", scales}, {"zero_points", zeros}, {"quant_min", int64_t{-8}},
                         {"quant_max", int64_t{7}}, {"dtype", ScalarTypeArg{DType::Int8}}, {"group_size", int64_t{2}},
                         {"output_dtype", ScalarTypeArg{DType::Float32}}},
                        {4, 2});
  Value* q = b.call("quantized_decomposed.quantize_per_tensor.default",
                    {{"input", fw}, {"scale", 0.5}, {"zero_point", int64_t{0}}, {"quant_min", int64_t{-128}},
                     {"quant_max", int64_t{127}}, {"dtype", ScalarTypeArg{DType::Int8}}},
                    {4, 2}, DType::Int8);
  Value* dq_q = dq_per_tensor(b, q, {4, 2});
  Value* dq_x = dq_per_tensor(b, x, {4, 2});
  Value* runtime_scales = b.call("aten.abs.default", {{"self", x}}, {4});
  Value* dq_runtime_scales = dq_per_channel(b, q8, runtime_scales, zeros, {4, 2});
  Value* t = b.call("aten.t.default", {{"self", fw}}, {2, 4});
  b.user_output(t);
  Constness k(ep);
  for (Value* v : {per_tensor, per_channel, group, q, dq_q}) {
    EXPECT_TRUE(k.is_constant_weight(v)) << v->name() << ": " << k.explain(v);
    EXPECT_FALSE(k.is_compile_time_constant(v)) << v->name();  // the weight rule only
    EXPECT_EQ(k.origin(v), Origin::Computed);
  }
  EXPECT_EQ(k.describe(per_channel), "'dequantize_per_channel' (dequantize_per_channel of constants)");
  EXPECT_FALSE(k.is_constant_weight(dq_x));
  EXPECT_EQ(k.explain(dq_x), "is computed at run time by 'dequantize_per_tensor_2': its input 'x' is user input 'x'");
  EXPECT_FALSE(k.is_constant_weight(dq_runtime_scales));
  EXPECT_EQ(k.explain(dq_runtime_scales),
            "is computed at run time by 'dequantize_per_channel_1': its input 'abs' is computed at run time by 'abs'");
  // Only q/dq pass constness through: a transpose of a parameter is computed.
  EXPECT_FALSE(k.is_constant_weight(t));
}

TEST_F(ConstnessTest, BareGraphPlaceholdersAreNeverConstant_NEG) {
  Graph g;
  GraphBuilder b(g);
  Value* w = b.input("w", GraphBuilder::tensor_meta({2, 2}));
  Value* d = dq_per_tensor(b, w, {2, 2});
  b.output(d);
  Constness k(g);
  EXPECT_FALSE(k.has_program());
  EXPECT_EQ(k.origin(w), Origin::Unknown);
  EXPECT_FALSE(k.is_constant_weight(w));
  EXPECT_FALSE(k.is_constant_weight(d));
  EXPECT_EQ(k.explain(w), "is graph input 'w', which cannot be classified without a program");
}

}  // namespace
}  // namespace lathe
