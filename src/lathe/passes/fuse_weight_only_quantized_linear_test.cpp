#include "lathe/passes/fuse_weight_only_quantized_linear.h"

#include <gtest/gtest.h>

#include <map>

#include "lathe/ir/program_test_support.h"
#include "lathe/ir/graph_builder.h"
#include "lathe/ir/verify.h"
#include "lathe/passes/addmm_mm_to_linear.h"
#include "lathe/passes/pass_manager.h"
#include "lathe/passes/remove_dead_code.h"

namespace lathe {
namespace {

constexpr int64_t N = 6, K = 8, M = 2;

std::map<std::string, int> op_counts(const Graph& g) {
  std::map<std::string, int> ops;
  for (const Node* n : g.nodes()) ops[GraphBuilder::op_base_name(n->target())]++;
  return ops;
}

// Runs `passes` (verify after each) and returns the explain lines of the fusion.
std::vector<std::string> run(ExportedProgram& ep, bool linear_first = false, bool* changed = nullptr) {
  PassManagerOptions options;
  options.verify_each = true;
  PassManager pm(options);
  if (linear_first) pm.add(std::make_unique<AddmmMmToLinear>());
  pm.add(std::make_unique<FuseWeightOnlyQuantizedLinear>());
  PassContext ctx;
  Result<bool> r = pm.run(ep, "forward", ctx);
  EXPECT_TRUE(r.ok()) << r.error().message();
  if (changed) *changed = r.ok() && *r;
  std::vector<std::string> lines;
  for (const auto& rec : ctx.records())
    if (rec.pass == FuseWeightOnlyQuantizedLinear::kName) lines.push_back(rec.message);
  return lines;
}

// A zero-filled stored tensor (GraphBuilder fills state with non-zero values).
void zero_state(ExportedProgram& ep, const std::string& buffer, DType dtype, std::vector<int64_t> sizes) {
  ep.buffers.set(buffer, Tensor::empty(dtype, std::move(sizes)));
}

struct Quantized {
  Value* q;
  Value* scales;
  Value* zeros;  // may be nullptr (None)
};

// int8 per-channel weight [N, K] as buffers fc.weight_int8 / _scales / _zero_points (zeros 0).
Quantized int8_buffers(GraphBuilder& b, bool with_zeros = true) {
  Quantized w;
  w.q = b.buffer("fc.weight_int8", {N, K}, true, DType::Int8);
  w.scales = b.buffer("fc.weight_scales", {N});
  w.zeros = with_zeros ? b.buffer("fc.weight_zero_points", {N}, true, DType::Int64) : nullptr;
  if (with_zeros) zero_state(b.program(), "fc.weight_zero_points", DType::Int64, {N});
  return w;
}

Value* dq_channel(GraphBuilder& b, const Quantized& w, int64_t axis = 0, int64_t qmin = -128, int64_t qmax = 127) {
  return b.call("quantized_decomposed.dequantize_per_channel.default",
                {{"input", w.q}, {"scales", w.scales}, {"zero_points", w.zeros ? Argument(TensorRef{w.zeros}) : Argument()},
                 {"axis", axis}, {"quant_min", qmin}, {"quant_max", qmax}, {"dtype", ScalarTypeArg{DType::Int8}}},
                {N, K});
}

Value* dq_group(GraphBuilder& b, const Quantized& w, int64_t group) {
  return b.call("quantized_decomposed.dequantize_per_channel_group.default",
                {{"input", w.q}, {"scales", w.scales}, {"zero_points", w.zeros ? Argument(TensorRef{w.zeros}) : Argument()},
                 {"quant_min", int64_t{-8}}, {"quant_max", int64_t{7}}, {"dtype", ScalarTypeArg{DType::Int8}},
                 {"group_size", group}, {"output_dtype", ScalarTypeArg{DType::Float32}}},
                {N, K});
}

Value* linear(GraphBuilder& b, Value* x, Value* w, Value* bias) {
  std::vector<GraphBuilder::Arg> args = {{"input", x}, {"weight", w}};
  if (bias) args.push_back({"bias", bias});
  return b.call("aten.linear.default", std::move(args), {M, N}, DType::Float32, "linear");
}

const Node* producer_of_output(const ExportedProgram& ep, size_t i = 0) {
  const Argument& out = ep.graph().outputs()[i];
  return out.tensor()->producer();
}

class FuseWeightOnlyQuantizedLinearTest : public testing::ProgramTest {};

TEST_F(FuseWeightOnlyQuantizedLinearTest, Int8WithBiasBecomesInt8PackMmPlusAdd) {
  Value* bias = b.parameter("fc.bias", {N});
  Quantized w = int8_buffers(b);
  Value* x = b.user_input("x", {M, K});
  b.user_output(linear(b, x, dq_channel(b, w), bias));

  bool changed = false;
  auto lines = run(ep, false, &changed);
  EXPECT_TRUE(changed);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "linear 'linear' rewritten to _weight_int8pack_mm + add (int8 weight 'b_fc_weight_int8' is constant buffer "
            "'fc.weight_int8')");
  auto ops = op_counts(ep.graph());
  EXPECT_EQ(ops["_weight_int8pack_mm"], 1);
  EXPECT_EQ(ops["add"], 1);
  EXPECT_EQ(ops["dequantize_per_channel"], 0);
  EXPECT_EQ(ops["linear"], 0);
  // The linear became the add in place: the output keeps its name.
  const Node* add = producer_of_output(ep);
  EXPECT_EQ(add->target(), "torch.ops.aten.add.Tensor");
  EXPECT_EQ(add->output()->name(), "linear");
  const Node* mm = add->input("self")->tensor()->producer();
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->target(), "torch.ops.aten._weight_int8pack_mm.default");
  EXPECT_EQ(mm->input("self")->tensor(), x);
  EXPECT_EQ(mm->input("mat2")->tensor(), w.q);
  EXPECT_EQ(mm->input("scales")->tensor(), w.scales);
  EXPECT_EQ(add->input("other")->tensor(), bias);
  EXPECT_TRUE(verify(ep, "forward").ok());
}

