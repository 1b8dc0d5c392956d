// VulkanBackend::support: what the partitioner may give this backend, and
// why not. Weights a matmul or convolution prepacks must be compile-time
// constants (Constness); everything else may be computed at run time.
#include <algorithm>

#include "lathe/backends/node_args.h"
#include "lathe/backends/support_rules.h"
#include "lathe/backends/vulkan/vulkan_backend.h"
#include "lathe/backends/vulkan/vulkan_lowering.h"
#include "lathe/backends/vulkan/vulkan_ops.h"
#include "lathe/ir/op_catalogue.h"

namespace lathe {

namespace {

using namespace node_args;
namespace aten = ops::aten;
namespace arg = ops::arg;
using support_rules::input_is_claimed;

constexpr std::string_view kPrepackNote = " (the Vulkan backend uploads and repacks it once, at load: it must be a compile-time constant)";

std::string needs_constant(const Value* v, std::string_view role, const Constness& c) {
  return node_args::needs_constant(v, role, c, kPrepackNote);
}

NodeSupport linear_support(const Node& n, const Constness& c) {
  const OpTarget op = n.op_target();
  if (op == aten::linear) {
    const Value* w = tensor_input(n, arg::weight);
    if (!w || w->meta()->sizes.size() != 2) return NodeSupport::no("weight is not 2-D");
    if (std::string r = needs_constant(w, "weight", c); !r.empty()) return NodeSupport::no(r);
    if (std::string r = needs_constant(tensor_input(n, arg::bias), "bias", c); !r.empty()) return NodeSupport::no(r);
    return NodeSupport::yes("linear, weight " + c.describe(w) + " repacked to [K, N] at load");
  }
  const Value* x = tensor_input(n, op == aten::mm ? arg::self : arg::mat1);
  const Value* w = tensor_input(n, arg::mat2);
  if (!x || !w || x->meta()->sizes.size() != 2 || w->meta()->sizes.size() != 2) return NodeSupport::no("operands are not 2-D");
  if (std::string r = needs_constant(w, "mat2", c); !r.empty()) return NodeSupport::no(r);
  if (op == aten::addmm) {
    if (literal_number(n, arg::beta).value_or(1) != 1 || literal_number(n, arg::alpha).value_or(1) != 1) return NodeSupport::no("has beta or alpha other than 1");
    const Value* b = tensor_input(n, arg::self);
    if (!b || b->meta()->sizes.size() != 1) return NodeSupport::no("bias is not 1-D");
    if (std::string r = needs_constant(b, "bias", c); !r.empty()) return NodeSupport::no(r);
  }
  return NodeSupport::yes("linear, mat2 " + c.describe(w) + " uploaded at load");
}

NodeSupport conv_support(const Node& n, const Constness& c) {
  const Value* x = tensor_input(n, arg::input);
  const Value* w = tensor_input(n, arg::weight);
  if (!x || !w) return NodeSupport::no("has no input or weight tensor");
  const size_t rank = x->meta()->sizes.size();
  if ((rank != 3 && rank != 4) || w->meta()->sizes.size() != rank) return NodeSupport::no("is not a 1-D or 2-D convolution");
  const size_t spatial = rank - 2;
  support_rules::ConvGeometry g;
  if (NodeSupport geometry = support_rules::read_conv_geometry(n, spatial, g); !geometry.claimed) return geometry;
  if (NodeSupport fits = support_rules::check_conv_window(n, g); !fits.claimed) return fits;
  if (std::string r = needs_constant(w, "weight", c); !r.empty()) return NodeSupport::no(r);
  if (!is_none_input(n, arg::bias)) {
    if (std::string r = needs_constant(tensor_input(n, arg::bias), "bias", c); !r.empty()) return NodeSupport::no(r);
  }
  const int64_t cin = sizes_of(x)[1];
  const char* kind = g.groups > 1 && g.groups == cin ? "depthwise conv2d" : "conv2d";
  return NodeSupport::yes(std::string(kind) + (spatial == 1 ? " over a unit height (1-D)" : "") + ", weight " + c.describe(w) + " uploaded at load");
}

// Folds into the convolution before it when that convolution is claimed,
// feeds only this batch norm, and the statistics are constants.
bool batch_norm_folds(const Node& n, const Constness& c) {
  const Value* x = tensor_input(n, arg::input);
  if (!x || !x->producer() || x->producer()->op_target() != aten::convolution) return false;
  return conv_support(*x->producer(), c).claimed && only_user_is(x, n);
}

NodeSupport batch_norm_support(const Node& n, const Constness& c) {
  const Value* x = tensor_input(n, arg::input);
  if (n.op_target() != aten::_native_batch_norm_legit_no_training && literal_bool(n, arg::training).value_or(true))
    return NodeSupport::no("is a training-mode batch norm");
  if (!x || x->meta()->sizes.size() < 2) return NodeSupport::no("input has no channel dimension");
  std::vector<Value*> outs = n.defined_values();
  for (size_t k = 1; k < outs.size(); ++k) {
    if (outs[k]->has_uses()) return NodeSupport::no("its saved mean/invstd outputs are used");
  }
  for (std::string_view role : {arg::weight, arg::bias, arg::running_mean, arg::running_var}) {
    if (!tensor_input(n, role)) return NodeSupport::no("has no " + std::string(role));
    if (std::string r = needs_constant(tensor_input(n, role), role, c); !r.empty()) return NodeSupport::no(r);
  }
  if (!literal_number(n, arg::eps)) return NodeSupport::no("has a symbolic eps");
  if (batch_norm_folds(n, c)) return NodeSupport::yes("folded into convolution '" + x->producer()->name() + "' at load");
  return NodeSupport::yes("channel_affine (scale and shift from the statistics, at load)");
}

NodeSupport binary_support(const Node& n) {
  const Value* a = tensor_input(n, arg::self);
  const Value* b = tensor_input(n, arg::other);
  if (!a) return NodeSupport::no("has a scalar self");
  if (!b && !literal_number(n, arg::other)) return NodeSupport::no("has a non-literal scalar operand");
  if (a->meta()->sizes.size() > kVulkanMaxRank || (b && b->meta()->sizes.size() > kVulkanMaxRank))
    return NodeSupport::no("has an operand of more than 6 dimensions");
  if (!literal_number(n, arg::alpha).has_value() && n.input(arg::alpha)) return NodeSupport::no("has a symbolic alpha");
  return NodeSupport::yes(std::string(ops::aten_op_name(n.target())) + (b ? " (broadcasting)" : " with a number"));
}

NodeSupport layout_support(const Backend& b, const Node& n, const Constness& c) {
  const OpTarget op = n.op_target();
  const Value* x = tensor_input(n, arg::self);
  if (op == aten::cat) {
    const Argument* a = n.input(arg::tensors);
    const TensorList* list = a ? a->get_if<TensorList>() : nullptr;
    if (!list || list->items.empty()) return NodeSupport::no("has no tensor list");
    bool any = false;
    for (const Value* v : list->items) {
      if (!v || v->meta()->sizes.size() != list->items[0]->meta()->sizes.size()) return NodeSupport::no("joins tensors of different ranks");
      any = any || (v->producer() && b.support(*v->producer(), c).claimed);
    }
    if (!any) return NodeSupport::no("none of its inputs is computed on the device (a lone copy is not worth a delegate)");
    if (list->items[0]->meta()->sizes.size() > kVulkanMaxRank || !literal_int_or(n, arg::dim, 0)) return NodeSupport::no("has a symbolic dim or more than 6 dimensions");
    return NodeSupport::yes("cat (strided copies on the device)");
  }
  if (!input_is_claimed(b, n, c)) return NodeSupport::no("its input is not computed on the device (a lone copy is not worth a delegate)");
  if (x->meta()->sizes.size() > kVulkanMaxRank) return NodeSupport::no("has more than 6 dimensions");
  if (op == aten::permute) {
    if (!literal_ints(n, arg::dims, x->meta()->sizes.size(), {})) return NodeSupport::no("has symbolic dims");
    return NodeSupport::yes("permute (a strided copy on the device)");
  }
  if (op == aten::slice_Tensor) {
    if (!literal_int_or(n, arg::step, 1) || !literal_int_or(n, arg::dim, 0)) return NodeSupport::no("has a symbolic step or dim");
    if (!is_none_input(n, arg::start) && !literal_int(n, arg::start)) return NodeSupport::no("has a symbolic start");
    return NodeSupport::yes("slice (a strided copy on the device)");
  }
  return NodeSupport::yes("view (shares its input's buffer)");
}

NodeSupport pool_support(const Node& n) {
  const Value* x = tensor_input(n, arg::self);
  if (x->meta()->sizes.size() != 4) return NodeSupport::no("input is not 4-D");
  const auto k = literal_ints(n, arg::kernel_size, 2, {});
  if (!k || !literal_ints(n, arg::padding, 2, {0, 0}) || !vulkan_pool_stride(n, *k)) return NodeSupport::no("has a symbolic window");
  if (NodeSupport fits = support_rules::check_pool_window(n); !fits.claimed) return fits;
  if (n.op_target() == aten::avg_pool2d) {
    if (!is_none_input(n, arg::divisor_override) && !literal_int(n, arg::divisor_override)) return NodeSupport::no("has a symbolic divisor");
    return NodeSupport::yes("pool2d (average)");
  }
  if (n.defined_values().size() > 1 && n.defined_values()[1]->has_uses()) return NodeSupport::no("its indices are used");
  if (!literal_ints(n, arg::dilation, 2, {1, 1})) return NodeSupport::no("has symbolic dilation");
  return NodeSupport::yes("pool2d (max)");
}

NodeSupport reduce_support(const Node& n) {
  const OpTarget op = n.op_target();
  const bool layer_norm = op == aten::native_layer_norm || op == aten::layer_norm;
  const Value* x = tensor_input(n, layer_norm ? arg::input : arg::self);
  const size_t rank = x->meta()->sizes.size();
  if (op == aten::adaptive_avg_pool2d) {
    auto size = literal_ints(n, arg::output_size, 2, {});
    if (rank != 4 || !size || (*size)[0] != 1 || (*size)[1] != 1) return NodeSupport::no("is not a 4-D pool to 1x1");
    return NodeSupport::yes("mean over H and W");
  }
  if (op == aten::mean_dim) {
    if (rank > kVulkanMaxRank || (n.input(arg::dim) && !is_none_input(n, arg::dim) && !literal_int_list(n, arg::dim))) return NodeSupport::no("has symbolic dims or more than 6");
    if (!is_none_input(n, arg::dtype)) return NodeSupport::no("has a dtype");
    return NodeSupport::yes("mean");
  }
  if (layer_norm) {
    auto shape = literal_int_list(n, arg::normalized_shape);
    if (!shape || shape->empty() || shape->size() > rank) return NodeSupport::no("has a symbolic or empty normalized_shape");
    std::vector<Value*> outs = n.defined_values();
    for (size_t k = 1; k < outs.size(); ++k) {
      if (outs[k]->has_uses()) return NodeSupport::no("its mean/rstd outputs are used");
    }
    if (n.input(arg::eps) && !literal_number(n, arg::eps)) return NodeSupport::no("has a symbolic eps");
    return NodeSupport::yes("layer_norm (a workgroup per row)");
  }
  auto dim = literal_int(n, arg::dim);
  if (!dim || (*dim != -1 && *dim != static_cast<int64_t>(rank) - 1)) return NodeSupport::no("is not over the last dimension");
  if (literal_bool(n, arg::half_to_float).value_or(false)) return NodeSupport::no("has half_to_float");
  if (op == aten::softmax_int && !is_none_input(n, arg::dtype)) return NodeSupport::no("has a dtype");
  return NodeSupport::yes("softmax (a workgroup per row)");
}

// The ops whose shader takes output bounds a following relu/clamp/hardtanh can fold into.
bool takes_bounds(OpTarget p) {
  return p == aten::linear || p == aten::mm || p == aten::addmm || p == aten::convolution || ops::is_batch_norm(p) ||
         p == aten::add_Tensor || p == aten::sub_Tensor || p == aten::mul_Tensor || p == aten::div_Tensor;
}

NodeSupport activation_support(const Backend& b, const Node& n, const Constness& c) {
  const OpTarget op = n.op_target();
  if (op == aten::clamp) {
    const Argument* lo = n.input(arg::min);
    const Argument* hi = n.input(arg::max);
    if ((lo && !lo->is_none() && !literal_number(n, arg::min)) || (hi && !hi->is_none() && !literal_number(n, arg::max))) return NodeSupport::no("has non-literal bounds");
  }
  if (op == aten::gelu) {
    const Argument* a = n.input(arg::approximate);
    const std::string* approx = a ? a->get_if<std::string>() : nullptr;
    if (a && (!approx || (*approx != "none" && *approx != "tanh"))) return NodeSupport::no("has an unknown approximation");
  }
  if (op == aten::hardtanh && ((n.input(arg::min_val) && !literal_number(n, arg::min_val)) || (n.input(arg::max_val) && !literal_number(n, arg::max_val))))
    return NodeSupport::no("has non-literal bounds");
  const std::string_view name = ops::aten_op_name(op.str());
  const bool bounds = op == aten::relu || op == aten::clamp || op == aten::hardtanh;
  if (bounds && support_rules::folds_into_producer(b, n, c, takes_bounds)) return NodeSupport::yes(std::string(name) + ", fused into its producer as output bounds");
  return NodeSupport::yes(std::string(name));
}

// What VulkanBackend::support asks of each op it has a shader for, after check_tensors().
const support_rules::Rules& rules() {
  using support_rules::plain, support_rules::with_constness;
  static const support_rules::Rules rules = [] {
    support_rules::Rules r;
    r[aten::linear] = r[aten::mm] = r[aten::addmm] = with_constness(linear_support);
    r[aten::convolution] = with_constness(conv_support);
    r[aten::native_batch_norm] = r[aten::batch_norm] = r[aten::_native_batch_norm_legit_no_training] =
        with_constness(batch_norm_support);
    r[aten::add_Tensor] = r[aten::sub_Tensor] = r[aten::mul_Tensor] = r[aten::div_Tensor] = plain(binary_support);
    for (OpTarget op : {aten::relu, aten::clamp, aten::hardtanh, aten::gelu}) r[op] = activation_support;
#define LATHE_VULKAN_UNARY_CODE(name, code, expression)
#define LATHE_VULKAN_UNARY(name, code, aten_op, expression) r[aten::aten_op] = activation_support;
#include "lathe/backends/vulkan/shaders/unary_ops.def"
#undef LATHE_VULKAN_UNARY
#undef LATHE_VULKAN_UNARY_CODE
    r[aten::_softmax] = r[aten::softmax_int] = r[aten::layer_norm] = r[aten::native_layer_norm] = plain(reduce_support);
    r[aten::mean_dim] = r[aten::adaptive_avg_pool2d] = plain(reduce_support);
    r[aten::max_pool2d_with_indices] = r[aten::max_pool2d] = r[aten::avg_pool2d] = plain(pool_support);
    for (OpTarget op : {aten::permute, aten::cat, aten::slice_Tensor, aten::view, aten::_unsafe_view, aten::reshape,
                        aten::flatten_using_ints, aten::unsqueeze, aten::squeeze_dim, aten::squeeze_dims, aten::clone,
                        aten::contiguous}) {
      r[op] = layout_support;
    }
    return r;
  }();
  return rules;
}

}  // namespace

std::vector<std::string> VulkanBackend::ops_to_keep() const { return support_rules::ops_decompose_would_split(rules()); }

std::vector<std::string> VulkanBackend::claimed_ops() const { return support_rules::claimed_op_names(rules()); }

NodeSupport VulkanBackend::support(const Node& n, const Constness& c) const {
  return support_rules::decide(rules(), *this, n, c, "no Vulkan shader for");
}

}  // namespace lathe
