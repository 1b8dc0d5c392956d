// remove_dead_code
//
//   BEFORE                                AFTER
//
//   %t = aten.t(%w)          (unused)
//   %y = aten.linear(%x, %w, %b)          %y = aten.linear(%x, %w, %b)
//   output %y                             output %y
//
// Why so conservative: dropping a node is only sound if the node does
// nothing but compute its values. Kept, always:
//   - program inputs (even unused: they are the calling convention) and
//     anything an output reads (mutation outputs included: they are uses);
//   - nodes that define no value (they exist for their effect);
//   - in-place and out= ops (`aten.copy_.default`, `aten.add_.Tensor`,
//     `aten.add.out`): they write into an argument;
//   - asserts, prints, constraints, dependency tokens: their effect is the
//     point (`aten._assert_async`, `aten._assert_scalar`, ...);
//   - random ops: dropping one shifts the generator for every later one;
//   - anything outside aten and quantized_decomposed (higher_order ops,
//     custom ops, Python operators): Lathe does not know their effects.
// Nodes are visited last to first, so a dead chain goes in one sweep.
#include "lathe/passes/remove_dead_code.h"

#include <unordered_map>

#include "lathe/ir/op_catalogue.h"
#include "lathe/ir/rewriter.h"

namespace lathe {

namespace {

bool has_uses(const Node* n) {
  bool any_value = false;
  for (const Argument& out : n->outputs()) {
    if (const auto* t = out.get_if<TensorRef>()) {  // the common case, without a callback
      if (!t->value) continue;
      any_value = true;
      if (t->value->has_uses()) return true;
      continue;
    }
    bool used = false;
    out.for_each_value([&](Value* v) {
      any_value = true;
      used = used || v->has_uses();
    });
    if (used) return true;
  }
  // A node without values exists for its effect: treat it as used.
  return !any_value;
}

}  // namespace

Result<bool> RemoveDeadCode::run(ExportedProgram& program, PassContext& ctx) {
  return run_on_graph(program.graph(), ctx);
}

Result<bool> RemoveDeadCode::run_on_graph(Graph& graph, PassContext& ctx) {
  Rewriter rw(graph);
  bool changed = false;
  // Whether an op may be dropped depends on its name only: judge each
  // distinct op once (a graph has few), not every node.
  std::unordered_map<OpTarget, bool> removable;
  auto is_removable = [&](OpTarget op) {
    auto [it, fresh] = removable.try_emplace(op, false);
    if (fresh) it->second = ops::is_effect_free(op.str());
    return it->second;
  };
  // Last to first; only the current node is ever erased, so its
  // predecessor, read first, stays valid.
  for (Node* n = graph.last_node(); n;) {
    Node* prev = n->prev_node();
    if (!has_uses(n) && is_removable(n->op_target())) {
      LATHE_RETURN_IF_ERROR(rw.erase_node(n));
      changed = true;
    }
    n = prev;
  }
  return changed;
}

}  // namespace lathe
