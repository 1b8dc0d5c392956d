// VulkanBackend::support: what the partitioner may give this backend, and
// why not. Weights a matmul or convolution prepacks must be compile-time
// constants (Constness); everything else may be computed at run time.
#include <algorithm>
#include <unordered_set>

#include "lathe/backends/node_args.h"
#include "lathe/backends/vulkan/vulkan_backend.h"
#include "lathe/backends/vulkan/vulkan_lowering.h"
#include "lathe/backends/vulkan/vulkan_ops.h"
#include "lathe/ir/op_catalogue.h"

namespace lathe {

namespace {

using namespace node_args;

constexpr std::string_view kPrepackNote = " (the Vulkan backend uploads and repacks it once, at load: it must be a compile-time constant)";

std::string needs_constant(const Value* v, std::string_view role, const Constness& c) {
  return node_args::needs_constant(v, role, c, kPrepackNote);
}

NodeSupport linear_support(const Node& n, std::string_view op, const Constness& c) {
  if (op == "aten.linear.default") {
    const Value* w = tensor_input(n, "weight");
    if (!w || w->meta()->sizes.size() != 2) return NodeSupport::no("weight is not 2-D");
    if (std::string r = needs_constant(w, "weight", c); !r.empty()) return NodeSupport::no(r);
    if (std::string r = needs_constant(tensor_input(n, "bias"), "bias", c); !r.empty()) return NodeSupport::no(r);
    return NodeSupport::yes("linear, weight " + c.describe(w) + " repacked to [K, N] at load");
  }
  const Value* x = tensor_input(n, op == "aten.mm.default" ? "self" : "mat1");
  const Value* w = tensor_input(n, "mat2");
  if (!x || !w || x->meta()->sizes.size() != 2 || w->meta()->sizes.size() != 2) return NodeSupport::no("operands are not 2-D");
  if (std::string r = needs_constant(w, "mat2", c); !r.empty()) return NodeSupport::no(r);
  if (op == "aten.addmm.default") {
    if (literal_number(n, "beta").value_or(1) != 1 || literal_number(n, "alpha").value_or(1) != 1) return NodeSupport::no("has beta or alpha other than 1");
    const Value* b = tensor_input(n, "self");
    if (!b || b->meta()->sizes.size() != 1) return NodeSupport::no("bias is not 1-D");
    if (std::string r = needs_constant(b, "bias", c); !r.empty()) return NodeSupport::no(r);
  }
  return NodeSupport::yes("linear, mat2 " + c.describe(w) + " uploaded at load");
}

NodeSupport conv_support(const Node& n, const Constness& c) {
  const Value* x = tensor_input(n, "input");
  const Value* w = tensor_input(n, "weight");
  if (!x || !w) return NodeSupport::no("has no input or weight tensor");
  const size_t rank = x->meta()->sizes.size();
  if ((rank != 3 && rank != 4) || w->meta()->sizes.size() != rank) return NodeSupport::no("is not a 1-D or 2-D convolution");
  const size_t spatial = rank - 2;
  if (literal_bool(n, "transposed").value_or(false)) return NodeSupport::no("is a transposed convolution");
  auto op = literal_ints(n, "output_padding", spatial, std::vector<int64_t>(spatial, 0));
  if (!op || std::any_of(op->begin(), op->end(), [](int64_t v) { return v != 0; })) return NodeSupport::no("has output padding");
  auto stride = literal_ints(n, "stride", spatial, std::vector<int64_t>(spatial, 1));
  auto padding = literal_ints(n, "padding", spatial, std::vector<int64_t>(spatial, 0));
  auto dilation = literal_ints(n, "dilation", spatial, std::vector<int64_t>(spatial, 1));
  auto groups = literal_int_or(n, "groups", 1);
  if (!stride || !padding || !dilation || !groups) return NodeSupport::no("has symbolic stride, padding, dilation or groups");
  if (std::string r = needs_constant(w, "weight", c); !r.empty()) return NodeSupport::no(r);
  if (!is_none_input(n, "bias")) {
    if (std::string r = needs_constant(tensor_input(n, "bias"), "bias", c); !r.empty()) return NodeSupport::no(r);
  }
  const int64_t cin = sizes_of(x)[1];
  const char* kind = *groups > 1 && *groups == cin ? "depthwise conv2d" : "conv2d";
  return NodeSupport::yes(std::string(kind) + (spatial == 1 ? " over a unit height (1-D)" : "") + ", weight " + c.describe(w) + " uploaded at load");
}

// Folds into the convolution before it when that convolution is claimed,
// feeds only this batch norm, and the statistics are constants.
bool batch_norm_folds(const Node& n, const Constness& c) {
  const Value* x = tensor_input(n, "input");
  if (!x || !x->producer() || ops::strip_torch_ops(x->producer()->target()) != "aten.convolution.default") return false;
  return conv_support(*x->producer(), c).claimed && only_user_is(x, n);
}

NodeSupport batch_norm_support(const Node& n, std::string_view op, const Constness& c) {
  const Value* x = tensor_input(n, "input");
  if (op != "aten._native_batch_norm_legit_no_training.default" && literal_bool(n, "training").value_or(true))
    return NodeSupport::no("is a training-mode batch norm");
  if (!x || x->meta()->sizes.size() < 2) return NodeSupport::no("input has no channel dimension");
  std::vector<Value*> outs = n.defined_values();
  for (size_t k = 1; k < outs.size(); ++k) {
    if (outs[k]->has_uses()) return NodeSupport::no("its saved mean/invstd outputs are used");
  }
  for (const char* role : {"weight", "bias", "running_mean", "running_var"}) {
    if (!tensor_input(n, role)) return NodeSupport::no(std::string("has no ") + role);
    if (std::string r = needs_constant(tensor_input(n, role), role, c); !r.empty()) return NodeSupport::no(r);
  }
  if (!literal_number(n, "eps")) return NodeSupport::no("has a symbolic eps");
  if (batch_norm_folds(n, c)) return NodeSupport::yes("folded into convolution '" + x->producer()->name() + "' at load");
  return NodeSupport::yes("channel_affine (scale and shift from the statistics, at load)");
}

bool input_is_claimed(const VulkanBackend& b, const Node& n, const Constness& c, std::string_view name = "self") {
  const Value* x = tensor_input(n, name);
  return x && x->producer() && b.support(*x->producer(), c).claimed;
}

NodeSupport binary_support(const Node& n, std::string_view op) {
  const Value* a = tensor_input(n, "self");
  const Value* b = tensor_input(n, "other");
  if (!a) return NodeSupport::no("has a scalar self");
  if (!b && !literal_number(n, "other")) return NodeSupport::no("has a non-literal scalar operand");
  if (a->meta()->sizes.size() > kVulkanMaxRank || (b && b->meta()->sizes.size() > kVulkanMaxRank))
    return NodeSupport::no("has an operand of more than 6 dimensions");
  if (!literal_number(n, "alpha").has_value() && n.input("alpha")) return NodeSupport::no("has a symbolic alpha");
  return NodeSupport::yes(std::string(op.substr(5, 3)) + (b ? " (broadcasting)" : " with a number"));
}

NodeSupport layout_support(const VulkanBackend& b, const Node& n, std::string_view op, const Constness& c) {
  const Value* x = tensor_input(n, "self");
  if (op == "aten.cat.default") {
    const Argument* a = n.input("tensors");
    const TensorList* list = a ? a->get_if<TensorList>() : nullptr;
    if (!list || list->items.empty()) return NodeSupport::no("has no tensor list");
    bool any = false;
    for (const Value* v : list->items) {
      if (!v || v->meta()->sizes.size() != list->items[0]->meta()->sizes.size()) return NodeSupport::no("joins tensors of different ranks");
      any = any || (v->producer() && b.support(*v->producer(), c).claimed);
    }
    if (!any) return NodeSupport::no("none of its inputs is computed on the device (a lone copy is not worth a delegate)");
    if (list->items[0]->meta()->sizes.size() > kVulkanMaxRank || !literal_int_or(n, "dim", 0)) return NodeSupport::no("has a symbolic dim or more than 6 dimensions");
    return NodeSupport::yes("cat (strided copies on the device)");
  }
  if (!input_is_claimed(b, n, c)) return NodeSupport::no("its input is not computed on the device (a lone copy is not worth a delegate)");
  if (x->meta()->sizes.size() > kVulkanMaxRank) return NodeSupport::no("has more than 6 dimensions");
  if (op == "aten.permute.default") {
    if (!literal_ints(n, "dims", x->meta()->sizes.size(), {})) return NodeSupport::no("has symbolic dims");
    return NodeSupport::yes("permute (a strided copy on the device)");
  }
  if (op == "aten.slice.Tensor") {
    if (!literal_int_or(n, "step", 1) || !literal_int_or(n, "dim", 0)) return NodeSupport::no("has a symbolic step or dim");
    if (!is_none_input(n, "start") && !literal_int(n, "start")) return NodeSupport::no("has a symbolic start");
    return NodeSupport::yes("slice (a strided copy on the device)");
  }
  return NodeSupport::yes("view (shares its input's buffer)");
}

NodeSupport pool_support(const Node& n, std::string_view op) {
  const Value* x = tensor_input(n, "self");
  if (x->meta()->sizes.size() != 4) return NodeSupport::no("input is not 4-D");
  const auto k = literal_ints(n, "kernel_size", 2, {});
  if (!k || !literal_ints(n, "padding", 2, {0, 0}) || !vulkan_pool_stride(n, *k)) return NodeSupport::no("has a symbolic window");
  if (op == "aten.avg_pool2d.default") {
    if (!is_none_input(n, "divisor_override") && !literal_int(n, "divisor_override")) return NodeSupport::no("has a symbolic divisor");
    return NodeSupport::yes("pool2d (average)");
  }
  if (n.defined_values().size() > 1 && n.defined_values()[1]->has_uses()) return NodeSupport::no("its indices are used");
  if (!literal_ints(n, "dilation", 2, {1, 1})) return NodeSupport::no("has symbolic dilation");
  return NodeSupport::yes("pool2d (max)");
}

NodeSupport reduce_support(const Node& n, std::string_view op) {
  const Value* x = tensor_input(n, op == "aten.native_layer_norm.default" || op == "aten.layer_norm.default" ? "input" : "self");
  const size_t rank = x->meta()->sizes.size();
  if (op == "aten.adaptive_avg_pool2d.default") {
    auto size = literal_ints(n, "output_size", 2, {});
    if (rank != 4 || !size || (*size)[0] != 1 || (*size)[1] != 1) return NodeSupport::no("is not a 4-D pool to 1x1");
    return NodeSupport::yes("mean over H and W");
  }
  if (op == "aten.mean.dim") {
    if (rank > kVulkanMaxRank || (n.input("dim") && !is_none_input(n, "dim") && !literal_int_list(n, "dim"))) return NodeSupport::no("has symbolic dims or more than 6");
    if (!is_none_input(n, "dtype")) return NodeSupport::no("has a dtype");
    return NodeSupport::yes("mean");
  }
  if (op == "aten.layer_norm.default" || op == "aten.native_layer_norm.default") {
    auto shape = literal_int_list(n, "normalized_shape");
    if (!shape || shape->empty() || shape->size() > rank) return NodeSupport::no("has a symbolic or empty normalized_shape");
    std::vector<Value*> outs = n.defined_values();
    for (size_t k = 1; k < outs.size(); ++k) {
      if (outs[k]->has_uses()) return NodeSupport::no("its mean/rstd outputs are used");
    }
    if (n.input("eps") && !literal_number(n, "eps")) return NodeSupport::no("has a symbolic eps");
    return NodeSupport::yes("layer_norm (a workgroup per row)");
  }
  auto dim = literal_int(n, "dim");
  if (!dim || (*dim != -1 && *dim != static_cast<int64_t>(rank) - 1)) return NodeSupport::no("is not over the last dimension");
  if (literal_bool(n, "half_to_float").value_or(false)) return NodeSupport::no("has half_to_float");
  if (op == "aten.softmax.int" && !is_none_input(n, "dtype")) return NodeSupport::no("has a dtype");
  return NodeSupport::yes("softmax (a workgroup per row)");
}

// Whether a relu/clamp/hardtanh folds into its producer's output bounds:
// the producer is claimed, takes bounds, and this is its only reader.
bool folds_into_producer(const VulkanBackend& b, const Node& n, const Constness& c) {
  const Value* x = tensor_input(n, "self");
  if (!x || !x->producer() || !only_user_is(x, n)) return false;
  const std::string_view p = ops::strip_torch_ops(x->producer()->target());
  const bool takes_bounds = p == "aten.linear.default" || p == "aten.mm.default" || p == "aten.addmm.default" ||
                            p == "aten.convolution.default" || ops::is_batch_norm(x->producer()->op_target()) || p == "aten.add.Tensor" ||
                            p == "aten.sub.Tensor" || p == "aten.mul.Tensor" || p == "aten.div.Tensor";
  return takes_bounds && b.support(*x->producer(), c).claimed;
}

NodeSupport activation_support(const VulkanBackend& b, const Node& n, std::string_view op, const Constness& c) {
  if (op == "aten.clamp.default") {
    const Argument* lo = n.input("min");
    const Argument* hi = n.input("max");
    if ((lo && !lo->is_none() && !literal_number(n, "min")) || (hi && !hi->is_none() && !literal_number(n, "max"))) return NodeSupport::no("has non-literal bounds");
  }
  if (op == "aten.gelu.default") {
    const Argument* a = n.input("approximate");
    const std::string* approx = a ? a->get_if<std::string>() : nullptr;
    if (a && (!approx || (*approx != "none" && *approx != "tanh"))) return NodeSupport::no("has an unknown approximation");
  }
  if (op == "aten.hardtanh.default" && ((n.input("min_val") && !literal_number(n, "min_val")) || (n.input("max_val") && !literal_number(n, "max_val"))))
    return NodeSupport::no("has non-literal bounds");
  const std::string_view name = op.substr(5, op.find('.', 5) - 5);
  const bool bounds = op == "aten.relu.default" || op == "aten.clamp.default" || op == "aten.hardtanh.default";
  if (bounds && folds_into_producer(b, n, c)) return NodeSupport::yes(std::string(name) + ", fused into its producer as output bounds");
  return NodeSupport::yes(std::string(name));
}

const std::unordered_set<std::string_view>& claimable() {
  static const std::unordered_set<std::string_view> ops = {
      "aten.linear.default", "aten.mm.default", "aten.addmm.default", "aten.convolution.default",
      "aten.native_batch_norm.default", "aten.batch_norm.default", "aten._native_batch_norm_legit_no_training.default",
      "aten.add.Tensor", "aten.sub.Tensor", "aten.mul.Tensor", "aten.div.Tensor",
      "aten.relu.default", "aten.clamp.default", "aten.hardtanh.default", "aten.hardswish.default", "aten.sigmoid.default",
      "aten.tanh.default", "aten.gelu.default", "aten.silu.default", "aten.hardsigmoid.default",
      "aten._softmax.default", "aten.softmax.int", "aten.layer_norm.default", "aten.native_layer_norm.default",
      "aten.mean.dim", "aten.adaptive_avg_pool2d.default",
      "aten.max_pool2d_with_indices.default", "aten.max_pool2d.default", "aten.avg_pool2d.default",
      "aten.permute.default", "aten.cat.default", "aten.slice.Tensor",
      "aten.view.default", "aten._unsafe_view.default", "aten.reshape.default", "aten.flatten.using_ints",
      "aten.unsqueeze.default", "aten.squeeze.dim", "aten.squeeze.dims", "aten.clone.default", "aten.contiguous.default"};
  return ops;
}

}  // namespace

std::vector<std::string> VulkanBackend::ops_to_keep() const {
  return {"aten.linear.default", "aten.layer_norm.default", "aten.hardswish.default", "aten.hardsigmoid.default", "aten.hardtanh.default",
          "aten._softmax.default", "aten.softmax.int", "aten.max_pool2d_with_indices.default", "aten.avg_pool2d.default",
          "aten.gelu.default", "aten.silu.default"};
}

NodeSupport VulkanBackend::support(const Node& n, const Constness& c) const {
  const std::string_view op = ops::strip_torch_ops(n.target());
  if (!claimable().count(op)) return NodeSupport::no("no Vulkan shader for " + std::string(op));
  if (std::string b = check_tensors(n); !b.empty()) return NodeSupport::no(b);
  if (op == "aten.linear.default" || op == "aten.mm.default" || op == "aten.addmm.default") return linear_support(n, op, c);
  if (op == "aten.convolution.default") return conv_support(n, c);
  if (ops::is_batch_norm(n.op_target())) return batch_norm_support(n, op, c);
  if (op == "aten.add.Tensor" || op == "aten.sub.Tensor" || op == "aten.mul.Tensor" || op == "aten.div.Tensor") return binary_support(n, op);
  if (op == "aten.permute.default" || op == "aten.cat.default" || op == "aten.slice.Tensor" || ops::is_reshape(n.op_target()))
    return layout_support(*this, n, op, c);
  if (op == "aten.max_pool2d_with_indices.default" || op == "aten.max_pool2d.default" || op == "aten.avg_pool2d.default") return pool_support(n, op);
  if (op == "aten.mean.dim" || op == "aten.adaptive_avg_pool2d.default" || op == "aten._softmax.default" || op == "aten.softmax.int" ||
      op == "aten.layer_norm.default" || op == "aten.native_layer_norm.default")
    return reduce_support(n, op);
  return activation_support(*this, n, op, c);
}

}  // namespace lathe
