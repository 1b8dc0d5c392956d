// XnnpackBackend: what it claims (support) and how a claimed group becomes
// a payload (preprocess). The runtime half is in xnnpack_runtime.cpp.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "lathe/backends/node_args.h"
#include "lathe/backends/payload.h"
#include "lathe/backends/support_rules.h"
#include "lathe/backends/xnnpack_backend.h"
#include "lathe/backends/xnnpack_kinds.h"
#include "lathe/backends/xnnpack_params.h"
#include "lathe/ir/literal_args.h"
#include "lathe/ir/op_catalogue.h"

namespace lathe {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

using namespace node_args;
using support_rules::input_is_claimed;
namespace aten = ops::aten;
namespace arg = ops::arg;

constexpr std::string_view kPrepackNote = " (XNNPACK prepacks it at init: it must be a compile-time constant)";

// A batch norm's operands after its input, in the order payloads list them.
constexpr std::string_view kBatchNormStatistics[] = {arg::weight, arg::bias, arg::running_mean, arg::running_var};

// Why `v` (operand `role`) cannot be prepacked, or "".
std::string needs_constant(const Value* v, std::string_view role, const Constness& c) {
  return node_args::needs_constant(v, role, c, kPrepackNote);
}

std::string describe_const(const Value* v, const Constness& c) { return c.describe(v); }

NodeSupport conv_support(const Node& n, const Constness& c) {
  const Value* x = tensor_input(n, arg::input);
  const Value* w = tensor_input(n, arg::weight);
  if (!x || !w) return NodeSupport::no("has no input or weight tensor");
  const size_t rank = x->meta()->sizes.size();
  if ((rank != 3 && rank != 4) || w->meta()->sizes.size() != rank)
    return NodeSupport::no("is not a 1-D or 2-D convolution (needs 3-D or 4-D input and weight)");
  const size_t spatial = rank - 2;
  support_rules::ConvGeometry g;
  if (NodeSupport geometry = support_rules::read_conv_geometry(n, spatial, g); !geometry.claimed) return geometry;
  auto in_range = [](const std::vector<int64_t>& v, int64_t lo) {
    return std::all_of(v.begin(), v.end(), [&](int64_t x) { return x >= lo && x < (int64_t{1} << 24); });
  };
  if (!in_range(g.stride, 1) || !in_range(g.padding, 0) || !in_range(g.dilation, 1) || g.groups < 1 || g.groups >= (int64_t{1} << 24))
    return NodeSupport::no("has a stride, padding, dilation or groups XNNPACK cannot take");
  if (NodeSupport fits = support_rules::check_conv_window(n, g); !fits.claimed) return fits;
  if (std::string r = needs_constant(w, "weight", c); !r.empty()) return NodeSupport::no(r);
  if (!is_none_input(n, arg::bias)) {
    if (std::string r = needs_constant(tensor_input(n, arg::bias), "bias", c); !r.empty()) return NodeSupport::no(r);
  }
  return NodeSupport::yes(std::string(spatial == 1 ? "convolution2d_nhwc over a unit height (1-D)" : "convolution2d_nhwc") +
                          ", weight " + describe_const(w, c) + " prepacked");
}

// Folds into the convolution before it when that convolution is claimed,
// feeds only this batch norm, and the statistics are constants (they are
// folded into the prepacked weights at init).
bool batch_norm_folds(const Node& n, const Constness& c) {
  const Value* x = tensor_input(n, arg::input);
  if (!x || !x->producer() || x->producer()->op_target() != aten::convolution) return false;
  if (!conv_support(*x->producer(), c).claimed || !only_user_is(x, n)) return false;
  for (std::string_view role : kBatchNormStatistics) {
    if (!needs_constant(tensor_input(n, role), role, c).empty()) return false;
  }
  return true;
}

// The batch norms ops::is_batch_norm() lists; _native_batch_norm_legit_no_training
// has no training argument: it is always eval.
NodeSupport batch_norm_support(const Node& n, const Constness& c) {
  const Value* x = tensor_input(n, arg::input);
  const bool eval_only = n.op_target() == aten::_native_batch_norm_legit_no_training;
  if (!eval_only && literal_bool(n, arg::training).value_or(true)) return NodeSupport::no("is a training-mode batch norm");
  if (!x || x->meta()->sizes.size() < 2) return NodeSupport::no("input has no channel dimension");
  std::vector<Value*> outs = n.defined_values();
  for (size_t k = 1; k < outs.size(); ++k) {
    if (outs[k]->has_uses()) return NodeSupport::no("its saved mean/invstd outputs are used");
  }
  for (std::string_view role : kBatchNormStatistics) {
    if (!tensor_input(n, role)) return NodeSupport::no("has no " + std::string(role));
  }
  if (!literal_number(n, arg::eps)) return NodeSupport::no("has a symbolic eps");
  if (batch_norm_folds(n, c)) return NodeSupport::yes("folded into convolution '" + x->producer()->name() + "' at init");
  return NodeSupport::yes("per-channel scale and shift (a Lathe loop inside the delegate; no convolution to fold into)");
}

// The ops whose XNNPACK operator takes output bounds a following relu/clamp can fold into.
bool takes_bounds(OpTarget p) {
  return p == aten::linear || p == aten::mm || p == aten::addmm || p == aten::convolution || ops::is_batch_norm(p);
}

constexpr const char* kLoneCopy = "its input is not computed by XNNPACK (a lone copy is not worth a delegate)";

// A concatenation is a copy; worth claiming only where some input is
// already computed by XNNPACK (densenet's and googlenet's channel concats).
NodeSupport cat_support(const Backend& backend, const Node& n, const Constness& c) {
  const Argument* a = n.input(arg::tensors);
  const TensorList* list = a ? a->get_if<TensorList>() : nullptr;
  if (!list || list->items.empty()) return NodeSupport::no("has no tensor list");
  bool any_claimed = false;
  const size_t rank = list->items[0]->meta()->sizes.size();
  for (const Value* v : list->items) {
    if (!v || v->meta()->sizes.size() != rank) return NodeSupport::no("joins tensors of different ranks");
    any_claimed = any_claimed || (v->producer() && backend.support(*v->producer(), c).claimed);
  }
  if (!any_claimed) return NodeSupport::no("none of its inputs is computed by XNNPACK (a lone copy is not worth a delegate)");
  if (!literal_int_or(n, arg::dim, 0)) return NodeSupport::no("has a symbolic dim");
  return NodeSupport::yes("concatenation (a copy inside the delegate, in the inputs' layout)");
}

NodeSupport slice_support(const Backend& backend, const Node& n, const Constness& c) {
  if (!input_is_claimed(backend, n, c)) return NodeSupport::no(kLoneCopy);
  if (literal_int_or(n, arg::step, 1).value_or(0) != 1 || !literal_int_or(n, arg::dim, 0))
    return NodeSupport::no("has a step other than 1 or a symbolic dim");
  if (!is_none_input(n, arg::start) && !literal_int(n, arg::start)) return NodeSupport::no("has a symbolic start");
  return NodeSupport::yes("slice (a copy inside the delegate)");
}

// ---- ops Lathe's portable kernels run inside the delegate (xnnpack_host_ops.h) ----

constexpr const char* kInside = " (Lathe's portable kernel, inside the delegate)";

NodeSupport layer_norm_support(const Node& n) {
  if (!tensor_input(n, arg::input) || !literal_int_list(n, arg::normalized_shape).has_value())
    return NodeSupport::no("has a symbolic normalized_shape");
  std::vector<Value*> outs = n.defined_values();
  for (size_t k = 1; k < outs.size(); ++k) {
    if (outs[k]->has_uses()) return NodeSupport::no("its mean/rstd outputs are used");
  }
  if (n.input(arg::eps) && !literal_number(n, arg::eps)) return NodeSupport::no("has a symbolic eps");
  return NodeSupport::yes(std::string("layer_norm") + kInside);
}

NodeSupport gelu_support(const Node& n) {
  const Argument* a = n.input(arg::approximate);
  const std::string* approx = literal_string(n, arg::approximate);
  if (a && (!approx || (*approx != "none" && *approx != "tanh"))) return NodeSupport::no("has an unknown approximation");
  return NodeSupport::yes(std::string("gelu") + kInside);
}

NodeSupport layout_copy_support(const Backend& backend, const Node& n, const Constness& c) {
  if (!input_is_claimed(backend, n, c)) return NodeSupport::no(kLoneCopy);
  const bool permute = n.op_target() == aten::permute;
  if (permute && !literal_ints(n, arg::dims, tensor_input(n, arg::self)->meta()->sizes.size(), {}))
    return NodeSupport::no("has symbolic dims");
  return NodeSupport::yes(std::string(permute ? "permute" : "reshape") + " (a copy inside the delegate)");
}

NodeSupport roll_support(const Node& n) {
  const size_t nd = n.input(arg::dims) ? literal_int_list(n, arg::dims).value_or(std::vector<int64_t>{}).size() : 0;
  auto shifts = literal_ints(n, arg::shifts, std::max<size_t>(nd, 1), {});
  if (nd == 0 || !shifts) return NodeSupport::no("rolls the flattened tensor or has symbolic shifts");
  return NodeSupport::yes(std::string("roll") + kInside);
}

NodeSupport sdpa_support(const Node& n) {
  if (literal_number(n, arg::dropout_p).value_or(0) != 0) return NodeSupport::no("has dropout");
  if (n.input(arg::enable_gqa) && !literal_bool(n, arg::enable_gqa)) return NodeSupport::no("has a symbolic enable_gqa");
  const Argument* sc = n.input(arg::scale);
  if (sc && !sc->is_none() && !literal_number(n, arg::scale)) return NodeSupport::no("has a symbolic scale");
  if (n.input(arg::is_causal) && !literal_bool(n, arg::is_causal)) return NodeSupport::no("has a symbolic is_causal");
  return NodeSupport::yes(std::string("scaled_dot_product_attention") + kInside);
}

// constant_pad_nd, and pad in its constant mode.
NodeSupport pad_support(const Node& n) {
  const Value* x = tensor_input(n, arg::self);
  if (n.op_target() == aten::pad) {
    const Argument* mode = n.input(arg::mode);
    const std::string* m = literal_string(n, arg::mode);
    if (mode && !(m && *m == "constant")) return NodeSupport::no("is not a constant-mode pad");
  }
  auto pad = literal_int_list(n, arg::pad);
  if (!pad || pad->size() % 2 || pad->size() / 2 > x->meta()->sizes.size() || x->meta()->sizes.size() > 6)
    return NodeSupport::no("has a symbolic or malformed padding");
  if (std::any_of(pad->begin(), pad->end(), [](int64_t v) { return v < 0; })) return NodeSupport::no("crops (negative padding)");
  if (!is_none_input(n, arg::value) && !literal_number(n, arg::value)) return NodeSupport::no("has a symbolic value");
  return NodeSupport::yes("constant_pad_nd_x32");
}

// ---- XNNPACK operators ----

NodeSupport linear_support(const Node& n, const Constness& c) {
  const Value* w = tensor_input(n, arg::weight);
  if (!w || w->meta()->sizes.size() != 2) return NodeSupport::no("weight is not 2-D");
  if (std::string r = needs_constant(w, "weight", c); !r.empty()) return NodeSupport::no(r);
  if (std::string r = needs_constant(tensor_input(n, arg::bias), "bias", c); !r.empty()) return NodeSupport::no(r);
  return NodeSupport::yes("fully_connected, weight " + describe_const(w, c) + " prepacked");
}

NodeSupport mm_support(const Node& n, const Constness& c) {
  const bool addmm = n.op_target() == aten::addmm;
  const Value* x = tensor_input(n, addmm ? arg::mat1 : arg::self);
  const Value* w = tensor_input(n, arg::mat2);
  if (!x || !w || x->meta()->sizes.size() != 2 || w->meta()->sizes.size() != 2) return NodeSupport::no("operands are not 2-D");
  if (std::string r = needs_constant(w, "mat2", c); !r.empty()) return NodeSupport::no(r);
  if (addmm) {
    if (literal_number(n, arg::beta).value_or(1) != 1 || literal_number(n, arg::alpha).value_or(1) != 1)
      return NodeSupport::no("has beta or alpha other than 1");
    const Value* b = tensor_input(n, arg::self);
    if (!b || b->meta()->sizes.size() != 1) return NodeSupport::no("bias is not 1-D");
    if (std::string r = needs_constant(b, "bias", c); !r.empty()) return NodeSupport::no(r);
  }
  return NodeSupport::yes("fully_connected (transposed weights), mat2 " + describe_const(w, c) + " prepacked");
}

// An in-place op (relu_, add_ - the `x += residual` of ResNet blocks) runs
// as its functional form inside a delegate, which writes a new buffer: the
// same only while nothing else reads the input it overwrites, and that
// input is the program's own intermediate (a user input's mutation would be
// seen by the caller).
std::string overwrites_a_shared_input(const Node& n) {
  const Value* x = tensor_input(n, arg::self);
  if (!x || x->uses().size() != 1) return "writes into an input other nodes also read";
  if (x->is_placeholder()) return "writes into '" + x->name() + "', an input of the program";
  return "";
}

NodeSupport binary_support(const Node& n) {
  const bool add = n.op_target() == aten::add_Tensor || n.op_target() == aten::add__Tensor;
  const Value* a = tensor_input(n, arg::self);
  const Value* b = tensor_input(n, arg::other);
  if (!a || !b) return NodeSupport::no("has a scalar operand");
  if (n.op_target() == aten::add__Tensor) {
    if (std::string why = overwrites_a_shared_input(n); !why.empty()) return NodeSupport::no(why);
  }
  if (a->meta()->sizes.size() > 4 || b->meta()->sizes.size() > 4) return NodeSupport::no("has an operand of more than 4 dimensions");
  if (add && literal_number(n, arg::alpha).value_or(1) != 1) return NodeSupport::no("has alpha other than 1");
  return NodeSupport::yes(add ? "add_nd" : "multiply_nd");
}

// relu, relu_, clamp, hardtanh: an XNNPACK clamp, or output bounds of the op before.
NodeSupport clamp_support(const Backend& backend, const Node& n, const Constness& c) {
  if (n.op_target() == aten::clamp) {
    const Argument* lo = n.input(arg::min);
    const Argument* hi = n.input(arg::max);
    if ((lo && !lo->is_none() && !literal_number(n, arg::min)) || (hi && !hi->is_none() && !literal_number(n, arg::max)))
      return NodeSupport::no("has non-literal bounds");
  }
  if (n.op_target() == aten::relu_) {
    if (std::string why = overwrites_a_shared_input(n); !why.empty()) return NodeSupport::no(why);
  }
  return NodeSupport::yes(support_rules::folds_into_producer(backend, n, c, takes_bounds) ? "fused into its producer as output min/max" : "clamp");
}

NodeSupport pool_support(const Node& n) {
  const bool avg = n.op_target() == aten::avg_pool2d;
  if (tensor_input(n, arg::self)->meta()->sizes.size() != 4) return NodeSupport::no("input is not 4-D");
  if (!literal_ints(n, arg::kernel_size, 2, {}) || !literal_ints(n, arg::padding, 2, {0, 0}))
    return NodeSupport::no("has symbolic window");
  if (const auto k = *literal_ints(n, arg::kernel_size, 2, {}); k[0] * k[1] < 2)
    return NodeSupport::no("has a 1x1 window (XNNPACK's pooling operators need at least 2 elements)");
  const auto pad = *literal_ints(n, arg::padding, 2, {0, 0});
  if (NodeSupport fits = support_rules::check_pool_window(n); !fits.claimed) return fits;
  if (avg) {
    if (pad[0] != 0 || pad[1] != 0) return NodeSupport::no("has padding (XNNPACK's average excludes it; PyTorch's default includes it)");
    if (literal_bool(n, arg::ceil_mode).value_or(false)) return NodeSupport::no("uses ceil_mode");
    if (!is_none_input(n, arg::divisor_override)) return NodeSupport::no("has a divisor override");
    return NodeSupport::yes("average_pooling2d");
  }
  if (n.defined_values().size() > 1 && n.defined_values()[1]->has_uses()) return NodeSupport::no("its indices are used");
  const auto dil = literal_ints(n, arg::dilation, 2, {1, 1});
  if (!dil) return NodeSupport::no("has symbolic dilation");
  // A dilated window can then fall wholly in the padding: PyTorch gives
  // -inf there, XNNPACK does not (found by the random-program sweep).
  if (((*dil)[0] > 1 && pad[0] > 0) || ((*dil)[1] > 1 && pad[1] > 0))
    return NodeSupport::no("is dilated and padded (a window may hold only padding, where PyTorch gives -inf)");
  return NodeSupport::yes("max_pooling2d");
}

NodeSupport global_pool_support(const Node& n) {
  const Value* x = tensor_input(n, arg::self);
  if (n.op_target() == aten::adaptive_avg_pool2d) {
    auto size = literal_ints(n, arg::output_size, 2, {});
    if (x->meta()->sizes.size() != 4 || !size || (*size)[0] != 1 || (*size)[1] != 1)
      return NodeSupport::no("is not a 4-D pool to 1x1");
    return NodeSupport::yes("global_average_pooling");
  }
  auto dims = literal_ints(n, arg::dim, 2, {});
  if (x->meta()->sizes.size() != 4 || !dims) return NodeSupport::no("is not a mean over H and W of a 4-D tensor");
  std::vector<int64_t> d = *dims;
  for (auto& k : d) k = k < 0 ? k + 4 : k;
  std::sort(d.begin(), d.end());
  if (d != std::vector<int64_t>{2, 3}) return NodeSupport::no("is not a mean over H and W of a 4-D tensor");
  if (!is_none_input(n, arg::dtype)) return NodeSupport::no("has a dtype");
  return NodeSupport::yes("global_average_pooling");
}

NodeSupport softmax_support(const Node& n) {
  auto dim = literal_int(n, arg::dim);
  const int64_t rank = static_cast<int64_t>(tensor_input(n, arg::self)->meta()->sizes.size());
  if (!dim || (*dim != -1 && *dim != rank - 1)) return NodeSupport::no("is not over the last dimension");
  if (literal_bool(n, arg::half_to_float).value_or(false)) return NodeSupport::no("has half_to_float");
  if (n.op_target() == aten::softmax_int && !is_none_input(n, arg::dtype)) return NodeSupport::no("has a dtype");
  return NodeSupport::yes("softmax");
}

// What XnnpackBackend::support asks of each op it knows, after check_tensors().
const support_rules::Rules& rules() {
  using support_rules::always, support_rules::plain, support_rules::with_constness;
  static const support_rules::Rules rules = [] {
    support_rules::Rules r;
    r[aten::linear] = with_constness(linear_support);
    r[aten::mm] = r[aten::addmm] = with_constness(mm_support);
    r[aten::convolution] = with_constness(conv_support);
    r[aten::native_batch_norm] = r[aten::batch_norm] = r[aten::_native_batch_norm_legit_no_training] =
        with_constness(batch_norm_support);
    r[aten::add_Tensor] = r[aten::add__Tensor] = r[aten::mul_Tensor] = plain(binary_support);
    r[aten::relu] = r[aten::relu_] = r[aten::clamp] = r[aten::hardtanh] = clamp_support;
    r[aten::silu] = always("sigmoid + multiply_nd");
#define LATHE_XNNPACK_UNARY(name, payload_name, aten_op, xnn_stem) r[aten::aten_op] = always(payload_name);
#define LATHE_XNNPACK_UNARY_LOOP(name, payload_name, aten_op, expression) \
  r[aten::aten_op] = always(payload_name " (Lathe loop inside the delegate)");
#include "lathe/backends/xnnpack_ops.def"
    r[aten::max_pool2d_with_indices] = r[aten::max_pool2d] = r[aten::avg_pool2d] = plain(pool_support);
    r[aten::mean_dim] = r[aten::adaptive_avg_pool2d] = plain(global_pool_support);
    r[aten::_softmax] = r[aten::softmax_int] = plain(softmax_support);
    r[aten::cat] = cat_support;
    r[aten::slice_Tensor] = slice_support;
    // run by Lathe's kernels inside the delegate (xnnpack_host_ops.h), or pure layout
    r[aten::layer_norm] = r[aten::native_layer_norm] = plain(layer_norm_support);
    r[aten::gelu] = plain(gelu_support);
    r[aten::permute] = layout_copy_support;
    for (OpTarget op : {aten::view, aten::_unsafe_view, aten::reshape, aten::flatten_using_ints, aten::unsqueeze,
                        aten::squeeze_dim, aten::squeeze_dims, aten::clone, aten::contiguous}) {
      r[op] = layout_copy_support;
    }
    r[aten::roll] = plain(roll_support);
    r[aten::bmm] = always("bmm (both operands computed at run time) (Lathe's portable kernel, inside the delegate)");
    r[aten::scaled_dot_product_attention] = plain(sdpa_support);
    r[aten::constant_pad_nd] = r[aten::pad] = plain(pad_support);
    return r;
  }();
  return rules;
}

}  // namespace

