// remove_redundant_views: view of view, views to the same shape, permutations
// that cancel (t(t(x)), permute(permute(x, p), p^-1), transpose twice).
// See the .cpp for the rules.
#pragma once

#include <string_view>

#include "lathe/passes/pass.h"

namespace lathe {

class RemoveRedundantViews
    : public NamedPass<"remove_redundant_views",
                       "collapse view-of-view, drop views to the same shape and permutations that cancel (t(t(x)))"> {
 public:
  Result<bool> run(ExportedProgram& program, PassContext& ctx) override;
};

}  // namespace lathe
