// fuse_weight_only_quantized_linear
//
//   BEFORE                                             AFTER
//
//   q (int8) ─┐                                        q ──────┐
//   scales ───┼─► dequantize_per_channel ─► linear     scales ─┼─► _weight_int8pack_mm ─► add (bias)
//   zeros ────┘                 x ────────┘  ▲         x ──────┘
//                               b ───────────┘         b ───────────────────────────────────┘
//
// The linear node becomes the add (or, without a bias, the matmul) in place
// (Rewriter::retarget), so its value keeps its name, metadata and uses and
// an output spec naming it stays right. The dequantize, read by nothing
// after the rewrite, is erased; the zero-point input stays (unused) for
// remove_dead_code or whoever owns the signature.
//
// A candidate is a linear whose weight is produced by a quantize-family op.
// It is fused only when everything the fused op silently assumes holds:
//
//   * the weight is dequantize_per_channel (int8: axis 0, quant range
//     [-128, 127], dtype int8), dequantize_per_channel_group (int4: quant
//     range [-8, 7], dtype int8, group size dividing K) or torchao's
//     dequantize_affine with block [1, g] and range [-8, 7] (int4, what
//     torchao's IntxWeightOnlyConfig exports); out_dtype / output_dtype
//     float32;
//   * q, scales and zero points are compile-time constants (a parameter, an
//     unmutated buffer, a lifted constant): the fused op is what backends
//     prepack, and a mutated buffer or a runtime tensor would be read once
//     and then be wrong (linear-rewrite.md §2);
//   * the zero points are None or all 0, read from the stored tensor:
//     _weight_int8pack_mm and the groupwise op have no zero point, so an
//     asymmetric weight would silently lose its offsets;
//   * the dequantize has no other user (otherwise it would stay, and the
//     weight be read twice, quantized and dequantized);
//   * shapes and dtypes fit: x float32 [M, K] for _weight_int8pack_mm (it
//     takes a matrix; torch.export's decomposed linear on a 3-D input arrives
//     as view/addmm/view), [..., K] for Lathe's 4-bit op (like linear),
//     q int8 [N, K], scales float32 with N (int8) or N * K / g (int4)
//     entries, bias 1-D [N].
//
// Records, one per candidate:
//   linear 'linear' rewritten to _weight_int8pack_mm + add (int8 weight 'b_fc1_weight_int8' is buffer 'fc1.weight_int8')
//   linear 'linear' kept: zero points 'b_zp' are not all 0 (entry 3 is 5); _weight_int8pack_mm has no zero point
#include "lathe/passes/fuse_weight_only_quantized_linear.h"

#include <optional>
#include <unordered_set>

#include "lathe/ir/op_catalogue.h"
#include "lathe/ir/rewriter.h"
#include "lathe/passes/quantization_matching.h"

namespace lathe {

namespace {

using namespace quant_match;

using ops::quantized_decomposed::dequantize_per_channel;
using ops::quantized_decomposed::dequantize_per_channel_group;
using ops::torchao::dequantize_affine;

// A transpose nothing reads: what addmm_mm_to_linear leaves behind
// (t(dequantize(...)) fed the addmm it turned into this linear) until
// remove_dead_code runs. It does not count as a user, and goes with the
// dequantize.
bool dead_transpose(const Node* user) {
  if (!user) return false;  // a graph output
  if (!ops::is_transpose_or_permute(user->op_target())) return false;
  for (const Value* v : user->defined_values())
    if (v->has_uses()) return false;
  return true;
}

// What a candidate fuses into, or why not.
struct Plan {
  bool int4 = false;
  Node* dq = nullptr;
  Value* x = nullptr;
  Value* q = nullptr;
  Value* scales = nullptr;
  Value* zeros = nullptr;
  Value* bias = nullptr;
  int64_t group_size = 0;  // int4: the group the weight really uses
  std::string refused;
};

const char* op_of(const Plan& p) { return p.int4 ? "lathe.weight_int4_group_mm" : "_weight_int8pack_mm"; }

class Matcher {
 public:
  Matcher(const ExportedProgram& ep, const Constness& k) : ep_(ep), k_(k) {}

  // nullopt: not a candidate (not a linear, or its weight is not dequantized).
  std::optional<Plan> match(Node* n) const {
    if (n->op_target() != ops::aten::linear) return std::nullopt;
    Value* w = tensor_arg(n, "weight");
    if (!w || w->is_placeholder() || !ops::is_quantize(w->producer()->target())) return std::nullopt;
    Plan p;
    p.dq = w->producer();
    p.x = tensor_arg(n, "input");
    p.bias = tensor_arg(n, "bias");
    p.refused = check(n, w, p);
    return p;
  }

