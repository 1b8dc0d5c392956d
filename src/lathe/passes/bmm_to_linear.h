// bmm_to_linear: bmm(x, B) -> linear(x, w) when every batch slice of B is
// w^T for a 2-D compile-time constant weight w reached through layout ops
// only (expand, view, permute, unsqueeze, ...): the spellings of "x @ W^T"
// that einsum and 3-D linear decompositions produce. See the .cpp.
#pragma once

#include "lathe/passes/pass.h"

namespace lathe {

class BmmToLinear
    : public NamedPass<"bmm_to_linear",
                       "bmm(x, B) -> linear(x, w) when B is w^T broadcast over the batch (einsum, expanded "
                       "weights) and w is a compile-time constant weight"> {
 public:
  Result<bool> run(ExportedProgram& program, PassContext& ctx) override;
};

}  // namespace lathe
