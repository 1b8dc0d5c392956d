// XnnpackBackend: what it claims (support) and how a claimed group becomes
// a payload (preprocess). The runtime half is in xnnpack_runtime.cpp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "lathe/backends/payload.h"
#include "lathe/backends/xnnpack_backend.h"

namespace lathe {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string_view short_op(const Node& n) {
  std::string_view t = n.target();
  if (t.starts_with("torch.ops.")) t.remove_prefix(10);
  return t;
}

// ---- literal arguments -------------------------------------------------------------------

std::optional<int64_t> lit_int(const Node& n, std::string_view name) {
  const Argument* a = n.input(name);
  if (!a) return std::nullopt;
  if (auto* i = a->get_if<int64_t>()) return *i;
  if (auto* s = a->get_if<SymIntArg>(); s && !s->is_value()) return s->literal();
  if (auto* b = a->get_if<bool>()) return *b ? 1 : 0;
  return std::nullopt;
}

// Like lit_int, but an argument the node omits is at its schema default
// (exported graphs leave defaulted arguments out, e.g. conv2d's groups=1).
std::optional<int64_t> lit_int_or(const Node& n, std::string_view name, int64_t dflt) {
  return n.input(name) ? lit_int(n, name) : std::optional<int64_t>(dflt);
}

std::optional<double> lit_number(const Node& n, std::string_view name) {
  const Argument* a = n.input(name);
  if (!a) return std::nullopt;
  if (auto* d = a->get_if<double>()) return *d;
  if (auto* f = a->get_if<SymFloatArg>(); f && !f->is_value()) return f->literal();
  if (auto i = lit_int(n, name)) return static_cast<double>(*i);
  return std::nullopt;
}

std::optional<bool> lit_bool(const Node& n, std::string_view name) {
  const Argument* a = n.input(name);
  if (!a) return std::nullopt;
  if (auto* b = a->get_if<bool>()) return *b;
  return std::nullopt;
}

bool is_none_arg(const Node& n, std::string_view name) {
  const Argument* a = n.input(name);
  return !a || a->is_none() || (a->is<OptionalTensor>() && !a->as<OptionalTensor>().value);
}

// int[] argument, with a single int broadcast to `len` items; nullopt if symbolic.
std::optional<std::vector<int64_t>> lit_ints(const Node& n, std::string_view name, size_t len,
                                             std::vector<int64_t> dflt) {
  const Argument* a = n.input(name);
  std::vector<int64_t> v;
  if (!a || a->is_none()) v = std::move(dflt);
  else if (auto* l = a->get_if<IntList>()) v = l->items;
  else if (auto* s = a->get_if<SymIntList>()) {
    for (const auto& x : s->items) {
      if (x.is_value()) return std::nullopt;
      v.push_back(x.literal());
    }
  } else if (auto i = lit_int(n, name)) v = {*i};
  else return std::nullopt;
  if (v.size() == 1 && len > 1) v.assign(len, v[0]);
  if (v.size() != len) return std::nullopt;
  return v;
}

const Value* tensor_arg(const Node& n, std::string_view name) {
  const Argument* a = n.input(name);
  if (!a) return nullptr;
  if (Value* v = a->tensor()) return v;
  if (auto* o = a->get_if<OptionalTensor>()) return o->value;
  return nullptr;
}

std::vector<int64_t> sizes_of(const Value* v) { return *v->meta()->concrete_sizes(); }

// ---- support helpers ----------------------------------------------------------------------

// "" if every tensor the node reads or defines is float32 with concrete sizes.
std::string check_tensors(const Node& n) {
  auto bad = [](const Value* v) -> std::string {
    if (v->kind() != ValueKind::Tensor) return "";
    if (!v->meta()) return "'" + v->name() + "' has no metadata";
    if (v->meta()->dtype != DType::Float32) return "'" + v->name() + "' is " + std::string(dtype_name(v->meta()->dtype)) + ", not float32";
    if (!v->meta()->concrete_sizes()) return "'" + v->name() + "' has symbolic sizes";
    return "";
  };
  for (const Value* v : n.operand_values()) {
    if (std::string b = bad(v); !b.empty()) return b;
  }
  for (const Value* v : n.defined_values()) {
    if (v->has_uses() || v == n.defined_values().front()) {
      if (std::string b = bad(v); !b.empty()) return b;
    }
  }
  return "";
}

// Why `v` (operand `role`) cannot be prepacked, or "".
std::string needs_constant(const Value* v, std::string_view role, const Constness& c) {
  if (!v) return "";
  if (c.is_compile_time_constant(v)) return "";
  std::string why = c.explain(v);
  if (why.empty()) why = "is computed at run time by '" + (v->producer() ? v->producer()->name() : v->name()) + "'";
  return std::string(role) + " '" + v->name() + "' " + why + " (XNNPACK prepacks it at init: it must be a compile-time constant)";
}

std::string describe_const(const Value* v, const Constness& c) { return c.describe(v); }

bool only_user_is(const Value* v, const Node& user) {
  return v->uses().size() == 1 && v->uses()[0].user == &user;
}

NodeSupport conv_support(const Node& n, const Constness& c) {
  const Value* x = tensor_arg(n, "input");
  const Value* w = tensor_arg(n, "weight");
  if (!x || !w) return NodeSupport::no("has no input or weight tensor");
  if (x->meta()->sizes.size() != 4 || w->meta()->sizes.size() != 4) return NodeSupport::no("is not a 2-D convolution (needs 4-D input and weight)");
  if (lit_bool(n, "transposed").value_or(false)) return NodeSupport::no("is a transposed convolution");
  auto op = lit_ints(n, "output_padding", 2, {0, 0});
  if (!op || (*op)[0] != 0 || (*op)[1] != 0) return NodeSupport::no("has output padding");
  if (!lit_ints(n, "stride", 2, {1, 1}) || !lit_ints(n, "padding", 2, {0, 0}) || !lit_ints(n, "dilation", 2, {1, 1}) ||
      !lit_int_or(n, "groups", 1)) {
    return NodeSupport::no("has symbolic stride, padding, dilation or groups");
  }
  if (std::string r = needs_constant(w, "weight", c); !r.empty()) return NodeSupport::no(r);
  if (!is_none_arg(n, "bias")) {
    if (std::string r = needs_constant(tensor_arg(n, "bias"), "bias", c); !r.empty()) return NodeSupport::no(r);
  }
  return NodeSupport::yes("convolution2d_nhwc, weight " + describe_const(w, c) + " prepacked");
}

// The inference batch norms torch.export writes: batch_norm (2.13, kept
// whole), native_batch_norm (training=False) and the decomposed
// _native_batch_norm_legit_no_training (no training argument: always eval).
bool is_batch_norm_op(std::string_view op) {
  return op == "aten.native_batch_norm.default" || op == "aten.batch_norm.default" ||
         op == "aten._native_batch_norm_legit_no_training.default";
}

NodeSupport batch_norm_support(const Node& n, const Constness& c) {
  const Value* x = tensor_arg(n, "input");
  const bool eval_only = short_op(n) == "aten._native_batch_norm_legit_no_training.default";
  if (!eval_only && lit_bool(n, "training").value_or(true)) return NodeSupport::no("is a training-mode batch norm");
  if (!x || !x->producer() || short_op(*x->producer()) != "aten.convolution.default")
    return NodeSupport::no("does not follow a convolution (a batch norm is claimed only folded into one)");
  if (!conv_support(*x->producer(), c).claimed) return NodeSupport::no("follows a convolution XNNPACK does not claim");
  if (!only_user_is(x, n)) return NodeSupport::no("reads a convolution whose output has other users (cannot fold)");
  std::vector<Value*> outs = n.defined_values();
  for (size_t k = 1; k < outs.size(); ++k) {
    if (outs[k]->has_uses()) return NodeSupport::no("its saved mean/invstd outputs are used");
  }
  for (const char* role : {"weight", "bias", "running_mean", "running_var"}) {
    const Value* v = tensor_arg(n, role);
    if (!v) return NodeSupport::no(std::string("has no ") + role);
    if (std::string r = needs_constant(v, role, c); !r.empty()) return NodeSupport::no(r);
  }
  if (!lit_number(n, "eps")) return NodeSupport::no("has a symbolic eps");
  return NodeSupport::yes("folded into convolution '" + x->producer()->name() + "' at init");
}

bool fusable_activation_input(const Node& n) {
  const Value* x = tensor_arg(n, "self");
  if (!x || !x->producer() || !only_user_is(x, n)) return false;
  std::string_view p = short_op(*x->producer());
  return p == "aten.linear.default" || p == "aten.mm.default" || p == "aten.addmm.default" ||
         p == "aten.convolution.default" || is_batch_norm_op(p);
}

}  // namespace

