// inline_grad_regions: the body of a torch.no_grad() region (and of a
// disabled autocast region) moved into the graph around it.
//
//   BEFORE                                          AFTER
//
//   %r = wrap_with_set_grad_enabled(False,          %u = aten.unsqueeze(%pos, 1)
//          submod_1{ u = unsqueeze(p, 1)            %f = aten.mul(%u, %inv_freq)
//                    f = mul(u, q) -> f },          uses of %r read %f
//          %pos, %inv_freq)
//
// Grad mode means nothing to an inference runtime, so the region is only a
// wall: every decoder LM transformers exports builds its rotary tables in
// one, where constant propagation cannot fold them and a backend cannot
// claim them. Kept (and said why): an enabled autocast region (it changes
// dtypes the body does not spell out), a body with a nested subgraph or a
// node whose outputs are not plain tensors.
#pragma once

#include "lathe/passes/pass.h"

namespace lathe {

class InlineGradRegions
    : public NamedPass<"inline_grad_regions",
                       "move the body of no_grad / disabled-autocast regions (wrap_with_set_grad_enabled, "
                       "wrap_with_autocast) into the graph"> {
 public:
  Result<bool> run(ExportedProgram& program, PassContext& ctx) override;
};

}  // namespace lathe