TEST_F(FuseWeightOnlyQuantizedLinearTest, Int8WithoutBiasOrZeroPointsIsTheMatmulItself) {
  Quantized w = int8_buffers(b, /*with_zeros=*/false);
  Value* x = b.user_input("x", {M, K});
  b.user_output(linear(b, x, dq_channel(b, w), nullptr));
  auto lines = run(ep);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("linear 'linear' rewritten to _weight_int8pack_mm (", 0), 0u) << lines[0];
  const Node* mm = producer_of_output(ep);
  EXPECT_EQ(mm->target(), "torch.ops.aten._weight_int8pack_mm.default");
  EXPECT_EQ(mm->output()->name(), "linear");
  EXPECT_EQ(ep.graph().node_count(), 1u);
}

TEST_F(FuseWeightOnlyQuantizedLinearTest, Int4GroupwiseBecomesTheLatheGroupOp) {
  Value* bias = b.parameter("fc.bias", {N});
  Quantized w;
  w.q = b.buffer("fc.weight_int8", {N, K}, true, DType::Int8);
  w.scales = b.buffer("fc.weight_scales", {N, K / 4});
  w.zeros = b.buffer("fc.weight_zero_points", {N, K / 4}, true, DType::Int32);
  zero_state(ep, "fc.weight_zero_points", DType::Int32, {N, K / 4});
  Value* x = b.user_input("x", {M, K});
  b.user_output(linear(b, x, dq_group(b, w, 4), bias));
  auto lines = run(ep);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("linear 'linear' rewritten to lathe.weight_int4_group_mm + add (4-bit groupwise weight", 0), 0u)
      << lines[0];
  const Node* mm = producer_of_output(ep)->input("self")->tensor()->producer();
  EXPECT_EQ(mm->target(), "torch.ops.lathe.weight_int4_group_mm.default");
  ASSERT_NE(mm->input("group_size"), nullptr);
  EXPECT_EQ(mm->input("group_size")->as<int64_t>(), 4);
  EXPECT_EQ(op_counts(ep.graph())["dequantize_per_channel_group"], 0);
}

// torchao's IntxWeightOnlyConfig(int4, PerGroup(g)) export: dequantize_affine
// of 4-bit values in int8 with block [1, g], then linear on a 3-D input.
Value* dq_affine(GraphBuilder& b, const Quantized& w, int64_t group, int64_t qmin = -8, int64_t qmax = 7) {
  return b.call("torchao.dequantize_affine.default",
                {{"input", w.q}, {"block_size", IntList{{1, group}}}, {"scale", w.scales},
                 {"zero_point", w.zeros ? Argument(TensorRef{w.zeros}) : Argument()},
                 {"input_dtype", ScalarTypeArg{DType::Int8}}, {"quant_min", qmin}, {"quant_max", qmax}},
                {N, K});
}

