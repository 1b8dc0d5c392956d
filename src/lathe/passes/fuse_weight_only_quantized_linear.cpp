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
//     [-128, 127], dtype int8) or dequantize_per_channel_group (int4: quant
//     range [-8, 7], dtype int8, group size dividing K); out_dtype /
//     output_dtype float32;
//   * q, scales and zero points are compile-time constants (a parameter, an
//     unmutated buffer, a lifted constant): the fused op is what backends
//     prepack, and a mutated buffer or a runtime tensor would be read once
//     and then be wrong (linear-rewrite.md §2);
//   * the zero points are None or all 0, read from the stored tensor:
//     _weight_int8pack_mm and the groupwise op have no zero point, so an
//     asymmetric weight would silently lose its offsets;
//   * the dequantize has no other user (otherwise it would stay, and the
//     weight be read twice, quantized and dequantized);
//   * shapes and dtypes fit: x float32 2-D [M, K] (the ops take a matrix;
//     torch.export's linear on a 3-D input arrives as view/addmm/view),
//     q int8 [N, K], scales float32 with N (int8) or N * K / g (int4)
//     entries, bias 1-D [N].
//
// Records, one per candidate:
//   linear 'linear' rewritten to _weight_int8pack_mm + add (int8 weight 'b_fc1_weight_int8' is buffer 'fc1.weight_int8')
//   linear 'linear' kept: zero points 'b_zp' are not all 0 (entry 3 is 5); _weight_int8pack_mm has no zero point
#include "lathe/passes/fuse_weight_only_quantized_linear.h"

#include <optional>
#include <unordered_set>

#include "lathe/analysis/constness.h"
#include "lathe/ir/literal_args.h"
#include "lathe/ir/op_catalogue.h"
#include "lathe/ir/printer.h"
#include "lathe/ir/rewriter.h"

namespace lathe {

namespace {

namespace arg = ops::arg;
using ops::quantized_decomposed::dequantize_per_channel;
using ops::quantized_decomposed::dequantize_per_channel_group;

std::string quoted(const Value* v) { return "'" + v->name() + "'"; }

// A Tensor / Tensor? argument: its value, nullptr for None or absent.
Value* tensor_arg(const Node* n, std::string_view name) { return tensor_input(*n, name); }

std::optional<int64_t> int_arg(const Node* n, std::string_view name) { return literal_int(*n, name); }

// A ScalarType argument; `absent` when the node leaves it at its default
// (None for out_dtype, i.e. float32).
std::optional<DType> dtype_arg(const Node* n, std::string_view name, std::optional<DType> absent) {
  const Argument* a = n->input(name);
  if (!a || a->is_none()) return absent;
  if (auto* s = a->get_if<ScalarTypeArg>()) return s->dtype;
  return std::nullopt;
}

std::string arg_text(const Node* n, std::string_view name) {
  const Argument* a = n->input(name);
  return a ? format_argument(*a) : "absent";
}

std::optional<int64_t> static_dim(const Value* v, size_t i) {
  const auto& m = v->meta();
  if (!m || i >= m->sizes.size() || !m->sizes[i].is_concrete()) return std::nullopt;
  return m->sizes[i].value();
}

size_t rank(const Value* v) { return v->meta() ? v->meta()->sizes.size() : 0; }

// Index of the first non-zero element of an integer tensor; nullopt if all
// are zero; -1 if the tensor cannot be read as integers.
std::optional<int64_t> first_nonzero(const Tensor& t, int64_t* value) {
  if (!t.check_fits().ok()) return -1;
  const int64_t n = t.numel();
  const size_t r = t.sizes.size();
  std::vector<int64_t> idx(r, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = t.storage_offset;
    for (size_t d = 0; d < r; ++d) off += idx[d] * t.strides[d];
    const std::byte* p = t.storage->data() + off * static_cast<int64_t>(dtype_size(t.dtype));
    int64_t v = 0;
    switch (t.dtype) {
      case DType::Int8: v = *reinterpret_cast<const int8_t*>(p); break;
      case DType::UInt8: v = *reinterpret_cast<const uint8_t*>(p); break;
      case DType::Int16: v = *reinterpret_cast<const int16_t*>(p); break;
      case DType::Int32: v = *reinterpret_cast<const int32_t*>(p); break;
      case DType::Int64: v = *reinterpret_cast<const int64_t*>(p); break;
      default: return -1;
    }
    if (v != 0) {
      *value = v;
      return i;
    }
    for (size_t d = r; d-- > 0;) {
      if (++idx[d] < t.sizes[d]) break;
      idx[d] = 0;
    }
  }
  return std::nullopt;
}

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
  Value* bias = nullptr;
  int64_t group_size = 0;
  std::string refused;
};

class Matcher {
 public:
  Matcher(const ExportedProgram& ep, const Constness& k) : ep_(ep), k_(k) {}

