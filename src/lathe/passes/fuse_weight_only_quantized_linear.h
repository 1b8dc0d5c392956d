// fuse_weight_only_quantized_linear: a linear whose weight is a dequantized
// constant becomes a weight-only quantized matmul that reads the quantized
// weight directly (linear-rewrite.md §5):
//
//   linear(x, dequantize_per_channel(q int8, scales, zeros == 0, axis 0, -128, 127, int8)[, b])
//     -> _weight_int8pack_mm(x, q, scales)                    [+ add(., b)]
//   linear(x, dequantize_per_channel_group(q int8, scales, zeros == 0, -8, 7, int8, g, float32)[, b])
//   linear(x, torchao.dequantize_affine(q int8, [1, g], scale, zero_point == 0, int8, -8, 7)[, b])
//     -> lathe.weight_int4_group_mm(x, q, scales, g)          [+ add(., b)]
//
// It runs after addmm_mm_to_linear (which accepts dequantized constant
// weights precisely so that this fusion can see a linear). See the .cpp for
// every condition; each refusal leaves an explain record saying why.
#pragma once

#include <string_view>

#include "lathe/passes/pass.h"

namespace lathe {

class FuseWeightOnlyQuantizedLinear
    : public NamedPass<"fuse_weight_only_quantized_linear",
                       "linear(x, dequantize(int8/int4 constant weight), incl. torchao's dequantize_affine) -> "
                       "_weight_int8pack_mm / lathe.weight_int4_group_mm (symmetric weights only)"> {
 public:
  Result<bool> run(ExportedProgram& program, PassContext& ctx) override;
};

}  // namespace lathe
