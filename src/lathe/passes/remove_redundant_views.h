// remove_redundant_views: view of view, views to the same shape, permutations
// that cancel (t(t(x)), permute(permute(x, p), p^-1), transpose twice).
// See the .cpp for the rules.
#pragma once

#include <string_view>

#include "lathe/passes/pass.h"

namespace lathe {

class RemoveRedundantViews : public Pass {
 public:
  static constexpr std::string_view kName = "remove_redundant_views";

  std::string_view name() const override { return kName; }
  std::string_view description() const override {
    return "collapse view-of-view, drop views to the same shape and permutations that cancel (t(t(x)))";
  }
  Result<bool> run(ExportedProgram& program, PassContext& ctx) override;
};

}  // namespace lathe