  // nullopt: not a candidate (not a linear, or its weight is not dequantized).
  std::optional<Plan> match(Node* n) const {
    if (n->op_target() != ops::aten::linear) return std::nullopt;
    Value* w = tensor_arg(n, arg::weight);
    if (!w || w->is_placeholder() || !ops::is_quantize(w->producer()->target())) return std::nullopt;
    Plan p;
    p.dq = w->producer();
    p.x = tensor_arg(n, arg::input);
    p.bias = tensor_arg(n, arg::bias);
    p.refused = check(n, w, p);
    return p;
  }

 private:
  std::string check(Node* n, Value* w, Plan& p) const {
    const Node* dq = p.dq;
    const OpTarget t = dq->op_target();
    if (t != dequantize_per_channel && t != dequantize_per_channel_group) {
      return "weight " + quoted(w) + " is " + dq->op_name() +
             "; only dequantize_per_channel (int8) and dequantize_per_channel_group (int4) are fused";
    }
    p.int4 = t == dequantize_per_channel_group;
    const std::string op = p.int4 ? "lathe.weight_int4_group_mm" : "_weight_int8pack_mm";
    p.q = tensor_arg(dq, arg::input);
    p.scales = tensor_arg(dq, arg::scales);
    Value* zeros = tensor_arg(dq, "zero_points");
    if (!p.x || !p.q || !p.scales) return "its tensor arguments are not where the schemas put them";
    // Constness first: it is the reason that matters most to backends.
    if (std::string why = check_constant_and_alone(n, w, p, zeros); !why.empty()) return why;
    if (std::string why = check_quantization(p); !why.empty()) return why;
    if (std::string why = check_shapes(p, op); !why.empty()) return why;
    return zeros ? check_zeros(zeros, op) : "";
  }

