#include "lathe/backends/support_rules.h"

#include <algorithm>
#include <iterator>

#include "lathe/backends/node_args.h"
#include "lathe/passes/decompose.h"

namespace lathe::support_rules {

Rule plain(NodeSupport (*f)(const Node&)) {
  return [f](const Backend&, const Node& n, const Constness&) { return f(n); };
}

Rule with_constness(NodeSupport (*f)(const Node&, const Constness&)) {
  return [f](const Backend&, const Node& n, const Constness& c) { return f(n, c); };
}

Rule always(const char* what) {
  return [what](const Backend&, const Node&, const Constness&) { return NodeSupport::yes(what); };
}

NodeSupport decide(const Rules& rules, const Backend& backend, const Node& n, const Constness& c, std::string_view no_rule) {
  auto rule = rules.find(n.op_target());
  if (rule == rules.end()) return NodeSupport::no(std::string(no_rule) + " " + n.op_name());
  if (std::string b = node_args::check_tensors(n); !b.empty()) return NodeSupport::no(b);
  return rule->second(backend, n, c);
}

bool input_is_claimed(const Backend& backend, const Node& n, const Constness& c, std::string_view name) {
  const Value* x = tensor_input(n, name);
  return x && x->producer() && backend.support(*x->producer(), c).claimed;
}

bool folds_into_producer(const Backend& backend, const Node& n, const Constness& c, bool (*takes_bounds)(OpTarget)) {
  const Value* x = tensor_input(n, ops::arg::self);
  if (!x || !x->producer() || !node_args::only_user_is(x, n)) return false;
  return takes_bounds(x->producer()->op_target()) && backend.support(*x->producer(), c).claimed;
}

NodeSupport read_conv_geometry(const Node& n, size_t spatial, ConvGeometry& g) {
  namespace arg = ops::arg;
  if (literal_bool(n, arg::transposed).value_or(false)) return NodeSupport::no("is a transposed convolution");
  auto op = literal_ints(n, arg::output_padding, spatial, std::vector<int64_t>(spatial, 0));
  if (!op || std::any_of(op->begin(), op->end(), [](int64_t v) { return v != 0; })) return NodeSupport::no("has output padding");
  auto stride = literal_ints(n, arg::stride, spatial, std::vector<int64_t>(spatial, 1));
  auto padding = literal_ints(n, arg::padding, spatial, std::vector<int64_t>(spatial, 0));
  auto dilation = literal_ints(n, arg::dilation, spatial, std::vector<int64_t>(spatial, 1));
  auto groups = literal_int_or(n, arg::groups, 1);
  if (!stride || !padding || !dilation || !groups) return NodeSupport::no("has symbolic stride, padding, dilation or groups");
  g = ConvGeometry{std::move(*stride), std::move(*padding), std::move(*dilation), *groups};
  return NodeSupport::yes("");
}

namespace {

std::string dims(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// ATen's output extent for one dim (pooling_output_shape, and the
// convolution's floor division), in 128 bits: sizes, padding and dilation
// come from the file and may be near 2^63.
__int128 window_extent(int64_t in, size_t d, const Window& w) {
  const __int128 k = w.kernel[d], s = w.stride[d], p = w.padding[d], dl = w.dilation[d];
  const __int128 num = in + 2 * p - dl * (k - 1) - 1 + (w.ceil_mode ? s - 1 : 0);
  __int128 out = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
  if (w.ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

}  // namespace

NodeSupport check_window(const Node& n, const Value* input, const Window& w) {
  const std::vector<int64_t> in = node_args::sizes_of(input);
  const std::vector<int64_t> out = node_args::sizes_of(n.defined_values().at(0));
  const size_t spatial = w.kernel.size();
  if (in.size() < spatial || out.size() != in.size()) return NodeSupport::no("has an output of another rank than its input");
  std::vector<int64_t> expected(in.begin(), in.end() - static_cast<std::ptrdiff_t>(spatial));
  expected.resize(out.size() - spatial, 0);
  for (size_t d = 0; d < spatial; ++d) {
    if (w.kernel[d] <= 0 || w.stride[d] <= 0 || w.dilation[d] <= 0)  // window_extent divides by the stride
      return NodeSupport::no("has a kernel, stride or dilation that is not positive (PyTorch refuses it)");
    if (w.is_pool && w.padding[d] * 2 > w.kernel[d])
      return NodeSupport::no("has padding over half its window " + dims(w.kernel) + " (PyTorch refuses it)");
    const __int128 extent = window_extent(in[in.size() - spatial + d], d, w);
    if (extent <= 0) {
      return NodeSupport::no("has a window " + dims(w.kernel) + " that does not fit its padded input " + dims(in) +
                             " (PyTorch refuses it)");
    }
    expected.push_back(static_cast<int64_t>(extent));
  }
  for (size_t d = 0; d < spatial; ++d) {
    const size_t at = out.size() - spatial + d;
    if (out[at] != expected[at]) {
      std::vector<int64_t> shown = out;
      std::copy(expected.end() - static_cast<std::ptrdiff_t>(spatial), expected.end(), shown.end() - static_cast<std::ptrdiff_t>(spatial));
      return NodeSupport::no("declares output " + dims(out) + " where its input " + dims(in) + " and window give " +
                             dims(shown) + ": the program's tensor metadata is inconsistent");
    }
  }
  return NodeSupport::yes("");
}

NodeSupport check_pool_window(const Node& n) {
  namespace arg = ops::arg;
  const bool avg = n.op_target() == ops::aten::avg_pool2d;
  Window w;
  const auto kernel = literal_ints(n, arg::kernel_size, 2, {});
  const auto padding = literal_ints(n, arg::padding, 2, {0, 0});
  const auto stride = literal_ints(n, arg::stride, 2, kernel.value_or(std::vector<int64_t>{}));
  const auto dilation = avg ? std::optional<std::vector<int64_t>>(std::vector<int64_t>{1, 1})
                            : literal_ints(n, arg::dilation, 2, {1, 1});
  if (!kernel || !padding || !stride || !dilation) return NodeSupport::no("has a symbolic window");
  w.kernel = *kernel;
  w.padding = *padding;
  w.stride = stride->empty() ? *kernel : *stride;  // PyTorch: no stride means the kernel's
  w.dilation = *dilation;
  w.ceil_mode = literal_bool(n, arg::ceil_mode).value_or(false);
  w.is_pool = true;
  return check_window(n, tensor_input(n, arg::self), w);
}

NodeSupport check_conv_window(const Node& n, const ConvGeometry& g) {
  const Value* weight = tensor_input(n, ops::arg::weight);
  const std::vector<int64_t> ws = node_args::sizes_of(weight);
  if (ws.size() < g.stride.size()) return NodeSupport::no("has a weight of lower rank than its window");
  Window w;
  w.kernel.assign(ws.end() - static_cast<std::ptrdiff_t>(g.stride.size()), ws.end());
  w.stride = g.stride;
  w.padding = g.padding;
  w.dilation = g.dilation;
  return check_window(n, tensor_input(n, ops::arg::input), w);
}

std::vector<std::string> claimed_op_names(const Rules& rules) {
  std::vector<std::string> names;
  for (const auto& [op, rule] : rules) names.emplace_back(ops::op_name(op));
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> ops_decompose_would_split(const Rules& rules) {
  const std::vector<std::string> claimed = claimed_op_names(rules);
  std::vector<std::string> split = Decompose::decomposed_ops();
  std::sort(split.begin(), split.end());
  std::vector<std::string> keep;
  std::set_intersection(claimed.begin(), claimed.end(), split.begin(), split.end(), std::back_inserter(keep));
  return keep;
}

}  // namespace lathe::support_rules
