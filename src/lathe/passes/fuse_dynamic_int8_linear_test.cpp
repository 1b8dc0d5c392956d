// fuse_dynamic_int8_linear on graphs shaped as torchao 0.18's
// Int8DynamicActivationInt8WeightConfig exports a linear (PyTorch 2.13): 2-D
// and 3-D inputs, and each refusal with its reason. The numbers are checked
// on the real exports in src/lathe/passes/quantized_fixtures_test.cpp.
#include "lathe/passes/fuse_dynamic_int8_linear.h"

#include <gtest/gtest.h>

#include "lathe/ir/graph_builder.h"
#include "lathe/ir/verify.h"
#include "lathe/passes/pass_test_support.h"

namespace lathe {
namespace {

constexpr int64_t N = 6, K = 8;

using testing::expect_unchanged;
using testing::op_histogram;
using testing::run_pass;

std::unique_ptr<Pass> pass() { return std::make_unique<FuseDynamicInt8Linear>(); }

struct Options {
  std::vector<int64_t> x_shape = {3, K};
  std::string mapping = "SYMMETRIC";
  bool weight_is_input = false;
  bool scale_read_elsewhere = false;
};

// The export of one torchao dynamic int8 linear on x, node for node.
Value* torchao_dynamic_linear(GraphBuilder& b, Value* x, const Options& o, Value** extra = nullptr) {
  Value* q = o.weight_is_input ? b.user_input("q", {N, K}, DType::Int8) : b.parameter("fc.weight", {N, K}, DType::Int8);
  Value* ws = b.parameter("fc.scale", {N, 1});
  std::vector<int64_t> block(o.x_shape.size(), 1), qshape = o.x_shape;
  block.back() = K;
  qshape.back() = 1;
  int64_t M = 1;
  for (size_t i = 0; i + 1 < o.x_shape.size(); ++i) M *= o.x_shape[i];
  std::vector<Value*> qp = b.call_multi(
      "torchao.choose_qparams_affine.default",
      {{"input", x}, {"mapping_type", std::string(o.mapping)}, {"block_size", IntList{block}},
       {"target_dtype", ScalarTypeArg{DType::Int8}}, {"quant_min", int64_t{-128}}, {"quant_max", int64_t{127}},
       {"eps", 1.1920928955078125e-07}, {"scale_dtype", ScalarTypeArg{DType::Float32}},
       {"zero_point_dtype", ScalarTypeArg{DType::Int8}}, {"keepdim", true}},
      {GraphBuilder::tensor_meta(qshape), GraphBuilder::tensor_meta(qshape, DType::Int8)});
  Value* xq = b.call("torchao.quantize_affine.default",
                     {{"input", x}, {"block_size", IntList{block}}, {"scale", qp[0]}, {"zero_point", qp[1]},
                      {"output_dtype", ScalarTypeArg{DType::Int8}}, {"quant_min", int64_t{-128}},
                      {"quant_max", int64_t{127}}},
                     o.x_shape, DType::Int8);
  Value* t = b.call("aten.t.default", {{"self", q}}, {K, N}, DType::Int8);
  Value* rows = b.call("aten.reshape.default", {{"self", xq}, {"shape", IntList{{-1, K}}}}, {M, K}, DType::Int8);
  Value* sr = b.call("aten.reshape.default", {{"self", qp[0]}, {"shape", IntList{{-1, 1}}}}, {M, 1});
  Value* sf = b.call("aten.to.dtype", {{"self", sr}, {"dtype", ScalarTypeArg{DType::Float32}}}, {M, 1});
  Value* acc = b.call("aten._int_mm.default", {{"self", rows}, {"mat2", t}}, {M, N}, DType::Int32);
  b.call_multi("aten._assert_tensor_metadata.default", {{"a", acc}, {"dtype", ScalarTypeArg{DType::Int32}}}, {});
  Value* accf = b.call("aten.to.dtype", {{"self", acc}, {"dtype", ScalarTypeArg{DType::Float32}}}, {M, N});
  Value* m1 = b.call("aten.mul.Tensor", {{"self", accf}, {"other", sf}}, {M, N});
  Value* m1f = b.call("aten.to.dtype", {{"self", m1}, {"dtype", ScalarTypeArg{DType::Float32}}}, {M, N});
  Value* flat = b.call("aten.flatten.using_ints", {{"self", ws}}, {N});
  if (extra && o.scale_read_elsewhere) *extra = qp[0];
  return b.call("aten.mul.Tensor", {{"self", m1f}, {"other", flat}}, {M, N}, DType::Float32, "mul_5");
}

TEST(FuseDynamicInt8Linear, TwoDimensionalInputBecomesOneOp) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* x = b.user_input("x", {3, K});
  b.user_output(torchao_dynamic_linear(b, x, {}));
  testing::PassRun r = run_pass(ep, pass());
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.rewritten,
            std::vector<std::string>{"mul 'mul_5' rewritten to lathe.dynamic_int8_mm (int8 weight 'p_fc_weight' is parameter 'fc.weight')"});
  auto ops = op_histogram(ep.graph());
  EXPECT_EQ(ops["dynamic_int8_mm"], 1);
  for (const char* gone : {"choose_qparams_affine", "quantize_affine", "_int_mm", "t", "reshape", "to",
                           "_assert_tensor_metadata"}) {
    EXPECT_EQ(ops[gone], 0) << gone;
  }
  EXPECT_EQ(ops["mul"], 0);
  const Node* op = ep.graph().outputs()[0].tensor()->producer();
  EXPECT_EQ(op->target(), "torch.ops.lathe.dynamic_int8_mm.default");
  EXPECT_EQ(op->output()->name(), "mul_5");
  EXPECT_EQ(op->input("self")->tensor(), x);
  EXPECT_DOUBLE_EQ(op->input("eps")->as<double>(), 1.1920928955078125e-07);
  EXPECT_TRUE(verify(ep, "forward").ok());
}