std::vector<std::string> XnnpackBackend::ops_to_keep() const {
  return {"aten.linear.default", "aten.hardswish.default", "aten.hardsigmoid.default", "aten.hardtanh.default",
          "aten._softmax.default", "aten.softmax.int", "aten.max_pool2d_with_indices.default", "aten.avg_pool2d.default"};
}

NodeSupport XnnpackBackend::support(const Node& n, const Constness& c) const {
  const std::string_view op = short_op(n);
  static const std::unordered_set<std::string_view> known = {
      "aten.linear.default", "aten.mm.default", "aten.addmm.default", "aten.convolution.default",
      "aten.native_batch_norm.default", "aten.batch_norm.default", "aten._native_batch_norm_legit_no_training.default",
      "aten.add.Tensor", "aten.mul.Tensor", "aten.relu.default",
      "aten.clamp.default", "aten.hardtanh.default", "aten.hardswish.default", "aten.sigmoid.default",
      "aten.hardsigmoid.default", "aten.max_pool2d_with_indices.default", "aten.avg_pool2d.default",
      "aten.mean.dim", "aten._softmax.default", "aten.softmax.int"};
  if (!known.count(op)) return NodeSupport::no("no XNNPACK operator for " + std::string(op));
  if (std::string b = check_tensors(n); !b.empty()) return NodeSupport::no(b);

  if (op == "aten.linear.default") {
    const Value* w = tensor_arg(n, "weight");
    if (!w || w->meta()->sizes.size() != 2) return NodeSupport::no("weight is not 2-D");
    if (std::string r = needs_constant(w, "weight", c); !r.empty()) return NodeSupport::no(r);
    if (std::string r = needs_constant(tensor_arg(n, "bias"), "bias", c); !r.empty()) return NodeSupport::no(r);
    return NodeSupport::yes("fully_connected, weight " + describe_const(w, c) + " prepacked");
  }
  if (op == "aten.mm.default" || op == "aten.addmm.default") {
    const Value* x = tensor_arg(n, op == "aten.mm.default" ? "self" : "mat1");
    const Value* w = tensor_arg(n, "mat2");
    if (!x || !w || x->meta()->sizes.size() != 2 || w->meta()->sizes.size() != 2) return NodeSupport::no("operands are not 2-D");
    if (std::string r = needs_constant(w, "mat2", c); !r.empty()) return NodeSupport::no(r);
    if (op == "aten.addmm.default") {
      if (lit_number(n, "beta").value_or(1) != 1 || lit_number(n, "alpha").value_or(1) != 1)
        return NodeSupport::no("has beta or alpha other than 1");
      const Value* b = tensor_arg(n, "self");
      if (!b || b->meta()->sizes.size() != 1) return NodeSupport::no("bias is not 1-D");
      if (std::string r = needs_constant(b, "bias", c); !r.empty()) return NodeSupport::no(r);
    }
    return NodeSupport::yes("fully_connected (transposed weights), mat2 " + describe_const(w, c) + " prepacked");
  }
  if (op == "aten.convolution.default") return conv_support(n, c);
  if (is_batch_norm_op(op)) return batch_norm_support(n, c);
  if (op == "aten.add.Tensor" || op == "aten.mul.Tensor") {
    const Value* a = tensor_arg(n, "self");
    const Value* b = tensor_arg(n, "other");
    if (!a || !b) return NodeSupport::no("has a scalar operand");
    if (a->meta()->sizes.size() > 4 || b->meta()->sizes.size() > 4) return NodeSupport::no("has an operand of more than 4 dimensions");
    if (op == "aten.add.Tensor" && lit_number(n, "alpha").value_or(1) != 1) return NodeSupport::no("has alpha other than 1");
    return NodeSupport::yes(op == "aten.add.Tensor" ? "add_nd" : "multiply_nd");
  }
  if (op == "aten.clamp.default") {
    const Argument* lo = n.input("min");
    const Argument* hi = n.input("max");
    if ((lo && !lo->is_none() && !lit_number(n, "min")) || (hi && !hi->is_none() && !lit_number(n, "max")))
      return NodeSupport::no("has non-literal bounds");
  }
  if (op == "aten.relu.default" || op == "aten.clamp.default" || op == "aten.hardtanh.default") {
    return NodeSupport::yes(fusable_activation_input(n) ? "fused into its producer as output min/max" : "clamp");
  }
  if (op == "aten.hardswish.default" || op == "aten.sigmoid.default") return NodeSupport::yes(std::string(op.substr(5, op.find('.', 5) - 5)));
  if (op == "aten.hardsigmoid.default") return NodeSupport::yes("hardsigmoid (Lathe loop inside the delegate)");
  const Value* x = tensor_arg(n, "self");
  if (op == "aten.max_pool2d_with_indices.default" || op == "aten.avg_pool2d.default") {
    if (x->meta()->sizes.size() != 4) return NodeSupport::no("input is not 4-D");
    if (!lit_ints(n, "kernel_size", 2, {}) || !lit_ints(n, "padding", 2, {0, 0})) return NodeSupport::no("has symbolic window");
    if (op == "aten.max_pool2d_with_indices.default") {
      if (n.defined_values().size() > 1 && n.defined_values()[1]->has_uses()) return NodeSupport::no("its indices are used");
      if (!lit_ints(n, "dilation", 2, {1, 1})) return NodeSupport::no("has symbolic dilation");
      return NodeSupport::yes("max_pooling2d");
    }
    auto pad = *lit_ints(n, "padding", 2, {0, 0});
    if (pad[0] != 0 || pad[1] != 0) return NodeSupport::no("has padding (XNNPACK's average excludes it; PyTorch's default includes it)");
    if (lit_bool(n, "ceil_mode").value_or(false)) return NodeSupport::no("uses ceil_mode");
    if (!is_none_arg(n, "divisor_override")) return NodeSupport::no("has a divisor override");
    return NodeSupport::yes("average_pooling2d");
  }
  if (op == "aten.mean.dim") {
    auto dims = lit_ints(n, "dim", 2, {});
    if (x->meta()->sizes.size() != 4 || !dims) return NodeSupport::no("is not a mean over H and W of a 4-D tensor");
    std::vector<int64_t> d = *dims;
    for (auto& k : d) k = k < 0 ? k + 4 : k;
    std::sort(d.begin(), d.end());
    if (d != std::vector<int64_t>{2, 3}) return NodeSupport::no("is not a mean over H and W of a 4-D tensor");
    if (!is_none_arg(n, "dtype")) return NodeSupport::no("has a dtype");
    return NodeSupport::yes("global_average_pooling");
  }
  // softmax
  auto dim = lit_int(n, "dim");
  const int64_t rank = static_cast<int64_t>(x->meta()->sizes.size());
  if (!dim || (*dim != -1 && *dim != rank - 1)) return NodeSupport::no("is not over the last dimension");
  if (lit_bool(n, "half_to_float").value_or(false)) return NodeSupport::no("has half_to_float");
  if (op == "aten.softmax.int" && !is_none_arg(n, "dtype")) return NodeSupport::no("has a dtype");
  return NodeSupport::yes("softmax");
}

