// The quantization kernels (kernels/quantized.h) on hand-checked cases, and
// through the executor with the argument names of PyTorch's schemas. The
// committed *_int8 / *_int4g32 fixtures (fixtures_test.cpp) run the
// dequantize kernels against PyTorch's own outputs.
#include "lathe/runtime/kernels/quantized.h"
#include "lathe/runtime/kernels/quantized_linear.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "lathe/ir/graph_builder.h"
#include "lathe/runtime/compare.h"
#include "lathe/runtime/executor.h"
#include "lathe/runtime/kernels/matmul.h"

namespace lathe {
namespace {

using kernels::QuantRange;

template <typename T>
Tensor make(DType dtype, std::vector<int64_t> sizes, std::vector<T> values) {
  Tensor t = Tensor::empty(dtype, std::move(sizes));
  EXPECT_EQ(static_cast<size_t>(t.numel()), values.size());
  T* p = kernels::mdata<T>(t);
  for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];
  return t;
}

template <typename T>
std::vector<T> values(const Tensor& t) {
  const T* p = kernels::cdata<T>(t);
  return std::vector<T>(p, p + t.numel());
}

// q = [[-128, -1, 0, 127], [2, 4, -6, 8]] as int8.
Tensor q2x4() { return make<int8_t>(DType::Int8, {2, 4}, {-128, -1, 0, 127, 2, 4, -6, 8}); }

TEST(QuantizedKernels, DequantizePerChannelByHand) {
  Tensor scales = make<float>(DType::Float32, {2}, {0.5f, 0.25f});
  Tensor zeros = make<int64_t>(DType::Int64, {2}, {0, 1});
  Tensor out = Tensor::empty(DType::Float32, {2, 4});
  ASSERT_TRUE(kernels::dequantize_per_channel_out(q2x4(), scales, &zeros, 0, QuantRange{}, out).ok());
  // row 0: q * 0.5; row 1: (q - 1) * 0.25
  EXPECT_EQ(values<float>(out), (std::vector<float>{-64, -0.5f, 0, 63.5f, 0.25f, 0.75f, -1.75f, 1.75f}));
  // zero_points None: symmetric.
  ASSERT_TRUE(kernels::dequantize_per_channel_out(q2x4(), scales, nullptr, 0, QuantRange{}, out).ok());
  EXPECT_EQ(values<float>(out), (std::vector<float>{-64, -0.5f, 0, 63.5f, 0.5f, 1, -1.5f, 2}));
  // axis 1 (= -1): one scale per column.
  Tensor col = make<float>(DType::Float32, {4}, {1, 2, 4, 8});
  ASSERT_TRUE(kernels::dequantize_per_channel_out(q2x4(), col, nullptr, -1, QuantRange{}, out).ok());
  EXPECT_EQ(values<float>(out), (std::vector<float>{-128, -2, 0, 1016, 2, 8, -24, 64}));
}

TEST(QuantizedKernels, DequantizePerChannelGroupByHand) {
  // Groups of 2 along each row: scales [[1, 0.5], [2, 0.25]].
  Tensor q = make<int8_t>(DType::Int8, {2, 4}, {-8, 7, 3, -4, 1, -1, 6, 5});
  Tensor scales = make<float>(DType::Float32, {2, 2}, {1, 0.5f, 2, 0.25f});
  Tensor out = Tensor::empty(DType::Float32, {2, 4});
  QuantRange r4{-8, 7, DType::Int8};
  ASSERT_TRUE(kernels::dequantize_per_channel_group_out(q, scales, nullptr, r4, 2, out).ok());
  EXPECT_EQ(values<float>(out), (std::vector<float>{-8, 7, 1.5f, -2, 2, -2, 1.5f, 1.25f}));
  Tensor zeros = make<int32_t>(DType::Int32, {2, 2}, {0, 1, 0, 0});
  ASSERT_TRUE(kernels::dequantize_per_channel_group_out(q, scales, &zeros, r4, 2, out).ok());
  EXPECT_EQ(values<float>(out), (std::vector<float>{-8, 7, 1, -2.5f, 2, -2, 1.5f, 1.25f}));
}

TEST(QuantizedKernels, QuantizePerTensorRoundsHalfToEvenAndSaturates) {
  Tensor x = make<float>(DType::Float32, {6}, {0.5f, 1.5f, 2.5f, -0.5f, 1000, -1000});
  Tensor out = Tensor::empty(DType::Int8, {6});
  ASSERT_TRUE(kernels::quantize_per_tensor_out(x, 1.0, 0, QuantRange{}, out).ok());
  EXPECT_EQ(values<int8_t>(out), (std::vector<int8_t>{0, 2, 2, 0, 127, -128}));
  // scale 0.5, zero point 3: round(2x) + 3
  ASSERT_TRUE(kernels::quantize_per_tensor_out(x, 0.5, 3, QuantRange{}, out).ok());
  EXPECT_EQ(values<int8_t>(out), (std::vector<int8_t>{4, 6, 8, 2, 127, -128}));
  // uint8 with a narrower range
  Tensor u = Tensor::empty(DType::UInt8, {6});
  ASSERT_TRUE(kernels::quantize_per_tensor_out(x, 1.0, 10, QuantRange{0, 100, DType::UInt8}, u).ok());
  EXPECT_EQ(values<uint8_t>(u), (std::vector<uint8_t>{10, 12, 12, 10, 100, 0}));
}

TEST(QuantizedKernels, DequantizePerTensorIsFloatMinusZeroPointTimesScale) {
  Tensor q = make<uint8_t>(DType::UInt8, {3}, {0, 128, 255});
  Tensor out = Tensor::empty(DType::Float32, {3});
  ASSERT_TRUE(kernels::dequantize_per_tensor_out(q, 0.1, 128, QuantRange{0, 255, DType::UInt8}, out).ok());
  EXPECT_EQ(values<float>(out), (std::vector<float>{(0.0f - 128.0f) * 0.1f, 0.0f, (255.0f - 128.0f) * 0.1f}));
}

TEST(QuantizedKernels, QuantizePerChannelByHand) {
  Tensor x = make<float>(DType::Float32, {2, 2}, {1, -1, 3, 4});
  Tensor scales = make<float>(DType::Float32, {2}, {0.5f, 2});
  Tensor zeros = make<int64_t>(DType::Int64, {2}, {0, 1});
  Tensor out = Tensor::empty(DType::Int8, {2, 2});
  ASSERT_TRUE(kernels::quantize_per_channel_out(x, scales, zeros, 0, QuantRange{}, out).ok());
  // row 0: round(x / 0.5) = [2, -2]; row 1: round([1.5, 2]) + 1 = [2 + 1, 2 + 1]
  EXPECT_EQ(values<int8_t>(out), (std::vector<int8_t>{2, -2, 3, 3}));
}

TEST(QuantizedKernels, WeightInt8PackMmByHand) {
  Tensor x = make<float>(DType::Float32, {1, 4}, {1, 2, 3, 4});
  Tensor w = make<int8_t>(DType::Int8, {2, 4}, {1, 0, -1, 2, -128, 127, 0, 1});
  Tensor s = make<float>(DType::Float32, {2}, {0.5f, 0.01f});
  Tensor out = Tensor::empty(DType::Float32, {1, 2});
  ASSERT_TRUE(kernels::weight_int8pack_mm_out(x, w, s, out).ok());
  // (1 - 3 + 8) * 0.5 = 3; (-128 + 254 + 4) * 0.01 = 1.3
  EXPECT_FLOAT_EQ(values<float>(out)[0], 3.0f);
  EXPECT_FLOAT_EQ(values<float>(out)[1], 1.3f);
}

TEST(QuantizedKernels, WeightInt4GroupMmByHand) {
  Tensor x = make<float>(DType::Float32, {1, 4}, {1, 2, 3, 4});
  Tensor w = make<int8_t>(DType::Int8, {2, 4}, {-8, 7, 3, -4, 1, -1, 6, 5});
  Tensor s = make<float>(DType::Float32, {2, 2}, {1, 0.5f, 2, 0.25f});
  Tensor out = Tensor::empty(DType::Float32, {1, 2});
  ASSERT_TRUE(kernels::weight_int4_group_mm_out(x, w, s, 2, out).ok());
  // n0: (-8 + 14) * 1 + (9 - 16) * 0.5 = 2.5; n1: (1 - 2) * 2 + (18 + 20) * 0.25 = 7.5
  EXPECT_EQ(values<float>(out), (std::vector<float>{2.5f, 7.5f}));
}

// Larger shapes (vector body, 4-row blocks and both tails) against
// linear(x, dequantize(w)) computed by the float kernels.
TEST(QuantizedKernels, MatmulsMatchLinearOfTheDequantizedWeight) {
  const int64_t M = 3, N = 10, K = 200;
  Tensor x = GraphBuilder::deterministic_tensor("x", DType::Float32, {M, K});
  std::vector<int8_t> qv(N * K);
  for (int64_t i = 0; i < N * K; ++i) qv[i] = static_cast<int8_t>((i * 37 + 11) % 256 - 128);
  Tensor q = make<int8_t>(DType::Int8, {N, K}, qv);
  std::vector<float> sv(N);
  for (int64_t n = 0; n < N; ++n) sv[n] = 0.001f * static_cast<float>(n + 1);
  Tensor s = make<float>(DType::Float32, {N}, sv);

  Tensor wf = Tensor::empty(DType::Float32, {N, K});
  ASSERT_TRUE(kernels::dequantize_per_channel_out(q, s, nullptr, 0, QuantRange{}, wf).ok());
  Tensor ref = Tensor::empty(DType::Float32, {M, N});
  ASSERT_TRUE(kernels::linear_out(x, wf, nullptr, ref).ok());
  Tensor got = Tensor::empty(DType::Float32, {M, N});
  ASSERT_TRUE(kernels::weight_int8pack_mm_out(x, q, s, got).ok());
  TensorDiff d = compare_tensors(got, ref, Tolerance{1e-5, 0});
  EXPECT_TRUE(d.ok) << d.describe();

  // int4: values clamped to [-8, 7], groups of 40 (not a multiple of 8: tails inside groups).
  for (auto& v : qv) v = static_cast<int8_t>(v % 8);
  Tensor q4 = make<int8_t>(DType::Int8, {N, K}, qv);
  std::vector<float> gs(N * 5);
  for (size_t i = 0; i < gs.size(); ++i) gs[i] = 0.01f * static_cast<float>(i % 7 + 1);
  Tensor s4 = make<float>(DType::Float32, {N, 5}, gs);
  ASSERT_TRUE(kernels::dequantize_per_channel_group_out(q4, s4, nullptr, QuantRange{-8, 7, DType::Int8}, 40, wf).ok());
  ASSERT_TRUE(kernels::linear_out(x, wf, nullptr, ref).ok());
  ASSERT_TRUE(kernels::weight_int4_group_mm_out(x, q4, s4, 40, got).ok());
  d = compare_tensors(got, ref, Tolerance{1e-5, 0});
  EXPECT_TRUE(d.ok) << d.describe();
}

TEST(QuantizedKernels, BadArgumentsAreErrors_NEG) {
  Tensor out = Tensor::empty(DType::Float32, {2, 4});
  Tensor scales = make<float>(DType::Float32, {2}, {1, 1});
  auto s = kernels::dequantize_per_channel_out(q2x4(), scales, nullptr, 0, QuantRange{0, 255, DType::UInt8}, out);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(), "dequantize_per_channel: input is int8, but dtype says uint8");
  s = kernels::dequantize_per_channel_out(q2x4(), scales, nullptr, 0, QuantRange{-200, 127, DType::Int8}, out);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(), "dequantize_per_channel: quant range [-200, 127] is outside int8's [-128, 127]");
  Tensor three = make<float>(DType::Float32, {3}, {1, 1, 1});
  s = kernels::dequantize_per_channel_out(q2x4(), three, nullptr, 0, QuantRange{}, out);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("scales [3] must be 1-D with one entry per channel"), std::string::npos);
  Tensor x3 = Tensor::empty(DType::Float32, {1, 1, 4});
  Tensor mm = Tensor::empty(DType::Float32, {1, 2});
  s = kernels::weight_int8pack_mm_out(x3, q2x4(), scales, mm);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(), "_weight_int8pack_mm: self must be 2-D, got [1, 1, 4]");
  s = kernels::dequantize_per_channel_group_out(q2x4(), scales, nullptr, QuantRange{-8, 7, DType::Int8}, 3, out);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(), "dequantize_per_channel_group: the last dimension 4 is not a multiple of group_size 3");
}

