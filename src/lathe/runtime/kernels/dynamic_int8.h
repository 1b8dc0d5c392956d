// Integer matmuls with int8 activations.
//
//   aten._int_mm(self[M, K] int8, mat2[K, N] int8) -> int32[M, N]       exact
//   lathe.dynamic_int8_mm(Tensor self, Tensor mat2, Tensor scales, float eps) -> Tensor
//       self float32 [M, K], mat2 int8 [N, K], scales float32 [N]:
//       each row of self quantized to int8 as torchao's dynamic per-token
//       symmetric scheme does it (choose_qparams_affine SYMMETRIC, block
//       [1, K], int8 [-128, 127], eps; quantize_affine), then
//       (float(q_x @ mat2^T) * row_scale) * scales
//
// lathe.dynamic_int8_mm is Lathe's own op (PyTorch 2.13 has no single op
// for it: torchao's export spells it choose_qparams_affine, quantize_affine,
// _int_mm and two multiplies; fuse_dynamic_int8_linear makes it). Every step
// is the reference's, in float32, and the integer sums are exact, so it
// gives PyTorch's numbers bit for bit. On AVX-512 VNNI it runs vpdpbusd on
// the weight repacked once at plan time (quantized_panels.h).
#pragma once

#include "lathe/runtime/kernels/simd.h"
#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

Status int_mm_out(const Tensor& self, const Tensor& mat2, Tensor& out);
Status dynamic_int8_mm_out(const Tensor& x, const Tensor& w, const Tensor& scales, double eps, Tensor& out,
                           simd::Isa isa = simd::best_isa());

}  // namespace lathe::kernels