// ---- preprocess -------------------------------------------------------------------------------

namespace {

class Lowering {
 public:
  explicit Lowering(const DelegateSubgraph& s) : sub_(s) {
    payload_.backend = "xnnpack";
    for (size_t i = 0; i < s.inputs.size(); ++i) {
      uint32_t id = payload_.add_value(sizes_of(s.inputs[i]), static_cast<int32_t>(i));
      vals_[s.inputs[i]] = Entry{id, false};
    }
    for (const Node* n : s.nodes) in_group_.insert(n);
    for (const Value* v : s.outputs) escapes_.insert(v);
  }

  Result<std::vector<std::byte>> run() {
    for (const Node* n : sub_.nodes) {
      Status s = lower(*n);
      if (!s.ok()) return s.error().context("node '" + n->name() + "' (" + n->op_name() + ")");
    }
    for (const Value* v : sub_.outputs) {
      LATHE_ASSIGN_OR_RETURN(uint32_t id, get(v, false));
      payload_.outputs.push_back(id);
    }
    return encode_payload(payload_);
  }

 private:
  struct Entry {
    uint32_t id;
    bool nhwc;
  };

  static bool trivial_layout(const std::vector<int64_t>& s) { return s.size() == 4 && (s[1] == 1 || s[2] * s[3] == 1); }

