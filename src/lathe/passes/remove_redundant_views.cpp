// remove_redundant_views
//
//   BEFORE                                   AFTER
//
//   %a = aten.view(%x, [4, 6])
//   %b = aten.view(%a, [2, 12])              %b = aten.view(%x, [2, 12])
//   %c = aten.view(%y, [2, 3])  (y: [2, 3])  uses of %c read %y
//   %t = aten.t(%w)
//   %u = aten.t(%t)                          uses of %u read %w
//   %p = aten.permute(%z, [2, 0, 1])
//   %q = aten.permute(%p, [1, 2, 0])         uses of %q read %z
//
// The rules, each checked from shapes and dims the node records:
//   - view / _unsafe_view of a view / _unsafe_view reads the inner view's
//     input (a valid view of a valid view is a valid view of the base);
//     reshape of a reshape or view reads its input the same way;
//   - view / _unsafe_view / reshape / alias to exactly the shape (and dtype)
//     of its input is the input;
//   - a permuting op (t, permute, transpose.int and their _copy forms) whose
//     dims are the identity is its input, and one applied to another whose
//     composition is the identity is the inner one's input. Permutations
//     that do not cancel are kept as they are (merging them changes which
//     op a later pattern sees, for no run-time gain: both are views).
// A value that some mutation output reads, or that would leave a graph
// output reading a program input directly, is kept (and said why). Nodes a
// rewrite leaves unused are erased (they are views: no effect).
#include "lathe/passes/remove_redundant_views.h"

#include <algorithm>
#include <unordered_set>

#include "lathe/ir/literal_args.h"
#include "lathe/ir/op_catalogue.h"
#include "lathe/ir/printer.h"
#include "lathe/ir/rewriter.h"

namespace lathe {

namespace {

Value* self_of(const Node* n) { return tensor_input(*n, ops::arg::self); }

bool is_identity(const std::vector<int64_t>& p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != static_cast<int64_t>(i)) return false;
  return true;
}

class ViewCleaner {
 public:
  ViewCleaner(ExportedProgram& ep, PassContext& ctx) : ep_(ep), ctx_(ctx), rw_(ep) {
    const auto& outs = ep.graph().outputs();
    for (size_t i = 0; i < outs.size(); ++i) {
      bool user = i >= ep.output_specs.size() || ep.output_specs[i].kind == OutputKind::UserOutput;
      outs[i].for_each_value([&](Value* v) { (user ? user_outputs_ : mutation_reads_).insert(v); });
    }
  }

  Result<bool> run() {
    for (Node* n : ep_.graph().nodes_snapshot()) {
      if (erased_.count(n)) continue;
      LATHE_RETURN_IF_ERROR(visit(n));
    }
    return changed_;
  }

 private:
  Status visit(Node* n) {
    // Copies: retarget() replaces the node's target string.
    const std::string op(ops::aten_op_name(n->target()));
    Value* in = self_of(n);
    Value* out = n->output();
    if (!in || !out || !out->meta() || !in->meta()) return Status::Ok();
    bool viewish = op == "view" || op == "_unsafe_view" || op == "reshape" || op == "alias";
    if (viewish && same_shape(in, out)) return forward(n, in, op == "alias" ? "an alias" : "a " + op + " to the same shape");
    if (auto p = ops::permutation_of(*n)) {
      if (is_identity(*p)) return forward(n, in, "an identity permutation");
      Node* inner = in->producer();
      if (inner) {
        if (auto q = ops::permutation_of(*inner)) {
          // out dim j = in dim p[j] = base dim q[p[j]].
          std::vector<int64_t> composed(p->size());
          bool ok = q->size() == p->size();
          for (size_t j = 0; ok && j < p->size(); ++j) composed[j] = (*q)[(*p)[j]];
          if (ok && is_identity(composed)) return forward(n, self_of(inner), "cancels '" + inner->name() + "'");
        }
      }
      return Status::Ok();
    }
    Node* inner = in->producer();
    if (!inner) return Status::Ok();
    const std::string inner_op(ops::aten_op_name(inner->target()));
    bool inner_view = inner_op == "view" || inner_op == "_unsafe_view";
    bool collapse = ((op == "view" || op == "_unsafe_view") && inner_view) ||
                    (op == "reshape" && (inner_view || inner_op == "reshape"));
    Value* base = self_of(inner);
    if (!collapse || !base) return Status::Ok();
    std::vector<NamedArgument> args = n->inputs();
    for (auto& a : args)
      if (a.name == "self") a.arg = TensorRef{base};
    std::string name = n->name();
    LATHE_RETURN_IF_ERROR(rw_.retarget(n, n->target(), std::move(args)));
    changed_ = true;
    ctx_.rewritten(name, op + " '" + name + "' now reads '" + base->name() + "' (skips " + inner_op + " '" +
                             inner->name() + "')");
    return erase_if_dead(inner);
  }

  static bool same_shape(const Value* a, const Value* b) {
    auto sa = a->meta()->concrete_sizes(), sb = b->meta()->concrete_sizes();
    return sa && sb && *sa == *sb && a->meta()->dtype == b->meta()->dtype;
  }

  // Every use of n's value reads `to` instead; n (and what it read, if now
  // unused) goes.
  Status forward(Node* n, Value* to, const std::string& why) {
    Value* from = n->output();
    std::string head = n->op_name() + " '" + n->name() + "' ";
    if (!to) return Status::Ok();
    if (mutation_reads_.count(from)) {
      ctx_.kept(n->name(), head + "kept: a mutation output reads it");
      return Status::Ok();
    }
    if (to->is_placeholder() && user_outputs_.count(from)) {
      ctx_.kept(n->name(), head + "kept: removing it would return program input '" + to->name() + "' itself");
      return Status::Ok();
    }
    if (to->meta() && from->meta() && to->meta()->dtype != from->meta()->dtype) return Status::Ok();
    Node* inner = n->operand_values().empty() ? nullptr : self_of(n)->producer();
    LATHE_RETURN_IF_ERROR(rw_.replace_all_uses(from, to));
    if (user_outputs_.erase(from)) user_outputs_.insert(to);
    changed_ = true;
    ctx_.rewritten(n->name(), head + "removed: " + why + "; its users read '" + to->name() + "'");
    LATHE_RETURN_IF_ERROR(erase_if_dead(n));
    return inner ? erase_if_dead(inner) : Status::Ok();
  }

  Status erase_if_dead(Node* n) {
    if (!n || erased_.count(n) || !ops::is_layout_only(n->target())) return Status::Ok();
    for (const Value* v : n->defined_values())
      if (v->has_uses()) return Status::Ok();
    erased_.insert(n);
    return rw_.erase_node(n);
  }

  ExportedProgram& ep_;
  PassContext& ctx_;
  Rewriter rw_;
  std::unordered_set<const Value*> user_outputs_, mutation_reads_;
  std::unordered_set<const Node*> erased_;
  bool changed_ = false;
};

}  // namespace

Result<bool> RemoveRedundantViews::run(ExportedProgram& program, PassContext& ctx) {
  return ViewCleaner(program, ctx).run();
}

}  // namespace lathe
