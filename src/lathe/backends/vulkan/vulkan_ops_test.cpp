// Each Vulkan shader against Lathe's portable kernels, on lavapipe (or any
// Vulkan device): one small program per op, built twice, one copy
// partitioned to Vulkan, both run on the same seeded random inputs. Sizes
// are odd on purpose — never a multiple of the 64-invocation workgroup —
// and one elementwise case is larger than a single row of 65535
// workgroups, so the shaders' grid-stride loops are exercised.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "lathe/backends/backend_test_support.h"
#include "lathe/backends/partitioner.h"
#include "lathe/backends/vulkan/vulkan_backend.h"
#include "lathe/backends/vulkan/vulkan_test_support.h"
#include "lathe/backends/lower.h"
#include "lathe/ir/graph_builder.h"
#include "lathe/ir/verify.h"
#include "lathe/runtime/compare.h"
#include "lathe/harness/differential.h"
#include "lathe/runtime/executor.h"

namespace lathe {
namespace {

using Build = std::function<void(GraphBuilder&)>;

// Summation order differs from the portable kernels (and the GPU's exp,
// erf approximation and division are not the C library's): 1e-5 of each
// output's scale, as compare.h measures it, unless a case says otherwise.
constexpr double kRtol = 1e-5;

// Builds the program twice; every node of one copy must go to Vulkan (in
// one delegate per connected part), and its outputs must match the other's on the portable kernels.
void expect_matches_portable(const Build& build, double rtol = kRtol) {
  ExportedProgram plain, lowered;
  {
    GraphBuilder b(plain);
    build(b);
  }
  {
    GraphBuilder b(lowered);
    build(b);
  }
  const size_t nodes = plain.graph().node_count();
  auto rep = partition(lowered, vulkan_backend());
  ASSERT_TRUE(rep.ok()) << rep.error().message();
  for (const NodeDecision& d : rep->decisions) EXPECT_TRUE(d.claimed) << d.node << ": " << d.reason;
  EXPECT_GE(rep->delegates, 1);
  EXPECT_EQ(static_cast<size_t>(rep->claimed_nodes), nodes);
  ASSERT_TRUE(verify(lowered, "model").ok());
  auto inputs = random_inputs(plain, 20);
  ASSERT_TRUE(inputs.ok()) << inputs.error().message();
  testing::expect_same_outputs(lowered, plain, *inputs, Tolerance{rtol, 0}, 2);  // the recorded command buffer, submitted twice
}

class VulkanOps : public ::testing::Test {
 protected:
  void SetUp() override { LATHE_REQUIRE_VULKAN_DRIVER(); }
};

// ---- matmul and convolution ---------------------------------------------------------------

TEST_F(VulkanOps, LinearWithBiasAndFusedRelu) {
  expect_matches_portable([](GraphBuilder& b) {
    Value* w = b.parameter("fc.weight", {67, 70});
    Value* bias = b.parameter("fc.bias", {67});
    Value* x = b.user_input("x", {3, 5, 70});
    Value* y = b.call("aten.linear.default", {{"input", x}, {"weight", w}, {"bias", bias}}, {3, 5, 67});
    b.user_output(b.call("aten.relu.default", {{"self", y}}, {3, 5, 67}));
  });
}

TEST_F(VulkanOps, MmAndAddmmAgainstConstants) {
  expect_matches_portable([](GraphBuilder& b) {
    Value* m = b.parameter("m", {33, 65});
    Value* bias = b.constant("bias", {65});
    Value* x = b.user_input("x", {7, 33});
    Value* y = b.call("aten.mm.default", {{"self", x}, {"mat2", m}}, {7, 65});
    b.user_output(b.call("aten.addmm.default", {{"self", bias}, {"mat1", x}, {"mat2", m}}, {7, 65}));
    b.user_output(y);
  });
}

Value* conv(GraphBuilder& b, Value* x, Value* w, Value* bias, std::vector<int64_t> stride, std::vector<int64_t> pad,
            std::vector<int64_t> dil, int64_t groups, std::vector<int64_t> out) {
  return b.call("aten.convolution.default",
                {{"input", x}, {"weight", w}, {"bias", bias ? Argument(TensorRef{bias}) : Argument()}, {"stride", IntList{stride}},
                 {"padding", IntList{pad}}, {"dilation", IntList{dil}}, {"transposed", false},
                 {"output_padding", IntList{std::vector<int64_t>(stride.size(), 0)}}, {"groups", groups}},
                out);
}

TEST_F(VulkanOps, Conv2dStridedPaddedDilatedGrouped) {
  expect_matches_portable([](GraphBuilder& b) {
    Value* x = b.user_input("x", {2, 6, 13, 11});
    Value* w = b.parameter("conv.weight", {9, 2, 3, 5});
    Value* bias = b.parameter("conv.bias", {9});
    // H: (13 + 2*2 - 2*2 - 1) / 2 + 1 = 7; W: (11 + 2*1 - 1*4 - 1) / 1 + 1 = 9
    b.user_output(conv(b, x, w, bias, {2, 1}, {2, 1}, {2, 1}, 3, {2, 9, 7, 9}));
  });
}

TEST_F(VulkanOps, DepthwiseConvWithFoldedBatchNormAndHardtanh) {
  expect_matches_portable([](GraphBuilder& b) {
    Value* x = b.user_input("x", {1, 7, 15, 17});
    Value* w = b.parameter("dw.weight", {7, 1, 3, 3});
    Value* y = conv(b, x, w, nullptr, {1, 1}, {1, 1}, {1, 1}, 7, {1, 7, 15, 17});
    Value* g = b.parameter("bn.weight", {7});
    Value* beta = b.parameter("bn.bias", {7});
    Value* mean = b.buffer("bn.running_mean", {7});
    Value* var = b.buffer("bn.running_var", {7});
    Tensor v = Tensor::empty(DType::Float32, {7});
    for (int c = 0; c < 7; ++c) reinterpret_cast<float*>(v.storage->mutable_data())[c] = 0.25f + 0.125f * c;
    b.program().buffers.set("bn.running_var", v);
    Value* z = b.call("aten._native_batch_norm_legit_no_training.default",
                      {{"input", y}, {"weight", g}, {"bias", beta}, {"running_mean", mean}, {"running_var", var}, {"momentum", 0.1}, {"eps", 1e-5}},
                      {GraphBuilder::tensor_meta(std::vector<int64_t>{1, 7, 15, 17}, DType::Float32), GraphBuilder::tensor_meta(std::vector<int64_t>{0}, DType::Float32), GraphBuilder::tensor_meta(std::vector<int64_t>{0}, DType::Float32)})[0];
    b.user_output(b.call("aten.hardtanh.default", {{"self", z}, {"min_val", 0.0}, {"max_val", 0.5}}, {1, 7, 15, 17}));
  });
}

TEST_F(VulkanOps, Conv1dAsUnitHeight) {
  expect_matches_portable([](GraphBuilder& b) {
    Value* x = b.user_input("x", {2, 5, 37});
    Value* w = b.parameter("c.weight", {11, 5, 3});
    Value* bias = b.parameter("c.bias", {11});
    b.user_output(conv(b, x, w, bias, {1}, {1}, {1}, 1, {2, 11, 37}));
  });
}

// ---- elementwise --------------------------------------------------------------------------

TEST_F(VulkanOps, BinaryOpsBroadcastAndTakeNumbers) {
  expect_matches_portable([](GraphBuilder& b) {
    Value* x = b.user_input("x", {3, 1, 5, 67});
    Value* y = b.user_input("y", {4, 1, 67});
    Value* c = b.parameter("scale", {67});
    Value* s = b.call("aten.add.Tensor", {{"self", x}, {"other", y}, {"alpha", 0.5}}, {3, 4, 5, 67});
    Value* d = b.call("aten.sub.Tensor", {{"self", s}, {"other", c}}, {3, 4, 5, 67});
    Value* m = b.call("aten.mul.Tensor", {{"self", d}, {"other", 1.5}}, {3, 4, 5, 67});
    Value* q = b.call("aten.div.Tensor", {{"self", m}, {"other", y}}, {3, 4, 5, 67});
    b.user_output(b.call("aten.add.Tensor", {{"self", q}, {"other", 2.0}}, {3, 4, 5, 67}));
  }, 1e-4);  // dividing by inputs near 0 magnifies the last bit
}

TEST_F(VulkanOps, EveryActivation) {
  expect_matches_portable([](GraphBuilder& b) {
    Value* x = b.user_input("x", {5, 131});
    Value* big = b.call("aten.mul.Tensor", {{"self", x}, {"other", 8.0}}, {5, 131});  // into every activation's flat parts
    const std::vector<int64_t> s{5, 131};
    b.user_output(b.call("aten.relu.default", {{"self", big}}, s));
    b.user_output(b.call("aten.clamp.default", {{"self", big}, {"min", -2.0}, {"max", 3.0}}, s));
    b.user_output(b.call("aten.hardtanh.default", {{"self", big}}, s));
    b.user_output(b.call("aten.hardswish.default", {{"self", big}}, s));
    b.user_output(b.call("aten.sigmoid.default", {{"self", big}}, s));
    b.user_output(b.call("aten.tanh.default", {{"self", big}}, s));
    b.user_output(b.call("aten.gelu.default", {{"self", big}}, s));
    b.user_output(b.call("aten.gelu.default", {{"self", big}, {"approximate", std::string("tanh")}}, s));
    b.user_output(b.call("aten.silu.default", {{"self", big}}, s));
    b.user_output(b.call("aten.hardsigmoid.default", {{"self", big}}, s));
  });
}

TEST_F(VulkanOps, ElementwiseBeyondOneRowOfWorkgroups) {
  expect_matches_portable([](GraphBuilder& b) {
    const int64_t n = 65535LL * 64 + 37;  // more invocations than one dispatch row holds
    Value* x = b.user_input("x", {n});
    b.user_output(b.call("aten.sigmoid.default", {{"self", x}}, {n}));
  });
}

// ---- rows, reductions, pools ------------------------------------------------------------------

TEST_F(VulkanOps, SoftmaxOverTheLastDim) {
  expect_matches_portable([](GraphBuilder& b) {
    Value* x = b.user_input("x", {3, 7, 131});
    Value* y = b.call("aten.mul.Tensor", {{"self", x}, {"other", 10.0}}, {3, 7, 131});
    b.user_output(b.call("aten._softmax.default", {{"self", y}, {"dim", int64_t{-1}}, {"half_to_float", false}}, {3, 7, 131}));
  });
}

TEST_F(VulkanOps, LayerNormWithAndWithoutAffine) {
  expect_matches_portable([](GraphBuilder& b) {
    Value* x = b.user_input("x", {2, 5, 3, 67});
    Value* w = b.parameter("ln.weight", {3, 67});
    Value* bias = b.parameter("ln.bias", {3, 67});
    const TensorMeta y = GraphBuilder::tensor_meta(std::vector<int64_t>{2, 5, 3, 67}, DType::Float32), stat = GraphBuilder::tensor_meta(std::vector<int64_t>{2, 5, 1, 1}, DType::Float32);
    b.user_output(b.call("aten.native_layer_norm.default",
                         {{"input", x}, {"normalized_shape", IntList{{3, 67}}}, {"weight", w}, {"bias", bias}, {"eps", 1e-5}}, {y, stat, stat})[0]);
    b.user_output(b.call("aten.native_layer_norm.default",
                         {{"input", x}, {"normalized_shape", IntList{{67}}}, {"weight", Argument()}, {"bias", Argument()}, {"eps", 1e-6}},
                         {y, GraphBuilder::tensor_meta(std::vector<int64_t>{2, 5, 3, 1}, DType::Float32), GraphBuilder::tensor_meta(std::vector<int64_t>{2, 5, 3, 1}, DType::Float32)},
                         {"ln2", "ln2_mean", "ln2_rstd"})[0]);
  });
}

TEST_F(VulkanOps, MeanOverDims) {
  expect_matches_portable([](GraphBuilder& b) {
    Value* x = b.user_input("x", {3, 5, 7, 9});
    b.user_output(b.call("aten.mean.dim", {{"self", x}, {"dim", IntList{{-1, 1}}}, {"keepdim", true}}, {3, 1, 7, 1}));
    b.user_output(b.call("aten.mean.dim", {{"self", x}, {"dim", IntList{{0, 2}}}}, {5, 9}));
    b.user_output(b.call("aten.adaptive_avg_pool2d.default", {{"self", x}, {"output_size", IntList{{1, 1}}}}, {3, 5, 1, 1}));
  });
}

TEST_F(VulkanOps, MaxPoolPaddedDilatedCeilMode) {
  expect_matches_portable([](GraphBuilder& b) {
    Value* x = b.user_input("x", {2, 3, 17, 13});
    // H: ceil((17 + 2 - 2*2 - 1) / 2) + 1 = 8; W: (13 + 2 - 3) / 2 + 1 = 7 (ceil: 7)
    b.user_output(b.call("aten.max_pool2d_with_indices.default",
                         {{"self", x}, {"kernel_size", IntList{{3, 3}}}, {"stride", IntList{{2, 2}}}, {"padding", IntList{{1, 1}}},
                          {"dilation", IntList{{2, 1}}}, {"ceil_mode", true}},
                         {GraphBuilder::tensor_meta(std::vector<int64_t>{2, 3, 8, 7}, DType::Float32), GraphBuilder::tensor_meta(std::vector<int64_t>{2, 3, 8, 7}, DType::Int64)})[0]);
  });
}

TEST_F(VulkanOps, AvgPoolIncludingAndExcludingPadding) {
  expect_matches_portable([](GraphBuilder& b) {
    Value* x = b.user_input("x", {2, 3, 11, 9});
    const std::vector<int64_t> s{2, 3, 6, 5};
    b.user_output(b.call("aten.avg_pool2d.default", {{"self", x}, {"kernel_size", IntList{{3, 3}}}, {"stride", IntList{{2, 2}}},
                                                     {"padding", IntList{{1, 1}}}, {"ceil_mode", true}}, s));
    b.user_output(b.call("aten.avg_pool2d.default", {{"self", x}, {"kernel_size", IntList{{3, 3}}}, {"stride", IntList{{2, 2}}},
                                                     {"padding", IntList{{1, 1}}}, {"ceil_mode", false}, {"count_include_pad", false}},
                         s, DType::Float32, "avg_excl"));
    b.user_output(b.call("aten.avg_pool2d.default", {{"self", x}, {"kernel_size", IntList{{2, 2}}}, {"stride", IntList{{2, 2}}},
                                                     {"padding", IntList{{0, 0}}}, {"ceil_mode", false}, {"count_include_pad", true},
                                                     {"divisor_override", int64_t{3}}},
                         {2, 3, 5, 4}, DType::Float32, "avg_div"));
  });
}

// ---- layout -------------------------------------------------------------------------------------

TEST_F(VulkanOps, PermuteViewCatSliceInsideAGroup) {
  expect_matches_portable([](GraphBuilder& b) {
    Value* x = b.user_input("x", {2, 3, 5, 7});
    Value* r = b.call("aten.relu.default", {{"self", x}}, {2, 3, 5, 7});
    Value* p = b.call("aten.permute.default", {{"self", r}, {"dims", IntList{{0, 3, 1, -2}}}}, {2, 7, 3, 5});
    Value* c = b.call("aten.clone.default", {{"self", p}, {"memory_format", Argument()}}, {2, 7, 3, 5});
    Value* v = b.call("aten.view.default", {{"self", c}, {"size", IntList{{14, 15}}}}, {14, 15});
    Value* s = b.call("aten.slice.Tensor", {{"self", v}, {"dim", int64_t{1}}, {"start", int64_t{-13}}, {"end", int64_t{15}}, {"step", int64_t{3}}},
                      {14, 5});
    Value* t = b.call("aten.tanh.default", {{"self", v}}, {14, 15});
    b.user_output(b.call("aten.cat.default", {{"tensors", TensorList{{s, t, s}}}, {"dim", int64_t{-1}}}, {14, 25}));
  });
}

// A view that leaves the delegate shares a device buffer, so it is copied
// out at the end of the command buffer; one whose source leaves too is not.
TEST_F(VulkanOps, ViewsAsDelegateOutputs) {
  expect_matches_portable([](GraphBuilder& b) {
    Value* x = b.user_input("x", {3, 5, 7});
    Value* r = b.call("aten.relu.default", {{"self", x}}, {3, 5, 7});
    b.user_output(b.call("aten.view.default", {{"self", r}, {"size", IntList{{15, 7}}}}, {15, 7}));
    Value* t = b.call("aten.tanh.default", {{"self", x}}, {3, 5, 7});
    b.user_output(t);
    b.user_output(b.call("aten.unsqueeze.default", {{"self", t}, {"dim", int64_t{0}}}, {1, 3, 5, 7}));
  });
}

}  // namespace
}  // namespace lathe
