// VulkanBackend::preprocess: a claimed group -> a Vulkan payload record
// (op layouts in vulkan_backend.h). Activations stay in PyTorch's NCHW
// order, so views are aliases and no layout changes are ever emitted.
#include "lathe/backends/vulkan/vulkan_lowering.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "lathe/backends/node_args.h"
#include "lathe/backends/payload.h"
#include "lathe/backends/vulkan/vulkan_backend.h"
#include "lathe/backends/vulkan/vulkan_ops.h"
#include "lathe/core/int_arith.h"
#include "lathe/ir/op_catalogue.h"

namespace lathe {

using namespace node_args;
namespace aten = ops::aten;
namespace arg = ops::arg;

std::optional<std::vector<int64_t>> vulkan_pool_stride(const Node& n, const std::vector<int64_t>& kernel) {
  const Argument* a = n.input(arg::stride);
  if (!a || a->is_none()) return kernel;
  if (auto* l = a->get_if<IntList>(); l && l->items.empty()) return kernel;
  return literal_ints(n, arg::stride, 2, kernel);
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

int64_t numel_of(const std::vector<int64_t>& s) { return checked_numel(s).value_or(std::numeric_limits<int64_t>::max()); }

int64_t norm_dim(int64_t d, size_t rank) { return d < 0 ? d + static_cast<int64_t>(rank) : d; }

class Lowering {
 public:
  explicit Lowering(const DelegateSubgraph& s) : sub_(s) {
    payload_.backend = "vulkan";
    for (size_t i = 0; i < s.inputs.size(); ++i) ids_[s.inputs[i]] = payload_.add_value(sizes_of(s.inputs[i]), static_cast<int32_t>(i));
    for (const Value* v : s.outputs) escapes_.insert(v);
  }

  Result<std::vector<std::byte>> run() {
    return lower_subgraph(
        sub_, payload_, [this](const Node& n) { return lower(n); }, [this](const Value* v) { return get(v); });
  }

 private:
  Result<uint32_t> get(const Value* v) {
    auto it = ids_.find(v);
    if (it == ids_.end()) return make_error("reads '" + v->name() + "', which the delegate does not define");
    return it->second;
  }
  uint32_t define(const Value* v) { return ids_[v] = payload_.add_value(sizes_of(v)); }
  // Adds the op; `bounds` is where its output min/max sit in floats when a
  // following relu/clamp may fold into it (-1: none).
  void emit(const Node& n, VulkanKind kind, std::vector<PayloadOperand> ins, std::vector<int64_t> ints, std::vector<double> floats,
            int bounds = -1) {
    const Value* y = n.defined_values()[0];
    const uint32_t out = define(y);
    payload_.ops.push_back(PayloadOp{std::string(vulkan_kind_name(kind)), n.name(), std::move(ins), {out}, std::move(ints), std::move(floats)});
    if (bounds >= 0) fusable_[y] = {payload_.ops.size() - 1, bounds};
  }
  Result<PayloadOperand> operand(const Node& n, std::string_view name, const char* role) {
    LATHE_ASSIGN_OR_RETURN(uint32_t id, get(tensor_input(n, name)));
    return PayloadOperand{id, role};
  }

  Status lower(const Node& n);
  Status lower_linear(const Node& n, const Value* x, const Value* w, const Value* b, bool transposed);
  Status lower_conv(const Node& n);
  Status lower_batch_norm(const Node& n);
  Status lower_binary(const Node& n, VulkanBinary code);
  Status lower_unary(const Node& n, VulkanUnary code, double lo, double hi);
  Status lower_rowwise(const Node& n);
  Status lower_mean(const Node& n);
  Status lower_pool(const Node& n, bool max);
  Status lower_layout(const Node& n);

  struct Fusable {
    size_t op;
    int bounds;
  };
  const DelegateSubgraph& sub_;
  DelegatePayload payload_;
  std::unordered_map<const Value*, uint32_t> ids_;
  std::unordered_map<const Value*, Fusable> fusable_;
  std::unordered_set<const Value*> escapes_;
};

Status Lowering::lower_linear(const Node& n, const Value* x, const Value* w, const Value* b, bool transposed) {
  const auto xs = sizes_of(x), ws = sizes_of(w);
  const int64_t K = xs.back(), N = transposed ? ws[1] : ws[0];
  if ((transposed ? ws[0] : ws[1]) != K) return make_error("weight " + shape_string(ws) + " does not match input " + shape_string(xs));
  LATHE_ASSIGN_OR_RETURN(uint32_t xi, get(x));
  LATHE_ASSIGN_OR_RETURN(uint32_t wi, get(w));
  std::vector<PayloadOperand> ins{{xi, "input"}, {wi, "weight"}};
  if (b) {
    LATHE_ASSIGN_OR_RETURN(uint32_t bi, get(b));
    ins.push_back({bi, "bias"});
  }
  emit(n, VulkanKind::Linear, std::move(ins), {K ? numel_of(xs) / K : 0, K, N, transposed ? 1 : 0}, {-kInf, kInf}, 0);
  return Status::Ok();
}

// A 1-D convolution is a 2-D one over a unit height.
Status Lowering::lower_conv(const Node& n) {
  const Value* x = tensor_input(n, arg::input);
  const Value* w = tensor_input(n, arg::weight);
  const bool one_d = sizes_of(x).size() == 3;
  auto as4d = [](std::vector<int64_t> s) { return s.size() == 3 ? std::vector<int64_t>{s[0], s[1], 1, s[2]} : s; };
  const auto xs = as4d(sizes_of(x)), ws = as4d(sizes_of(w)), ys = as4d(sizes_of(n.defined_values()[0]));
  auto param = [&](const char* name, int64_t dflt) {
    if (!one_d) return *literal_ints(n, name, 2, {dflt, dflt});
    return std::vector<int64_t>{name[0] == 'p' ? 0 : 1, (*literal_ints(n, name, 1, {dflt}))[0]};
  };
  const auto stride = param("stride", 1), pad = param("padding", 0), dil = param("dilation", 1);
  std::vector<PayloadOperand> ins;
  LATHE_ASSIGN_OR_RETURN(PayloadOperand xo, operand(n, arg::input, "input"));
  LATHE_ASSIGN_OR_RETURN(PayloadOperand wo, operand(n, arg::weight, "weight"));
  ins = {xo, wo};
  if (!is_none_input(n, arg::bias)) {
    LATHE_ASSIGN_OR_RETURN(PayloadOperand bo, operand(n, arg::bias, "bias"));
    ins.push_back(bo);
  }
  emit(n, VulkanKind::Conv2d, std::move(ins),
       {xs[0], xs[1], xs[2], xs[3], ws[0], ys[2], ys[3], ws[2], ws[3], stride[0], stride[1], pad[0], pad[1], dil[0], dil[1],
        *literal_int_or(n, arg::groups, 1)},
       {-kInf, kInf, 0.0}, 0);
  return Status::Ok();
}

// Folded into the convolution before it when it feeds only this batch norm
// and has not folded one already; else a per-channel scale and shift.
Status Lowering::lower_batch_norm(const Node& n) {
  const Value* x = tensor_input(n, arg::input);
  const Value* y = n.defined_values()[0];
  const char* roles[4] = {"weight", "bias", "running_mean", "running_var"};
  auto f = fusable_.find(x);
  if (f != fusable_.end() && payload_.ops[f->second.op].kind == vulkan_kind_name(VulkanKind::Conv2d) && only_user_is(x, n) && !escapes_.count(x) &&
      payload_.ops[f->second.op].floats[0] == -kInf && payload_.ops[f->second.op].floats[1] == kInf && payload_.ops[f->second.op].inputs.size() <= 3) {
    PayloadOp& conv = payload_.ops[f->second.op];
    for (const char* role : roles) {
      LATHE_ASSIGN_OR_RETURN(PayloadOperand o, operand(n, role, role));
      conv.inputs.push_back({o.value, std::string("bn_") + role});
    }
    conv.floats[2] = *literal_number(n, arg::eps);
    conv.node += "+" + n.name();
    ids_[y] = ids_.at(x);
    fusable_[y] = f->second;
    return Status::Ok();
  }
  LATHE_ASSIGN_OR_RETURN(PayloadOperand xo, operand(n, arg::input, "self"));
  std::vector<PayloadOperand> ins{xo};
  for (const char* role : roles) {
    LATHE_ASSIGN_OR_RETURN(PayloadOperand o, operand(n, role, role));
    ins.push_back(o);
  }
  const auto xs = sizes_of(x);
  const int64_t N = xs[0], C = xs[1], inner = numel_of(xs) / std::max<int64_t>(1, N * C);
  emit(n, VulkanKind::ChannelAffine, std::move(ins), {N, C, std::max<int64_t>(inner, 1)}, {*literal_number(n, arg::eps), -kInf, kInf}, 1);
  return Status::Ok();
}

// Sizes right-aligned to the output's rank (at least 1), as broadcasting reads them.
Status Lowering::lower_binary(const Node& n, VulkanBinary code) {
  const Value* a = tensor_input(n, arg::self);
  const Value* b = tensor_input(n, arg::other);
  std::vector<int64_t> os = sizes_of(n.defined_values()[0]);
  if (os.empty()) os = {1};
  auto aligned = [&](std::vector<int64_t> s) {
    s.insert(s.begin(), os.size() - std::min(s.size(), os.size()), 1);
    return s;
  };
  std::vector<int64_t> ints{static_cast<int64_t>(code), b ? 0 : 1, static_cast<int64_t>(os.size())};
  ints.insert(ints.end(), os.begin(), os.end());
  const auto as = aligned(sizes_of(a));
  ints.insert(ints.end(), as.begin(), as.end());
  LATHE_ASSIGN_OR_RETURN(uint32_t ai, get(a));
  std::vector<PayloadOperand> ins{{ai, "self"}};
  if (b) {
    const auto bs = aligned(sizes_of(b));
    ints.insert(ints.end(), bs.begin(), bs.end());
    LATHE_ASSIGN_OR_RETURN(uint32_t bi, get(b));
    ins.push_back({bi, "other"});
  }
  const double alpha = literal_number(n, arg::alpha).value_or(1.0);
  emit(n, VulkanKind::Binary, std::move(ins), std::move(ints), {alpha, b ? 0.0 : *literal_number(n, arg::other), -kInf, kInf}, 2);
  return Status::Ok();
}

// A clamp after an op that takes output bounds, and is its only reader,
// narrows those bounds instead of running on its own.
Status Lowering::lower_unary(const Node& n, VulkanUnary code, double lo, double hi) {
  const Value* x = tensor_input(n, arg::self);
  const Value* y = n.defined_values()[0];
  auto f = fusable_.find(x);
  if (code == VulkanUnary::Clamp && f != fusable_.end() && only_user_is(x, n) && !escapes_.count(x)) {
    PayloadOp& op = payload_.ops[f->second.op];
    op.floats[f->second.bounds] = std::max(op.floats[f->second.bounds], lo);
    op.floats[f->second.bounds + 1] = std::min(op.floats[f->second.bounds + 1], hi);
    op.node += "+" + n.name();
    ids_[y] = ids_.at(x);
    fusable_[y] = f->second;
    return Status::Ok();
  }
  LATHE_ASSIGN_OR_RETURN(PayloadOperand xo, operand(n, arg::self, "self"));
  emit(n, VulkanKind::Unary, {xo}, {static_cast<int64_t>(code)}, {lo, hi});
  return Status::Ok();
}

Status Lowering::lower_rowwise(const Node& n) {
  const bool ln = n.op_target() == aten::layer_norm || n.op_target() == aten::native_layer_norm;
  const Value* x = tensor_input(n, ln ? arg::input : arg::self);
  const auto xs = sizes_of(x);
  int64_t cols = xs.empty() ? 1 : xs.back();
  if (ln) {
    const size_t k = literal_int_list(n, arg::normalized_shape)->size();
    cols = numel_of(std::vector<int64_t>(xs.end() - static_cast<std::ptrdiff_t>(k), xs.end()));
  }
  const int64_t rows = cols ? numel_of(xs) / cols : 0;
  LATHE_ASSIGN_OR_RETURN(uint32_t xi, get(x));
  std::vector<PayloadOperand> ins{{xi, "self"}};
  if (!ln) {
    emit(n, VulkanKind::Softmax, std::move(ins), {rows, cols}, {});
    return Status::Ok();
  }
  for (const char* role : {"weight", "bias"}) {
    if (is_none_input(n, role)) continue;
    LATHE_ASSIGN_OR_RETURN(PayloadOperand o, operand(n, role, role));
    ins.push_back(o);
  }
  emit(n, VulkanKind::LayerNorm, std::move(ins), {rows, std::max<int64_t>(cols, 1)}, {n.input(arg::eps) ? *literal_number(n, arg::eps) : 1e-5});
  return Status::Ok();
}

Status Lowering::lower_mean(const Node& n) {
  const Value* x = tensor_input(n, arg::self);
  std::vector<int64_t> xs = sizes_of(x);
  if (xs.empty()) xs = {1};
  std::vector<int64_t> reduced(xs.size(), 0);
  std::vector<int64_t> dims = n.op_target() == aten::adaptive_avg_pool2d ? std::vector<int64_t>{2, 3}
                                                                           : literal_int_list(n, arg::dim).value_or(std::vector<int64_t>{});
  if (dims.empty()) dims.assign(1, -1), reduced.assign(xs.size(), 1);  // mean over every dimension
  else for (int64_t d : dims) reduced.at(static_cast<size_t>(norm_dim(d, xs.size()))) = 1;
  std::vector<int64_t> ints{static_cast<int64_t>(xs.size())};
  ints.insert(ints.end(), xs.begin(), xs.end());
  ints.insert(ints.end(), reduced.begin(), reduced.end());
  LATHE_ASSIGN_OR_RETURN(PayloadOperand xo, operand(n, arg::self, "self"));
  emit(n, VulkanKind::Mean, {xo}, std::move(ints), {});
  return Status::Ok();
}

Status Lowering::lower_pool(const Node& n, bool max) {
  const auto xs = sizes_of(tensor_input(n, arg::self)), ys = sizes_of(n.defined_values()[0]);
  const auto k = *literal_ints(n, arg::kernel_size, 2, {});
  const auto stride = *vulkan_pool_stride(n, k);
  const auto pad = *literal_ints(n, arg::padding, 2, {0, 0});
  const auto dil = max ? *literal_ints(n, arg::dilation, 2, {1, 1}) : std::vector<int64_t>{1, 1};
  const int64_t include_pad = max ? 0 : (literal_bool(n, arg::count_include_pad).value_or(true) ? 1 : 0);
  const int64_t divisor = max || is_none_input(n, arg::divisor_override) ? 0 : *literal_int(n, arg::divisor_override);
  LATHE_ASSIGN_OR_RETURN(PayloadOperand xo, operand(n, arg::self, "self"));
  emit(n, VulkanKind::Pool2d, {xo},
       {max ? 1 : 0, xs[0] * xs[1], xs[2], xs[3], ys[2], ys[3], k[0], k[1], stride[0], stride[1], pad[0], pad[1], dil[0], dil[1],
        include_pad, divisor},
       {});
  return Status::Ok();
}

Status Lowering::lower_layout(const Node& n) {
  const OpTarget op = n.op_target();
  if (op == aten::cat) {
    const std::vector<Value*>& items = n.input(arg::tensors)->as<TensorList>().items;
    std::vector<PayloadOperand> ins;
    for (const Value* v : items) {
      LATHE_ASSIGN_OR_RETURN(uint32_t id, get(v));
      ins.push_back({id, "tensor"});
    }
    const size_t rank = sizes_of(n.defined_values()[0]).size();
    emit(n, VulkanKind::Cat, std::move(ins), {norm_dim(*literal_int_or(n, arg::dim, 0), rank)}, {});
    return Status::Ok();
  }
  LATHE_ASSIGN_OR_RETURN(PayloadOperand xo, operand(n, arg::self, "self"));
  const auto xs = sizes_of(tensor_input(n, arg::self));
  if (op == aten::permute) {
    std::vector<int64_t> dims = *literal_ints(n, arg::dims, xs.size(), {});
    for (int64_t& d : dims) d = norm_dim(d, xs.size());
    emit(n, VulkanKind::Permute, {xo}, std::move(dims), {});
    return Status::Ok();
  }
  if (op == aten::slice_Tensor) {
    const int64_t d = norm_dim(*literal_int_or(n, arg::dim, 0), xs.size());
    int64_t start = is_none_input(n, arg::start) ? 0 : *literal_int(n, arg::start);
    if (start < 0) start += xs[d];
    start = std::clamp<int64_t>(start, 0, xs[d]);
    emit(n, VulkanKind::Slice, {xo}, {d, start, *literal_int_or(n, arg::step, 1)}, {});
    return Status::Ok();
  }
  emit(n, VulkanKind::View, {xo}, {}, {});
  return Status::Ok();
}

Status Lowering::lower(const Node& n) {
  const OpTarget op = n.op_target();
  if (op == aten::linear) {
    return lower_linear(n, tensor_input(n, arg::input), tensor_input(n, arg::weight),
                        is_none_input(n, arg::bias) ? nullptr : tensor_input(n, arg::bias), false);
  }
  if (op == aten::mm) return lower_linear(n, tensor_input(n, arg::self), tensor_input(n, arg::mat2), nullptr, true);
  if (op == aten::addmm) return lower_linear(n, tensor_input(n, arg::mat1), tensor_input(n, arg::mat2), tensor_input(n, arg::self), true);
  if (op == aten::convolution) return lower_conv(n);
  if (ops::is_batch_norm(op)) return lower_batch_norm(n);
  if (op == aten::add_Tensor) return lower_binary(n, VulkanBinary::Add);
  if (op == aten::sub_Tensor) return lower_binary(n, VulkanBinary::Sub);
  if (op == aten::mul_Tensor) return lower_binary(n, VulkanBinary::Mul);
  if (op == aten::div_Tensor) return lower_binary(n, VulkanBinary::Div);
  if (op == aten::relu) return lower_unary(n, VulkanUnary::Clamp, 0, kInf);
  if (op == aten::clamp)
    return lower_unary(n, VulkanUnary::Clamp, literal_number(n, arg::min).value_or(-kInf), literal_number(n, arg::max).value_or(kInf));
  if (op == aten::hardtanh)
    return lower_unary(n, VulkanUnary::Clamp, literal_number(n, arg::min_val).value_or(-1), literal_number(n, arg::max_val).value_or(1));
#define LATHE_VULKAN_UNARY_CODE(name, code, expression)
#define LATHE_VULKAN_UNARY(name, code, aten_op, expression) \
  if (op == aten::aten_op) return lower_unary(n, VulkanUnary::name, -kInf, kInf);
#include "lathe/backends/vulkan/shaders/unary_ops.def"
#undef LATHE_VULKAN_UNARY
#undef LATHE_VULKAN_UNARY_CODE
  if (op == aten::gelu) {
    const Argument* a = n.input(arg::approximate);
    const bool tanh = a && a->get_if<std::string>() && *a->get_if<std::string>() == "tanh";
    return lower_unary(n, tanh ? VulkanUnary::GeluTanh : VulkanUnary::Gelu, -kInf, kInf);
  }
  if (op == aten::_softmax || op == aten::softmax_int || op == aten::layer_norm || op == aten::native_layer_norm) return lower_rowwise(n);
  if (op == aten::mean_dim || op == aten::adaptive_avg_pool2d) return lower_mean(n);
  if (op == aten::max_pool2d_with_indices || op == aten::max_pool2d) return lower_pool(n, true);
  if (op == aten::avg_pool2d) return lower_pool(n, false);
  if (op == aten::permute || op == aten::cat || op == aten::slice_Tensor || ops::is_reshape(op)) return lower_layout(n);
  return make_error("the Vulkan backend does not lower " + n.op_name());
}

}  // namespace

Result<std::vector<std::byte>> VulkanBackend::preprocess(const DelegateSubgraph& subgraph) const { return Lowering(subgraph).run(); }

const Backend& vulkan_backend() {
  static const VulkanBackend backend;
  return backend;
}

}  // namespace lathe
