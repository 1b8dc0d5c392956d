// Weight-only quantized linears: float32 activations against int8 or 4-bit
// weights, the ops fuse_weight_only_quantized_linear produces and PyTorch's
// own int4 matmul.
//
//   _weight_int8pack_mm(x[M, K], w[N, K] int8, scales[N])         (x @ float(w)^T) * scales
//   lathe.weight_int4_group_mm(x, w[N, K] int8 in [-8, 7], scales[N, K/g], g)
//                                                                 sum over groups j of scales[n, j] *
//                                                                 (x[:, group j] @ float(w[n, group j]));
//                                                                 x [..., K] -> [..., N], like linear
//   _weight_int4pack_mm_for_cpu(x, w[N, K/2] uint8, g, scales_and_zeros[K/g, N, 2])
//                                                                 w = (u - 8) * scale + zero, u the 4-bit
//                                                                 value PyTorch's packing stored
//
// lathe.weight_int4_group_mm is Lathe's own op, for the one-value-per-byte
// weights that dequantize_per_channel_group and torchao's
// dequantize_affine take: PyTorch has no matmul on those operands (its
// _weight_int4pack_mm_for_cpu needs weights repacked into its own layout,
// i.e. new saved weights). A program containing it loads in PyTorch only
// where the op is registered.
//
// The weights are repacked into quantized_panels.h's layouts; an executor
// does that once per node, when it plans the program (KernelInfo::prepare),
// the functions below on every call. Accumulation is in float32, with
// the scale applied once per output (per group for 4-bit): results differ
// from linear(x, dequantize(w)) by summation order and rounding only. On
// CPUs with AVX-512 VNNI the 4-bit kernels take x as three int8 limbs per
// group (activation_limbs.h: x to within 6.1e-8 of the group's largest
// |x|) in exact integer dot products; a row with a value that is not finite
// takes the float kernels.
#pragma once

#include "lathe/runtime/kernels/simd.h"
#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

// Where _convert_weight_to_int4pack_for_cpu puts each 4-bit value: it
// depends on the CPU PyTorch ran on (aten/src/ATen/native/cpu/int4mm_kernel.cpp),
// and nothing in the saved tensor says which.
//   Avx512: blocks of 64 channels; per k, byte d < 16 = ch d | ch d+32 << 4,
//           byte 16 + d = ch d+16 | ch d+48 << 4
//   Avx2:   blocks of 32 channels; per k, byte d = ch d | ch d+16 << 4
//   Plain:  blocks of 32 channels; per k, byte d = ch 2d | ch 2d+1 << 4
// A last block narrower than the full width uses Plain pairs in all three.
enum class TorchInt4Layout { Avx512, Avx2, Plain };

// The layout PyTorch uses on this CPU: Lathe reads such weights the way
// PyTorch would on the same machine.
TorchInt4Layout torch_int4_layout();

// out[M, N] float32. `isa` picks the microkernels (tests run each one).
Status weight_int8pack_mm_out(const Tensor& x, const Tensor& w, const Tensor& scales, Tensor& out,
                              simd::Isa isa = simd::best_isa());
Status weight_int4_group_mm_out(const Tensor& x, const Tensor& w, const Tensor& scales, int64_t group_size,
                                Tensor& out, simd::Isa isa = simd::best_isa());
Status weight_int4pack_mm_for_cpu_out(const Tensor& x, const Tensor& w, int64_t group_size,
                                      const Tensor& scales_and_zeros, Tensor& out,
                                      TorchInt4Layout layout = torch_int4_layout(), simd::Isa isa = simd::best_isa());

}  // namespace lathe::kernels
