// torchao's affine quantization ops (torchao/quantization/quant_primitives.py,
// torchao 0.18), which programs quantized by torchao's quantize_ keep in
// their export:
//
//   choose_qparams_affine(x, mapping_type, block_size, target_dtype, quant_min?, quant_max?, eps?,
//                         scale_dtype?, zero_point_dtype?, keepdim) -> (scale, zero_point)
//   quantize_affine(x, block_size, scale, zero_point?, output_dtype, quant_min?, quant_max?)
//                                             clamp(round(x * (1 / scale)) + zero_point)
//   dequantize_affine(q, block_size, scale, zero_point?, input_dtype, quant_min?, quant_max?, output_dtype)
//                                             (float(q) - zero_point) * scale
//
// A block is a tile of block_size elements (block_size[d] == size[d]: the
// whole dimension); scale and zero_point hold one value per block, in
// row-major block order, whatever their own shape. Arithmetic follows the
// Python reference step by step in float32 (amin/amax, the symmetric
// max / ((qmax - qmin) / 2), the eps clamp, rounding half to even), so the
// results match torchao's bit for bit on float32 inputs.
#pragma once

#include <string>

#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

enum class AffineMapping { Symmetric, SymmetricNoClippingErr, Asymmetric };

struct AffineRange {
  DType dtype = DType::Int8;
  int64_t quant_min = -128, quant_max = 127;
};

// Per block: the number of blocks along each dim of `sizes`, or an error
// naming the op when block_size does not tile the shape.
Result<std::vector<int64_t>> affine_blocks(const std::vector<int64_t>& sizes, const std::vector<int64_t>& block_size,
                                           const char* op);

// scale (scale_dtype, float32 here) and zero_point (zero_point_dtype) of
// `blocks` elements each; `input` float32.
Status choose_qparams_affine_out(const Tensor& input, AffineMapping mapping, const std::vector<int64_t>& block_size,
                                 AffineRange range, float eps, Tensor& scale, Tensor& zero_point);
// zero_point may be nullptr (None: 0).
Status quantize_affine_out(const Tensor& input, const std::vector<int64_t>& block_size, const Tensor& scale,
                           const Tensor* zero_point, AffineRange range, Tensor& out);
Status dequantize_affine_out(const Tensor& input, const std::vector<int64_t>& block_size, const Tensor& scale,
                             const Tensor* zero_point, AffineRange range, Tensor& out);

}  // namespace lathe::kernels