// Through the executor, with the argument names of PyTorch's schemas: the
// unfused linear(x, dequantize_per_channel(...)) and the fused
// add(_weight_int8pack_mm(...), b) agree.
TEST(QuantizedKernels, ExecutorRunsDequantizeAndTheFusedOps) {
  auto build = [](ExportedProgram& ep, bool fused) {
    GraphBuilder b(ep);
    Value* bias = b.parameter("fc.bias", {5});
    Value* q = b.buffer("fc.weight_int8", {5, 16}, true, DType::Int8);
    Value* s = b.buffer("fc.weight_scales", {5});
    Value* z = b.buffer("fc.weight_zero_points", {5}, true, DType::Int64);
    ep.buffers.set("fc.weight_zero_points", Tensor::empty(DType::Int64, {5}));
    Value* x = b.user_input("x", {3, 16});
    if (fused) {
      Value* mm = b.call("aten._weight_int8pack_mm.default", {{"self", x}, {"mat2", q}, {"scales", s}}, {3, 5});
      b.user_output(b.call("aten.add.Tensor", {{"self", mm}, {"other", bias}}, {3, 5}));
    } else {
      Value* w = b.call("quantized_decomposed.dequantize_per_channel.default",
                        {{"input", q}, {"scales", s}, {"zero_points", z}, {"axis", int64_t{0}},
                         {"quant_min", int64_t{-128}}, {"quant_max", int64_t{127}}, {"dtype", ScalarTypeArg{DType::Int8}}},
                        {5, 16});
      b.user_output(b.call("aten.linear.default", {{"input", x}, {"weight", w}, {"bias", bias}}, {3, 5}));
    }
  };
  ExportedProgram a, f;
  build(a, false);
  build(f, true);
  Tensor x = GraphBuilder::deterministic_tensor("x", DType::Float32, {3, 16});
  auto ea = Executor::create(a);
  auto ef = Executor::create(f);
  ASSERT_TRUE(ea.ok()) << ea.error().message();
  ASSERT_TRUE(ef.ok()) << ef.error().message();
  auto ra = (*ea)->run(std::vector<Tensor>{x});
  auto rf = (*ef)->run(std::vector<Tensor>{x});
  ASSERT_TRUE(ra.ok()) << ra.error().message();
  ASSERT_TRUE(rf.ok()) << rf.error().message();
  TensorDiff d = compare_tensors((*rf)[0], (*ra)[0], Tolerance{1e-5, 0});
  EXPECT_TRUE(d.ok) << d.describe();
  EXPECT_GT(d.max_ref, 0.0);
}