std::vector<std::string> XnnpackBackend::ops_to_keep() const { return support_rules::ops_decompose_would_split(rules()); }

std::vector<std::string> XnnpackBackend::claimed_ops() const { return support_rules::claimed_op_names(rules()); }

NodeSupport XnnpackBackend::support(const Node& n, const Constness& c) const {
  return support_rules::decide(rules(), *this, n, c, "no XNNPACK operator for");
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
    return lower_subgraph(
        sub_, payload_, [this](const Node& n) { return lower(n); }, [this](const Value* v) { return get(v, false); });
  }

 private:
  struct Entry {
    uint32_t id;
    bool nhwc;
  };

  // Channels-last applies to 4-D [N, C, H, W] and to 3-D [N, C, L] (a 1-D
  // convolution's, seen as [N, C, 1, L]); as4d gives the 4-D view.
  static std::vector<int64_t> as4d(const std::vector<int64_t>& s) {
    return s.size() == 3 ? std::vector<int64_t>{s[0], s[1], 1, s[2]} : s;
  }
  static bool has_layouts(const std::vector<int64_t>& s) { return s.size() == 3 || s.size() == 4; }
  static bool trivial_layout(const std::vector<int64_t>& s) {
    const auto f = as4d(s);
    return f.size() == 4 && (f[1] == 1 || f[2] * f[3] == 1);
  }

  // The id of `v` stored in the wanted layout, converting when needed.
  Result<uint32_t> get(const Value* v, bool nhwc) {
    auto it = vals_.find(v);
    if (it == vals_.end()) return make_error("reads '" + v->name() + "', which the delegate does not define");
    const Entry e = it->second;
    if (e.nhwc == nhwc) return e.id;
    // A copy: add_value below may reallocate payload_.values.
    const std::vector<int64_t> s = as4d(payload_.values[e.id].sizes);
    if (trivial_layout(s)) return e.id;
    if (s.size() != 4) return make_error("'" + v->name() + "' needs a layout change but is not 3-D or 4-D");
    auto key = std::make_pair(v, nhwc);
    if (auto c = converted_.find(key); c != converted_.end()) return c->second;
    uint32_t out = payload_.add_value(payload_.values[e.id].sizes);
    payload_.ops.push_back(PayloadOp{std::string(xnnpack_kind_name(nhwc ? XnnpackKind::ToNhwc : XnnpackKind::ToNchw)), v->name(), {{e.id, "input"}}, {out},
                                     xnnpack_params::to_ints(xnnpack_params::Layout{s[0], s[1], s[2], s[3]}), {}});
    converted_[key] = out;
    return out;
  }

  uint32_t define(const Value* v, bool nhwc) {
    uint32_t id = payload_.add_value(sizes_of(v));
    vals_[v] = Entry{id, nhwc};
    return id;
  }

  // Ops and values are referred to by index, never by reference: both
  // vectors grow while a group is lowered.
  void emit(const Node& n, XnnpackKind kind, std::vector<PayloadOperand> ins, uint32_t out,
            std::vector<int64_t> ints, std::vector<double> floats) {
    payload_.ops.push_back(PayloadOp{std::string(xnnpack_kind_name(kind)), n.name(), std::move(ins), {out}, std::move(ints),
                                     std::move(floats)});
  }

  void emit(const Node& n, XnnpackKind kind, std::vector<PayloadOperand> ins, uint32_t out,
            xnnpack_params::HostRecord record) {
    emit(n, kind, std::move(ins), out, std::move(record.ints), std::move(record.floats));
  }

  // The op that defines `v`, if a later activation may fold into it.
  void mark_fusable(const Value* v) { fusable_[v] = payload_.ops.size() - 1; }

  Status lower(const Node& n);
  Status lower_fc(const Node& n, const Value* x, const Value* w, const Value* b, bool transpose);
  Status lower_conv(const Node& n);
  Status lower_binary(const Node& n, XnnpackKind kind);
  Status lower_elementwise(const Node& n, XnnpackKind kind);
  Status lower_clamp(const Node& n, double lo, double hi);
  Status lower_pool(const Node& n, bool max);
  Status lower_host(const Node& n, OpTarget op);
  Status lower_batch_norm(const Node& n);
  Status lower_silu(const Node& n);
  Status lower_cat(const Node& n);
  Status lower_slice(const Node& n);
  // A value's extents in its stored layout, and where NCHW dim `d` sits there.
  std::vector<int64_t> physical_sizes(const Value* v, bool nhwc) const;
  static int64_t physical_dim(int64_t d, size_t rank, bool nhwc);
  Status lower_pad(const Node& n);

  const DelegateSubgraph& sub_;
  DelegatePayload payload_;
  std::unordered_map<const Value*, Entry> vals_;
  std::map<std::pair<const Value*, bool>, uint32_t> converted_;
  std::unordered_map<const Value*, size_t> fusable_;
  std::unordered_set<const Node*> in_group_;
  std::unordered_set<const Value*> escapes_;
  // Zero pads folded into the convolution that reads them: pad output ->
  // (pad input, top, bottom, left, right).
  struct FoldedPad {
    const Value* source;
    int64_t top, bottom, left, right;
  };
  std::unordered_map<const Value*, FoldedPad> folded_pads_;
  std::optional<FoldedPad> foldable_pad(const Node& n) const;
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
  // The delegate writes its output at the declared shape: a declared shape
  // the op does not produce (a file's lie) is refused here, naming both,
  // rather than returned (the portable kernels compute the real one).
  std::vector<int64_t> computed(xs.begin(), xs.end() - 1);
  computed.push_back(out_ch);
  if (sizes_of(y) != computed) {
    return make_error("output '" + y->name() + "' is declared " + shape_string(sizes_of(y)) + ", but input " +
                      shape_string(xs) + " and weight " + shape_string(ws) + " give " + shape_string(computed));
  }
  const int64_t batch = k ? payload_.values[xi].numel() / k : 0;
  emit(n, XnnpackKind::FullyConnected, std::move(ins), define(y, false), xnnpack_params::to_ints(xnnpack_params::FullyConnected{batch, k, out_ch, transpose}),
       {-kInf, kInf});
  mark_fusable(y);
  return Status::Ok();
}

