// addmm_mm_to_linear: addmm(b, x, T(w)) -> linear(x, w, b) and
// mm(x, T(w)) -> linear(x, w), only when w is a compile-time constant
// weight (linear-rewrite.md §2). See the .cpp for the exact rules.
#pragma once

#include <string_view>

#include "lathe/ir/graph.h"
#include "lathe/passes/pass.h"

namespace lathe {

class AddmmMmToLinear
    : public NamedPass<"addmm_mm_to_linear",
                       "addmm(b, x, t(w)) / mm(x, t(w)) -> linear when w is a compile-time constant weight"> {
 public:
  Result<bool> run(ExportedProgram& program, PassContext& ctx) override;

  // For graph-only tools: with no signature a placeholder cannot be told
  // apart from a parameter, so every candidate whose weight rests on a
  // placeholder is kept, and one warning per call says so. Never guesses.
  Result<bool> run_on_graph(Graph& graph, PassContext& ctx);
};

}  // namespace lathe
