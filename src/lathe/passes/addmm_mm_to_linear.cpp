// addmm_mm_to_linear
//
//   BEFORE                                    AFTER
//
//   w ──► t(w) / permute(w, [1, 0]) ──┐
//   x ────────────────────────────────┤       x ──┐
//   b ────────────────────────────────┴►addmm  w ──┼──► linear(x, w, b)
//                                              b ──┘
//   mm(x, T(w))  ->  linear(x, w)
//
// The addmm/mm node becomes the linear in place (Rewriter::retarget): its
// value keeps its name, metadata and every use, so the output spec that
// named it names the linear now, and nothing downstream moves (ONNX
// Runtime's "the fused node takes over the last node's outputs"). It is also
// the cheapest rewrite: no node, value or name is created or destroyed. The
// transpose is left for remove_dead_code if nothing else reads it.
//
// Why a guard: backends prepack a linear's weight when they build the
// delegate. Turning a matmul against a runtime matrix into a linear made the
// Vulkan delegate abort at load (linear-rewrite.md §2), so the rewrite fires
// only when w is a compile-time constant weight (analysis/constness.h: a
// parameter, a never-mutated buffer, a lifted constant, or q/dq of those).
// It also checks what the identity silently assumes: T really swaps the two
// dims of a 2-D w; addmm's alpha and beta are 1 (other values are kept, not
// scaled: a scaled rewrite would need a new constant and a mul, and backends
// would see a different pattern); the bias is 1-D with one entry per output
// feature (a 2-D addmm input is not a linear bias).
//
// Every candidate (each addmm/mm) leaves an explain record: rewritten, or
// kept and why, naming the operand and, for a computed one, its producer:
//   addmm 'addmm' rewritten to linear (weight 'p_fc_weight' is parameter 'fc.weight')
//   mm 'mm' kept: weight 'permute' is computed at run time by 'squeeze_1'
#include "lathe/passes/addmm_mm_to_linear.h"

#include <optional>

#include "lathe/analysis/constness.h"
#include "lathe/core/log.h"
#include "lathe/ir/op_catalogue.h"
#include "lathe/ir/printer.h"
#include "lathe/ir/rewriter.h"
#include "lathe/ir/sym_expr.h"

