// How a backend's support() is written: a table from each op it knows
// (interned, ir/op_catalogue.h) to the rule that decides a node of that op,
// each rule a short function. XNNPACK and Vulkan share the lookup, the
// adapters from plain functions to rules, and the questions their rules
// both ask.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lathe/backends/backend.h"
#include "lathe/ir/op_catalogue.h"

namespace lathe::support_rules {

using Rule = std::function<NodeSupport(const Backend&, const Node&, const Constness&)>;
using Rules = std::unordered_map<OpTarget, Rule>;

// Rules from functions that need less than the whole question.
Rule plain(NodeSupport (*f)(const Node&));
Rule with_constness(NodeSupport (*f)(const Node&, const Constness&));
// Claimed whenever check_tensors() passes, as `what`.
Rule always(const char* what);

// `n`'s rule in `rules`, after check_tensors(); an op with no rule is
// refused as "<no_rule> <op name>" ("no XNNPACK operator for aten.foo.default").
NodeSupport decide(const Rules& rules, const Backend& backend, const Node& n, const Constness& c, std::string_view no_rule);

// Whether `n`'s tensor input `name` is computed by `backend` (a copy or view
// is worth claiming only inside a group: alone it would be a delegate call
// around one copy).
bool input_is_claimed(const Backend& backend, const Node& n, const Constness& c, std::string_view name = ops::arg::self);

// Whether the relu/clamp `n` folds into its input's producer as output
// bounds: the producer is an op `takes_bounds` accepts, `n` is its only
// reader, and `backend` claims it (else the activation runs on its own, and
// --explain must not say it fused).
bool folds_into_producer(const Backend& backend, const Node& n, const Constness& c, bool (*takes_bounds)(OpTarget));

// An aten.convolution's literal geometry, one entry per spatial dim.
struct ConvGeometry {
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups = 1;
};
// Reads `n`'s geometry (`spatial`: 1 or 2) into `g`; refused when it is
// transposed, has output padding, or any of it is symbolic.
NodeSupport read_conv_geometry(const Node& n, size_t spatial, ConvGeometry& g);

// A pooling or convolution window over the trailing kernel.size() dims of
// the node's tensor `input`.
struct Window {
  std::vector<int64_t> kernel, stride, padding, dilation;
  bool ceil_mode = false;  // pools only
  bool is_pool = false;    // pools also need padding <= kernel / 2
};
// Refused, saying why, when PyTorch would refuse the window (it does not fit
// the padded input; a pool's padding is over half its window: the portable
// kernel reports these at run time, as PyTorch does), or when the node's
// declared output sizes are not what its input and window give (the input
// program's metadata is inconsistent, and a delegate built from it would
// compute other shapes than PyTorch). Claimed ("") otherwise.
NodeSupport check_window(const Node& n, const Value* input, const Window& w);
// check_window for an aten max/avg pool2d with literal window arguments,
// and for a convolution of geometry `g` (its kernel: the weight's sizes).
NodeSupport check_pool_window(const Node& n);
NodeSupport check_conv_window(const Node& n, const ConvGeometry& g);

// Every op `rules` has a rule for, as Node::op_name() spells them, sorted
// (Backend::claimed_ops, `lathe ops`).
std::vector<std::string> claimed_op_names(const Rules& rules);
// The ops of `rules` that the decompose pass would split (linear,
// layer_norm, softmax.int...): a backend's keep-list, derived from its
// table, so claiming a composite op is one row and never a second list.
std::vector<std::string> ops_decompose_would_split(const Rules& rules);

}  // namespace lathe::support_rules
