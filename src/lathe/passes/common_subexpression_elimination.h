// common_subexpression_elimination: a pure node that computes exactly what an
// earlier node computes (same op, same arguments) is replaced by it. See the
// .cpp for what counts as pure.
#pragma once

#include <string_view>

#include "lathe/passes/pass.h"

namespace lathe {

class CommonSubexpressionElimination
    : public NamedPass<"common_subexpression_elimination",
                       "merge pure nodes with the same op and arguments (impure, random and mutated values left alone)"> {
 public:
  Result<bool> run(ExportedProgram& program, PassContext& ctx) override;
};

}  // namespace lathe
