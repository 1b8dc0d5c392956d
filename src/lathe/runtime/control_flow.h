// Higher-order control flow on the portable runtime: torch.cond and
// torch.while_loop. Each subgraph (a GraphArg of the node) is planned once,
// as its own GraphPlan, when the executor is created; the node then runs
// through a handle, like a delegate node.
//
//   cond(pred, true_graph, false_graph, operands)        -> outputs of the chosen graph
//   while_loop(cond_graph, body_graph, carried, extra)   -> carried values once cond is false
//   scan(combine_graph, init, xs, additional)            -> final carries, stacked per-step outputs
//   map_impl(body_graph, xs, args)                       -> stacked outputs of body(x_i, *args)
//   wrap_with_set_grad_enabled / wrap_with_autocast      -> outputs of the wrapped subgraph
//
// A subgraph's lifted parameters arrive as operands (torch.export passes
// them explicitly), so subgraphs need no access to the program's state.
#pragma once

#include <memory>

#include "lathe/core/result.h"
#include "lathe/ir/node.h"
#include "lathe/runtime/delegate.h"
#include "lathe/runtime/kernel_registry.h"

namespace lathe {

struct GraphPlanOptions;

// True for the higher-order ops planned here (by target).
bool is_control_flow(const Node& n);
// Plans the node: its subgraphs (cond, while_loop), or the wrapped op of an
// auto_functionalized_v2 node (auto_functionalized.h); fails naming what
// cannot run.
Result<std::shared_ptr<DelegateHandle>> plan_control_flow(const Node& n, const GraphPlanOptions& options);

// For a node Lathe cannot run: its op, and for a functionalization wrapper
// (auto_functionalized, auto_functionalized_v2) also the op it wraps, so a
// refusal names the custom op the user has to provide.
std::string describe_op(const Node& n);

// Lists cond and while_loop among the ops the portable runtime runs (what
// `lathe ops` prints). The entries are placeholders: GraphPlan recognises
// these nodes before looking for a kernel, and the function only fails.
void register_control_flow_entries(KernelRegistry& r);

}  // namespace lathe
