// higher_order.auto_functionalized_v2: how torch.export writes a call to a
// custom op that mutates its arguments. The node names the op, passes its
// other arguments by name, and lists the tensors the mutated arguments view
// (`_all_bases`); per mutated argument `a`, `_a_base_index` says which base
// it views and how (`_a_alias`, `_a_size/_stride/_storage_offset`, or
// `_a_slice_dim/_start/_end`; nothing more: the base itself). The node
// returns the op's own outputs, then the new value of every base.
//
// Run functionally, as PyTorch's dense implementation does: clone the
// bases, rebuild each mutated argument as a view of its clone, call the op's
// kernel (which writes into those views) and return the clones. Lathe has
// no kernel for an arbitrary custom op: the node runs only when the
// KernelRegistry given to the executor has one for the wrapped op.
#pragma once

#include <memory>
#include <string>

#include "lathe/core/result.h"
#include "lathe/ir/node.h"
#include "lathe/runtime/delegate.h"
#include "lathe/runtime/kernel_registry.h"

namespace lathe {

bool is_auto_functionalized(const Node& n);
// The op the node wraps ("torch.ops.lathe_fixtures.scaled_accumulate_.default"), or "".
std::string wrapped_op(const Node& n);
// Fails naming the argument it cannot rebuild (a list of mutated tensors).
Result<std::shared_ptr<DelegateHandle>> plan_auto_functionalized(const Node& n, const KernelRegistry& kernels);

}  // namespace lathe
