// remove_redundant_views: view of view, views to the same shape, permutations
// that cancel (t(t(x)), permute(permute(x, p), p^-1), transpose twice).
// See the .cpp for the rules.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

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

// aten ops that only change how existing elements are addressed (views,
// reshapes, transposes, expand, slices, clones and their _copy forms): no
// arithmetic. constant_propagation leaves them at the edge of a folded region.
bool is_layout_only_op(std::string_view target);

// "torch.ops.aten.view.default" -> "view"; "" outside the aten namespace.
std::string_view aten_op_name(std::string_view target);

// The dims a permuting node applies to its input, for t / t_copy, permute /
// permute_copy and transpose.int / transpose_copy.int (normalised to
// 0..rank-1), or nullopt if `n` is not one or its rank is unknown.
std::optional<std::vector<int64_t>> permutation_of(const Node* n);

}  // namespace lathe
