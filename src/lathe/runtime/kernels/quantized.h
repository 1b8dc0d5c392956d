// Quantization kernels: PyTorch's decomposed (de)quantize ops
// (quantized_decomposed.*, torch/ao/quantization/fx/_decomposed.py). The
// quantized matmuls are in quantized_linear.h. Also ATen's fake quantization
// (aten.fake_quantize_per_{tensor,channel}_affine[_cachemask]), which QAT
// programs keep in their export.
//
//   quantize_per_tensor(x, scale, zp, qmin, qmax, dtype)   clamp(round(x * (1/scale)) + zp) -> dtype
//   dequantize_per_tensor(q, scale, zp, ..., out_dtype)    (float(q) - zp) * scale
//   quantize_per_channel(x, scales, zps, axis, ...)        per slice of `axis`
//   dequantize_per_channel(q, scales, zps?, axis, ...)     float(q - zp[c]) * scales[c]
//   dequantize_per_channel_group(q, scales, zps?, ..., group_size, output_dtype)
//                                                          2-D q; one scale per group_size
//                                                          consecutive elements of a row
//
// Arithmetic follows PyTorch's reference implementations step by step
// (which operations run in float32, which in the scales' dtype, rounding
// half to even), so the (de)quantize kernels match PyTorch bit for bit.
#pragma once

#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

// The integer range and storage dtype a (de)quantize op names.
struct QuantRange {
  int64_t quant_min = -128;
  int64_t quant_max = 127;
  DType dtype = DType::Int8;
};

// `out` (of the quantized dtype) = quantize(input float32).
Status quantize_per_tensor_out(const Tensor& input, double scale, int64_t zero_point, QuantRange range, Tensor& out);
// `out` (float32 or float64) = dequantize(input of range.dtype).
Status dequantize_per_tensor_out(const Tensor& input, double scale, int64_t zero_point, QuantRange range, Tensor& out);
Status quantize_per_channel_out(const Tensor& input, const Tensor& scales, const Tensor& zero_points, int64_t axis,
                                QuantRange range, Tensor& out);
// zero_points may be nullptr (None: symmetric).
Status dequantize_per_channel_out(const Tensor& input, const Tensor& scales, const Tensor* zero_points, int64_t axis,
                                  QuantRange range, Tensor& out);
Status dequantize_per_channel_group_out(const Tensor& input, const Tensor& scales, const Tensor* zero_points,
                                        QuantRange range, int64_t group_size, Tensor& out);

// The group size dequantize_per_channel_group really uses for a [N, K]
// weight: PyTorch falls back to K when group_size > K and the scales have
// one column (GPTQ's single-column case).
int64_t effective_group_size(int64_t group_size, int64_t k, const Tensor& scales);

// ATen's fake quantization (QAT observers): out = (clamp(round(x / scale)
// + zero_point, quant_min, quant_max) - zero_point) * scale with rounding half
// to even in float32 as ATen does (x * (1 / scale)); mask (optional) marks
// the elements whose quantized value was inside the range. Per channel,
// scale and zero_point hold one value per index of `axis`; a floating
// zero_point is added before rounding, as ATen's float-zero-point path.
Status fake_quantize_out(const Tensor& input, const Tensor& scale, const Tensor& zero_point, int64_t axis,
                         int64_t quant_min, int64_t quant_max, Tensor& out, Tensor* mask);

}  // namespace lathe::kernels
