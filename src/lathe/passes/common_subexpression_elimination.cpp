// common_subexpression_elimination
//
//   BEFORE                                  AFTER
//
//   %a = aten.relu(%x)                      %a = aten.relu(%x)
//   %b = aten.relu(%x)
//   %c = aten.add.Tensor(%a, %b)            %c = aten.add.Tensor(%a, %a)
//
// Two nodes are the same computation when they have the same target and the
// same arguments (names, values they read, literals — compared as the
// printer writes them, so 1 and 1.0 differ, as they do for type promotion)
// and define values of the same metadata. The later one's values are
// replaced by the earlier one's (graph outputs included) and it is erased.
// Nodes are visited in order, so merging one makes its users comparable.
//
// Only pure nodes take part (remove_dead_code's list: known aten and
// quantized_decomposed ops; no in-place, out=, random, assert or effectful
// op, nothing outside those namespaces), and of those not:
//   - uninitialised allocations (empty, empty_like, new_empty,
//     empty_strided): two of them are two buffers, not one value;
//   - a node that reads or defines a tensor that some impure node (an
//     in-place op, a custom op...) also reads: it may be mutated, so two
//     reads of it need not see the same contents, and two results written
//     into must stay two buffers.
#include "lathe/passes/common_subexpression_elimination.h"

#include <unordered_map>
#include <unordered_set>

#include "lathe/ir/op_catalogue.h"
#include "lathe/ir/printer.h"
#include "lathe/ir/rewriter.h"

namespace lathe {

namespace {

std::string key_of(const Node* n) {
  std::string key = n->target();
  for (const auto& in : n->inputs()) key += "|" + in.name + "=" + format_argument(in.arg);
  key += "|->";
  for (const Argument& o : n->outputs()) key += o.is<TensorList>() ? "L" + std::to_string(o.as<TensorList>().items.size()) : "V";
  return key;
}

bool same_meta(const Node* a, const Node* b) {
  std::vector<Value*> va = a->defined_values(), vb = b->defined_values();
  if (va.size() != vb.size()) return false;
  for (size_t i = 0; i < va.size(); ++i)
    if (va[i]->kind() != vb[i]->kind() || va[i]->meta() != vb[i]->meta()) return false;
  return true;
}

}  // namespace

Result<bool> CommonSubexpressionElimination::run(ExportedProgram& program, PassContext& ctx) {
  Graph& g = program.graph();
  // Tensors an impure node reads may be written by it.
  std::unordered_set<const Value*> touched;
  for (const Node* n : g.nodes()) {
    if (ops::is_effect_free(n->target())) continue;
    for (const Value* v : n->operand_values())
      if (v->kind() == ValueKind::Tensor) touched.insert(v);
  }
  auto eligible = [&](const Node* n) {
    if (!ops::is_effect_free(n->target()) || ops::is_allocation(n->target())) return false;
    std::vector<Value*> defs = n->defined_values();
    if (defs.empty()) return false;
    for (const Value* v : defs)
      if (touched.count(v)) return false;
    for (const Value* v : n->operand_values())
      if (touched.count(v)) return false;
    return true;
  };

  Rewriter rw(program);
  std::unordered_map<std::string, Node*> seen;
  bool changed = false;
  for (Node* n : g.nodes_snapshot()) {
    if (!eligible(n)) continue;
    auto [it, fresh] = seen.emplace(key_of(n), n);
    if (fresh) continue;
    Node* keep = it->second;
    if (!same_meta(keep, n)) continue;
    std::vector<Value*> from = n->defined_values(), to = keep->defined_values();
    for (size_t i = 0; i < from.size(); ++i) LATHE_RETURN_IF_ERROR(rw.replace_all_uses(from[i], to[i]));
    std::string name = n->name();
    ctx.rewritten(name, n->op_name() + " '" + name + "' computes what '" + keep->name() + "' computes: merged");
    LATHE_RETURN_IF_ERROR(rw.erase_node(n));
    changed = true;
  }
  return changed;
}

}  // namespace lathe