  // q, scales and zero points are compile-time constants, and the
  // dequantize feeds only this linear (and transposes left dead).
  std::string check_constant_and_alone(const Node* n, const Value* w, const Plan& p, const Value* zeros) const {
    for (auto [role, v] : {std::pair<const char*, const Value*>{"quantized weight", p.q}, {"scales", p.scales},
                           {"zero points", zeros}}) {
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

  // The quantization the fused op assumes.
  std::string check_quantization(const Plan& p) const {
    const Node* dq = p.dq;
    const int64_t qmin = p.int4 ? -8 : -128, qmax = p.int4 ? 7 : 127;
    auto lo = int_arg(dq, "quant_min"), hi = int_arg(dq, "quant_max");
    if (!lo || !hi || *lo != qmin || *hi != qmax) {
      return "quant range is [" + arg_text(dq, "quant_min") + ", " + arg_text(dq, "quant_max") + "], not [" +
             std::to_string(qmin) + ", " + std::to_string(qmax) + "]";
    }
    if (dtype_arg(dq, "dtype", std::nullopt) != DType::Int8) return "dtype is " + arg_text(dq, "dtype") + ", not int8";
    const char* out_name = p.int4 ? "output_dtype" : "out_dtype";
    if (dtype_arg(dq, out_name, DType::Float32) != DType::Float32) {
      return std::string(out_name) + " is " + arg_text(dq, out_name) + ", not float32";
    }
    if (!p.int4) {
      auto axis = int_arg(dq, "axis");
      if (!axis || (*axis != 0 && *axis != -2)) return "axis is " + arg_text(dq, "axis") + ", not 0 (output channels)";
    }
    return "";
  }

  // Shapes and dtypes; sets p.group_size (int4).
  std::string check_shapes(Plan& p, const std::string& op) const {
    const auto& qm = p.q->meta();
    const auto& sm = p.scales->meta();
    const auto& xm = p.x->meta();
    if (!qm || !sm || !xm) return "an operand has no metadata";
    if (qm->dtype != DType::Int8 || rank(p.q) != 2)
      return "quantized weight " + quoted(p.q) + " is not a 2-D int8 tensor";
    auto N = static_dim(p.q, 0), K = static_dim(p.q, 1);
    if (!N || !K) return "quantized weight " + quoted(p.q) + " has a symbolic shape";
    if (xm->dtype != DType::Float32) {
      return "input " + quoted(p.x) + " is " + std::string(dtype_name(xm->dtype)) + "; " + op + " takes float32";
    }
    if (rank(p.x) != 2) {
      return "input " + quoted(p.x) + " is " + std::to_string(rank(p.x)) + "-D; " + op + " takes a 2-D input";
    }
    if (sm->dtype != DType::Float32) return "scales " + quoted(p.scales) + " are not float32";
    int64_t want_scales = *N;
    if (p.int4) {
      auto g = int_arg(p.dq, arg::group_size);
      if (!g || *g <= 1) return "group_size is " + arg_text(p.dq, "group_size");
      p.group_size = (*g > *K && static_dim(p.scales, rank(p.scales) - 1) == 1) ? *K : *g;
      if (*K % p.group_size != 0) {
        return "K = " + std::to_string(*K) + " is not a multiple of group_size " + std::to_string(p.group_size);
      }
      want_scales = *N * (*K / p.group_size);
    }
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

  // Symmetric only: every stored zero point must be 0.
  std::string check_zeros(const Value* zeros, const std::string& op) const {
    const InputSpec* spec = zeros->is_placeholder() ? k_.input_spec(zeros) : nullptr;
    const Tensor* t = spec ? ep_.state_tensor(*spec) : nullptr;
    if (!t) return "zero points " + quoted(zeros) + " are not a stored tensor, so they cannot be checked to be 0";
    int64_t value = 0;
    std::optional<int64_t> at = first_nonzero(*t, &value);
    if (!at) return "";
    if (*at < 0) return "zero points " + quoted(zeros) + " are " + std::string(dtype_name(t->dtype)) + ", not integers";
    return "asymmetric weight: zero points " + quoted(zeros) + " are not all 0 (entry " + std::to_string(*at) +
           " is " + std::to_string(value) + "); " + op + " has no zero point";
  }

  const ExportedProgram& ep_;
  const Constness& k_;
};

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
    std::vector<NamedArgument> mm_args;
    mm_args.push_back(NamedArgument{std::string(arg::self), TensorRef{p->x}, ArgKind::Positional});
    mm_args.push_back(NamedArgument{std::string(arg::mat2), TensorRef{p->q}, ArgKind::Positional});
    mm_args.push_back(NamedArgument{std::string(arg::scales), TensorRef{p->scales}, ArgKind::Positional});
    if (p->int4) mm_args.push_back(NamedArgument{std::string(arg::group_size), Argument(p->group_size), ArgKind::Positional});
    const std::string target = (p->int4 ? ops::lathe_ops::weight_int4_group_mm : ops::aten::_weight_int8pack_mm).str();
    const std::string op = p->int4 ? "lathe.weight_int4_group_mm" : "_weight_int8pack_mm";
    if (p->bias) {
      const TensorMeta meta = *n->output()->meta();
      LATHE_ASSIGN_OR_RETURN(Value * mm, rw.create_call(target, std::move(mm_args), meta,
                                                         node + (p->int4 ? "_int4_group_mm" : "_int8pack_mm"), n));
      std::vector<NamedArgument> add_args;
      add_args.push_back(NamedArgument{std::string(arg::self), TensorRef{mm}, ArgKind::Positional});
      add_args.push_back(NamedArgument{std::string(arg::other), TensorRef{p->bias}, ArgKind::Positional});
      LATHE_RETURN_IF_ERROR(rw.retarget(n, ops::aten::add_Tensor, std::move(add_args)));
    } else {
      LATHE_RETURN_IF_ERROR(rw.retarget(n, target, std::move(mm_args)));
    }
    std::vector<Node*> dead;
    for (const Use& u : p->dq->output()->uses()) dead.push_back(u.user);
    dead.push_back(p->dq);
    for (Node* d : dead) {
      erased.insert(d);
      LATHE_RETURN_IF_ERROR(rw.erase_node(d));
    }
    changed = true;
    if (ctx.record_rewrites()) {
      ctx.rewritten(node, head + "rewritten to " + op + (p->bias ? " + add" : "") + " (" +
                              (p->int4 ? "4-bit groupwise weight " : "int8 weight ") + quoted(p->q) + " is " +
                              k.describe(p->q) + ")");
    }
  }
  return changed;
}

}  // namespace lathe