Status Lowering::lower_conv(const Node& n) {
  const Value* x = tensor_input(n, arg::input);
  const Value* w = tensor_input(n, arg::weight);
  const Value* b = is_none_input(n, arg::bias) ? nullptr : tensor_input(n, arg::bias);
  const Value* y = n.defined_values()[0];
  // A 1-D convolution is a 2-D one over a unit height.
  const bool one_d = sizes_of(x).size() == 3;
  const auto ws = as4d(sizes_of(w)), ys = as4d(sizes_of(y));
  auto param = [&](const char* name, int64_t dflt) {
    if (!one_d) return *literal_ints(n, name, 2, {dflt, dflt});
    return std::vector<int64_t>{name[0] == 'p' ? 0 : 1, (*literal_ints(n, name, 1, {dflt}))[0]};
  };
  const auto stride = param("stride", 1);
  const auto pad = param("padding", 0);
  const auto dil = param("dilation", 1);
  const int64_t groups = *literal_int_or(n, arg::groups, 1);
  // A zero pad in front was not emitted: it becomes this op's own padding.
  FoldedPad extra{x, 0, 0, 0, 0};
  if (auto f = folded_pads_.find(x); f != folded_pads_.end()) extra = f->second;
  const auto src = as4d(sizes_of(extra.source));
  LATHE_ASSIGN_OR_RETURN(uint32_t xi, get(extra.source, true));
  LATHE_ASSIGN_OR_RETURN(uint32_t wi, get(w, false));
  std::vector<PayloadOperand> ins{{xi, "input"}, {wi, "weight"}};
  if (b) {
    LATHE_ASSIGN_OR_RETURN(uint32_t bi, get(b, false));
    ins.push_back({bi, "bias"});
  }
  const xnnpack_params::Conv2d params{src[0], src[2], src[3], src[1], ws[0], ws[2], ws[3], stride[0], stride[1],
                                      pad[0] + extra.top, pad[1] + extra.left, pad[0] + extra.bottom, pad[1] + extra.right,
                                      dil[0], dil[1], groups, ys[2], ys[3]};
  std::vector<int64_t> ints = xnnpack_params::to_ints(params);
  emit(n, XnnpackKind::Conv2d, std::move(ins), define(y, true), std::move(ints), {-kInf, kInf, 0.0});
  mark_fusable(y);
  return Status::Ok();
}

