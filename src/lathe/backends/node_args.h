// Checking a node's tensors and operands, as every backend's support
// predicate and lowering do (XNNPACK, Vulkan).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lathe/analysis/constness.h"
#include "lathe/ir/graph.h"
#include "lathe/ir/literal_args.h"

namespace lathe::node_args {

// The literal readers (literal_int, literal_ints, tensor_input ...) are
// ir/literal_args.h, and what an op's name says (is_reshape, is_batch_norm)
// ir/op_catalogue.h; here only what the backends add.

// The concrete sizes of a tensor whose metadata check_tensors() passed.
std::vector<int64_t> sizes_of(const Value* v);

// "" if every tensor the node reads or defines is float32 with concrete sizes.
std::string check_tensors(const Node& n);
// Why `v` (operand `role`) cannot be prepacked, or "" when it is a
// compile-time constant (or null). `note` ends the sentence:
// " (XNNPACK prepacks it at init: it must be a compile-time constant)".
std::string needs_constant(const Value* v, std::string_view role, const Constness& c, std::string_view note);
bool only_user_is(const Value* v, const Node& user);

}  // namespace lathe::node_args
