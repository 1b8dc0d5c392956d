// fuse_dynamic_int8_linear (see the header)
//
//   BEFORE                                                       AFTER
//
//   x ─► choose_qparams_affine ─► s_x ─────────► reshape ─┐
//   │                         └─► z ─┐                    │      x ─► reshape ─┐
//   └──────────────────► quantize_affine ─► reshape ─┐    │      q ────────────┼─► lathe.dynamic_int8_mm ─► ...
//   q ─► t ─────────────────────────────────────► _int_mm │      s ────────────┘   (the outer mul, retargeted)
//                                  to(float32) ─► mul ◄───┘
//   s ──────────────────────────────────────────► mul ─► ...
//
// Records, one per candidate:
//   mul 'mul_5' rewritten to lathe.dynamic_int8_mm (int8 weight 'p_fc_weight' is parameter 'fc.weight')
//   mul 'mul_5' kept: choose_qparams_affine 'getitem' maps "ASYMMETRIC", not SYMMETRIC
#include "lathe/passes/fuse_dynamic_int8_linear.h"

#include <limits>
#include <optional>
#include <unordered_set>

#include "lathe/passes/quantization_matching.h"

namespace lathe {

namespace {

using namespace quant_match;

struct Plan {
  Node* choose = nullptr;
  Node* quantize = nullptr;
  Node* rows = nullptr;  // reshape(q_x, [-1, K])
  Value* x = nullptr;
  Value* q = nullptr;
  Value* s = nullptr;
  std::vector<Node*> chain;  // every node the fused op replaces
  std::string refused;
};

// v, past no-op casts, each cast noted in `chain`.
Value* past_casts(Value* v, std::vector<Node*>& chain) {
  for (Value* u = skip_noop_casts(v); v != u; v = tensor_arg(v->producer(), "self")) chain.push_back(v->producer());
  return v;
}

Node* reshape_of(Value* v) {
  Node* n = producer_if(v, ops::aten::reshape);
  return n ? n : producer_if(v, ops::aten::view);
}

// The weight half: to(_int_mm(reshape(q_x), t(q)), float32). Fills rows,
// quantize and q.
bool weight_side(Value* a, Plan& p) {
  a = past_casts(a, p.chain);
  Node* cast = cast_of(a);
  if (!cast || dtype_of(a) != DType::Float32) return false;
  Node* mm = producer_if(tensor_arg(cast, "self"), ops::aten::_int_mm);
  if (!mm) return false;
  Value* t = tensor_arg(mm, "mat2");
  p.rows = reshape_of(tensor_arg(mm, "self"));
  p.quantize = p.rows ? producer_if(tensor_arg(p.rows, "self"), ops::torchao::quantize_affine) : nullptr;
  p.q = transposed(t);
  if (!p.quantize || !p.q || !p.q->is_placeholder()) return false;
  p.chain.insert(p.chain.end(), {cast, mm, t->producer(), p.rows, p.quantize});
  return true;
}

// The activation-scale half: reshape(s_x, [-1, 1]) of choose_qparams_affine's
// scale. Fills choose.
bool scale_side(Value* b, Plan& p) {
  Node* r = reshape_of(past_casts(b, p.chain));
  Value* sx = r ? tensor_arg(r, "self") : nullptr;
  p.choose = producer_if(sx, ops::torchao::choose_qparams_affine);
  if (!p.choose || p.choose->defined_values().size() != 2 || p.choose->defined_values()[0] != sx) return false;
  p.chain.insert(p.chain.end(), {r, p.choose});
  return true;
}

// The structure under the outer mul(a, s), before any condition is checked.
std::optional<Plan> structure(Value* a, Value* s) {
  Plan p;
  p.s = s;
  Node* inner = producer_if(past_casts(a, p.chain), ops::aten::mul_Tensor);
  if (!inner) return std::nullopt;
  p.chain.push_back(inner);
  Value* u = tensor_arg(inner, "self");
  Value* v = tensor_arg(inner, "other");
  const size_t base = p.chain.size();
  for (int order = 0; order < 2; ++order, std::swap(u, v)) {
    p.chain.resize(base);
    if (u && v && weight_side(u, p) && scale_side(v, p)) {
      p.x = tensor_arg(p.choose, "input");
      return p;
    }
  }
  return std::nullopt;
}

// The block [1, ..., 1, K] of one row of x.
bool one_row(const std::optional<std::vector<int64_t>>& block, const Value* x, int64_t K) {
  if (!block || block->size() != rank(x) || block->empty() || block->back() != K) return false;
  for (size_t i = 0; i + 1 < block->size(); ++i) {
    if ((*block)[i] != 1) return false;
  }
  return true;
}

bool int8_range(const Node* n) {
  return int_arg(n, "quant_min").value_or(-128) == -128 && int_arg(n, "quant_max").value_or(127) == 127;
}

// torchao's arguments: symmetric, one row per block, int8 [-128, 127],
// float32 scales, and quantize_affine reading exactly these qparams.
std::string check_qparams(const Plan& p, int64_t K) {
  const Node* c = p.choose;
  const std::string label = "choose_qparams_affine " + quoted(c->defined_values()[0]);
  if (string_arg(c, "mapping_type") != "SYMMETRIC") return label + " maps " + arg_text(c, "mapping_type") + ", not SYMMETRIC";
  if (!one_row(int_list_arg(c, "block_size"), p.x, K)) return label + " has block " + arg_text(c, "block_size") + ", not one row";
  if (dtype_arg(c, "target_dtype", std::nullopt) != DType::Int8 || !int8_range(c)) {
    return label + " targets " + arg_text(c, "target_dtype") + " [" + arg_text(c, "quant_min") + ", " +
           arg_text(c, "quant_max") + "], not int8 [-128, 127]";
  }
  if (dtype_arg(c, "scale_dtype", DType::Float32) != DType::Float32) return label + " makes non-float32 scales";
  const Node* q = p.quantize;
  const std::vector<Value*> qp = c->defined_values();
  if (tensor_arg(q, "input") != p.x || tensor_arg(q, "scale") != qp[0] || tensor_arg(q, "zero_point") != qp[1] ||
      int_list_arg(q, "block_size") != int_list_arg(c, "block_size") ||
      dtype_arg(q, "output_dtype", std::nullopt) != DType::Int8 || !int8_range(q)) {
    return "quantize_affine " + quoted(q->output()) + " does not quantize the input with its own qparams to int8";
  }
  return "";
}

std::string check(const Constness& k, Node* root, const Plan& p) {
  if (!k.is_compile_time_constant(p.q)) return "quantized weight " + quoted(p.q) + " " + k.explain(p.q);
  if (!from_constants(k, p.s)) return "scales " + quoted(p.s) + " are not derived from constants by shape ops alone";
  std::unordered_set<const Node*> inside(p.chain.begin(), p.chain.end());
  inside.insert(root);
  for (const Node* n : p.chain) {
    for (const Value* v : n->defined_values()) {
      for (const Use& u : v->uses()) {
        if (!inside.count(u.user) && !is_metadata_check(u.user)) {
          return quoted(v) + " has users outside the pattern; fusing would compute it twice";
        }
      }
    }
  }
  auto N = static_dim(p.q, 0), K = static_dim(p.q, 1);
  if (dtype_of(p.q) != DType::Int8 || rank(p.q) != 2 || !N || !K) {
    return "quantized weight " + quoted(p.q) + " is not a static 2-D int8 tensor";
  }
  if (dtype_of(p.s) != DType::Float32 || rank(p.s) != 1 || static_dim(p.s, 0) != N) {
    return "scales " + quoted(p.s) + " are not float32 [" + std::to_string(*N) + "]";
  }
  if (dtype_of(p.x) != DType::Float32 || rank(p.x) < 2 || static_dim(p.x, rank(p.x) - 1) != K) {
    return "input " + quoted(p.x) + " is not float32 [..., " + std::to_string(*K) + "]";
  }
  if (rank(p.rows->output()) != 2) return quoted(p.rows->output()) + " is not the 2-D rows of the input";
  return check_qparams(p, *K);
}

std::optional<Plan> match(const Constness& k, Node* root) {
  return match_either_order<Plan>(k, root, structure, check);
}

// x as the 2-D rows the op takes: x itself, or a new reshape(x, [-1, K])
// (the metadata of the reshape of q_x it replaces, in float32).
Result<Value*> rows_of_x(Rewriter& rw, const Plan& p, Node* before) {
  if (rank(p.x) == 2) return p.x;
  TensorMeta meta = *p.rows->output()->meta();
  meta.dtype = DType::Float32;
  std::vector<NamedArgument> args;
  args.push_back(NamedArgument{"self", TensorRef{p.x}, ArgKind::Positional});
  args.push_back(NamedArgument{"shape", IntList{{-1, *static_dim(p.q, 1)}}, ArgKind::Positional});
  return rw.create_call(ops::aten::reshape.str(), std::move(args), meta, p.x->name() + "_rows", before);
}

}  // namespace

Result<bool> FuseDynamicInt8Linear::run(ExportedProgram& program, PassContext& ctx) {
  return fuse_at_muls(program, ctx, "lathe.dynamic_int8_mm", match, [](Rewriter& rw, Node* mul, const Plan& p) -> Status {
    const double eps = float_arg(p.choose, "eps").value_or(std::numeric_limits<float>::min());
    LATHE_ASSIGN_OR_RETURN(Value * x_rows, rows_of_x(rw, p, mul));
    std::vector<NamedArgument> args;
    args.push_back(NamedArgument{"self", TensorRef{x_rows}, ArgKind::Positional});
    args.push_back(NamedArgument{"mat2", TensorRef{p.q}, ArgKind::Positional});
    args.push_back(NamedArgument{"scales", TensorRef{p.s}, ArgKind::Positional});
    args.push_back(NamedArgument{"eps", Argument(eps), ArgKind::Positional});
    return rw.retarget(mul, ops::lathe_ops::dynamic_int8_mm, std::move(args));
  });
}

}  // namespace lathe
