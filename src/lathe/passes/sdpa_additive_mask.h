// sdpa_additive_mask: scaled_dot_product_attention with a bool attn_mask
// reads the float mask where(mask, 0, -inf) instead, made once per mask.
// See the .cpp.
#pragma once

#include "lathe/passes/pass.h"

namespace lathe {

class SdpaAdditiveMask
    : public NamedPass<"sdpa_additive_mask",
                       "scaled_dot_product_attention with a bool attn_mask reads where(mask, 0, -inf) instead "
                       "(one per mask), so a backend that takes float operands only can claim the attention"> {
 public:
  Result<bool> run(ExportedProgram& program, PassContext& ctx) override;
};

}  // namespace lathe