Status Lowering::lower_binary(const Node& n, XnnpackKind kind) {
  const Value* a = tensor_input(n, arg::self);
  const Value* b = tensor_input(n, arg::other);
  const auto as = sizes_of(a), bs = sizes_of(b);
  const bool nhwc = has_layouts(as) && as.size() == bs.size() && (vals_.at(a).nhwc || vals_.at(b).nhwc);
  LATHE_ASSIGN_OR_RETURN(uint32_t ai, get(a, nhwc));
  LATHE_ASSIGN_OR_RETURN(uint32_t bi, get(b, nhwc));
  auto phys = [&](std::vector<int64_t> s) {
    if (nhwc && s.size() == 4) s = {s[0], s[2], s[3], s[1]};
    if (nhwc && s.size() == 3) s = {s[0], s[2], s[1]};
    return s;
  };
  std::vector<int64_t> ints = xnnpack_params::to_ints(xnnpack_params::Binary{phys(as), phys(bs)});
  const Value* y = n.defined_values()[0];
  emit(n, kind, {{ai, "self"}, {bi, "other"}}, define(y, nhwc), std::move(ints), {-kInf, kInf});
  mark_fusable(y);
  return Status::Ok();
}

Status Lowering::lower_clamp(const Node& n, double lo, double hi) {
  const Value* x = tensor_input(n, arg::self);
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
  emit(n, XnnpackKind::Clamp, {{xi, "self"}}, define(y, nhwc), xnnpack_params::to_ints(xnnpack_params::Elementwise{payload_.values[xi].numel()}), {lo, hi});
  return Status::Ok();
}