Quantized affine_buffers(GraphBuilder& b, int64_t group) {
  Quantized w;
  w.q = b.buffer("fc.q", {N, K}, true, DType::Int8);
  w.scales = b.buffer("fc.scale", {N, K / group});
  w.zeros = b.buffer("fc.zero_point", {N, K / group}, true, DType::Int8);
  zero_state(b.program(), "fc.zero_point", DType::Int8, {N, K / group});
  return w;
}

TEST_F(FuseWeightOnlyQuantizedLinearTest, TorchaoInt4DequantizeAffineOnA3DInputIsFused) {
  Value* bias = b.parameter("fc.bias", {N});
  Quantized w = affine_buffers(b, 4);
  Value* x = b.user_input("x", {2, M, K});
  b.user_output(b.call("aten.linear.default", {{"input", x}, {"weight", dq_affine(b, w, 4)}, {"bias", bias}},
                       {2, M, N}, DType::Float32, "linear"));
  auto lines = run(ep);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("linear 'linear' rewritten to lathe.weight_int4_group_mm + add (4-bit groupwise weight", 0),
            0u)
      << lines[0];
  const Node* mm = producer_of_output(ep)->input("self")->tensor()->producer();
  EXPECT_EQ(mm->target(), "torch.ops.lathe.weight_int4_group_mm.default");
  EXPECT_EQ(mm->input("self")->tensor(), x);
  EXPECT_EQ(mm->input("scales")->tensor(), w.scales);
  EXPECT_EQ(mm->input("group_size")->as<int64_t>(), 4);
  EXPECT_EQ(op_counts(ep.graph())["dequantize_affine"], 0);
  EXPECT_TRUE(verify(ep, "forward").ok());
}

// The real pipeline: export gives addmm(b, x, t(dq(...))); addmm_mm_to_linear
// makes it a linear (dequantized constants are constant weights), the fusion
// then reads the int8 weight, and the transpose left behind goes too.
TEST_F(FuseWeightOnlyQuantizedLinearTest, AfterAddmmMmToLinearEveryLinearIsFused) {
  Value* bias = b.parameter("fc.bias", {N});
  Quantized w = int8_buffers(b);
  Value* x = b.user_input("x", {M, K});
  Value* dq = dq_channel(b, w);
  Value* t = b.call("aten.t.default", {{"self", dq}}, {K, N});
  Value* a = b.call("aten.addmm.default", {{"self", bias}, {"mat1", x}, {"mat2", t}}, {M, N});
  Value* r = b.call("aten.relu.default", {{"self", x}}, {M, K});
  Value* t2 = b.call("aten.t.default", {{"self", dq_channel(b, w)}}, {K, N});
  b.user_output(a);
  b.user_output(b.call("aten.mm.default", {{"self", r}, {"mat2", t2}}, {M, N}));
  auto lines = run(ep, /*linear_first=*/true);
  EXPECT_EQ(lines.size(), 2u);
  auto ops = op_counts(ep.graph());
  EXPECT_EQ(ops["_weight_int8pack_mm"], 2);
  EXPECT_EQ(ops["dequantize_per_channel"], 0);
  EXPECT_EQ(ops["t"], 0);
  EXPECT_EQ(ops["linear"], 0);
  EXPECT_EQ(ops["add"], 1);
  EXPECT_TRUE(verify(ep, "forward").ok());
}

// ---- refusals ------------------------------------------------------------------------------

std::string only_line(ExportedProgram& ep) {
  bool changed = true;
  auto lines = run(ep, false, &changed);
  EXPECT_FALSE(changed);
  EXPECT_EQ(lines.size(), 1u);
  return lines.empty() ? "" : lines[0];
}

TEST_F(FuseWeightOnlyQuantizedLinearTest, DequantizeOfARuntimeTensorIsKept_NEG) {
  Quantized w;
  w.scales = b.buffer("fc.weight_scales", {N});
  w.zeros = nullptr;
  w.q = b.user_input("q", {N, K}, DType::Int8);
  Value* x = b.user_input("x", {M, K});
  b.user_output(linear(b, x, dq_channel(b, w), nullptr));
  EXPECT_EQ(only_line(ep), "linear 'linear' kept: quantized weight 'q' is user input 'q'");
  EXPECT_EQ(op_counts(ep.graph())["dequantize_per_channel"], 1);
  EXPECT_EQ(op_counts(ep.graph())["linear"], 1);
}

