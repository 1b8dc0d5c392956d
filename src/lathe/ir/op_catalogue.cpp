#include "lathe/ir/op_catalogue.h"

#include <algorithm>
#include <iterator>
#include <unordered_set>

#include "lathe/ir/literal_args.h"
#include "lathe/ir/node.h"

namespace lathe::ops {

std::string_view strip_torch_ops(std::string_view target) {
  if (target.starts_with(kTorchOpsPrefix)) target.remove_prefix(kTorchOpsPrefix.size());
  return target;
}

std::string_view op_name(OpTarget target) { return strip_torch_ops(target.str()); }

bool same_op(OpTarget a, OpTarget b) { return a == b || op_name(a) == op_name(b); }

std::string full_target(std::string_view op) {
  // Python-level symbolic ops are serialized without the prefix.
  for (std::string_view keep : {kTorchOpsPrefix, std::string_view("_operator."), std::string_view("math."),
                                std::string_view("builtins."), std::string_view("torch.")}) {
    if (op.starts_with(keep)) return std::string(op);
  }
  return std::string(kTorchOpsPrefix) + std::string(op);
}

TargetParts split_target(std::string_view target) {
  target = strip_torch_ops(target);
  TargetParts parts;
  const size_t dot1 = target.find('.');
  parts.ns = target.substr(0, dot1);
  if (dot1 == std::string_view::npos) return parts;
  std::string_view rest = target.substr(dot1 + 1);
  const size_t dot2 = rest.find('.');
  parts.name = rest.substr(0, dot2);
  if (dot2 != std::string_view::npos) parts.overload = rest.substr(dot2 + 1);
  return parts;
}

std::string_view aten_op_name(std::string_view target) {
  if (!target.starts_with(kTorchOpsPrefix)) return {};
  const TargetParts parts = split_target(target);
  return parts.ns == "aten" ? parts.name : std::string_view();
}

bool is_layout_only(std::string_view target) {
  static const std::unordered_set<std::string_view> kOps = {
      "view", "_unsafe_view", "reshape", "_reshape_alias", "t", "permute", "transpose", "expand", "squeeze",
      "unsqueeze", "slice", "select", "narrow", "alias", "detach", "as_strided", "flatten", "unflatten", "split",
      "split_with_sizes", "unbind", "chunk", "clone", "contiguous", "lift_fresh_copy"};
  std::string_view name = aten_op_name(target);
  if (name.empty()) return false;
  constexpr std::string_view kCopy = "_copy";
  if (name.size() > kCopy.size() && name.ends_with(kCopy) && name != "lift_fresh_copy") name.remove_suffix(kCopy.size());
  return kOps.count(name) != 0;
}

bool is_reshape(OpTarget t) {
  return t == aten::view || t == aten::_unsafe_view || t == aten::reshape || t == aten::flatten_using_ints ||
         t == aten::unsqueeze || t == aten::squeeze_dim || t == aten::squeeze_dims || t == aten::clone ||
         t == aten::contiguous;
}

bool is_transpose_or_permute(OpTarget t) {
  return t == aten::t || t == aten::t_copy || t == aten::permute || t == aten::permute_copy;
}

bool is_quantize(std::string_view target) {
  const TargetParts parts = split_target(target);
  const std::string_view name = parts.name;
  if (parts.ns == "torchao") return name == "quantize_affine" || name == "dequantize_affine";
  if (parts.ns != "quantized_decomposed") return false;
  return name == "quantize_per_tensor" || name == "dequantize_per_tensor" || name == "quantize_per_channel" ||
         name == "dequantize_per_channel" || name == "dequantize_per_channel_group";
}

bool is_batch_norm(OpTarget t) {
  return t == aten::native_batch_norm || t == aten::batch_norm || t == aten::_native_batch_norm_legit_no_training;
}

namespace {

// aten ops whose whole purpose is an effect, or that consume randomness.
constexpr std::string_view kEffectfulAten[] = {
    "_assert_async", "_assert_scalar", "_assert_tensor_metadata", "_print", "sym_constrain_range",
    "sym_constrain_range_for_size", "_functional_assert_async", "_functional_assert_scalar",
    "_functional_sym_constrain_range", "_functional_sym_constrain_range_for_size", "_make_dep_token",
    "record_stream", "set", "resize", "_resize_output",
    // randomness
    "rand", "rand_like", "randn", "randn_like", "randint", "randint_like", "randperm", "bernoulli", "normal",
    "normal_functional",
    "poisson", "multinomial", "binomial", "uniform", "exponential", "geometric", "cauchy", "log_normal", "random",
    "dropout", "native_dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout", "_fused_dropout",
    "rrelu", "rrelu_with_noise", "_standard_gamma", "_sample_dirichlet", "_dirichlet_grad", "seed", "manual_seed"};

}  // namespace

bool is_effect_free(std::string_view target) {
  if (!target.starts_with(kTorchOpsPrefix)) return false;  // Python operators, builtins: unknown
  const TargetParts parts = split_target(target);
  if (parts.name.empty()) return false;
  if (parts.ns != "aten" && parts.ns != "quantized_decomposed") return false;
  // In place (add_, _index_put_impl_), but not the Python-operator spellings (__and__).
  const bool dunder = parts.name.size() > 4 && parts.name.starts_with("__") && parts.name.ends_with("__");
  if (parts.name.back() == '_' && !dunder) return false;
  if (parts.overload == "out" || (parts.overload.size() > 4 && parts.overload.ends_with("_out"))) return false;
  if (parts.ns == "aten" &&
      std::find(std::begin(kEffectfulAten), std::end(kEffectfulAten), parts.name) != std::end(kEffectfulAten))
    return false;
  return true;
}

bool is_allocation(std::string_view target) {
  const std::string_view op = aten_op_name(target);
  return op == "empty" || op == "empty_like" || op == "new_empty" || op == "empty_strided" || op == "empty_permuted";
}

namespace {

std::optional<size_t> rank_of_self(const Node& n) {
  const Value* v = tensor_input(n, arg::self);
  if (!v || !v->meta()) return std::nullopt;
  return v->meta()->sizes.size();
}

std::optional<int64_t> normalise_dim(int64_t d, size_t rank) {
  const int64_t r = static_cast<int64_t>(rank);
  if (d < 0) d += r;
  if (d < 0 || d >= std::max<int64_t>(r, 1)) return std::nullopt;
  return d;
}

}  // namespace

std::optional<std::vector<int64_t>> permutation_of(const Node& n) {
  const std::string_view op = aten_op_name(n.target());
  const auto rank = rank_of_self(n);
  if (!rank) return std::nullopt;
  std::vector<int64_t> p(*rank);
  for (size_t i = 0; i < p.size(); ++i) p[i] = static_cast<int64_t>(i);
  if (op == "t" || op == "t_copy") {
    if (*rank == 2) std::swap(p[0], p[1]);
    return *rank <= 2 ? std::optional(p) : std::nullopt;
  }
  if (op == "transpose" || op == "transpose_copy") {
    auto d0 = literal_int(n, arg::dim0), d1 = literal_int(n, arg::dim1);
    if (!d0 || !d1) return std::nullopt;
    auto a = normalise_dim(*d0, *rank), b = normalise_dim(*d1, *rank);
    if (!a || !b || p.empty()) return std::nullopt;
    std::swap(p[*a], p[*b]);
    return p;
  }
  if (op == "permute" || op == "permute_copy") {
    const Argument* a = n.input(arg::dims);
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

}  // namespace lathe::ops