Status Lowering::lower_pool(const Node& n, bool max) {
  const Value* x = tensor_input(n, arg::self);
  const Value* y = n.defined_values()[0];
  const auto xs = sizes_of(x), ys = sizes_of(y);
  const auto k = *literal_ints(n, arg::kernel_size, 2, {});
  auto stride = *literal_ints(n, arg::stride, 2, k);
  if (stride.empty()) stride = k;
  const auto pad = *literal_ints(n, arg::padding, 2, {0, 0});
  const auto dil = max ? *literal_ints(n, arg::dilation, 2, {1, 1}) : std::vector<int64_t>{1, 1};
  // ceil_mode: extra bottom/right padding so the window count matches PyTorch's.
  const int64_t pb = std::max<int64_t>(pad[0], (ys[2] - 1) * stride[0] + (k[0] - 1) * dil[0] + 1 - xs[2] - pad[0]);
  const int64_t pr = std::max<int64_t>(pad[1], (ys[3] - 1) * stride[1] + (k[1] - 1) * dil[1] + 1 - xs[3] - pad[1]);
  LATHE_ASSIGN_OR_RETURN(uint32_t xi, get(x, true));
  const xnnpack_params::Pool2d params{xs[0], xs[2],  xs[3], xs[1], k[0],   k[1],   stride[0], stride[1],
                                      pad[0], pad[1], pb,    pr,    dil[0], dil[1], ys[2],     ys[3]};
  emit(n, max ? XnnpackKind::MaxPool : XnnpackKind::AvgPool, {{xi, "self"}}, define(y, true), xnnpack_params::to_ints(params), {-kInf, kInf});
  return Status::Ok();
}

