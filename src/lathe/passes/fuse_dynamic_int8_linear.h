// fuse_dynamic_int8_linear: the dynamic-activation int8 linear as torchao's
// Int8DynamicActivationInt8WeightConfig exports it (torchao 0.18, PyTorch
// 2.13), per-token symmetric int8 activations times an int8 per-channel
// weight, becomes one op that quantizes the rows and multiplies in int8
// (VNNI vpdpbusd where the CPU has it):
//
//   s_x, z = torchao.choose_qparams_affine(x, 'SYMMETRIC', [1, .., 1, K], int8, -128, 127, eps, float32, ...)
//   q_x = torchao.quantize_affine(x, [1, .., 1, K], s_x, z, int8, -128, 127)
//   mul(mul(to(_int_mm(reshape(q_x, [-1, K]), t(q int8 [N, K])), float32), reshape(s_x, [-1, 1])), s [N])
//     -> lathe.dynamic_int8_mm(reshape(x, [-1, K]), q, s, eps)
//
// (no-op to.dtype casts around the intermediates are looked through). The
// outer mul is retargeted in place; the reshape of x is new when x has more
// than two dims; the rest, read by nothing else, is erased with its
// _assert_tensor_metadata checks. lathe.dynamic_int8_mm is Lathe's own op
// (runtime/kernels/dynamic_int8.h): it repeats torchao's arithmetic, so the
// result is unchanged bit for bit.
//
// Refused, with an explain record: q not a compile-time constant; s not
// derived from constants; a mapping other than SYMMETRIC, a block other than
// one row, a range or dtype other than int8 [-128, 127], a scale dtype other
// than float32; quantize_affine not reading choose_qparams_affine's own
// scale and zero point; an intermediate read elsewhere.
#pragma once

#include <string_view>

#include "lathe/passes/pass.h"

namespace lathe {

class FuseDynamicInt8Linear
    : public NamedPass<"fuse_dynamic_int8_linear",
                       "torchao dynamic int8 linear (choose_qparams_affine, quantize_affine, _int_mm, scales) -> "
                       "lathe.dynamic_int8_mm"> {
 public:
  Result<bool> run(ExportedProgram& program, PassContext& ctx) override;
};

}  // namespace lathe
