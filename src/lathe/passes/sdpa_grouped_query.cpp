// sdpa_grouped_query
//
//   BEFORE                                                  AFTER
//
//   %k: f32[B, Hkv, S, D]   (the KV cache)                  %k, %v unchanged
//   %u = unsqueeze(%k, 2)                  [B, Hkv, 1, S, D]
//   %e = expand(%u, [B, Hkv, g, S, D])     stride 0 on g
//   %kr = reshape(%e, [B, Hkv * g, S, D])  a copy
//   (the same for %v -> %vr)
//   %a = sdpa(%q, %kr, %vr, ...)                            %a = sdpa(%q, %k, %v, ..., enable_gqa=True)
//
// Why: grouped-query attention (Llama 2 70B, Llama 3, TinyLlama, Mistral,
// Qwen: fewer key/value heads than query heads) is exported from
// transformers' repeat_kv as this copy, g copies of every cached key and
// value made on every call. In a TinyLlama decode step that is 8 x 2 MiB
// written and read again per layer, for one query row: a tenth of the
// step. With enable_gqa the attention reads each key/value head in place
// for its g query heads (PyTorch's own semantics since 2.5: key and value
// repeat_interleave'd on dim -3), and the copies become dead code.
//
// Why it is exact: reshape of [B, Hkv, g, S, D] to [B, Hkv * g, S, D] puts
// copy j of head i at head i * g + j, so query head h meets key/value head
// h / g: what enable_gqa reads. Only rank-4 attentions whose key and value
// are both such copies, with the same g and the query's head count, are
// rewritten; sizes may be symbolic except the head counts.
#include "lathe/passes/sdpa_grouped_query.h"

#include <string>
#include <variant>
#include <vector>

#include "lathe/ir/literal_args.h"
#include "lathe/ir/op_catalogue.h"
#include "lathe/ir/rewriter.h"
#include "lathe/passes/quantization_matching.h"

namespace lathe {

namespace {

namespace aten = ops::aten;
namespace arg = ops::arg;
using quant_match::producer_if;

struct RepeatedHeads {
  Value* source;  // [B, Hkv, S, D]
  int64_t group;  // copies of each head
};

// The op producing `v` if it is one of `targets`, else nullptr.
Node* made_by(const Value* v, std::initializer_list<const OpTarget*> targets) {
  for (const OpTarget* t : targets)
    if (Node* p = producer_if(v, *t)) return p;
  return nullptr;
}

// `v` as g copies of each head of a [B, Hkv, S, D] tensor, or why not.
std::variant<RepeatedHeads, std::string> repeated_heads(const Value* v) {
  const Node* reshape = made_by(v, {&aten::reshape, &aten::view, &aten::_unsafe_view});
  const Node* expand = reshape ? producer_if(tensor_input(*reshape, arg::self), aten::expand) : nullptr;
  const Node* unsqueeze = expand ? producer_if(tensor_input(*expand, arg::self), aten::unsqueeze) : nullptr;
  if (!unsqueeze) return "'" + v->name() + "' is not reshape(expand(unsqueeze(...)))";
  Value* source = tensor_input(*unsqueeze, arg::self);
  const auto dim = literal_int(*unsqueeze, arg::dim);
  const Value* expanded = tensor_input(*reshape, arg::self);
  const TensorMeta *s = source->meta().get(), *e = expanded->meta().get(), *r = v->meta().get();
  if (!s || !e || !r || s->sizes.size() != 4 || e->sizes.size() != 5 || r->sizes.size() != 4 || !dim ||
      (*dim != 2 && *dim != -3))
    return "'" + v->name() + "' does not copy the heads (dim 1) of a rank-4 tensor";
  const SymDim &heads = s->sizes[1], &group = e->sizes[2], &all = r->sizes[1];
  if (!heads.is_concrete() || !group.is_concrete() || !all.is_concrete() || heads.value() * group.value() != all.value() ||
      e->sizes[0] != s->sizes[0] || e->sizes[1] != heads || e->sizes[3] != s->sizes[2] || e->sizes[4] != s->sizes[3] ||
      r->sizes[0] != s->sizes[0] || r->sizes[2] != s->sizes[2] || r->sizes[3] != s->sizes[3])
    return "'" + v->name() + "' is not [B, H, S, D] copied g times per head";
  return RepeatedHeads{source, group.value()};
}

// Both copies, or why `n` keeps its operands.
std::variant<std::pair<RepeatedHeads, RepeatedHeads>, std::string> grouped_operands(const Node& n) {
  if (literal_bool(n, arg::enable_gqa).value_or(false)) return std::string("it already uses enable_gqa");
  const Value* q = tensor_input(n, arg::query);
  const Value* k = tensor_input(n, arg::key);
  const Value* v = tensor_input(n, arg::value);
  if (!q || !k || !v) return std::string("its operands are not tensors");
  auto kr = repeated_heads(k);
  if (auto* why = std::get_if<std::string>(&kr)) return "key " + *why;
  auto vr = repeated_heads(v);
  if (auto* why = std::get_if<std::string>(&vr)) return "value " + *why;
  const RepeatedHeads &kh = std::get<RepeatedHeads>(kr), &vh = std::get<RepeatedHeads>(vr);
  if (kh.group != vh.group) return std::string("key and value repeat their heads a different number of times");
  if (!q->meta() || q->meta()->sizes.size() != 4 || q->meta()->sizes[1] != k->meta()->sizes[1])
    return std::string("the query's heads are not the copies'");
  return std::pair{kh, vh};
}

}  // namespace

Result<bool> SdpaGroupedQuery::run(ExportedProgram& program, PassContext& ctx) {
  Rewriter rw(program);
  bool changed = false;
  std::vector<Node*> attentions;
  for (Node* n : program.graph().nodes()) {
    if (n->op_target() == aten::scaled_dot_product_attention) attentions.push_back(n);
  }
  for (Node* n : attentions) {
    const std::string head = n->op_name() + " '" + n->name() + "' ";
    auto found = grouped_operands(*n);
    if (auto* why = std::get_if<std::string>(&found)) {
      ctx.kept(n->name(), head + "kept: " + *why);
      continue;
    }
    const auto& [k, v] = std::get<std::pair<RepeatedHeads, RepeatedHeads>>(found);
    std::vector<NamedArgument> inputs = n->inputs();
    bool has_flag = false;
    for (NamedArgument& a : inputs) {
      if (a.name == arg::key) a.arg = TensorRef{k.source};
      if (a.name == arg::value) a.arg = TensorRef{v.source};
      if (a.name == arg::enable_gqa) a.arg = true, has_flag = true;
    }
    if (!has_flag) inputs.push_back(NamedArgument{std::string(arg::enable_gqa), true, ArgKind::Keyword});
    LATHE_RETURN_IF_ERROR(rw.retarget(n, aten::scaled_dot_product_attention, std::move(inputs)));
    ctx.rewritten(n->name(), head + "reads key '" + k.source->name() + "' and value '" + v.source->name() +
                                 "' in place (enable_gqa, " + std::to_string(k.group) + " query heads per key/value head)");
    changed = true;
  }
  return changed;
}

}  // namespace lathe
