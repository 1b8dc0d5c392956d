// fuse_int8_weight_only_matmul (see the header)
//
//   BEFORE                                              AFTER
//
//   q ─► t ─► to(float32) ─┐                            q ─┐
//                     x ──►mm ─► mul ─► ...             x ─┼─► _weight_int8pack_mm ─► ...
//   scale ─► flatten ────────────┘                      s ─┘   (the mul node, retargeted)
//
// Records, one per candidate:
//   mul 'mul' rewritten to _weight_int8pack_mm (int8 weight 'p_fc_weight' is parameter 'fc.weight')
//   mul 'mul' kept: quantized weight 'q' is user input 'q'
#include "lathe/passes/fuse_int8_weight_only_matmul.h"

#include <optional>

#include "lathe/passes/quantization_matching.h"

namespace lathe {

namespace {

using namespace quant_match;

struct Plan {
  Node* mm = nullptr;
  Value* x = nullptr;
  Value* q = nullptr;
  Value* s = nullptr;
  std::vector<Node*> chain;  // what the fused op replaces
  std::string refused;
};

// mm(x, to(t(q), float32)) with q a placeholder: the structure, before any
// condition is checked.
std::optional<Plan> structure(Value* a, Value* s) {
  Plan p;
  p.mm = producer_if(skip_noop_casts(a), ops::aten::mm);
  if (!p.mm) return std::nullopt;
  Value* w = tensor_arg(p.mm, "mat2");
  Node* cast = cast_of(w);
  if (!cast || dtype_of(w) != DType::Float32) return std::nullopt;
  Value* t = tensor_arg(cast, "self");
  p.q = transposed(t);
  if (!p.q || !p.q->is_placeholder() || dtype_of(p.q) != DType::Int8) return std::nullopt;
  p.x = tensor_arg(p.mm, "self");
  p.s = s;
  for (Value* v = a; v != p.mm->output(); v = tensor_arg(v->producer(), "self")) p.chain.push_back(v->producer());
  p.chain.insert(p.chain.end(), {p.mm, cast, t->producer()});
  return p;
}

std::string check(const Constness& k, Node* mul, Plan& p) {
  if (!k.is_compile_time_constant(p.q)) return "quantized weight " + quoted(p.q) + " " + k.explain(p.q);
  if (!from_constants(k, p.s)) return "scales " + quoted(p.s) + " are not derived from constants by shape ops alone";
  // Every link of the chain feeds only the next one.
  const Node* next = mul;
  for (Node* n : p.chain) {
    if (!only_checked_besides(n->output(), next)) {
      return quoted(n->output()) + " has other users; fusing would compute it twice";
    }
    next = n;
  }
  auto N = static_dim(p.q, 0), K = static_dim(p.q, 1);
  if (rank(p.q) != 2 || !N || !K) return "quantized weight " + quoted(p.q) + " is not a static 2-D tensor";
  if (dtype_of(p.s) != DType::Float32 || rank(p.s) != 1 || static_dim(p.s, 0) != N) {
    return "scales " + quoted(p.s) + " are not float32 [" + std::to_string(*N) + "]";
  }
  if (dtype_of(p.x) != DType::Float32 || rank(p.x) != 2 || static_dim(p.x, 1) != K) {
    return "input " + quoted(p.x) + " is not float32 [M, " + std::to_string(*K) + "]";
  }
  return "";
}

// The candidate a mul is, trying both operand orders.
std::optional<Plan> match(const Constness& k, Node* mul) {
  return match_either_order<Plan>(k, mul, structure, check);
}

}  // namespace

Result<bool> FuseInt8WeightOnlyMatmul::run(ExportedProgram& program, PassContext& ctx) {
  return fuse_at_muls(program, ctx, "_weight_int8pack_mm", match, [](Rewriter& rw, Node* mul, const Plan& p) {
    std::vector<NamedArgument> args;
    args.push_back(NamedArgument{"self", TensorRef{p.x}, ArgKind::Positional});
    args.push_back(NamedArgument{"mat2", TensorRef{p.q}, ArgKind::Positional});
    args.push_back(NamedArgument{"scales", TensorRef{p.s}, ArgKind::Positional});
    return rw.retarget(mul, ops::aten::_weight_int8pack_mm, std::move(args));
  });
}

}  // namespace lathe