std::vector<int64_t> Lowering::physical_sizes(const Value* v, bool nhwc) const {
  std::vector<int64_t> s = sizes_of(v);
  if (nhwc && s.size() == 4) return {s[0], s[2], s[3], s[1]};
  if (nhwc && s.size() == 3) return {s[0], s[2], s[1]};
  return s;
}

int64_t Lowering::physical_dim(int64_t d, size_t rank, bool nhwc) {
  if (!nhwc || d == 0) return d;
  return d == 1 ? static_cast<int64_t>(rank) - 1 : d - 1;  // C goes last, the spatial dims move up
}

// Folded into the convolution before it when batch_norm_folds() (its
// statistics join the prepacked weights), else a per-channel affine loop
// in the input's own layout.
Status Lowering::lower_batch_norm(const Node& n) {
  const Value* x = tensor_input(n, arg::input);
  const Value* y = n.defined_values()[0];
  auto f = fusable_.find(x);
  const bool folds = f != fusable_.end() && payload_.ops[f->second].kind == xnnpack_kind_name(XnnpackKind::Conv2d) &&
                     payload_.ops[f->second].inputs.size() <= 3 && batch_norm_folds(n, sub_.constness);
  if (folds) {
    const size_t conv = f->second;  // by index: get() may append a layout change to payload_.ops
    for (std::string_view role : kBatchNormStatistics) {
      LATHE_ASSIGN_OR_RETURN(uint32_t id, get(tensor_input(n, role), false));
      payload_.ops[conv].inputs.push_back({id, "bn_" + std::string(role)});
    }
    payload_.ops[conv].floats[2] = *literal_number(n, arg::eps);
    payload_.ops[conv].node += "+" + n.name();
    vals_[y] = vals_.at(x);
    fusable_[y] = f->second;
    return Status::Ok();
  }
  const auto xs = sizes_of(x);
  const bool nhwc = vals_.at(x).nhwc && has_layouts(xs);
  LATHE_ASSIGN_OR_RETURN(uint32_t xi, get(x, nhwc));
  std::vector<PayloadOperand> ins{{xi, "self"}};
  for (std::string_view role : kBatchNormStatistics) {
    LATHE_ASSIGN_OR_RETURN(uint32_t id, get(tensor_input(n, role), false));
    ins.push_back({id, std::string(role)});
  }
  const int64_t N = xs[0], C = xs[1];
  const int64_t spatial = (N != 0 && C != 0) ? PayloadValue{-1, xs}.numel() / (N * C) : 0;
  emit(n, XnnpackKind::ChannelAffine, std::move(ins), define(y, nhwc),
       xnnpack_params::to_record(xnnpack_params::ChannelAffine{nhwc, N, C, spatial, *literal_number(n, arg::eps)}));
  return Status::Ok();
}

// An elementwise op of xnnpack_ops.def, in x's layout.
Status Lowering::lower_elementwise(const Node& n, XnnpackKind kind) {
  const Value* x = tensor_input(n, arg::self);
  const bool nhwc = vals_.at(x).nhwc;
  LATHE_ASSIGN_OR_RETURN(uint32_t xi, get(x, nhwc));
  emit(n, kind, {{xi, "self"}}, define(n.defined_values()[0], nhwc),
       xnnpack_params::to_ints(xnnpack_params::Elementwise{payload_.values[xi].numel()}), {});
  return Status::Ok();
}

// silu(x) = x * sigmoid(x): two XNNPACK operators, in x's layout.
Status Lowering::lower_silu(const Node& n) {
  const Value* x = tensor_input(n, arg::self);
  const bool nhwc = vals_.at(x).nhwc;
  LATHE_ASSIGN_OR_RETURN(uint32_t xi, get(x, nhwc));
  const int64_t count = payload_.values[xi].numel();
  const uint32_t sig = payload_.add_value(sizes_of(x));
  emit(n, XnnpackKind::Sigmoid, {{xi, "self"}}, sig, xnnpack_params::to_ints(xnnpack_params::Elementwise{count}), {});
  emit(n, XnnpackKind::Mul, {{xi, "self"}, {sig, "other"}}, define(n.defined_values()[0], nhwc),
       xnnpack_params::to_ints(xnnpack_params::Binary{{count}, {count}}), {-kInf, kInf});
  return Status::Ok();
}

// Concatenation in the inputs' layout: channels-last when any input is
// stored so (4-D or 3-D), else NCHW order; rows of each input side by side.
Status Lowering::lower_cat(const Node& n) {
  const std::vector<Value*>& items = n.input(arg::tensors)->as<TensorList>().items;
  const Value* y = n.defined_values()[0];
  const size_t rank = sizes_of(y).size();
  bool nhwc = false;
  for (const Value* v : items) nhwc = nhwc || (vals_.count(v) && vals_.at(v).nhwc && has_layouts(sizes_of(v)));
  int64_t d = *literal_int_or(n, arg::dim, 0);
  d = d < 0 ? d + static_cast<int64_t>(rank) : d;
  const int64_t p = physical_dim(d, rank, nhwc);
  const std::vector<int64_t> phys = physical_sizes(y, nhwc);
  int64_t outer = 1;
  for (int64_t k = 0; k < p; ++k) outer *= phys[k];
  std::vector<PayloadOperand> ins;
  for (const Value* v : items) {
    LATHE_ASSIGN_OR_RETURN(uint32_t id, get(v, nhwc));
    ins.push_back({id, "tensor"});
  }
  emit(n, XnnpackKind::Concat, std::move(ins), define(y, nhwc), xnnpack_params::to_record(xnnpack_params::Concat{outer}));
  return Status::Ok();
}

