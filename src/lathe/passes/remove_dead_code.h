// remove_dead_code: drops nodes nobody reads, when dropping them cannot
// change what the program does. See the .cpp for what counts as pure.
#pragma once

#include <string_view>

#include "lathe/ir/graph.h"
#include "lathe/passes/pass.h"

namespace lathe {

class RemoveDeadCode
    : public NamedPass<"remove_dead_code",
                       "drop unused pure nodes (inputs, mutation outputs and side-effecting ops are kept)"> {
 public:
  Result<bool> run(ExportedProgram& program, PassContext& ctx) override;
  // Drops only ops ops::is_effect_free() vouches for (ir/op_catalogue.h).
  Result<bool> run_on_graph(Graph& graph, PassContext& ctx);
};

}  // namespace lathe