namespace lathe {

namespace {

namespace arg = ops::arg;

// What the matcher found: the operands of the linear to build, or why the
// candidate cannot be one (constness is judged after, by the caller).
struct Match {
  std::string op;  // "addmm" / "mm", for messages
  Value* input = nullptr;
  Value* transposed = nullptr;  // mat2 = T(w)
  Value* weight = nullptr;      // w
  Value* bias = nullptr;        // addmm only
  std::string refused;          // non-empty: kept, for this reason
};

std::string quoted(const Value* v) { return "'" + v->name() + "'"; }

bool is_transpose(OpTarget target, bool* needs_dims) {
  *needs_dims = target == ops::aten::permute || target == ops::aten::permute_copy;
  return ops::is_transpose_or_permute(target);
}

// addmm's alpha/beta: absent or exactly 1 (int or float literal).
std::optional<std::string> not_one(const Node* n, std::string_view name) {
  const Argument* a = n->input(name);
  if (!a) return std::nullopt;
  if (auto* i = a->get_if<int64_t>(); i && *i == 1) return std::nullopt;
  if (auto* d = a->get_if<double>(); d && *d == 1.0) return std::nullopt;
  if (auto* s = a->get_if<SymIntArg>(); s && !s->is_value() && s->literal() == 1) return std::nullopt;
  if (auto* s = a->get_if<SymFloatArg>(); s && !s->is_value() && s->literal() == 1.0) return std::nullopt;
  return std::string(name) + " is " + format_argument(*a) + ", not 1";
}

std::string dims_text(const std::vector<SymDim>& sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i)
    s += (i ? ", " : "") + (sizes[i].is_concrete() ? std::to_string(sizes[i].value()) : readable_sym_expr(sizes[i].expr().expr));
  return s + "]";
}

// mat2 must be T(w) for a 2-D w: t / t_copy, or permute(_copy) by [1, 0].
// Fills m.weight; returns why not, or "".
std::string match_transposed_weight(Match& m) {
  const Node* t = m.transposed->producer();
  bool needs_dims = false;
  if (!t) return "mat2 " + quoted(m.transposed) + " is a graph input, not a transposed weight";
  if (!is_transpose(t->op_target(), &needs_dims)) {
    return "mat2 " + quoted(m.transposed) + " is " + t->op_name() + ", not a transpose (t, permute [1, 0])";
  }
  const Argument* self = t->input(arg::self);
  m.weight = self ? self->tensor() : nullptr;
  if (!m.weight) return "mat2 " + quoted(m.transposed) + " transposes no tensor";
  const auto& wmeta = m.weight->meta();
  if (!wmeta) return "weight " + quoted(m.weight) + " has no shape metadata";
  if (wmeta->sizes.size() != 2) {
    return "weight " + quoted(m.weight) + " is " + std::to_string(wmeta->sizes.size()) + "-D, not 2-D";
  }
  if (!needs_dims) return "";
  const Argument* dims = t->input(arg::dims);
  const IntList* list = dims ? dims->get_if<IntList>() : nullptr;
  bool swap = list && list->items.size() == 2;
  // [1, 0] and its negative spellings ([-1, -2], [1, -2], ...).
  for (size_t i = 0; swap && i < 2; ++i) {
    int64_t d = list->items[i];
    swap = d >= -2 && d <= 1 && (d + 2) % 2 == static_cast<int64_t>(1 - i);
  }
  if (!swap) {
    return "mat2 " + quoted(m.transposed) + " permutes dims " + (dims ? format_argument(*dims) : "?") + ", not [1, 0]";
  }
  return "";
}

// addmm: alpha and beta 1, and a 1-D bias of one entry per output feature.
std::string match_addmm_bias(const Node* n, const Match& m) {
  for (std::string_view scalar : {arg::beta, arg::alpha}) {
    if (auto why = not_one(n, scalar)) return *why;
  }
  const auto& bmeta = m.bias->meta();
  const auto& wmeta = m.weight->meta();
  if (!bmeta) return "bias " + quoted(m.bias) + " has no shape metadata";
  if (bmeta->sizes.size() != 1) {
    return "bias " + quoted(m.bias) + " is " + std::to_string(bmeta->sizes.size()) + "-D " + dims_text(bmeta->sizes) +
           ", not a 1-D bias";
  }
  if (!(bmeta->sizes[0] == wmeta->sizes[0])) {
    return "bias " + quoted(m.bias) + " has shape " + dims_text(bmeta->sizes) + ", not " + dims_text({wmeta->sizes[0]}) +
           " (one entry per output feature)";
  }
  return "";
}

// Structural match of one candidate; nullopt if `n` is not addmm/mm at all.
std::optional<Match> match(const Node* n) {
  const OpTarget target = n->op_target();
  bool addmm = target == ops::aten::addmm;
  if (!addmm && !(target == ops::aten::mm)) return std::nullopt;
  Match m;
  m.op = addmm ? "addmm" : "mm";
  auto tensor = [&](std::string_view name) -> Value* {
    const Argument* a = n->input(name);
    return a ? a->tensor() : nullptr;
  };
  m.input = tensor(addmm ? arg::mat1 : arg::self);
  m.transposed = tensor(arg::mat2);
  if (addmm) m.bias = tensor(arg::self);
  if (!m.input || !m.transposed || (addmm && !m.bias)) {
    m.refused = "its tensor arguments are not where the aten schema puts them";
    return m;
  }
  m.refused = match_transposed_weight(m);
  if (m.refused.empty() && addmm) m.refused = match_addmm_bias(n, m);
  return m;
}

// Does w's non-constness rest on a placeholder nobody could classify (a
// bare graph)? Those are the refusals the warning is about.
bool rests_on_unclassified_input(const Constness& k, const Value* w, int depth = 0) {
  if (w->is_placeholder()) return k.origin(w) == Origin::Unknown;
  if (depth > 32 || !ops::is_quantize(w->producer()->target())) return false;
  bool any = false;
  for (const auto& in : w->producer()->inputs())
    in.arg.for_each_value([&](Value* u) { any = any || rests_on_unclassified_input(k, u, depth + 1); });
  return any;
}

// Runs over every candidate; returns whether something was rewritten.
Result<bool> rewrite_all(Rewriter& rw, const Constness& k, PassContext& ctx, size_t* unclassified) {
  bool changed = false;
  // Iterating the live node list is safe: retarget changes a node in place
  // and never inserts or erases one.
  for (Node* n : rw.graph().nodes()) {
    std::optional<Match> m = match(n);
    if (!m) continue;
    // Messages are built only when recorded: refusals always, rewrites
    // only with --explain.
    auto head = [&] { return m->op + " '" + n->name() + "' "; };
    if (!m->refused.empty()) {
      ctx.kept(n->name(), head() + "kept: " + m->refused);
      continue;
    }
    if (!k.is_constant_weight(m->weight)) {
      if (unclassified && rests_on_unclassified_input(k, m->weight)) ++*unclassified;
      ctx.kept(n->name(), head() + "kept: weight " + quoted(m->transposed) + " " + k.explain(m->weight));
      continue;
    }
    std::string node = ctx.record_rewrites() ? n->name() : std::string();
    std::string rewritten_head = ctx.record_rewrites() ? head() : std::string();
    std::vector<NamedArgument> args;
    args.reserve(3);
    args.push_back(NamedArgument{std::string(arg::input), TensorRef{m->input}, ArgKind::Positional});
    args.push_back(NamedArgument{std::string(arg::weight), TensorRef{m->weight}, ArgKind::Positional});
    if (m->bias) args.push_back(NamedArgument{std::string(arg::bias), TensorRef{m->bias}, ArgKind::Positional});
    Value* weight = m->weight;
    LATHE_RETURN_IF_ERROR(rw.retarget(n, ops::aten::linear, std::move(args)));
    changed = true;
    if (ctx.record_rewrites())
      ctx.rewritten(node, rewritten_head + "rewritten to linear (weight " + quoted(weight) + " is " + k.describe(weight) + ")");
  }
  return changed;
}

}  // namespace

Result<bool> AddmmMmToLinear::run(ExportedProgram& program, PassContext& ctx) {
  Constness k(program);
  Rewriter rw(program);
  return rewrite_all(rw, k, ctx, nullptr);
}

Result<bool> AddmmMmToLinear::run_on_graph(Graph& graph, PassContext& ctx) {
  Constness k(graph);
  Rewriter rw(graph);
  size_t unclassified = 0;
  LATHE_ASSIGN_OR_RETURN(bool changed, rewrite_all(rw, k, ctx, &unclassified));
  if (unclassified > 0) {
    log(LogLevel::Warning, std::string(kName) + " on a bare graph: kept " + std::to_string(unclassified) +
                               " candidate(s) whose weight is a graph input; without the program's signature a "
                               "parameter cannot be told from a user input, so none was rewritten");
  }
  return changed;
}

}  // namespace lathe
