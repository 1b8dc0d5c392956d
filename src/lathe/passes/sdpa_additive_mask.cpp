// sdpa_additive_mask
//
//   BEFORE                                        AFTER
//
//   %m: b8[1, 1, S, S]                            %m: b8[1, 1, S, S]
//                                                 %m_additive: f32[1, 1, S, S] = where.Scalar(%m, 0.0, -inf)
//   %a0 = sdpa(%q0, %k0, %v0, attn_mask=%m)       %a0 = sdpa(%q0, %k0, %v0, attn_mask=%m_additive)
//   %a1 = sdpa(%q1, %k1, %v1, attn_mask=%m)       %a1 = sdpa(%q1, %k1, %v1, attn_mask=%m_additive)
//
// Why: transformers (5.x) hands every attention layer a bool mask, and a
// delegate's operands are float32 (XNNPACK's), so each attention stayed on
// the portable kernels and split the encoder into a delegate per layer
// (all-MiniLM-L6-v2: 7 delegates; ViT-B/16: 13). The float mask is made
// once per bool mask, outside the delegates, right before its first
// attention, and every attention of that mask reads it.
//
// Why it is exact: a bool mask means "-inf where false" added to the
// scores (PyTorch's documented semantics, and what the portable kernel
// does with one: runtime/kernels/attention.cpp turns it into exactly this
// additive mask), so the attention computes the same numbers, a row with
// no allowed key included (output 0, in the kernel's one softmax for
// both). Only float32 attentions are rewritten (the float mask takes the
// query's dtype, and where.Scalar makes float32), and only a tensor mask.
#include "lathe/passes/sdpa_additive_mask.h"

#include <limits>
#include <unordered_map>
#include <vector>

#include "lathe/ir/literal_args.h"
#include "lathe/ir/op_catalogue.h"
#include "lathe/ir/rewriter.h"

namespace lathe {

namespace {

namespace aten = ops::aten;
namespace arg = ops::arg;

// Why `n` keeps its mask ("" when it can read an additive one instead).
std::string keep_reason(const Node& n) {
  const Value* q = tensor_input(n, arg::query);
  if (!q || !q->meta() || q->meta()->dtype != DType::Float32) return "the query is not float32";
  return "";
}

}  // namespace

Result<bool> SdpaAdditiveMask::run(ExportedProgram& program, PassContext& ctx) {
  Rewriter rw(program);
  std::unordered_map<const Value*, Value*> additive;  // bool mask -> its float twin
  bool changed = false;
  std::vector<Node*> attentions;  // collected first: the walk below inserts nodes
  for (Node* n : program.graph().nodes()) {
    if (n->op_target() == aten::scaled_dot_product_attention) attentions.push_back(n);
  }
  for (Node* n : attentions) {
    Value* mask = tensor_input(*n, arg::attn_mask);
    if (!mask || !mask->meta() || mask->meta()->dtype != DType::Bool) continue;
    const std::string head = n->op_name() + " '" + n->name() + "' ";
    if (std::string why = keep_reason(*n); !why.empty()) {
      ctx.kept(n->name(), head + "kept its bool mask '" + mask->name() + "': " + why);
      continue;
    }
    Value*& twin = additive[mask];
    if (!twin) {
      TensorMeta meta = *mask->meta();
      meta.dtype = DType::Float32;
      LATHE_ASSIGN_OR_RETURN(
          twin, rw.create_call(aten::where_Scalar.str(),
                               {{"condition", TensorRef{mask}, ArgKind::Positional},
                                {"self", 0.0, ArgKind::Positional},
                                {"other", -std::numeric_limits<double>::infinity(), ArgKind::Positional}},
                               std::move(meta), mask->name() + "_additive", n));
    }
    std::vector<NamedArgument> inputs = n->inputs();
    for (NamedArgument& a : inputs) {
      if (a.name == arg::attn_mask) a.arg = TensorRef{twin};
    }
    LATHE_RETURN_IF_ERROR(rw.retarget(n, aten::scaled_dot_product_attention, std::move(inputs)));
    ctx.rewritten(n->name(), head + "reads '" + twin->name() + "' = where('" + mask->name() + "', 0, -inf) instead of the bool mask");
    changed = true;
  }
  return changed;
}

}  // namespace lathe