 private:
  std::string check(Node* n, Value* w, Plan& p) const {
    const OpTarget t = p.dq->op_target();
    if (t != dequantize_per_channel && t != dequantize_per_channel_group && t != dequantize_affine) {
      return "weight " + quoted(w) + " is " + p.dq->op_name() +
             "; only dequantize_per_channel (int8), dequantize_per_channel_group and torchao's dequantize_affine "
             "(int4) are fused";
    }
    const bool affine = t == dequantize_affine;
    p.q = tensor_arg(p.dq, "input");
    p.scales = tensor_arg(p.dq, affine ? "scale" : "scales");
    p.zeros = tensor_arg(p.dq, affine ? "zero_point" : "zero_points");
    if (!p.x || !p.q || !p.scales) return "its tensor arguments are not where the schemas put them";
    std::string why = check_constness(n, w, p);
    if (why.empty()) why = affine ? check_affine(p) : check_decomposed(p);
    if (why.empty()) why = check_shapes(p);
    if (why.empty() && p.zeros) why = check_zero_points(ep_, k_, p.zeros, op_of(p));
    return why;
  }

  // Constness first: it is the reason that matters most to backends.
  std::string check_constness(Node* n, Value* w, const Plan& p) const {
    for (auto [role, v] : {std::pair<const char*, Value*>{"quantized weight", p.q}, {"scales", p.scales},
                           {"zero points", p.zeros}}) {
      if (v && !k_.is_compile_time_constant(v)) return std::string(role) + " " + quoted(v) + " " + k_.explain(v);
    }
    size_t others = 0;
    for (const Use& u : w->uses()) {
      if (u.user != n && !dead_transpose(u.user)) ++others;
    }
    if (p.dq->defined_values().size() != 1 || others != 0) {
      return "dequantize " + quoted(w) + " has " + std::to_string(others) +
             " other user(s); fusing would keep it and read the weight twice";
    }
    return "";
  }

  static std::string range_text(const Node* dq, int64_t qmin, int64_t qmax) {
    return "quant range is [" + arg_text(dq, "quant_min") + ", " + arg_text(dq, "quant_max") + "], not [" +
           std::to_string(qmin) + ", " + std::to_string(qmax) + "]";
  }

  // quantized_decomposed: the range, dtype and axis the fused op assumes.
  std::string check_decomposed(Plan& p) const {
    const Node* dq = p.dq;
    p.int4 = dq->op_target() == dequantize_per_channel_group;
    const int64_t qmin = p.int4 ? -8 : -128, qmax = p.int4 ? 7 : 127;
    auto lo = int_arg(dq, "quant_min"), hi = int_arg(dq, "quant_max");
    if (!lo || !hi || *lo != qmin || *hi != qmax) return range_text(dq, qmin, qmax);
    if (dtype_arg(dq, "dtype", std::nullopt) != DType::Int8) return "dtype is " + arg_text(dq, "dtype") + ", not int8";
    const char* out_name = p.int4 ? "output_dtype" : "out_dtype";
    if (dtype_arg(dq, out_name, DType::Float32) != DType::Float32) {
      return std::string(out_name) + " is " + arg_text(dq, out_name) + ", not float32";
    }
    if (p.int4) {
      auto g = int_arg(dq, "group_size");
      if (!g || *g <= 1) return "group_size is " + arg_text(dq, "group_size");
      auto K = static_dim(p.q, 1);
      p.group_size = (K && *g > *K && static_dim(p.scales, rank(p.scales) - 1) == 1) ? *K : *g;
      return "";
    }
    auto axis = int_arg(dq, "axis");
    if (!axis || (*axis != 0 && *axis != -2)) return "axis is " + arg_text(dq, "axis") + ", not 0 (output channels)";
    return "";
  }

  // torchao's dequantize_affine: 4-bit values in int8, one group of g per
  // block [1, g] of a row.
  std::string check_affine(Plan& p) const {
    const Node* dq = p.dq;
    p.int4 = true;
    auto lo = int_arg(dq, "quant_min"), hi = int_arg(dq, "quant_max");
    if (!lo || !hi || *lo != -8 || *hi != 7) {
      return range_text(dq, -8, 7) + " (int8 dequantize_affine weights are not fused; torchao's "
             "Int8WeightOnlyConfig exports mm * scale, see fuse_int8_weight_only_matmul)";
    }
    if (dtype_arg(dq, "input_dtype", std::nullopt) != DType::Int8) {
      return "input_dtype is " + arg_text(dq, "input_dtype") + ", not int8";
    }
    if (dtype_arg(dq, "output_dtype", DType::Float32) != DType::Float32) {
      return "output_dtype is " + arg_text(dq, "output_dtype") + ", not float32";
    }
    auto block = int_list_arg(dq, "block_size");
    if (!block || block->size() != 2 || (*block)[0] != 1 || (*block)[1] <= 1) {
      return "block_size is " + arg_text(dq, "block_size") + ", not [1, group]";
    }
    p.group_size = (*block)[1];
    return "";
  }

