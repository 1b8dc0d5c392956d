// torchao's affine quantization ops (kernels/affine_quant.h) against torchao
// 0.18 on PyTorch 2.13 (testdata/quantized_linear_cases.json, "affine"):
// symmetric and asymmetric, per row and per group, 2-D and 3-D; scales,
// zero points, quantized values and dequantized values must all be equal.
#include "lathe/runtime/kernels/affine_quant.h"

#include <gtest/gtest.h>

#include "lathe/runtime/quantized_test_support.h"

namespace lathe {
namespace {

using namespace quantized_test;

std::vector<float> values(const Tensor& t) {
  const Tensor f = kernels::as_dtype(t, DType::Float32);
  return std::vector<float>(kernels::cdata<float>(f), kernels::cdata<float>(f) + f.numel());
}

std::vector<float> json_floats(const Json& j) { return j.get<std::vector<float>>(); }

TEST(AffineQuant, ChooseQuantizeDequantizeMatchTorchao) {
  int seen = 0;
  for (const Json& c : cases("affine")) {
    const std::vector<int64_t> shape = c["shape"], block = c["block"];
    SCOPED_TRACE(c["mapping"].get<std::string>() + " " + shape_string(shape) + " block " + shape_string(block));
    const Tensor x = floats(c["x"], shape);
    const kernels::AffineRange range{DType::Int8, c["quant_min"], c["quant_max"]};
    const auto mapping =
        c["mapping"] == "SYMMETRIC" ? kernels::AffineMapping::Symmetric : kernels::AffineMapping::Asymmetric;
    auto blocks = kernels::affine_blocks(shape, block, "test");
    ASSERT_TRUE(blocks.ok());
    Tensor scale = Tensor::empty(DType::Float32, *blocks);
    Tensor zp = Tensor::empty(mapping == kernels::AffineMapping::Symmetric ? DType::Int8 : DType::Int32, *blocks);
    Status st = kernels::choose_qparams_affine_out(x, mapping, block, range, c["eps"].get<float>(), scale, zp);
    ASSERT_TRUE(st.ok()) << st.error().message();
    EXPECT_EQ(values(scale), json_floats(c["scale"]));
    EXPECT_EQ(values(zp), json_floats(c["zero_point"]));
    Tensor q = Tensor::empty(DType::Int8, shape);
    st = kernels::quantize_affine_out(x, block, scale, &zp, range, q);
    ASSERT_TRUE(st.ok()) << st.error().message();
    EXPECT_EQ(values(q), json_floats(c["q"]));
    Tensor d = Tensor::empty(DType::Float32, shape);
    st = kernels::dequantize_affine_out(q, block, scale, &zp, range, d);
    ASSERT_TRUE(st.ok()) << st.error().message();
    EXPECT_EQ(values(d), json_floats(c["dequantized"]));
    ++seen;
  }
  EXPECT_EQ(seen, 3);
}

TEST(AffineQuant, BadArgumentsAreErrors_NEG) {
  Tensor x = Tensor::empty(DType::Float32, {2, 6});
  Tensor scale = Tensor::empty(DType::Float32, {2, 1});
  Tensor q = Tensor::empty(DType::Int8, {2, 6});
  Status st = kernels::quantize_affine_out(x, {1, 4}, scale, nullptr, {}, q);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message(), "quantize_affine: block_size [1, 4] does not tile input [2, 6]");
  st = kernels::quantize_affine_out(x, {1, 3}, scale, nullptr, {}, q);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message(), "quantize_affine: scale [2, 1] must have one value per block (4)");
  st = kernels::dequantize_affine_out(x, {1, 6}, scale, nullptr, {}, q);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message(), "dequantize_affine: input is float32, but input_dtype says int8");
  st = kernels::quantize_affine_out(x, {1, 6}, scale, nullptr, {DType::Int8, -200, 127}, q);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message(), "quantize_affine: quant range [-200, 127] is outside int8's");
}

}  // namespace
}  // namespace lathe