// The .tensor overloads take the scale and zero point as 0-d tensors.
TEST(QuantizedKernels, PerTensorTensorOverloadsThroughTheExecutor) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* scale = b.constant("scale", std::vector<int64_t>{});
  Value* zp = b.constant("zp", std::vector<int64_t>{}, DType::Int64);
  ep.constants.set("scale", make<float>(DType::Float32, {}, {0.5f}));
  ep.constants.set("zp", make<int64_t>(DType::Int64, {}, {3}));
  Value* x = b.user_input("x", {6});
  auto qargs = [&](Value* in) {
    return std::vector<GraphBuilder::Arg>{{"input", in},          {"scale", scale},
                                          {"zero_point", zp},     {"quant_min", int64_t{-128}},
                                          {"quant_max", int64_t{127}}, {"dtype", ScalarTypeArg{DType::Int8}}};
  };
  Value* q = b.call("quantized_decomposed.quantize_per_tensor.tensor", qargs(x), {6}, DType::Int8);
  b.user_output(q);
  b.user_output(b.call("quantized_decomposed.dequantize_per_tensor.tensor", qargs(q), {6}));
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  auto r = (*ex)->run(std::vector<Tensor>{make<float>(DType::Float32, {6}, {0.5f, 1.5f, 2.5f, -0.5f, 1000, -1000})});
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(values<int8_t>((*r)[0]), (std::vector<int8_t>{4, 6, 8, 2, 127, -128}));
  EXPECT_EQ(values<float>((*r)[1]), (std::vector<float>{0.5f, 1.5f, 2.5f, -0.5f, 62, -65.5f}));
}

