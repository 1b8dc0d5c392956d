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

#include "lathe/ir/printer.h"
#include "lathe/ir/rewriter.h"

namespace lathe {

std::string_view aten_op_name(std::string_view target) {
  constexpr std::string_view kPrefix = "torch.ops.aten.";
  if (target.substr(0, kPrefix.size()) != kPrefix) return {};
  target.remove_prefix(kPrefix.size());
  return target.substr(0, target.find('.'));
}

bool is_layout_only_op(std::string_view target) {
  static const std::unordered_set<std::string_view> kOps = {
      "view", "_unsafe_view", "reshape", "_reshape_alias", "t", "permute", "transpose", "expand", "squeeze",
      "unsqueeze", "slice", "select", "narrow", "alias", "detach", "as_strided", "flatten", "unflatten", "split",
      "split_with_sizes", "unbind", "chunk", "clone", "contiguous", "lift_fresh_copy"};
  std::string_view name = aten_op_name(target);
  if (name.empty()) return false;
  constexpr std::string_view kCopy = "_copy";
  if (name.size() > kCopy.size() && name.substr(name.size() - kCopy.size()) == kCopy && name != "lift_fresh_copy")
    name.remove_suffix(kCopy.size());
  return kOps.count(name) != 0;
}

namespace {

Value* self_of(const Node* n) {
  const Argument* a = n->input("self");
  return a ? a->tensor() : nullptr;
}

std::optional<size_t> rank_of(const Value* v) {
  if (!v || !v->meta()) return std::nullopt;
  return v->meta()->sizes.size();
}

std::optional<int64_t> int_input(const Node* n, std::string_view name) {
  const Argument* a = n->input(name);
  if (!a) return std::nullopt;
  if (const auto* i = a->get_if<int64_t>()) return *i;
  if (const auto* s = a->get_if<SymIntArg>(); s && !s->is_value()) return s->literal();
  return std::nullopt;
}

std::optional<int64_t> normalise_dim(int64_t d, size_t rank) {
  int64_t r = static_cast<int64_t>(rank);
  if (d < 0) d += r;
  if (d < 0 || d >= std::max<int64_t>(r, 1)) return std::nullopt;
  return d;
}

bool is_identity(const std::vector<int64_t>& p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != static_cast<int64_t>(i)) return false;
  return true;
}

}  // namespace

std::optional<std::vector<int64_t>> permutation_of(const Node* n) {
  std::string_view op = aten_op_name(n->target());
  auto rank = rank_of(self_of(n));
  if (!rank) return std::nullopt;
  std::vector<int64_t> p(*rank);
  for (size_t i = 0; i < p.size(); ++i) p[i] = static_cast<int64_t>(i);
  if (op == "t" || op == "t_copy") {
    if (*rank == 2) std::swap(p[0], p[1]);
    return *rank <= 2 ? std::optional(p) : std::nullopt;
  }
  if (op == "transpose" || op == "transpose_copy") {
    auto d0 = int_input(n, "dim0"), d1 = int_input(n, "dim1");
    if (!d0 || !d1) return std::nullopt;
    auto a = normalise_dim(*d0, *rank), b = normalise_dim(*d1, *rank);
    if (!a || !b || p.empty()) return std::nullopt;
    std::swap(p[*a], p[*b]);
    return p;
  }
  if (op == "permute" || op == "permute_copy") {
    const Argument* a = n->input("dims");
    const IntList* dims = a ? a->get_if<IntList>() : nullptr;
    if (!dims || dims->items.size() != *rank) return std::nullopt;
    std::vector<bool> seen(*rank, false);
    for (size_t i = 0; i < *rank; ++i) {
      auto d = normalise_dim(dims->items[i], *rank);
      if (!d || seen[*d]) return std::nullopt;
      seen[*d] = true;
      p[i] = *d;
    }
    return p;
  }
  return std::nullopt;
}

namespace {

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
    const std::string op(aten_op_name(n->target()));
    Value* in = self_of(n);
    Value* out = n->output();
    if (!in || !out || !out->meta() || !in->meta()) return Status::Ok();
    bool viewish = op == "view" || op == "_unsafe_view" || op == "reshape" || op == "alias";
    if (viewish && same_shape(in, out)) return forward(n, in, op == "alias" ? "an alias" : "a " + op + " to the same shape");
    if (auto p = permutation_of(n)) {
      if (is_identity(*p)) return forward(n, in, "an identity permutation");
      Node* inner = in->producer();
      if (inner) {
        if (auto q = permutation_of(inner)) {
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
    const std::string inner_op(aten_op_name(inner->target()));
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
    if (!n || erased_.count(n) || !is_layout_only_op(n->target())) return Status::Ok();
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
