// fuse_int8_weight_only_matmul on graphs shaped as torchao 0.18's
// Int8WeightOnlyConfig exports a linear (PyTorch 2.13): the fused form, and
// each refusal with its reason. The numbers are checked on the real
// exports in src/lathe/passes/quantized_fixtures_test.cpp.
#include "lathe/passes/fuse_int8_weight_only_matmul.h"

#include <gtest/gtest.h>

#include "lathe/ir/graph_builder.h"
#include "lathe/ir/verify.h"
#include "lathe/passes/pass_test_support.h"

namespace lathe {
namespace {

constexpr int64_t N = 6, K = 8, M = 3;

using testing::expect_unchanged;
using testing::op_histogram;
using testing::run_pass;

std::unique_ptr<Pass> pass() { return std::make_unique<FuseInt8WeightOnlyMatmul>(); }

struct Options {
  bool weight_is_input = false;
  bool scale_is_input = false;
  bool mm_read_twice = false;
  DType weight_dtype = DType::Int8;
};

// mul(mm(x, to(t(q), float32)), flatten(to(scale [N, 1], float32))), with
// torchao's metadata checks, as the export writes it.
Value* torchao_linear(GraphBuilder& b, Value* x, const Options& o, Value** extra_out = nullptr) {
  Value* q = o.weight_is_input ? b.user_input("q", {N, K}, o.weight_dtype) : b.parameter("fc.weight", {N, K}, o.weight_dtype);
  Value* scale = o.scale_is_input ? b.user_input("scale", {N, 1}) : b.parameter("fc.scale", {N, 1});
  Value* t = b.call("aten.t.default", {{"self", q}}, {K, N}, o.weight_dtype);
  b.call_multi("aten._assert_tensor_metadata.default", {{"a", t}, {"dtype", ScalarTypeArg{o.weight_dtype}}}, {});
  Value* wf = b.call("aten.to.dtype", {{"self", t}, {"dtype", ScalarTypeArg{DType::Float32}}}, {K, N});
  Value* mm = b.call("aten.mm.default", {{"self", x}, {"mat2", wf}}, {M, N});
  Value* s = b.call("aten.to.dtype", {{"self", scale}, {"dtype", ScalarTypeArg{DType::Float32}}}, {N, 1});
  Value* flat = b.call("aten.flatten.using_ints", {{"self", s}}, {N});
  if (extra_out && o.mm_read_twice) *extra_out = mm;
  return b.call("aten.mul.Tensor", {{"self", mm}, {"other", flat}}, {M, N}, DType::Float32, "mul");
}

TEST(FuseInt8WeightOnlyMatmul, TorchaoLinearBecomesWeightInt8PackMm) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* x = b.user_input("x", {M, K});
  b.user_output(torchao_linear(b, x, {}));
  testing::PassRun r = run_pass(ep, pass());
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.rewritten,
            std::vector<std::string>{"mul 'mul' rewritten to _weight_int8pack_mm (int8 weight 'p_fc_weight' is parameter 'fc.weight')"});
  auto ops = op_histogram(ep.graph());
  EXPECT_EQ(ops["_weight_int8pack_mm"], 1);
  EXPECT_EQ(ops["mm"], 0);
  EXPECT_EQ(ops["t"], 0);
  EXPECT_EQ(ops["_assert_tensor_metadata"], 0);  // went with the transpose it checked
  EXPECT_EQ(ops["flatten"], 1);                  // the scales still come through it
  const Node* mm = ep.graph().outputs()[0].tensor()->producer();
  EXPECT_EQ(mm->output()->name(), "mul");
  EXPECT_EQ(mm->input("self")->tensor(), x);
  EXPECT_EQ(mm->input("mat2")->tensor()->name(), "p_fc_weight");
  EXPECT_EQ(mm->input("scales")->tensor()->producer()->target(), "torch.ops.aten.flatten.using_ints");
  EXPECT_TRUE(verify(ep, "forward").ok());
}

// Each refusal leaves the program as it was, with one explain line saying why.
TEST(FuseInt8WeightOnlyMatmul, RefusalsKeepTheProgramAndSayWhy_NEG) {
  testing::expect_refusals<Options>(
      {
          {"a run-time weight", {.weight_is_input = true}, "mul 'mul' kept: quantized weight 'q' is user input 'q'"},
          {"run-time scales", {.scale_is_input = true},
           "mul 'mul' kept: scales 'flatten' are not derived from constants by shape ops alone"},
          {"a matmul read elsewhere", {.mm_read_twice = true},
           "mul 'mul' kept: 'mm' has other users; fusing would compute it twice"},
      },
      [](GraphBuilder& b, const Options& o) {
        Value* x = b.user_input("x", {M, K});
        Value* mm = nullptr;
        b.user_output(torchao_linear(b, x, o, &mm));
        if (mm) b.user_output(mm);
      },
      pass);
}

TEST(FuseInt8WeightOnlyMatmul, FloatMatmulTimesAScaleIsNotACandidate) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* x = b.user_input("x", {M, K});
  Value* w = b.parameter("w", {K, N});
  Value* s = b.parameter("s", {N});
  Value* mm = b.call("aten.mm.default", {{"self", x}, {"mat2", w}}, {M, N});
  b.user_output(b.call("aten.mul.Tensor", {{"self", mm}, {"other", s}}, {M, N}));
  testing::PassRun r = expect_unchanged(ep, pass());
  EXPECT_TRUE(r.kept.empty());
}

}  // namespace
}  // namespace lathe