// slice(step 1) in the input's layout: each of `outer` rows keeps a window.
Status Lowering::lower_slice(const Node& n) {
  const Value* x = tensor_input(n, arg::self);
  const Value* y = n.defined_values()[0];
  const auto xs = sizes_of(x);
  const bool nhwc = vals_.at(x).nhwc && has_layouts(xs);
  LATHE_ASSIGN_OR_RETURN(uint32_t xi, get(x, nhwc));
  int64_t d = *literal_int_or(n, arg::dim, 0);
  d = d < 0 ? d + static_cast<int64_t>(xs.size()) : d;
  const int64_t p = physical_dim(d, xs.size(), nhwc);
  const std::vector<int64_t> phys = physical_sizes(x, nhwc);
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < p; ++k) outer *= phys[k];
  for (size_t k = static_cast<size_t>(p) + 1; k < phys.size(); ++k) inner *= phys[k];
  // start/end as PyTorch clamps them; the output's size along d is the window.
  int64_t start = literal_int_or(n, arg::start, 0).value_or(0);
  if (start < 0) start += xs[d];
  start = std::clamp<int64_t>(start, 0, xs[d]);
  const int64_t len = sizes_of(y)[d];
  emit(n, XnnpackKind::Slice, {{xi, "self"}}, define(y, nhwc),
       xnnpack_params::to_record(xnnpack_params::Slice{outer, phys[p] * inner, start * inner, len * inner}));
  return Status::Ok();
}

// Host ops (xnnpack_host_ops.h) read and write NCHW-order buffers, but for
// gelu, which is elementwise and so runs in whatever layout its input has.
Status Lowering::lower_host(const Node& n, OpTarget op) {
  const Value* y = n.defined_values()[0];
  auto operand = [&](const char* name, const char* role) -> Result<std::optional<PayloadOperand>> {
    const Value* v = is_none_input(n, name) ? nullptr : tensor_input(n, name);
    if (!v) return std::optional<PayloadOperand>();
    LATHE_ASSIGN_OR_RETURN(uint32_t id, get(v, false));
    return std::optional<PayloadOperand>(PayloadOperand{id, role});
  };
  std::vector<PayloadOperand> ins;
  auto add = [&](const char* name, const char* role) -> Status {
    LATHE_ASSIGN_OR_RETURN(auto o, operand(name, role));
    if (o) ins.push_back(*o);
    return Status::Ok();
  };
  if (op == aten::gelu) {
    const Value* x = tensor_input(n, arg::self);
    const bool nhwc = vals_.at(x).nhwc;
    LATHE_ASSIGN_OR_RETURN(uint32_t xi, get(x, nhwc));
    const std::string* approximate = literal_string(n, arg::approximate);
    const bool tanh = approximate && *approximate == "tanh";
    emit(n, XnnpackKind::Gelu, {{xi, "self"}}, define(y, nhwc), xnnpack_params::to_record(xnnpack_params::Gelu{tanh}));
    return Status::Ok();
  }
  if (op == aten::layer_norm || op == aten::native_layer_norm) {
    LATHE_RETURN_IF_ERROR(add("input", "self"));
    LATHE_RETURN_IF_ERROR(add("weight", "weight"));
    LATHE_RETURN_IF_ERROR(add("bias", "bias"));
    const int64_t k = static_cast<int64_t>(literal_int_list(n, arg::normalized_shape)->size());
    const double eps = n.input(arg::eps) ? *literal_number(n, arg::eps) : 1e-5;  // layer_norm's schema default
    emit(n, XnnpackKind::LayerNorm, std::move(ins), define(y, false), xnnpack_params::to_record(xnnpack_params::LayerNorm{k, eps}));
    return Status::Ok();
  }
  if (op == aten::bmm) {
    LATHE_RETURN_IF_ERROR(add("self", "self"));
    LATHE_RETURN_IF_ERROR(add("mat2", "mat2"));
    emit(n, XnnpackKind::Bmm, std::move(ins), define(y, false), {}, {});
    return Status::Ok();
  }
  if (op == aten::scaled_dot_product_attention) {
    for (const char* name : {"query", "key", "value", "attn_mask"}) LATHE_RETURN_IF_ERROR(add(name, name));
    const double scale = literal_number(n, arg::scale).value_or(std::numeric_limits<double>::quiet_NaN());
    const bool causal = literal_bool(n, arg::is_causal).value_or(false);
    const bool gqa = literal_bool(n, arg::enable_gqa).value_or(false);
    emit(n, XnnpackKind::Sdpa, std::move(ins), define(y, false),
         xnnpack_params::to_record(xnnpack_params::Sdpa{causal, scale, gqa}));
    return Status::Ok();
  }
  LATHE_RETURN_IF_ERROR(add("self", "self"));
  if (op == aten::permute) {
    const int64_t rank = static_cast<int64_t>(sizes_of(tensor_input(n, arg::self)).size());
    std::vector<int64_t> dims = *literal_ints(n, arg::dims, static_cast<size_t>(rank), {});
    for (int64_t& d : dims) d = d < 0 ? d + rank : d;  // permute(-1, ...) is allowed
    emit(n, XnnpackKind::Permute, std::move(ins), define(y, false), xnnpack_params::to_record(xnnpack_params::Permute{std::move(dims)}));
    return Status::Ok();
  }
  if (op == aten::roll) {
    const auto dims = *literal_int_list(n, arg::dims);
    const auto shifts = *literal_ints(n, arg::shifts, dims.size(), {});
    emit(n, XnnpackKind::Roll, std::move(ins), define(y, false), xnnpack_params::to_record(xnnpack_params::Roll{shifts, dims}));
    return Status::Ok();
  }
  emit(n, XnnpackKind::Reshape, std::move(ins), define(y, false), {}, {});
  return Status::Ok();
}

