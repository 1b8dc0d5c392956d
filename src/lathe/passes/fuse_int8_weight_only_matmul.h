// fuse_int8_weight_only_matmul: the int8 weight-only linear as torchao's
// Int8WeightOnlyConfig exports it (torchao 0.18, PyTorch 2.13) becomes
// PyTorch's own weight-only matmul, which reads the int8 weight directly:
//
//   mul(mm(x, to(t(q int8 [N, K]), float32)), s float32 [N])
//     -> _weight_int8pack_mm(x, q, s)
//
// (torchao writes s as flatten(scale [N, 1]); the no-op to.dtype casts it
// wraps values in are looked through.) The mul node is retargeted in
// place, so its value keeps its name and uses (the reshape and the bias
// add_ after it); the mm, the cast and the transpose, read by nothing
// else, are erased with their _assert_tensor_metadata checks.
//
// Refused, with an explain record: q not a compile-time constant (a user
// input, a mutated buffer...); s not derived from constants by shape ops
// alone; q not int8 [N, K]; s not float32 [N]; x not float32 [M, K]; an
// intermediate read elsewhere (fusing would compute it twice).
#pragma once

#include <string_view>

#include "lathe/passes/pass.h"

namespace lathe {

class FuseInt8WeightOnlyMatmul
    : public NamedPass<"fuse_int8_weight_only_matmul",
                       "mul(mm(x, to(t(q int8 constant), float32)), scale) (torchao Int8WeightOnlyConfig) -> _weight_int8pack_mm"> {
 public:
  Result<bool> run(ExportedProgram& program, PassContext& ctx) override;
};

}  // namespace lathe
