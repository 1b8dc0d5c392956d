// GraphPlan: one graph made ready to run — a slot per value, a kernel (or a
// handle: delegate, control flow) per node, lifetimes and shared buffers.
// The Executor plans a method's top graph with it and binds the signature
// and state around it; control-flow ops (control_flow.h) plan each subgraph
// with it and call it with positional operands.
//
// Memory: intermediates whose lifetimes do not overlap share a buffer
// (memory_plan.h). Sizes come from the value's metadata; a symbolic size is
// estimated from its export-time hint, and a buffer grows at run time when
// the call's actual size needs more. Growing is safe because when a root is
// written, every other root placed in its buffer is dead (that is what the
// plan guarantees), so only the new occupant will ever read the new storage.
#pragma once

#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "lathe/core/result.h"
#include "lathe/ir/graph.h"
#include "lathe/runtime/delegate.h"
#include "lathe/runtime/evalue.h"
#include "lathe/runtime/kernel_call.h"
#include "lathe/runtime/kernel_registry.h"

namespace lathe {

struct MemoryStats {
  size_t planned_values = 0;    // kernel outputs placed in shared buffers
  size_t unplanned_values = 0;  // outputs allocated per call (escaping, or planning off)
  size_t buffers = 0;
  size_t buffer_bytes = 0;      // what the shared buffers hold now (grows with symbolic sizes)
  size_t unshared_bytes = 0;    // what the planned values would take without sharing (estimate)
  size_t buffer_growths = 0;    // times a buffer was reallocated for a larger call
};

// The default of GraphPlanOptions::max_elements_per_node (2^34, 17.2
// billion): 4x the largest node of a real model (an 8B LLM at 8k context:
// attention softmax over [1, 32, 8192, 8192] reads and writes 2^32), while
// one node just under it runs about 10 s (a sum reads 1.75e9 elements/s).
inline constexpr int64_t kDefaultMaxElementsPerNode = int64_t{1} << 34;

struct GraphPlanOptions {
  const KernelRegistry* kernels = nullptr;  // required
  const DelegateRegistry* delegates = nullptr;
  bool plan_memory = true;
  // Prepacks a delegate node (needs the program's state); unset: a delegate
  // node inside this graph fails create().
  std::function<Result<std::shared_ptr<DelegateHandle>>(const DelegateRuntime&, const Node&)> init_delegate;
  // The program tensor bound to a graph input that is a constant (parameter,
  // lifted constant, never-mutated buffer), else nullptr; kernels with a
  // PrepareFn repack such operands once. Unset: nothing is prepared.
  std::function<const Tensor*(const Value*)> constant_of;
  // A while_loop whose condition is still true after this many iterations
  // is an error naming the node, not a hang (a program from a file may loop
  // forever, or 2^62 times). Large (16.8 million): exported loops run a few
  // thousand.
  int64_t max_loop_iterations = int64_t{1} << 24;
  // The work one node may do in one run, in elements touched: its tensor
  // operands and the outputs it allocates, each at its logical size, so a
  // broadcast view counts every element it shows (expand [1, 8] to
  // [2^20, 2^20, 8] is 2^43 elements from 32 bytes; summing it took 85 minutes).
  // Checked before the kernel runs and as it allocates, so an error naming
  // the node comes at once. Allocations have their own limit (memory); this
  // one bounds the time of views, which allocate nothing. Nodes inside
  // cond / while_loop subgraphs count one by one. INT64_MAX: no limit.
  int64_t max_elements_per_node = kDefaultMaxElementsPerNode;
  // Asked before every node; true stops the call with an error ("interrupted
  // before node ..."). How a binding lets Ctrl-C through a long run. Unset:
  // never asked.
  std::function<bool()> interrupted;
};

class GraphPlan {
 public:
  // `output_escapes[i]`: graph output i outlives the call (it gets fresh
  // memory every call). Missing entries count as escaping.
  static Result<std::unique_ptr<GraphPlan>> create(const Graph& graph, const GraphPlanOptions& options,
                                                   const std::vector<bool>& output_escapes = {});
  ~GraphPlan();
  GraphPlan(const GraphPlan&) = delete;
  GraphPlan& operator=(const GraphPlan&) = delete;

  const Graph& graph() const;
  // One EValue per graph input (None where nothing is bound); returns one per
  // graph output (literal outputs included). `inputs` is consumed so that
  // no reference to an input outlives the call inside the plan.
  Result<std::vector<EValue>> run(std::vector<EValue> inputs);
  const MemoryStats& memory_stats() const;

  struct Impl;

 private:
  explicit GraphPlan(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// "node 'name' (aten.add.Tensor)" for error contexts.
std::string node_label(const Node& n);

// A node argument bound to slots: one per item for list arguments, one for
// anything else, -1 for literals and None (see BoundArgument).
Result<BoundArgument> bind_argument(const NamedArgument& na, const std::unordered_map<const Value*, int32_t>& slot_of);

}  // namespace lathe