TEST_F(FuseWeightOnlyQuantizedLinearTest, MutatedBufferInt8WeightIsKept_NEG) {
  Quantized w = int8_buffers(b);
  Value* x = b.user_input("x", {M, K});
  b.user_output(linear(b, x, dq_channel(b, w), nullptr));
  // The program writes a new int8 weight back every call.
  Value* next = b.call("aten.neg.default", {{"self", w.q}}, {N, K}, DType::Int8);
  b.buffer_mutation(next, "fc.weight_int8");
  ASSERT_TRUE(verify(ep, "forward").ok());
  EXPECT_EQ(only_line(ep), "linear 'linear' kept: quantized weight 'b_fc_weight_int8' reads mutable buffer 'fc.weight_int8'");
  EXPECT_EQ(op_counts(ep.graph())["_weight_int8pack_mm"], 0);
}

TEST_F(FuseWeightOnlyQuantizedLinearTest, AsymmetricZeroPointsAreKept_NEG) {
  Quantized w = int8_buffers(b);
  Tensor z = Tensor::empty(DType::Int64, {N});
  reinterpret_cast<int64_t*>(z.storage->mutable_data())[3] = -5;
  ep.buffers.set("fc.weight_zero_points", z);
  Value* x = b.user_input("x", {M, K});
  b.user_output(linear(b, x, dq_channel(b, w), nullptr));
  EXPECT_EQ(only_line(ep),
            "linear 'linear' kept: asymmetric weight: zero points 'b_fc_weight_zero_points' are not all 0 (entry 3 is "
            "-5); _weight_int8pack_mm has no zero point");
}

TEST_F(FuseWeightOnlyQuantizedLinearTest, DequantizeWithAnotherUserIsKept_NEG) {
  Quantized w = int8_buffers(b);
  Value* x = b.user_input("x", {M, K});
  Value* dq = dq_channel(b, w);
  b.user_output(linear(b, x, dq, nullptr));
  b.user_output(dq);  // the float weight is also an output
  EXPECT_EQ(only_line(ep),
            "linear 'linear' kept: dequantize 'dequantize_per_channel' has 1 other user(s); fusing would keep it and "
            "read the weight twice");
}

TEST_F(FuseWeightOnlyQuantizedLinearTest, OtherAxisOrRangeIsKept_NEG) {
  auto refusal = [](int64_t axis, int64_t qmin) {
    ExportedProgram ep;
    GraphBuilder b(ep);
    Quantized w = int8_buffers(b);
    Value* x = b.user_input("x", {M, K});
    b.user_output(linear(b, x, dq_channel(b, w, axis, qmin, 127), nullptr));
    return only_line(ep);
  };
  EXPECT_EQ(refusal(0, -127), "linear 'linear' kept: quant range is [-127, 127], not [-128, 127]");
  EXPECT_EQ(refusal(1, -128), "linear 'linear' kept: axis is 1, not 0 (output channels)");
}

TEST_F(FuseWeightOnlyQuantizedLinearTest, ThreeDimensionalInputIsKept_NEG) {
  Quantized w = int8_buffers(b);
  Value* x = b.user_input("x", {1, M, K});
  b.user_output(b.call("aten.linear.default", {{"input", x}, {"weight", dq_channel(b, w)}}, {1, M, N}));
  EXPECT_EQ(only_line(ep), "linear 'linear' kept: input 'x' is 3-D; _weight_int8pack_mm takes a 2-D input");
}

TEST_F(FuseWeightOnlyQuantizedLinearTest, Int8DequantizeAffineIsKept_NEG) {
  Quantized w = affine_buffers(b, K);
  Value* x = b.user_input("x", {M, K});
  b.user_output(linear(b, x, dq_affine(b, w, K, -128, 127), nullptr));
  EXPECT_EQ(only_line(ep),
            "linear 'linear' kept: quant range is [-128, 127], not [-8, 7] (int8 dequantize_affine weights are not "
            "fused; torchao's Int8WeightOnlyConfig exports mm * scale, see fuse_int8_weight_only_matmul)");
}

TEST_F(FuseWeightOnlyQuantizedLinearTest, PlainFloatLinearIsNotACandidate) {
  Value* w = b.parameter("fc.weight", {N, K});
  Value* x = b.user_input("x", {M, K});
  b.user_output(linear(b, x, w, nullptr));
  bool changed = true;
  EXPECT_TRUE(run(ep, false, &changed).empty());
  EXPECT_FALSE(changed);
}

}  // namespace
}  // namespace lathe