// Zero points from a file may hold anything (fuzz_program_structure gave an
// int8 weight's zero points INT64_MIN: q - zp overflowed int64, undefined
// behaviour). The difference wraps as PyTorch's int64 subtraction does:
// 0 - INT64_MIN is INT64_MIN there too.
TEST(QuantizedKernels, ExtremeZeroPointsWrapAsInPyTorch_NEG) {
  Tensor scales = make<float>(DType::Float32, {2}, {1, 1});
  Tensor zeros = make<int64_t>(DType::Int64, {2}, {INT64_MIN, INT64_MAX});
  Tensor out = Tensor::empty(DType::Float32, {2, 4});
  ASSERT_TRUE(kernels::dequantize_per_channel_out(q2x4(), scales, &zeros, 0, QuantRange{}, out).ok());
  const std::vector<float> y = values<float>(out);
  EXPECT_EQ(y[0], 0x1p63f);   // -128 - INT64_MIN = 2^63 - 128, rounded to float
  EXPECT_EQ(y[2], -0x1p63f);  // 0 - INT64_MIN wraps to INT64_MIN
  EXPECT_EQ(y[4], -0x1p63f);  // 2 - INT64_MAX = INT64_MIN + 3
}

// A .tensor overload's zero point that is NaN or past int64 is an error
// naming it (it was cast to int64: undefined behaviour).
TEST(QuantizedKernels, NonIntegerZeroPointTensorIsAnError_NEG) {
  for (float bad : {NAN, 1e30f}) {
    ExportedProgram ep;
    GraphBuilder b(ep);
    Value* scale = b.constant("scale", std::vector<int64_t>{});
    Value* zp = b.constant("zp", std::vector<int64_t>{});
    ep.constants.set("scale", make<float>(DType::Float32, {}, {0.5f}));
    ep.constants.set("zp", make<float>(DType::Float32, {}, {bad}));
    Value* x = b.user_input("x", {2}, DType::Int8);
    b.user_output(b.call("quantized_decomposed.dequantize_per_tensor.tensor",
                         {{"input", x}, {"scale", scale}, {"zero_point", zp}, {"quant_min", int64_t{-128}},
                          {"quant_max", int64_t{127}}, {"dtype", ScalarTypeArg{DType::Int8}}},
                         {2}));
    auto ex = Executor::create(ep);
    ASSERT_TRUE(ex.ok()) << ex.error().message();
    auto r = (*ex)->run(std::vector<Tensor>{make<int8_t>(DType::Int8, {2}, {1, 2})});
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message().find("zero_point"), std::string::npos) << r.error().message();
    EXPECT_NE(r.error().message().find("which is not an int64"), std::string::npos) << r.error().message();
  }
}

}  // namespace
}  // namespace lathe