TEST(FuseDynamicInt8Linear, ThreeDimensionalInputIsReshapedIntoRows) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Options o;
  o.x_shape = {2, 5, K};
  Value* x = b.user_input("x", o.x_shape);
  b.user_output(torchao_dynamic_linear(b, x, o));
  ASSERT_EQ(run_pass(ep, pass()).rewritten.size(), 1u);
  const Node* op = ep.graph().outputs()[0].tensor()->producer();
  ASSERT_EQ(op->target(), "torch.ops.lathe.dynamic_int8_mm.default");
  const Node* rows = op->input("self")->tensor()->producer();
  ASSERT_NE(rows, nullptr);
  EXPECT_EQ(rows->target(), "torch.ops.aten.reshape.default");
  EXPECT_EQ(rows->input("self")->tensor(), x);
  EXPECT_EQ(rows->output()->meta()->dtype, DType::Float32);
  EXPECT_EQ(rows->output()->meta()->sizes.size(), 2u);
  EXPECT_TRUE(verify(ep, "forward").ok());
}

// Each refusal leaves the program as it was, with one explain line saying why.
TEST(FuseDynamicInt8Linear, RefusalsKeepTheProgramAndSayWhy_NEG) {
  testing::expect_refusals<Options>(
      {
          {"a run-time weight", {.weight_is_input = true}, "mul 'mul_5' kept: quantized weight 'q' is user input 'q'"},
          {"asymmetric activations", {.mapping = "ASYMMETRIC"},
           "mul 'mul_5' kept: choose_qparams_affine 'getitem' maps \"ASYMMETRIC\", not SYMMETRIC"},
          {"a scale read outside the pattern", {.scale_read_elsewhere = true},
           "mul 'mul_5' kept: 'getitem' has users outside the pattern; fusing would compute it twice"},
      },
      [](GraphBuilder& b, const Options& o) {
        Value* x = b.user_input("x", {3, K});
        Value* scale = nullptr;
        b.user_output(torchao_dynamic_linear(b, x, o, &scale));
        if (scale) b.user_output(scale);
      },
      pass);
}

}  // namespace
}  // namespace lathe