  // The id of `v` stored in the wanted layout, converting when needed.
  Result<uint32_t> get(const Value* v, bool nhwc) {
    auto it = vals_.find(v);
    if (it == vals_.end()) return make_error("reads '" + v->name() + "', which the delegate does not define");
    const Entry e = it->second;
    if (e.nhwc == nhwc) return e.id;
    // A copy: add_value below may reallocate payload_.values.
    const std::vector<int64_t> s = payload_.values[e.id].sizes;
    if (trivial_layout(s)) return e.id;
    if (s.size() != 4) return make_error("'" + v->name() + "' needs a layout change but is not 4-D");
    auto key = std::make_pair(v, nhwc);
    if (auto c = converted_.find(key); c != converted_.end()) return c->second;
    uint32_t out = payload_.add_value(s);
    payload_.ops.push_back(PayloadOp{nhwc ? "to_nhwc" : "to_nchw", v->name(), {{e.id, "input"}}, {out}, {s[0], s[1], s[2], s[3]}, {}});
    converted_[key] = out;
    return out;
  }

  uint32_t define(const Value* v, bool nhwc) {
    uint32_t id = payload_.add_value(sizes_of(v));
    vals_[v] = Entry{id, nhwc};
    return id;
  }

  PayloadOp& emit(const Node& n, std::string kind, std::vector<PayloadOperand> ins, uint32_t out,
                  std::vector<int64_t> ints, std::vector<double> floats) {
    payload_.ops.push_back(PayloadOp{std::move(kind), n.name(), std::move(ins), {out}, std::move(ints), std::move(floats)});
    return payload_.ops.back();
  }

