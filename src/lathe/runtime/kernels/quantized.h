// Quantization kernels: PyTorch's decomposed (de)quantize ops
// (quantized_decomposed.*, torch/ao/quantization/fx/_decomposed.py) and the
// weight-only quantized matmuls the fuse_weight_only_quantized_linear pass
// produces.
//
//   quantize_per_tensor(x, scale, zp, qmin, qmax, dtype)   clamp(round(x * (1/scale)) + zp) -> dtype
//   dequantize_per_tensor(q, scale, zp, ..., out_dtype)    (float(q) - zp) * scale
//   quantize_per_channel(x, scales, zps, axis, ...)        per slice of `axis`
//   dequantize_per_channel(q, scales, zps?, axis, ...)     float(q - zp[c]) * scales[c]
//   dequantize_per_channel_group(q, scales, zps?, ..., group_size, output_dtype)
//                                                          2-D q; one scale per group_size
//                                                          consecutive elements of a row
//   _weight_int8pack_mm(x[M,K], w[N,K] int8, scales[N])     (x @ float(w)^T) * scales
//   lathe.weight_int4_group_mm(x[M,K], w[N,K] int8 in [-8, 7], scales[N, K/g], g)
//                                                          sum over groups of scales[n,j] *
//                                                          (x[:, group j] @ float(w[n, group j]))
//
// Arithmetic follows PyTorch's reference implementations step by step
// (which operations run in float32, which in the scales' dtype, rounding
// half to even), so the (de)quantize kernels match PyTorch bit for bit.
// The two matmuls accumulate x * q in float32 and apply the scale once per
// output (or once per group): the float result differs from
// linear(x, dequantize(w)) by accumulation rounding only.
//
// lathe.weight_int4_group_mm is Lathe's own op (PyTorch has no portable
// 4-bit groupwise matmul with these operands): the 4-bit values are kept
// one per int8 byte, as dequantize_per_channel_group takes them; a program
// that contains it loads in PyTorch only where the op is registered.
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
// out[M, N] float32.
Status weight_int8pack_mm_out(const Tensor& x, const Tensor& w, const Tensor& scales, Tensor& out);
Status weight_int4_group_mm_out(const Tensor& x, const Tensor& w, const Tensor& scales, int64_t group_size,
                                Tensor& out);

// The group size dequantize_per_channel_group really uses for a [N, K]
// weight: PyTorch falls back to K when group_size > K and the scales have
// one column (GPTQ's single-column case).
int64_t effective_group_size(int64_t group_size, int64_t k, const Tensor& scales);

}  // namespace lathe::kernels