  std::string check_shapes(const Plan& p) const {
    const auto& qm = p.q->meta();
    const auto& sm = p.scales->meta();
    const auto& xm = p.x->meta();
    if (!qm || !sm || !xm) return "an operand has no metadata";
    if (qm->dtype != DType::Int8 || rank(p.q) != 2) return "quantized weight " + quoted(p.q) + " is not a 2-D int8 tensor";
    auto N = static_dim(p.q, 0), K = static_dim(p.q, 1);
    if (!N || !K) return "quantized weight " + quoted(p.q) + " has a symbolic shape";
    if (xm->dtype != DType::Float32) {
      return "input " + quoted(p.x) + " is " + std::string(dtype_name(xm->dtype)) + "; " + op_of(p) + " takes float32";
    }
    if (!p.int4 && rank(p.x) != 2) {
      return "input " + quoted(p.x) + " is " + std::to_string(rank(p.x)) + "-D; " + op_of(p) + " takes a 2-D input";
    }
    if (rank(p.x) < 1 || static_dim(p.x, rank(p.x) - 1) != K) return "input " + quoted(p.x) + " does not end in K";
    if (sm->dtype != DType::Float32) return "scales " + quoted(p.scales) + " are not float32";
    if (p.int4 && *K % p.group_size != 0) {
      return "K = " + std::to_string(*K) + " is not a multiple of group_size " + std::to_string(p.group_size);
    }
    const int64_t want_scales = p.int4 ? *N * (*K / p.group_size) : *N;
    int64_t have = 1;
    for (size_t i = 0; i < rank(p.scales); ++i) {
      auto d = static_dim(p.scales, i);
      if (!d) return "scales " + quoted(p.scales) + " have a symbolic shape";
      have *= *d;
    }
    if (have != want_scales || (!p.int4 && rank(p.scales) != 1)) {
      return "scales " + quoted(p.scales) + " have " + std::to_string(have) + " entries, expected " +
             std::to_string(want_scales);
    }
    if (p.bias && (rank(p.bias) != 1 || static_dim(p.bias, 0) != N)) {
      return "bias " + quoted(p.bias) + " is not 1-D [" + std::to_string(*N) + "]";
    }
    return "";
  }

  const ExportedProgram& ep_;
  const Constness& k_;
};

// Turns the linear into the fused matmul (+ add for a bias) in place and
// erases the dequantize with whatever transposes of it nobody reads.
Status rewrite(Rewriter& rw, Node* n, const Plan& p, std::unordered_set<const Node*>& erased) {
  const std::string node = n->name();
  std::vector<NamedArgument> mm_args;
  mm_args.push_back(NamedArgument{"self", TensorRef{p.x}, ArgKind::Positional});
  mm_args.push_back(NamedArgument{"mat2", TensorRef{p.q}, ArgKind::Positional});
  mm_args.push_back(NamedArgument{"scales", TensorRef{p.scales}, ArgKind::Positional});
  if (p.int4) mm_args.push_back(NamedArgument{"group_size", Argument(p.group_size), ArgKind::Positional});
  const OpTarget target = p.int4 ? ops::lathe_ops::weight_int4_group_mm : ops::aten::_weight_int8pack_mm;
  if (p.bias) {
    const TensorMeta meta = *n->output()->meta();
    LATHE_ASSIGN_OR_RETURN(Value * mm, rw.create_call(target.str(), std::move(mm_args), meta,
                                                       node + (p.int4 ? "_int4_group_mm" : "_int8pack_mm"), n));
    std::vector<NamedArgument> add_args;
    add_args.push_back(NamedArgument{"self", TensorRef{mm}, ArgKind::Positional});
    add_args.push_back(NamedArgument{"other", TensorRef{p.bias}, ArgKind::Positional});
    LATHE_RETURN_IF_ERROR(rw.retarget(n, ops::aten::add_Tensor, std::move(add_args)));
  } else {
    LATHE_RETURN_IF_ERROR(rw.retarget(n, target, std::move(mm_args)));
  }
  std::vector<Node*> dead;
  for (const Use& u : p.dq->output()->uses()) dead.push_back(u.user);
  dead.push_back(p.dq);
  for (Node* d : dead) {
    erased.insert(d);
    LATHE_RETURN_IF_ERROR(rw.erase_node(d));
  }
  return Status::Ok();
}

}  // namespace

Result<bool> FuseWeightOnlyQuantizedLinear::run(ExportedProgram& program, PassContext& ctx) {
  // Matched against one snapshot of constness: a rewrite only turns a
  // linear into ops reading the same constants.
  Constness k(program);
  Matcher matcher(program, k);
  Rewriter rw(program);
  bool changed = false;
  std::vector<Node*> nodes;
  for (Node* n : rw.graph().nodes()) nodes.push_back(n);
  std::unordered_set<const Node*> erased;  // nodes of the snapshot erased since
  for (Node* n : nodes) {
    if (erased.count(n)) continue;
    std::optional<Plan> p = matcher.match(n);
    if (!p) continue;
    const std::string node = n->name();
    const std::string head = "linear '" + node + "' ";
    if (!p->refused.empty()) {
      ctx.kept(node, head + "kept: " + p->refused);
      continue;
    }
    LATHE_RETURN_IF_ERROR(rewrite(rw, n, *p, erased));
    changed = true;
    if (ctx.record_rewrites()) {
      ctx.rewritten(node, head + "rewritten to " + op_of(*p) + (p->bias ? " + add" : "") + " (" +
                              (p->int4 ? "4-bit groupwise weight " : "int8 weight ") + quoted(p->q) + " is " +
                              k.describe(p->q) + ")");
    }
  }
  return changed;
}

}  // namespace lathe
