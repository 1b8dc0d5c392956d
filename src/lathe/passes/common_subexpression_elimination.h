// common_subexpression_elimination: a pure node that computes exactly what an
// earlier node computes (same op, same arguments) is replaced by it. See the
// .cpp for what counts as pure.
#pragma once

#include <string_view>

#include "lathe/passes/pass.h"

namespace lathe {

class CommonSubexpressionElimination : public Pass {
 public:
  static constexpr std::string_view kName = "common_subexpression_elimination";

  std::string_view name() const override { return kName; }
  std::string_view description() const override {
    return "merge pure nodes with the same op and arguments (impure, random and mutated values left alone)";
  }
  Result<bool> run(ExportedProgram& program, PassContext& ctx) override;
};

}  // namespace lathe
