// Reading a node's literal arguments and checking its tensors, as every
// backend's support predicate and lowering do (XNNPACK, Vulkan). A value
// that is symbolic or absent reads as nullopt, never as a guess.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lathe/analysis/constness.h"
#include "lathe/ir/graph.h"

namespace lathe::node_args {

// The target without "torch.ops." ("aten.linear.default").
std::string_view short_op(const Node& n);

std::optional<int64_t> lit_int(const Node& n, std::string_view name);
// Like lit_int, but an argument the node omits is at its schema default
// (exported graphs leave defaulted arguments out, e.g. conv2d's groups=1).
std::optional<int64_t> lit_int_or(const Node& n, std::string_view name, int64_t dflt);
std::optional<double> lit_number(const Node& n, std::string_view name);
std::optional<bool> lit_bool(const Node& n, std::string_view name);
bool is_none_arg(const Node& n, std::string_view name);
// int[] argument, with a single int broadcast to `len` items; nullopt if symbolic.
std::optional<std::vector<int64_t>> lit_ints(const Node& n, std::string_view name, size_t len, std::vector<int64_t> dflt);
// int[] argument of any length (no broadcast); nullopt if absent or symbolic.
std::optional<std::vector<int64_t>> lit_int_list(const Node& n, std::string_view name);
const Value* tensor_arg(const Node& n, std::string_view name);
std::vector<int64_t> sizes_of(const Value* v);

// "" if every tensor the node reads or defines is float32 with concrete sizes.
std::string check_tensors(const Node& n);
// Why `v` (operand `role`) cannot be prepacked, or "" when it is a
// compile-time constant (or null). `note` ends the sentence:
// " (XNNPACK prepacks it at init: it must be a compile-time constant)".
std::string needs_constant(const Value* v, std::string_view role, const Constness& c, std::string_view note);
bool only_user_is(const Value* v, const Node& user);

// The inference batch norms torch.export writes: batch_norm (2.13, kept
// whole), native_batch_norm (training=False) and the decomposed
// _native_batch_norm_legit_no_training (no training argument: always eval).
bool is_batch_norm_op(std::string_view op);
// Ops that only reshape a contiguous tensor (same bytes, new sizes).
bool is_reshape_op(std::string_view op);

}  // namespace lathe::node_args