  // The op that defines `v`, if a later activation may fold into it.
  void mark_fusable(const Value* v) { fusable_[v] = payload_.ops.size() - 1; }

  Status lower(const Node& n);
  Status lower_fc(const Node& n, const Value* x, const Value* w, const Value* b, bool transpose);
  Status lower_conv(const Node& n);
  Status lower_binary(const Node& n, const char* kind);
  Status lower_clamp(const Node& n, double lo, double hi);
  Status lower_pool(const Node& n, bool max);

  const DelegateSubgraph& sub_;
  DelegatePayload payload_;
  std::unordered_map<const Value*, Entry> vals_;
  std::map<std::pair<const Value*, bool>, uint32_t> converted_;
  std::unordered_map<const Value*, size_t> fusable_;
  std::unordered_set<const Node*> in_group_;
  std::unordered_set<const Value*> escapes_;
};

Status Lowering::lower_fc(const Node& n, const Value* x, const Value* w, const Value* b, bool transpose) {
  const std::vector<int64_t> xs = sizes_of(x), ws = sizes_of(w);
  const int64_t k = xs.back();
  const int64_t out_ch = transpose ? ws[1] : ws[0];
  if ((transpose ? ws[0] : ws[1]) != k) return make_error("weight " + shape_string(ws) + " does not match input " + shape_string(xs));
  LATHE_ASSIGN_OR_RETURN(uint32_t xi, get(x, false));
  LATHE_ASSIGN_OR_RETURN(uint32_t wi, get(w, false));
  std::vector<PayloadOperand> ins{{xi, "input"}, {wi, "weight"}};
  if (b) {
    LATHE_ASSIGN_OR_RETURN(uint32_t bi, get(b, false));
    ins.push_back({bi, "bias"});
  }
  const Value* y = n.defined_values()[0];
  const int64_t batch = k ? payload_.values[xi].numel() / k : 0;
  emit(n, "fully_connected", std::move(ins), define(y, false), {batch, k, out_ch, transpose ? 1 : 0}, {-kInf, kInf});
  mark_fusable(y);
  return Status::Ok();
}

Status Lowering::lower_conv(const Node& n) {
  const Value* x = tensor_arg(n, "input");
  const Value* w = tensor_arg(n, "weight");
  const Value* b = is_none_arg(n, "bias") ? nullptr : tensor_arg(n, "bias");
  const Value* y = n.defined_values()[0];
  const auto xs = sizes_of(x), ws = sizes_of(w), ys = sizes_of(y);
  const auto stride = *lit_ints(n, "stride", 2, {1, 1});
  const auto pad = *lit_ints(n, "padding", 2, {0, 0});
  const auto dil = *lit_ints(n, "dilation", 2, {1, 1});
  const int64_t groups = *lit_int_or(n, "groups", 1);
  LATHE_ASSIGN_OR_RETURN(uint32_t xi, get(x, true));
  LATHE_ASSIGN_OR_RETURN(uint32_t wi, get(w, false));
  std::vector<PayloadOperand> ins{{xi, "input"}, {wi, "weight"}};
  if (b) {
    LATHE_ASSIGN_OR_RETURN(uint32_t bi, get(b, false));
    ins.push_back({bi, "bias"});
  }
  // ints: N H W Cin Cout kh kw sh sw pt pl pb pr dh dw groups OH OW
  std::vector<int64_t> ints{xs[0], xs[2], xs[3], xs[1], ws[0], ws[2], ws[3], stride[0], stride[1],
                            pad[0], pad[1], pad[0], pad[1], dil[0], dil[1], groups, ys[2], ys[3]};
  emit(n, "conv2d", std::move(ins), define(y, true), std::move(ints), {-kInf, kInf, 0.0});
  mark_fusable(y);
  return Status::Ok();
}

Status Lowering::lower_binary(const Node& n, const char* kind) {
  const Value* a = tensor_arg(n, "self");
  const Value* b = tensor_arg(n, "other");
  const auto as = sizes_of(a), bs = sizes_of(b);
  const bool nhwc = as.size() == 4 && bs.size() == 4 && (vals_.at(a).nhwc || vals_.at(b).nhwc);
  LATHE_ASSIGN_OR_RETURN(uint32_t ai, get(a, nhwc));
  LATHE_ASSIGN_OR_RETURN(uint32_t bi, get(b, nhwc));
  auto phys = [&](std::vector<int64_t> s) {
    if (nhwc) s = {s[0], s[2], s[3], s[1]};
    return s;
  };
  std::vector<int64_t> ints;
  for (const auto& s : {phys(as), phys(bs)}) {
    ints.push_back(static_cast<int64_t>(s.size()));
    ints.insert(ints.end(), s.begin(), s.end());
  }
  const Value* y = n.defined_values()[0];
  emit(n, kind, {{ai, "self"}, {bi, "other"}}, define(y, nhwc), std::move(ints), {-kInf, kInf});
  mark_fusable(y);
  return Status::Ok();
}

Status Lowering::lower_clamp(const Node& n, double lo, double hi) {
  const Value* x = tensor_arg(n, "self");
  const Value* y = n.defined_values()[0];
  auto f = fusable_.find(x);
  if (f != fusable_.end() && only_user_is(x, n) && !escapes_.count(x)) {
    PayloadOp& op = payload_.ops[f->second];
    op.floats[0] = std::max(op.floats[0], lo);
    op.floats[1] = std::min(op.floats[1], hi);
    op.node += "+" + n.name();
    vals_[y] = vals_.at(x);
    fusable_[y] = f->second;
    return Status::Ok();
  }
  const bool nhwc = vals_.at(x).nhwc;
  LATHE_ASSIGN_OR_RETURN(uint32_t xi, get(x, nhwc));
  emit(n, "clamp", {{xi, "self"}}, define(y, nhwc), {payload_.values[xi].numel()}, {lo, hi});
  return Status::Ok();
}

Status Lowering::lower_pool(const Node& n, bool max) {
  const Value* x = tensor_arg(n, "self");
  const Value* y = n.defined_values()[0];
  const auto xs = sizes_of(x), ys = sizes_of(y);
  const auto k = *lit_ints(n, "kernel_size", 2, {});
  auto stride = *lit_ints(n, "stride", 2, k);
  if (stride.empty()) stride = k;
  const auto pad = *lit_ints(n, "padding", 2, {0, 0});
  const auto dil = max ? *lit_ints(n, "dilation", 2, {1, 1}) : std::vector<int64_t>{1, 1};
  // ceil_mode: extra bottom/right padding so the window count matches PyTorch's.
  const int64_t pb = std::max<int64_t>(pad[0], (ys[2] - 1) * stride[0] + (k[0] - 1) * dil[0] + 1 - xs[2] - pad[0]);
  const int64_t pr = std::max<int64_t>(pad[1], (ys[3] - 1) * stride[1] + (k[1] - 1) * dil[1] + 1 - xs[3] - pad[1]);
  LATHE_ASSIGN_OR_RETURN(uint32_t xi, get(x, true));
  emit(n, max ? "max_pool2d" : "avg_pool2d", {{xi, "self"}}, define(y, true),
       {xs[0], xs[2], xs[3], xs[1], k[0], k[1], stride[0], stride[1], pad[0], pad[1], pb, pr, dil[0], dil[1], ys[2], ys[3]},
       {-kInf, kInf});
  return Status::Ok();
}

Status Lowering::lower(const Node& n) {
  const std::string_view op = short_op(n);
  if (op == "aten.linear.default") {
    return lower_fc(n, tensor_arg(n, "input"), tensor_arg(n, "weight"), is_none_arg(n, "bias") ? nullptr : tensor_arg(n, "bias"), false);
  }
  if (op == "aten.mm.default") return lower_fc(n, tensor_arg(n, "self"), tensor_arg(n, "mat2"), nullptr, true);
  if (op == "aten.addmm.default") return lower_fc(n, tensor_arg(n, "mat1"), tensor_arg(n, "mat2"), tensor_arg(n, "self"), true);
  if (op == "aten.convolution.default") return lower_conv(n);
  if (is_batch_norm_op(op)) {
    const Value* x = tensor_arg(n, "input");
    auto f = fusable_.find(x);
    if (f == fusable_.end() || payload_.ops[f->second].kind != "conv2d" || payload_.ops[f->second].inputs.size() > 3)
      return make_error("batch norm does not follow a convolution of this delegate");
    PayloadOp& conv = payload_.ops[f->second];
    for (const char* role : {"weight", "bias", "running_mean", "running_var"}) {
      LATHE_ASSIGN_OR_RETURN(uint32_t id, get(tensor_arg(n, role), false));
      conv.inputs.push_back({id, std::string("bn_") + role});
    }
    conv.floats[2] = *lit_number(n, "eps");
    conv.node += "+" + n.name();
    const Value* y = n.defined_values()[0];
    vals_[y] = vals_.at(x);
    fusable_[y] = f->second;
    return Status::Ok();
  }
  if (op == "aten.add.Tensor") return lower_binary(n, "add");
  if (op == "aten.mul.Tensor") return lower_binary(n, "mul");
  if (op == "aten.relu.default") return lower_clamp(n, 0, kInf);
  if (op == "aten.hardtanh.default") return lower_clamp(n, lit_number(n, "min_val").value_or(-1), lit_number(n, "max_val").value_or(1));
  if (op == "aten.clamp.default") return lower_clamp(n, lit_number(n, "min").value_or(-kInf), lit_number(n, "max").value_or(kInf));
  if (op == "aten.hardswish.default" || op == "aten.sigmoid.default" || op == "aten.hardsigmoid.default") {
    const Value* x = tensor_arg(n, "self");
    const bool nhwc = vals_.at(x).nhwc;
    LATHE_ASSIGN_OR_RETURN(uint32_t xi, get(x, nhwc));
    std::string kind(op.substr(5, op.find('.', 5) - 5));
    emit(n, kind, {{xi, "self"}}, define(n.defined_values()[0], nhwc), {payload_.values[xi].numel()}, {});
    return Status::Ok();
  }
  if (op == "aten.max_pool2d_with_indices.default") return lower_pool(n, true);
  if (op == "aten.avg_pool2d.default") return lower_pool(n, false);
  if (op == "aten.mean.dim") {
    const Value* x = tensor_arg(n, "self");
    const auto xs = sizes_of(x);
    LATHE_ASSIGN_OR_RETURN(uint32_t xi, get(x, true));
    // [N, C, 1, 1] (or [N, C]) holds the same bytes in either layout.
    emit(n, "global_avg_pool", {{xi, "self"}}, define(n.defined_values()[0], false), {xs[0], xs[2] * xs[3], xs[1]}, {});
    return Status::Ok();
  }
  if (op == "aten._softmax.default" || op == "aten.softmax.int") {
    const Value* x = tensor_arg(n, "self");
    LATHE_ASSIGN_OR_RETURN(uint32_t xi, get(x, false));
    const int64_t ch = sizes_of(x).back();
    emit(n, "softmax", {{xi, "self"}}, define(n.defined_values()[0], false), {ch ? payload_.values[xi].numel() / ch : 0, ch}, {});
    return Status::Ok();
  }
  return make_error("the XNNPACK backend does not lower " + std::string(op));
}

}  // namespace

Result<std::vector<std::byte>> XnnpackBackend::preprocess(const DelegateSubgraph& subgraph) const {
  return Lowering(subgraph).run();
}

const XnnpackBackend& xnnpack_backend() {
  static const XnnpackBackend backend;
  return backend;
}

}  // namespace lathe
