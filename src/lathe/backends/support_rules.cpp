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