// A zero pad of H and W (or of L, before a 1-D convolution) whose only user
// is a convolution of this group, reading it as its input: XNNPACK's
// convolution pads asymmetrically itself, so the padded copy is never made.
std::optional<Lowering::FoldedPad> Lowering::foldable_pad(const Node& n) const {
  const Value* x = tensor_input(n, arg::self);
  const Value* y = n.defined_values()[0];
  if (literal_number(n, arg::value).value_or(0.0) != 0.0 || y->uses().size() != 1 || escapes_.count(y)) return std::nullopt;
  const Node* conv = y->uses()[0].user;
  if (!conv || !in_group_.count(conv) || conv->op_target() != aten::convolution || tensor_input(*conv, arg::input) != y)
    return std::nullopt;
  const auto pad = *literal_int_list(n, arg::pad);
  const size_t rank = sizes_of(x).size();
  if (rank == 4 && pad.size() <= 4) {
    auto at = [&](size_t k) { return k < pad.size() ? pad[k] : 0; };
    return FoldedPad{x, at(2), at(3), at(0), at(1)};
  }
  if (rank == 3 && pad.size() <= 2) return FoldedPad{x, 0, 0, pad.empty() ? 0 : pad[0], pad.size() < 2 ? 0 : pad[1]};
  return std::nullopt;
}

// constant_pad_nd in the input's own layout: the padding amounts follow the
// dimensions into channels-last order when the input is stored that way.
Status Lowering::lower_pad(const Node& n) {
  const Value* x = tensor_input(n, arg::self);
  const Value* y = n.defined_values()[0];
  if (auto f = foldable_pad(n)) {
    folded_pads_[y] = *f;
    return Status::Ok();
  }
  const bool nhwc = vals_.at(x).nhwc && sizes_of(x).size() == 4;
  LATHE_ASSIGN_OR_RETURN(uint32_t xi, get(x, nhwc));
  std::vector<int64_t> s = sizes_of(x);
  const size_t r = s.size();
  std::vector<int64_t> pre(r, 0), post(r, 0);
  const auto pad = *literal_int_list(n, arg::pad);
  for (size_t k = 0; k < pad.size() / 2; ++k) {
    pre[r - 1 - k] = pad[2 * k];
    post[r - 1 - k] = pad[2 * k + 1];
  }
  auto phys = [&](std::vector<int64_t> v) {
    return nhwc ? std::vector<int64_t>{v[0], v[2], v[3], v[1]} : v;
  };
  emit(n, XnnpackKind::ConstantPad, {{xi, "self"}}, define(y, nhwc), xnnpack_params::to_ints(xnnpack_params::ConstantPad{phys(s), phys(pre), phys(post)}),
       {literal_number(n, arg::value).value_or(0.0)});
  return Status::Ok();
}

Status Lowering::lower(const Node& n) {
  const OpTarget op = n.op_target();
  if (op == aten::linear) {
    return lower_fc(n, tensor_input(n, arg::input), tensor_input(n, arg::weight), is_none_input(n, arg::bias) ? nullptr : tensor_input(n, arg::bias), false);
  }
  if (op == aten::mm) return lower_fc(n, tensor_input(n, arg::self), tensor_input(n, arg::mat2), nullptr, true);
  if (op == aten::addmm) return lower_fc(n, tensor_input(n, arg::mat1), tensor_input(n, arg::mat2), tensor_input(n, arg::self), true);
  if (op == aten::convolution) return lower_conv(n);
  if (ops::is_batch_norm(op)) return lower_batch_norm(n);
  if (op == aten::add_Tensor || op == aten::add__Tensor) return lower_binary(n, XnnpackKind::Add);
  if (op == aten::mul_Tensor) return lower_binary(n, XnnpackKind::Mul);
  if (op == aten::relu || op == aten::relu_) return lower_clamp(n, 0, kInf);
  if (op == aten::silu) return lower_silu(n);
  if (op == aten::cat) return lower_cat(n);
  if (op == aten::slice_Tensor) return lower_slice(n);
  if (op == aten::hardtanh) return lower_clamp(n, literal_number(n, arg::min_val).value_or(-1), literal_number(n, arg::max_val).value_or(1));
  if (op == aten::clamp) return lower_clamp(n, literal_number(n, arg::min).value_or(-kInf), literal_number(n, arg::max).value_or(kInf));
#define LATHE_XNNPACK_UNARY(name, payload_name, aten_op, xnn_stem) \
  if (op == aten::aten_op) return lower_elementwise(n, XnnpackKind::name);
#define LATHE_XNNPACK_UNARY_LOOP(name, payload_name, aten_op, expression) \
  if (op == aten::aten_op) return lower_elementwise(n, XnnpackKind::name);
#include "lathe/backends/xnnpack_ops.def"
  if (op == aten::constant_pad_nd || op == aten::pad) return lower_pad(n);
  if (op == aten::layer_norm || op == aten::native_layer_norm || op == aten::gelu ||
      op == aten::permute || ops::is_reshape(op) || op == aten::roll || op == aten::bmm ||
      op == aten::scaled_dot_product_attention)
    return lower_host(n, op);
  if (op == aten::max_pool2d_with_indices || op == aten::max_pool2d) return lower_pool(n, true);
  if (op == aten::avg_pool2d) return lower_pool(n, false);
  if (op == aten::mean_dim || op == aten::adaptive_avg_pool2d) {
    const Value* x = tensor_input(n, arg::self);
    const auto xs = sizes_of(x);
    LATHE_ASSIGN_OR_RETURN(uint32_t xi, get(x, true));
    // [N, C, 1, 1] (or [N, C]) holds the same bytes in either layout.
    emit(n, XnnpackKind::GlobalAvgPool, {{xi, "self"}}, define(n.defined_values()[0], false),
         xnnpack_params::to_ints(xnnpack_params::GlobalPool{xs[0], xs[2] * xs[3], xs[1]}), {});
    return Status::Ok();
  }
  if (op == aten::_softmax || op == aten::softmax_int) {
    const Value* x = tensor_input(n, arg::self);
    LATHE_ASSIGN_OR_RETURN(uint32_t xi, get(x, false));
    const int64_t ch = sizes_of(x).back();
    emit(n, XnnpackKind::Softmax, {{xi, "self"}}, define(n.defined_values()[0], false),
         xnnpack_params::to_ints(xnnpack_params::Softmax{ch ? payload_.values[xi].numel() / ch : 0, ch}), {});
    return Status::Ok();
  }
  return make_error("the XNNPACK backend does not lower " + n.op_name());
}

}  // namespace

Result<std::vector<std::byte>> XnnpackBackend::preprocess(const DelegateSubgraph& subgraph) const {
  return Lowering(subgraph).run();
}

const Backend& xnnpack_backend() {
  static const XnnpackBackend backend;
  return backend;
}

}  // namespace lathe
